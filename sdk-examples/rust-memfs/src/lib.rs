// SPDX-License-Identifier: MIT
//! rust-memfs: a complete read-write POSIX file system in memory, written
//! with the safe `fring` crate and no `unsafe`. Directories, regular files
//! (sparse, in 64 KiB chunks), symlinks, device nodes, FIFOs and sockets;
//! hard links; renames with `RENAME_NOREPLACE` and `RENAME_EXCHANGE`;
//! extended attributes (`user.`, `trusted.`, `security.`); owners, modes,
//! setuid/setgid rules and the three times, as Linux keeps them. It runs
//! fring's conformance suite (tests/conformance) as the C memfs does.
//!
//! This file holds the options, the mount and the `Filesystem` impl, which
//! only unpacks each request, calls the module that does the work and
//! answers. The modules, one job each:
//!
//! - `inode`: the inode table, attributes and reference counts
//! - `dir`: directory entries, lookup and readdir
//! - `data`: sparse file data in chunks, truncate and space accounting
//! - `perm`: the permission rules the file system keeps itself
//! - `ops_make`, `ops_remove`, `ops_rename`: making, removing and moving names
//! - `ops_file`: open, create, read, write
//! - `ops_setattr`: truncate, chown, chmod, times
//! - `ops_space`: statfs, fallocate, lseek (SEEK_DATA/SEEK_HOLE), copy_file_range
//! - `xattr`: extended attributes
//!
//! `open` truncates by itself on `O_TRUNC`, so the filesystem declares
//! `ATOMIC_O_TRUNC`. One mutex guards the whole tree; `PARALLEL` lets
//! fring call in from all its threads, which then take turns on it.
#![deny(unsafe_code)]

mod data;
mod dir;
mod inode;
mod ops_file;
mod ops_make;
mod ops_remove;
mod ops_rename;
mod ops_setattr;
mod ops_space;
mod perm;
mod xattr;

use std::ffi::OsStr;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use fring::{Errno, FileType, Filesystem, Mount, Opened, Opt, Options, SetAttr};
use fring::{ReplyAttr, ReplyCreate, ReplyDir, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyRead};
use fring::{ReplyCopy, ReplyLseek, ReplyReadlink, ReplyStatfs, ReplyWrite, ReplyXattr};

use crate::data::CHUNK;
use crate::dir::Dir;
use crate::inode::{Body, Inode, Tree, ROOT};
use crate::perm::Cred;

struct MemFs {
    tree: Mutex<Tree>,
    size_limit: u64,
    entry_ttl: Duration,
    attr_ttl: Duration,
}

impl MemFs {
    /// The whole tree, for one operation (a panic while holding it leaves
    /// the tree as it was changed so far; later calls go on with it).
    fn lock(&self) -> MutexGuard<'_, Tree> {
        self.tree.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Seconds as a decimal ("1", "0.25").
fn seconds(options: &Options, key: &str) -> Result<Duration, String> {
    match options.str(key) {
        None => Ok(Duration::from_secs(1)),
        Some(s) => match s.parse::<f64>() {
            Ok(v) if (0.0..=1e9).contains(&v) => Ok(Duration::from_secs_f64(v)),
            _ => Err(format!("{key}: expected seconds (0, 1, 0.25), got '{s}'")),
        },
    }
}

impl Filesystem for MemFs {
    const OPTIONS: &'static [Opt] = &[
        Opt::size("size", "most bytes of file data (default 1TiB)"),
        Opt::str(
            "entry_timeout",
            "seconds the kernel may cache names (default 1)",
        ),
        Opt::str(
            "attr_timeout",
            "seconds the kernel may cache attributes (default 1)",
        ),
    ];
    const PARALLEL: bool = true;
    const ATOMIC_O_TRUNC: bool = true;

    fn new(options: &Options, mount: Mount) -> Result<Self, String> {
        let size_limit = options.size("size").unwrap_or(1 << 40);
        if size_limit < CHUNK {
            return Err(format!("size: at least {CHUNK} bytes, got {size_limit}"));
        }
        // the root belongs to whoever runs fring
        let (uid, gid) = std::fs::metadata("/proc/self")
            .map(|m| {
                (
                    std::os::unix::fs::MetadataExt::uid(&m),
                    std::os::unix::fs::MetadataExt::gid(&m),
                )
            })
            .unwrap_or((0, 0));
        let mode = FileType::Directory.mode_bits() | 0o755;
        let body = Body::Dir(Dir::new(ROOT));
        let root = Inode::new(mode, uid, gid, 0, body, SystemTime::now());
        mount.debug("memfs-rust: ready");
        Ok(MemFs {
            tree: Mutex::new(Tree::new(root)),
            size_limit,
            entry_ttl: seconds(options, "entry_timeout")?,
            attr_ttl: seconds(options, "attr_timeout")?,
        })
    }

    fn lookup(&self, parent: u64, name: &OsStr, reply: ReplyEntry) {
        reply.result(self.do_lookup(parent, name), |r, e| r.entry(&e))
    }

    fn forget(&self, ino: u64, nlookup: u64) {
        self.lock().forget(ino, nlookup)
    }

    fn getattr(&self, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        let res = self.lock().get(ino).map(|i| i.attr(ino));
        reply.result(res, |r, a| r.attr(&a, self.attr_ttl))
    }

    fn setattr(&self, ino: u64, set: SetAttr, reply: ReplyAttr) {
        let c = Cred::of(reply.request());
        reply.result(self.do_setattr(&c, ino, &set), |r, a| {
            r.attr(&a, self.attr_ttl)
        })
    }

    fn readlink(&self, ino: u64, reply: ReplyReadlink) {
        let res = self.lock().get(ino).and_then(|i| match &i.body {
            Body::Symlink(t) => Ok(t.clone()),
            _ => Err(Errno::EINVAL),
        });
        reply.result(res, |r, t| r.target(t))
    }

    fn mknod(
        &self,
        parent: u64,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let c = Cred::of(reply.request());
        let res = self.do_mknod(&c, parent, name, mode, rdev);
        reply.result(res, |r, e| r.entry(&e))
    }

    fn mkdir(&self, parent: u64, name: &OsStr, mode: u32, _umask: u32, reply: ReplyEntry) {
        let c = Cred::of(reply.request());
        let res = self.do_mkdir(&c, parent, name, mode);
        reply.result(res, |r, e| r.entry(&e))
    }

    fn symlink(&self, parent: u64, name: &OsStr, target: &Path, reply: ReplyEntry) {
        let c = Cred::of(reply.request());
        let res = self.do_symlink(&c, parent, name, target);
        reply.result(res, |r, e| r.entry(&e))
    }

    fn unlink(&self, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        reply.result(self.do_remove(parent, name, false), |r, ()| r.ok())
    }

    fn rmdir(&self, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        reply.result(self.do_remove(parent, name, true), |r, ()| r.ok())
    }

    fn rename(
        &self,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: u32,
        reply: ReplyEmpty,
    ) {
        reply.result(
            self.do_rename(parent, name, newparent, newname, flags),
            |r, ()| r.ok(),
        )
    }

    fn link(&self, ino: u64, newparent: u64, newname: &OsStr, reply: ReplyEntry) {
        reply.result(self.do_link(ino, newparent, newname), |r, e| r.entry(&e))
    }

    fn open(&self, ino: u64, flags: i32, reply: ReplyOpen) {
        let kill = reply.kill_suidgid();
        reply.result(self.do_open(ino, flags, kill), |r, o| r.opened(o))
    }

    fn create(
        &self,
        parent: u64,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let c = Cred::of(reply.request());
        reply.result(
            self.do_create(&c, parent, name, mode, flags),
            |r, (e, o)| r.created(&e, o),
        )
    }

    fn read(&self, ino: u64, _fh: u64, offset: u64, size: u32, reply: ReplyRead) {
        reply.result(self.do_read(ino, offset, size), |r, buf| r.data(&buf))
    }

    fn write(&self, ino: u64, _fh: u64, offset: u64, write_flags: u32, reply: ReplyWrite) {
        // no zero-copy opt-in at open, so the data is always here
        let Some(data) = reply.data() else {
            return reply.error(Errno::EIO);
        };
        let res = self.do_write(ino, offset, data, write_flags);
        reply.result(res, |r, n| r.written(n))
    }

    fn release(&self, ino: u64, _fh: u64, _flags: i32, reply: ReplyEmpty) {
        self.lock().release(ino);
        reply.ok()
    }

    fn fsync(&self, _ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        reply.ok() // memory is as durable as it gets
    }

    fn opendir(&self, ino: u64, _flags: i32, reply: ReplyOpen) {
        reply.result(self.do_opendir(ino), |r, ()| r.opened(Opened::new(0)))
    }

    fn readdir(&self, ino: u64, _fh: u64, offset: u64, reply: ReplyDir) {
        self.do_readdir(ino, offset, reply)
    }

    fn fsyncdir(&self, _ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        reply.ok()
    }

    fn statfs(&self, _ino: u64, reply: ReplyStatfs) {
        reply.statfs(&self.do_statfs())
    }

    fn setxattr(&self, ino: u64, name: &OsStr, value: &[u8], flags: i32, reply: ReplyEmpty) {
        reply.result(self.do_setxattr(ino, name, value, flags), |r, ()| r.ok())
    }

    fn getxattr(&self, ino: u64, name: &OsStr, size: u32, reply: ReplyXattr) {
        reply.result(self.do_getxattr(ino, name, size), |r, v| {
            if size == 0 {
                r.size(v.len() as u32)
            } else {
                r.data(&v)
            }
        })
    }

    fn listxattr(&self, ino: u64, size: u32, reply: ReplyXattr) {
        let c = Cred::of(reply.request());
        reply.result(self.do_listxattr(&c, ino), |r, names| {
            if size == 0 {
                r.size(names.len() as u32)
            } else if names.len() > size as usize {
                r.error(Errno::ERANGE)
            } else {
                r.data(&names)
            }
        })
    }

    fn removexattr(&self, ino: u64, name: &OsStr, reply: ReplyEmpty) {
        reply.result(self.do_removexattr(ino, name), |r, ()| r.ok())
    }

    fn fallocate(
        &self,
        ino: u64,
        _fh: u64,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let res = self.do_fallocate(ino, offset, length, mode);
        reply.result(res, |r, ()| r.ok())
    }

    fn lseek(&self, ino: u64, _fh: u64, offset: u64, whence: i32, reply: ReplyLseek) {
        reply.result(self.do_lseek(ino, offset, whence), |r, o| r.offset(o))
    }

    fn copy_file_range(
        &self,
        ino_in: u64,
        _fh_in: u64,
        offset_in: u64,
        ino_out: u64,
        _fh_out: u64,
        offset_out: u64,
        len: u64,
        flags: u64,
        reply: ReplyCopy,
    ) {
        let res = self.do_copy_file_range(ino_in, offset_in, ino_out, offset_out, len, flags);
        reply.result(res, |r, n| r.copied(n))
    }
}

fring::plugin!(MemFs, name: "memfs-rust", version: "1.0",
               description: "a read-write POSIX file system in memory, in Rust");
