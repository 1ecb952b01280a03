// SPDX-License-Identifier: MIT
//! The inode table: each file's attributes and body by inode number, and
//! the reference counts (names, kernel lookups, open handles) that decide
//! when an inode goes.
//!
//! Everything lives in one `Tree` behind one mutex (see lib.rs), so an
//! operation sees and changes the whole file system at once.
use std::collections::HashMap;
use std::ffi::OsString;
use std::time::SystemTime;

use fring::{Attr, Entry, Errno, FileType};

use crate::data::Data;
use crate::dir::Dir;
use crate::MemFs;

/// The root directory's inode number (FUSE's).
pub(crate) const ROOT: u64 = 1;
/// The block size `stat` and `statfs` show.
pub(crate) const BLKSIZE: u32 = 4096;

pub(crate) enum Body {
    File(Data),
    Dir(Dir),
    Symlink(OsString),
    /// Device nodes, FIFOs, sockets: only attributes.
    Special,
}

pub(crate) struct Inode {
    pub(crate) mode: u32, // type and permission bits
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) rdev: u32,
    pub(crate) nlink: u32,
    pub(crate) size: u64,
    pub(crate) atime: SystemTime,
    pub(crate) mtime: SystemTime,
    pub(crate) ctime: SystemTime,
    /// Kernel references (entries answered minus forgotten).
    pub(crate) lookups: u64,
    /// Open handles (open/create minus release).
    pub(crate) opens: u64,
    pub(crate) xattrs: Vec<(OsString, Vec<u8>)>,
    pub(crate) body: Body,
}

impl Inode {
    /// A new inode with all three times `now`, one name (a directory: two,
    /// with its "."), no kernel reference and no open handle.
    pub(crate) fn new(
        mode: u32,
        uid: u32,
        gid: u32,
        rdev: u32,
        body: Body,
        now: SystemTime,
    ) -> Inode {
        let size = match &body {
            Body::Symlink(t) => t.len() as u64,
            _ => 0,
        };
        Inode {
            mode,
            uid,
            gid,
            rdev,
            nlink: if matches!(body, Body::Dir(_)) { 2 } else { 1 },
            size,
            atime: now,
            mtime: now,
            ctime: now,
            lookups: 0,
            opens: 0,
            xattrs: Vec::new(),
            body,
        }
    }

    pub(crate) fn kind(&self) -> FileType {
        FileType::from_mode(self.mode).unwrap_or(FileType::RegularFile)
    }

    pub(crate) fn is_dir(&self) -> bool {
        matches!(self.body, Body::Dir(_))
    }

    pub(crate) fn dir(&self) -> Result<&Dir, Errno> {
        match &self.body {
            Body::Dir(d) => Ok(d),
            _ => Err(Errno::ENOTDIR),
        }
    }

    pub(crate) fn dir_mut(&mut self) -> Result<&mut Dir, Errno> {
        match &mut self.body {
            Body::Dir(d) => Ok(d),
            _ => Err(Errno::ENOTDIR),
        }
    }

    /// Ok for a regular file; `EISDIR` for a directory, `other` for the
    /// rest (the operations on file data differ in what they answer).
    pub(crate) fn file_or(&self, other: Errno) -> Result<(), Errno> {
        match self.body {
            Body::File(_) => Ok(()),
            Body::Dir(_) => Err(Errno::EISDIR),
            _ => Err(other),
        }
    }

    /// ctime (and mtime) = now.
    pub(crate) fn touch(&mut self, mtime: bool, now: SystemTime) {
        self.ctime = now;
        if mtime {
            self.mtime = now;
        }
    }

    pub(crate) fn attr(&self, ino: u64) -> Attr {
        let blocks = match &self.body {
            Body::File(d) => d.bytes() / 512,
            _ => self.size.div_ceil(512),
        };
        Attr {
            size: self.size,
            blocks,
            atime: self.atime,
            mtime: self.mtime,
            ctime: self.ctime,
            perm: (self.mode & 0o7777) as u16,
            nlink: self.nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: self.rdev,
            blksize: BLKSIZE,
            ..Attr::new(ino, self.kind(), 0)
        }
    }
}

/// Every inode by number; `used` is the bytes of file data held.
pub(crate) struct Tree {
    pub(crate) inodes: HashMap<u64, Inode>,
    pub(crate) next_ino: u64,
    pub(crate) used: u64,
}

impl Tree {
    /// A tree of just `root`, which the kernel holds from the start.
    pub(crate) fn new(root: Inode) -> Tree {
        let root = Inode { lookups: 1, ..root };
        Tree {
            inodes: HashMap::from([(ROOT, root)]),
            next_ino: ROOT + 1,
            used: 0,
        }
    }

    pub(crate) fn get(&self, ino: u64) -> Result<&Inode, Errno> {
        self.inodes.get(&ino).ok_or(Errno::ENOENT)
    }

    pub(crate) fn get_mut(&mut self, ino: u64) -> Result<&mut Inode, Errno> {
        self.inodes.get_mut(&ino).ok_or(Errno::ENOENT)
    }

    /// Adds `inode` under a fresh number (inode numbers are not reused).
    pub(crate) fn insert(&mut self, inode: Inode) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inodes.insert(ino, inode);
        ino
    }

    /// Drops `ino` once nothing refers to it: no name, no kernel
    /// reference, no open handle.
    pub(crate) fn maybe_free(&mut self, ino: u64) {
        if ino == ROOT {
            return;
        }
        if let Some(i) = self.inodes.get(&ino) {
            if i.nlink == 0 && i.lookups == 0 && i.opens == 0 {
                if let Some(Inode {
                    body: Body::File(d),
                    ..
                }) = self.inodes.remove(&ino)
                {
                    self.used -= d.bytes();
                }
            }
        }
    }

    /// The entry for `ino`, counted as one more kernel reference.
    pub(crate) fn entry(&mut self, ino: u64, fs: &MemFs) -> Entry {
        let i = self.inodes.get_mut(&ino).unwrap();
        i.lookups += 1;
        let mut e = Entry::new(i.attr(ino), fs.entry_ttl);
        e.attr_ttl = fs.attr_ttl;
        e
    }

    /// The kernel drops `nlookup` references to `ino` (FORGET).
    pub(crate) fn forget(&mut self, ino: u64, nlookup: u64) {
        if let Some(i) = self.inodes.get_mut(&ino) {
            i.lookups = i.lookups.saturating_sub(nlookup);
            self.maybe_free(ino);
        }
    }

    /// An open handle of `ino` closes (RELEASE).
    pub(crate) fn release(&mut self, ino: u64) {
        if let Some(i) = self.inodes.get_mut(&ino) {
            i.opens = i.opens.saturating_sub(1);
            self.maybe_free(ino);
        }
    }
}
