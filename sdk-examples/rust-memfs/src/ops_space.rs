// SPDX-License-Identifier: MIT
//! Space: statfs, fallocate, lseek(SEEK_DATA/SEEK_HOLE) and
//! copy_file_range.
//!
//! They all work on the chunk map (data.rs): a held chunk is data and
//! counts against the `size` option, a missing one is a hole. statfs
//! reports that option as the file system's size and the chunks held as
//! used. The errors follow the C memfs (plugins/memfs/ops_space.c).
use std::time::SystemTime;

use fring::{Errno, Statfs};

use crate::data::{range_ok, CHUNK};
use crate::dir::NAME_MAX;
use crate::inode::{Body, BLKSIZE};
use crate::MemFs;

const FALLOC_FL_KEEP_SIZE: i32 = 1;
const FALLOC_FL_PUNCH_HOLE: i32 = 2;
const SEEK_DATA: i32 = 3;
const SEEK_HOLE: i32 = 4;

impl MemFs {
    pub(crate) fn do_statfs(&self) -> Statfs {
        let t = self.lock();
        let blocks = self.size_limit / BLKSIZE as u64;
        let used = t.used.div_ceil(BLKSIZE as u64);
        let files = (self.size_limit / BLKSIZE as u64).min(u32::MAX as u64);
        Statfs {
            blocks,
            bfree: blocks.saturating_sub(used),
            bavail: blocks.saturating_sub(used),
            files,
            ffree: files.saturating_sub(t.inodes.len() as u64),
            bsize: BLKSIZE,
            namelen: NAME_MAX as u32,
            frsize: BLKSIZE,
        }
    }

    /// Mode 0 (allocate, growing the file), `KEEP_SIZE` (allocate only)
    /// and `PUNCH_HOLE | KEEP_SIZE`; other modes are EOPNOTSUPP. An
    /// allocation that does not fit allocates nothing (ENOSPC).
    pub(crate) fn do_fallocate(
        &self,
        ino: u64,
        offset: u64,
        len: u64,
        mode: i32,
    ) -> Result<(), Errno> {
        let punch = mode == FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
        if mode != 0 && mode != FALLOC_FL_KEEP_SIZE && !punch {
            return Err(Errno::EOPNOTSUPP);
        }
        if len == 0 {
            return Err(Errno::EINVAL);
        }
        if !range_ok(offset, len) {
            return Err(Errno::EFBIG);
        }
        let mut t = self.lock();
        t.get(ino)?.file_or(Errno::ENODEV)?;
        let (used, limit) = (t.used, self.size_limit);
        let i = t.get_mut(ino)?;
        let Body::File(d) = &mut i.body else {
            unreachable!("file_or checked it")
        };
        let before = d.bytes();
        if punch {
            d.punch(offset, len);
        } else {
            if d.cost(offset, len) > limit.saturating_sub(used) {
                return Err(Errno::ENOSPC);
            }
            d.allocate(offset, len);
            if mode & FALLOC_FL_KEEP_SIZE == 0 {
                i.size = i.size.max(offset + len);
            }
        }
        let after = d.bytes();
        i.touch(true, SystemTime::now());
        t.used = used - before + after;
        Ok(())
    }

    /// The next data (SEEK_DATA) or hole (SEEK_HOLE) at or after
    /// `offset`; the end of the file counts as a hole, and an offset at or
    /// past it is ENXIO.
    pub(crate) fn do_lseek(&self, ino: u64, offset: u64, whence: i32) -> Result<u64, Errno> {
        if whence != SEEK_DATA && whence != SEEK_HOLE {
            return Err(Errno::EINVAL);
        }
        let t = self.lock();
        let i = t.get(ino)?;
        i.file_or(Errno::EINVAL)?;
        let Body::File(d) = &i.body else {
            unreachable!("file_or checked it")
        };
        if offset >= i.size {
            return Err(Errno::ENXIO);
        }
        if whence == SEEK_DATA {
            return match d.next_present(offset / CHUNK) {
                Some(idx) if idx * CHUNK < i.size => Ok(offset.max(idx * CHUNK)),
                _ => Err(Errno::ENXIO),
            };
        }
        let mut idx = offset / CHUNK;
        while idx * CHUNK < i.size && d.present(idx) {
            idx += 1;
        }
        Ok(offset.max(idx * CHUNK).min(i.size))
    }

    /// Copies up to `len` bytes (stopping at the end of the source, and at
    /// under 4 GiB per call: the answer is 32-bit), piece by piece through
    /// a buffer; holes in the source become holes in the destination. A
    /// copy that runs out of space stops there (ENOSPC if nothing was
    /// copied); an overlapping copy within one file is EINVAL.
    pub(crate) fn do_copy_file_range(
        &self,
        ino_in: u64,
        off_in: u64,
        ino_out: u64,
        off_out: u64,
        len: u64,
        flags: u64,
    ) -> Result<u32, Errno> {
        if flags != 0 {
            return Err(Errno::EINVAL);
        }
        let mut t = self.lock();
        let src_size = t.get(ino_in)?.size;
        t.get(ino_in)?.file_or(Errno::EINVAL)?;
        t.get(ino_out)?.file_or(Errno::EINVAL)?;
        if off_in >= src_size {
            return Ok(0);
        }
        let len = len
            .min(src_size - off_in)
            .min(u32::MAX as u64 & !(CHUNK - 1));
        if !range_ok(off_out, len) {
            return Err(Errno::EFBIG);
        }
        if ino_in == ino_out && off_in < off_out + len && off_out < off_in + len {
            return Err(Errno::EINVAL);
        }
        let mut buf = Vec::new();
        let mut done = 0;
        let mut res = Ok(());
        while done < len {
            let pos = off_in + done;
            let piece = (CHUNK - pos % CHUNK).min(len - done);
            let Body::File(src) = &t.get(ino_in)?.body else {
                unreachable!("file_or checked it")
            };
            let hole = !src.present(pos / CHUNK);
            if !hole {
                src.read(pos, piece as usize, &mut buf);
            }
            let used = t.used;
            let Body::File(dst) = &mut t.get_mut(ino_out)?.body else {
                unreachable!("file_or checked it")
            };
            let before = dst.bytes();
            if hole {
                dst.punch(off_out + done, piece);
            } else if dst.cost(off_out + done, piece) > self.size_limit.saturating_sub(used) {
                res = Err(Errno::ENOSPC);
                break;
            } else {
                dst.write(off_out + done, &buf);
            }
            let after = dst.bytes();
            t.used = used - before + after;
            done += piece;
        }
        if done == 0 {
            return res.map(|()| 0);
        }
        let i = t.get_mut(ino_out)?;
        i.size = i.size.max(off_out + done);
        i.touch(true, SystemTime::now());
        Ok(done as u32)
    }
}
