// SPDX-License-Identifier: MIT
//! File data: a sparse store of fixed-size chunks, and the byte count the
//! whole tree charges against the `size` option.
//!
//! Chunks make sparse files cheap (a missing chunk reads as zeros and costs
//! nothing) and give holes for free, which `lseek(SEEK_DATA/SEEK_HOLE)`
//! and `fallocate(PUNCH_HOLE)` use. Invariant: bytes at or past the file
//! size are zero, so growing a file needs no work.
use std::collections::BTreeMap;

use crate::inode::{Body, Tree};

/// Bytes per chunk; also the unit of space accounting.
pub(crate) const CHUNK: u64 = 64 * 1024;
/// Largest file size (and end of any write), as on Linux.
pub(crate) const MAX_FILE_SIZE: u64 = i64::MAX as u64;

/// Does `[offset, offset + len)` stay within the largest file size?
pub(crate) fn range_ok(offset: u64, len: u64) -> bool {
    offset <= MAX_FILE_SIZE && len <= MAX_FILE_SIZE - offset
}

/// Sparse file data: chunks of `CHUNK` bytes by index; a missing chunk
/// reads as zeros.
#[derive(Default)]
pub(crate) struct Data {
    chunks: BTreeMap<u64, Box<[u8]>>,
}

impl Data {
    pub(crate) fn read(&self, offset: u64, len: usize, out: &mut Vec<u8>) {
        out.resize(len, 0);
        let end = offset + len as u64;
        let first = offset / CHUNK;
        for (&idx, chunk) in self.chunks.range(first..=(end.saturating_sub(1)) / CHUNK) {
            let cstart = idx * CHUNK;
            let from = offset.max(cstart);
            let to = end.min(cstart + CHUNK);
            out[(from - offset) as usize..(to - offset) as usize]
                .copy_from_slice(&chunk[(from - cstart) as usize..(to - cstart) as usize]);
        }
    }

    pub(crate) fn write(&mut self, offset: u64, data: &[u8]) {
        let mut pos = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let idx = pos / CHUNK;
            let within = (pos % CHUNK) as usize;
            let n = rest.len().min(CHUNK as usize - within);
            let chunk = self.chunk_mut(idx);
            chunk[within..within + n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
            pos += n as u64;
        }
    }

    /// The chunk at `idx`, made (zeroed) if missing.
    fn chunk_mut(&mut self, idx: u64) -> &mut [u8] {
        self.chunks
            .entry(idx)
            .or_insert_with(|| vec![0u8; CHUNK as usize].into_boxed_slice())
    }

    /// Cut to `size`: chunks past it go, the tail of the last one is zeroed
    /// (so growing again reads zeros).
    pub(crate) fn truncate(&mut self, size: u64) {
        let keep = size.div_ceil(CHUNK);
        self.chunks.split_off(&keep);
        if size % CHUNK != 0 {
            if let Some(c) = self.chunks.get_mut(&(size / CHUNK)) {
                c[(size % CHUNK) as usize..].fill(0);
            }
        }
    }

    /// Bytes held (whole chunks).
    pub(crate) fn bytes(&self) -> u64 {
        self.chunks.len() as u64 * CHUNK
    }

    /// The chunk indexes `[offset, offset + len)` touches (`len` > 0).
    fn span(offset: u64, len: u64) -> (u64, u64) {
        (offset / CHUNK, (offset + len - 1) / CHUNK)
    }

    /// Bytes that allocating `[offset, offset + len)` would add: its
    /// missing chunks. `len` > 0, and the range within `range_ok`.
    pub(crate) fn cost(&self, offset: u64, len: u64) -> u64 {
        let (first, last) = Data::span(offset, len);
        let have = self.chunks.range(first..=last).count() as u64;
        (last - first + 1 - have) * CHUNK
    }

    /// Makes every chunk of `[offset, offset + len)` (zeros where new).
    pub(crate) fn allocate(&mut self, offset: u64, len: u64) {
        let (first, last) = Data::span(offset, len);
        for idx in first..=last {
            self.chunk_mut(idx);
        }
    }

    /// Zeroes `[offset, offset + len)`; chunks left all zero go (holes).
    pub(crate) fn punch(&mut self, offset: u64, len: u64) {
        let end = offset + len;
        let (first, last) = Data::span(offset, len);
        let idxs: Vec<u64> = self.chunks.range(first..=last).map(|(i, _)| *i).collect();
        for idx in idxs {
            let cstart = idx * CHUNK;
            let from = (offset.max(cstart) - cstart) as usize;
            let to = (end.min(cstart + CHUNK) - cstart) as usize;
            let c = self.chunks.get_mut(&idx).unwrap();
            c[from..to].fill(0);
            if c.iter().all(|&b| b == 0) {
                self.chunks.remove(&idx);
            }
        }
    }

    /// Is chunk `idx` held (data, not a hole)?
    pub(crate) fn present(&self, idx: u64) -> bool {
        self.chunks.contains_key(&idx)
    }

    /// The first held chunk at or after `idx`.
    pub(crate) fn next_present(&self, idx: u64) -> Option<u64> {
        self.chunks.range(idx..).next().map(|(i, _)| *i)
    }
}

impl Tree {
    /// Sets the size of regular file `ino`, dropping or zeroing the data
    /// past it and keeping the tree's byte count.
    pub(crate) fn truncate(&mut self, ino: u64, size: u64) {
        let i = self.inodes.get_mut(&ino).unwrap();
        if let Body::File(d) = &mut i.body {
            let before = d.bytes();
            d.truncate(size);
            let after = d.bytes();
            i.size = size;
            self.used = self.used - before + after;
        }
    }
}
