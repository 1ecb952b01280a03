//! rust-memfs: a complete read-write POSIX file system in memory, written
//! with the safe `fring` crate and no `unsafe`. Directories, regular files
//! (sparse, in 64 KiB chunks), symlinks, device nodes, FIFOs and sockets;
//! hard links; renames with `RENAME_NOREPLACE` and `RENAME_EXCHANGE`;
//! extended attributes (`user.`, `trusted.`, `security.`); owners, modes,
//! setuid/setgid rules and the three times, as Linux keeps them. It runs
//! fring's conformance suite (tests/conformance) as the C memfs does.
//!
//! Permissions: mounted with `default_permissions` (which fring adds to an
//! `allow_other` mount of a plugin that does not check permissions itself),
//! the kernel checks mode bits, sticky directories and who may chmod,
//! chown or set times; this file keeps what only the file system can:
//! the group of new files (setgid directories), clearing setuid/setgid on
//! chown, on writes and truncates by unprivileged callers (HANDLE_KILLPRIV_V2)
//! and `trusted.*` names hidden from other users' listings.
//!
//! `open` truncates by itself on `O_TRUNC`, so the filesystem declares
//! `ATOMIC_O_TRUNC`. One mutex guards the whole tree; `PARALLEL` lets
//! fring call in from all its threads, which then take turns on it.
#![deny(unsafe_code)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use fring::{
    Attr, Entry, Errno, FileType, Filesystem, Mount, Opened, Opt, Options, SetAttr, Statfs,
};
use fring::{ReplyAttr, ReplyCreate, ReplyDir, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyRead};
use fring::{ReplyReadlink, ReplyStatfs, ReplyWrite, ReplyXattr, TimeOrNow};

const ROOT: u64 = 1;
const CHUNK: u64 = 64 * 1024;
const NAME_MAX: usize = 255;
const XATTR_NAME_MAX: usize = 255;
const XATTR_SIZE_MAX: usize = 65536;
const LINK_MAX: u32 = 65000;
const SYMLINK_MAX: usize = 4095;
const MAX_FILE_SIZE: u64 = i64::MAX as u64;
const BLKSIZE: u32 = 4096;

const S_ISUID: u32 = 0o4000;
const S_ISGID: u32 = 0o2000;
const S_IXGRP: u32 = 0o0010;
const O_ACCMODE: i32 = 0o3;
const O_RDONLY: i32 = 0;
const O_EXCL: i32 = 0o200;
const O_TRUNC: i32 = 0o1000;
const XATTR_CREATE: i32 = 1;
const XATTR_REPLACE: i32 = 2;
const RENAME_NOREPLACE: u32 = 1;
const RENAME_EXCHANGE: u32 = 2;

/// Linux's rule: setuid always goes; setgid only with group execute
/// (without it the bit marks mandatory locking, not privilege).
fn kill_suidgid(mode: u32) -> u32 {
    let mut mode = mode & !S_ISUID;
    if mode & S_IXGRP != 0 {
        mode &= !S_ISGID;
    }
    mode
}

/// Sparse file data: chunks of `CHUNK` bytes by index; a missing chunk
/// reads as zeros.
#[derive(Default)]
struct Data {
    chunks: BTreeMap<u64, Box<[u8]>>,
}

impl Data {
    fn read(&self, offset: u64, len: usize, out: &mut Vec<u8>) {
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

    fn write(&mut self, offset: u64, data: &[u8]) {
        let mut pos = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let idx = pos / CHUNK;
            let within = (pos % CHUNK) as usize;
            let n = rest.len().min(CHUNK as usize - within);
            let chunk = self
                .chunks
                .entry(idx)
                .or_insert_with(|| vec![0u8; CHUNK as usize].into_boxed_slice());
            chunk[within..within + n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
            pos += n as u64;
        }
    }

    /// Cut to `size`: chunks past it go, the tail of the last one is zeroed
    /// (so growing again reads zeros).
    fn truncate(&mut self, size: u64) {
        let keep = size.div_ceil(CHUNK);
        self.chunks.split_off(&keep);
        if size % CHUNK != 0 {
            if let Some(c) = self.chunks.get_mut(&(size / CHUNK)) {
                c[(size % CHUNK) as usize..].fill(0);
            }
        }
    }

    fn bytes(&self) -> u64 {
        self.chunks.len() as u64 * CHUNK
    }
}

/// A directory: entries by readdir cookie (stable offsets; "." is 1, ".."
/// is 2, the others from 3), and the cookie of each name.
struct Dir {
    entries: BTreeMap<u64, (OsString, u64)>,
    names: HashMap<OsString, u64>,
    next_cookie: u64,
    /// The parent directory (".."); 0 once this one is removed.
    parent: u64,
}

impl Dir {
    fn new(parent: u64) -> Dir {
        Dir {
            entries: BTreeMap::new(),
            names: HashMap::new(),
            next_cookie: 3,
            parent,
        }
    }

    fn get(&self, name: &OsStr) -> Option<u64> {
        self.names.get(name).map(|c| self.entries[c].1)
    }

    fn add(&mut self, name: &OsStr, ino: u64) {
        let cookie = self.next_cookie;
        self.next_cookie += 1;
        self.entries.insert(cookie, (name.to_owned(), ino));
        self.names.insert(name.to_owned(), cookie);
    }

    /// Points an existing name at another inode (keeping its cookie).
    fn set(&mut self, name: &OsStr, ino: u64) {
        let c = self.names[name];
        self.entries.get_mut(&c).unwrap().1 = ino;
    }

    fn remove(&mut self, name: &OsStr) -> Option<u64> {
        let c = self.names.remove(name)?;
        self.entries.remove(&c).map(|(_, ino)| ino)
    }

    fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

enum Body {
    File(Data),
    Dir(Dir),
    Symlink(OsString),
    /// Device nodes, FIFOs, sockets: only attributes.
    Special,
}

struct Inode {
    mode: u32, // type and permission bits
    uid: u32,
    gid: u32,
    rdev: u32,
    nlink: u32,
    size: u64,
    atime: SystemTime,
    mtime: SystemTime,
    ctime: SystemTime,
    /// Kernel references (entries answered minus forgotten).
    lookups: u64,
    /// Open handles (open/create minus release).
    opens: u64,
    xattrs: Vec<(OsString, Vec<u8>)>,
    body: Body,
}

impl Inode {
    fn kind(&self) -> FileType {
        FileType::from_mode(self.mode).unwrap_or(FileType::RegularFile)
    }

    fn is_dir(&self) -> bool {
        matches!(self.body, Body::Dir(_))
    }

    fn dir(&self) -> Result<&Dir, Errno> {
        match &self.body {
            Body::Dir(d) => Ok(d),
            _ => Err(Errno::ENOTDIR),
        }
    }

    fn dir_mut(&mut self) -> Result<&mut Dir, Errno> {
        match &mut self.body {
            Body::Dir(d) => Ok(d),
            _ => Err(Errno::ENOTDIR),
        }
    }

    /// ctime (and mtime) = now.
    fn touch(&mut self, mtime: bool, now: SystemTime) {
        self.ctime = now;
        if mtime {
            self.mtime = now;
        }
    }

    fn attr(&self, ino: u64) -> Attr {
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

/// The caller of a request: uid, primary gid and the thread for
/// supplementary groups (FUSE passes only the primary one).
#[derive(Clone, Copy)]
struct Cred {
    uid: u32,
    gid: u32,
    pid: u32,
}

impl Cred {
    fn of(info: fring::RequestInfo) -> Cred {
        Cred {
            uid: info.uid,
            gid: info.gid,
            pid: info.pid,
        }
    }

    fn in_group(&self, gid: u32) -> bool {
        self.gid == gid || (self.pid != 0 && supplementary_group(self.pid, gid))
    }
}

/// Whether thread `pid` has `gid` among its supplementary groups
/// (`/proc/PID/status`, "Groups:").
fn supplementary_group(pid: u32, gid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("Groups:"))
        .is_some_and(|g| g.split_whitespace().any(|x| x.parse() == Ok(gid)))
}

struct Tree {
    inodes: HashMap<u64, Inode>,
    next_ino: u64,
    used: u64,
}

impl Tree {
    fn get(&self, ino: u64) -> Result<&Inode, Errno> {
        self.inodes.get(&ino).ok_or(Errno::ENOENT)
    }

    fn get_mut(&mut self, ino: u64) -> Result<&mut Inode, Errno> {
        self.inodes.get_mut(&ino).ok_or(Errno::ENOENT)
    }

    /// Drops `ino` once nothing refers to it: no name, no kernel
    /// reference, no open handle.
    fn maybe_free(&mut self, ino: u64) {
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

    /// The directory `parent` as a place for a new name.
    fn dir_for_add(&self, parent: u64, name: &OsStr) -> Result<(), Errno> {
        let p = self.get(parent)?;
        let d = p.dir()?;
        if p.nlink == 0 {
            return Err(Errno::ENOENT); // removed while still open
        }
        check_name(name)?;
        if d.get(name).is_some() || name == "." || name == ".." {
            return Err(Errno::EEXIST);
        }
        Ok(())
    }

    /// Makes an inode of `mode` named `name` in `parent` (checked with
    /// dir_for_add), owned by the caller; the group comes from a setgid
    /// parent, which new directories inherit.
    fn make(
        &mut self,
        c: &Cred,
        parent: u64,
        name: &OsStr,
        mut mode: u32,
        rdev: u32,
        body: Body,
    ) -> u64 {
        let now = SystemTime::now();
        let p = &self.inodes[&parent];
        let mut gid = c.gid;
        if p.mode & S_ISGID != 0 {
            gid = p.gid;
            if matches!(body, Body::Dir(_)) {
                mode |= S_ISGID;
            }
        }
        if !matches!(body, Body::Dir(_))
            && mode & (S_ISGID | S_IXGRP) == S_ISGID | S_IXGRP
            && c.uid != 0
            && !c.in_group(gid)
        {
            mode &= !S_ISGID;
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        let is_dir = matches!(body, Body::Dir(_));
        let size = match &body {
            Body::Symlink(t) => t.len() as u64,
            _ => 0,
        };
        self.inodes.insert(
            ino,
            Inode {
                mode,
                uid: c.uid,
                gid,
                rdev,
                nlink: if is_dir { 2 } else { 1 },
                size,
                atime: now,
                mtime: now,
                ctime: now,
                lookups: 0,
                opens: 0,
                xattrs: Vec::new(),
                body,
            },
        );
        let p = self.inodes.get_mut(&parent).unwrap();
        p.dir_mut().unwrap().add(name, ino);
        if is_dir {
            p.nlink += 1;
        }
        p.mtime = now;
        p.ctime = now;
        ino
    }

    /// The entry for `ino`, counted as one more kernel reference.
    fn entry(&mut self, ino: u64, fs: &MemFs) -> Entry {
        let i = self.inodes.get_mut(&ino).unwrap();
        i.lookups += 1;
        let mut e = Entry::new(i.attr(ino), fs.entry_ttl);
        e.attr_ttl = fs.attr_ttl;
        e
    }

    fn truncate(&mut self, ino: u64, size: u64) {
        let i = self.inodes.get_mut(&ino).unwrap();
        if let Body::File(d) = &mut i.body {
            let before = d.bytes();
            d.truncate(size);
            let after = d.bytes();
            i.size = size;
            self.used = self.used - before + after;
        }
    }

    /// Is directory `dir` equal to or below directory `top`?
    fn in_subtree(&self, top: u64, dir: u64) -> bool {
        let mut x = dir;
        loop {
            if x == top {
                return true;
            }
            if x == ROOT || x == 0 {
                return false;
            }
            x = match self.inodes.get(&x).map(|i| i.dir()) {
                Some(Ok(d)) => d.parent,
                _ => return false,
            };
        }
    }
}

fn check_name(name: &OsStr) -> Result<(), Errno> {
    match name.len() {
        0 => Err(Errno::EINVAL),
        n if n > NAME_MAX => Err(Errno::ENAMETOOLONG),
        _ => Ok(()),
    }
}

struct MemFs {
    tree: Mutex<Tree>,
    size_limit: u64,
    entry_ttl: Duration,
    attr_ttl: Duration,
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

impl MemFs {
    fn lock(&self) -> MutexGuard<'_, Tree> {
        self.tree.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn make_node(
        &self,
        c: &Cred,
        parent: u64,
        name: &OsStr,
        mode: u32,
        rdev: u32,
        body: Body,
    ) -> Result<Entry, Errno> {
        let mut t = self.lock();
        t.dir_for_add(parent, name)?;
        if matches!(body, Body::Dir(_)) && t.get(parent)?.nlink >= u32::MAX - 1 {
            return Err(Errno::EMLINK);
        }
        let ino = t.make(c, parent, name, mode, rdev, body);
        Ok(t.entry(ino, self))
    }

    fn do_setattr(&self, c: &Cred, ino: u64, set: &SetAttr) -> Result<Attr, Errno> {
        let mut t = self.lock();
        let i = t.get(ino)?;
        if let Some(size) = set.size {
            match i.body {
                Body::Dir(_) => return Err(Errno::EISDIR),
                Body::File(_) => {}
                _ => return Err(Errno::EINVAL),
            }
            if size > MAX_FILE_SIZE {
                return Err(Errno::EFBIG);
            }
        }
        // who may change what: the kernel checks it (default_permissions);
        // these are the same rules, so that a failing call changes nothing
        let root = c.uid == 0;
        let owner = root || c.uid == i.uid;
        if let Some(uid) = set.uid {
            if if uid != i.uid { !root } else { !owner } {
                return Err(Errno::EPERM);
            }
        }
        if let Some(gid) = set.gid {
            if !root && (!owner || (gid != i.gid && !c.in_group(gid))) {
                return Err(Errno::EPERM);
            }
        }
        let now = SystemTime::now();
        let i = t.get_mut(ino)?;
        if set.size.is_some_and(|s| s != i.size) {
            let size = set.size.unwrap();
            t.truncate(ino, size);
            t.get_mut(ino)?.mtime = now;
        }
        let i = t.get_mut(ino)?;
        if set.uid.is_some() || set.gid.is_some() {
            if let Some(uid) = set.uid {
                i.uid = uid;
            }
            if let Some(gid) = set.gid {
                i.gid = gid;
            }
            // as chown(2) on Linux: a new owner loses the privileges
            if !i.is_dir() {
                i.mode = i.mode & !0o7777 | kill_suidgid(i.mode & 0o7777);
            }
        }
        if let Some(mode) = set.mode {
            let mut mode = mode & 0o7777;
            if !root && c.uid == i.uid && !c.in_group(i.gid) {
                mode &= !S_ISGID;
            }
            i.mode = i.mode & !0o7777 | mode;
        }
        if set.kill_suidgid {
            i.mode = kill_suidgid(i.mode);
        }
        let time = |t: TimeOrNow| match t {
            TimeOrNow::Now => now,
            TimeOrNow::Time(t) => t,
        };
        if let Some(a) = set.atime {
            i.atime = time(a);
        }
        if let Some(m) = set.mtime {
            i.mtime = time(m);
        }
        i.ctime = set.ctime.unwrap_or(now);
        Ok(i.attr(ino))
    }

    fn do_open(&self, ino: u64, flags: i32, kill: bool) -> Result<Opened, Errno> {
        let mut t = self.lock();
        let i = t.get(ino)?;
        if i.is_dir() && flags & O_ACCMODE != O_RDONLY {
            return Err(Errno::EISDIR);
        }
        // ATOMIC_O_TRUNC: the kernel leaves the truncation to us. Like
        // Linux, O_TRUNC truncates even with O_RDONLY (the kernel checked
        // write permission).
        if flags & O_TRUNC != 0 && matches!(i.body, Body::File(_)) {
            t.truncate(ino, 0);
            let i = t.get_mut(ino)?;
            i.touch(true, SystemTime::now());
            if kill {
                i.mode = kill_suidgid(i.mode);
            }
        }
        t.get_mut(ino)?.opens += 1;
        Ok(Opened::new(ino).with_flags(fring::fopen::KEEP_CACHE))
    }

    fn do_create(
        &self,
        c: &Cred,
        parent: u64,
        name: &OsStr,
        mode: u32,
        flags: i32,
    ) -> Result<(Entry, Opened), Errno> {
        let mut t = self.lock();
        let p = t.get(parent)?;
        if p.nlink == 0 {
            return Err(Errno::ENOENT);
        }
        check_name(name)?;
        let ino = match p.dir()?.get(name) {
            // the kernel's cache missed a name we have: a plain open
            Some(ino) => {
                let i = t.get(ino)?;
                if flags & O_EXCL != 0 {
                    return Err(Errno::EEXIST);
                }
                if i.is_dir() {
                    return Err(Errno::EISDIR);
                }
                if flags & O_TRUNC != 0 && matches!(i.body, Body::File(_)) {
                    t.truncate(ino, 0);
                    t.get_mut(ino)?.touch(true, SystemTime::now());
                }
                ino
            }
            None => {
                t.dir_for_add(parent, name)?;
                t.make(
                    c,
                    parent,
                    name,
                    libc_s_ifreg() | (mode & 0o7777),
                    0,
                    Body::File(Data::default()),
                )
            }
        };
        t.get_mut(ino)?.opens += 1;
        let e = t.entry(ino, self);
        Ok((e, Opened::new(ino).with_flags(fring::fopen::KEEP_CACHE)))
    }

    fn do_write(&self, ino: u64, offset: u64, data: &[u8], flags: u32) -> Result<u32, Errno> {
        let mut t = self.lock();
        let i = t.get(ino)?;
        match i.body {
            Body::File(_) => {}
            Body::Dir(_) => return Err(Errno::EISDIR),
            _ => return Err(Errno::EINVAL),
        }
        if offset > MAX_FILE_SIZE || data.len() as u64 > MAX_FILE_SIZE - offset {
            return Err(Errno::EFBIG);
        }
        let grow = data.len() as u64 + 2 * CHUNK;
        if t.used + grow > self.size_limit {
            return Err(Errno::ENOSPC);
        }
        let used_before = t.used;
        let i = t.get_mut(ino)?;
        let mut delta = 0;
        if let Body::File(d) = &mut i.body {
            let before = d.bytes();
            d.write(offset, data);
            delta = d.bytes() - before;
        }
        if !data.is_empty() {
            i.size = i.size.max(offset + data.len() as u64);
            i.touch(true, SystemTime::now());
            if flags & fring::sys::FRING_WRITE_KILL_SUIDGID != 0 {
                i.mode = kill_suidgid(i.mode);
            }
        }
        t.used = used_before + delta;
        Ok(data.len() as u32)
    }

    fn do_remove(&self, parent: u64, name: &OsStr, dir: bool) -> Result<(), Errno> {
        if dir && name == "." {
            return Err(Errno::EINVAL);
        }
        if dir && name == ".." {
            return Err(Errno::ENOTEMPTY);
        }
        let mut t = self.lock();
        if name.len() > NAME_MAX {
            return Err(Errno::ENAMETOOLONG);
        }
        let ino = t.get(parent)?.dir()?.get(name).ok_or(Errno::ENOENT)?;
        let i = t.get(ino)?;
        match (dir, i.is_dir()) {
            (false, true) => return Err(Errno::EISDIR),
            (true, false) => return Err(Errno::ENOTDIR),
            (true, true) if !i.dir()?.is_empty() => return Err(Errno::ENOTEMPTY),
            _ => {}
        }
        self.unlink_entry(&mut t, parent, name, SystemTime::now());
        Ok(())
    }

    /// Takes `name` out of directory `parent`, updating link counts and
    /// times; frees the inode if that was its last reference.
    fn unlink_entry(&self, t: &mut Tree, parent: u64, name: &OsStr, now: SystemTime) {
        let p = t.inodes.get_mut(&parent).unwrap();
        let ino = p.dir_mut().unwrap().remove(name).unwrap();
        p.mtime = now;
        p.ctime = now;
        let i = t.inodes.get_mut(&ino).unwrap();
        let was_dir = i.is_dir();
        if let Body::Dir(d) = &mut i.body {
            // an empty directory has just "." and its name: both go
            i.nlink = 0;
            d.parent = 0;
        } else {
            i.nlink -= 1;
        }
        i.ctime = now;
        if was_dir {
            t.inodes.get_mut(&parent).unwrap().nlink -= 1;
        }
        t.maybe_free(ino);
    }

    fn do_rename(
        &self,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: u32,
    ) -> Result<(), Errno> {
        if flags & !(RENAME_NOREPLACE | RENAME_EXCHANGE) != 0
            || (flags & RENAME_NOREPLACE != 0 && flags & RENAME_EXCHANGE != 0)
        {
            return Err(Errno::EINVAL);
        }
        if name.len() > NAME_MAX || newname.len() > NAME_MAX {
            return Err(Errno::ENAMETOOLONG);
        }
        let dot = |n: &OsStr| n == "." || n == "..";
        if dot(name) || dot(newname) {
            return Err(Errno::EBUSY);
        }
        let mut t = self.lock();
        let op = t.get(parent)?;
        let np = t.get(newparent)?;
        let (od, nd) = (op.dir()?, np.dir()?);
        if np.nlink == 0 {
            return Err(Errno::ENOENT);
        }
        let src = od.get(name).ok_or(Errno::ENOENT)?;
        let dst = nd.get(newname);
        if flags & RENAME_EXCHANGE != 0 && dst.is_none() {
            return Err(Errno::ENOENT);
        }
        if flags & RENAME_NOREPLACE != 0 && dst.is_some() {
            return Err(Errno::EEXIST);
        }
        if dst == Some(src) {
            return Ok(()); // two names of one inode: nothing happens
        }
        let src_dir = t.get(src)?.is_dir();
        if src_dir && t.in_subtree(src, newparent) {
            return Err(Errno::EINVAL);
        }
        let now = SystemTime::now();
        if flags & RENAME_EXCHANGE != 0 {
            let dst = dst.unwrap();
            let dst_dir = t.get(dst)?.is_dir();
            if dst_dir && t.in_subtree(dst, parent) {
                return Err(Errno::EINVAL);
            }
            t.get_mut(parent)?.dir_mut()?.set(name, dst);
            t.get_mut(newparent)?.dir_mut()?.set(newname, src);
            if parent != newparent {
                for (moved, is_dir, from, to) in [
                    (src, src_dir, parent, newparent),
                    (dst, dst_dir, newparent, parent),
                ] {
                    if is_dir {
                        t.get_mut(moved)?.dir_mut()?.parent = to;
                        t.get_mut(from)?.nlink -= 1;
                        t.get_mut(to)?.nlink += 1;
                    }
                }
            }
            t.get_mut(dst)?.ctime = now;
        } else {
            if let Some(dst) = dst {
                let d = t.get(dst)?;
                match (src_dir, d.is_dir()) {
                    (true, false) => return Err(Errno::ENOTDIR),
                    (false, true) => return Err(Errno::EISDIR),
                    (true, true) if !d.dir()?.is_empty() => return Err(Errno::ENOTEMPTY),
                    _ => {}
                }
                // the replaced name keeps its cookie and now names src
                t.get_mut(newparent)?.dir_mut()?.set(newname, src);
                let d = t.get_mut(dst)?;
                let dst_was_dir = d.is_dir();
                if let Body::Dir(dd) = &mut d.body {
                    d.nlink = 0;
                    dd.parent = 0;
                } else {
                    d.nlink -= 1;
                }
                d.ctime = now;
                if dst_was_dir {
                    t.get_mut(newparent)?.nlink -= 1;
                }
                t.maybe_free(dst);
            } else {
                t.get_mut(newparent)?.dir_mut()?.add(newname, src);
            }
            t.get_mut(parent)?.dir_mut()?.remove(name);
            if src_dir && parent != newparent {
                t.get_mut(src)?.dir_mut()?.parent = newparent;
                t.get_mut(parent)?.nlink -= 1;
                t.get_mut(newparent)?.nlink += 1;
            }
        }
        t.get_mut(src)?.ctime = now;
        for p in [parent, newparent] {
            let p = t.get_mut(p)?;
            p.mtime = now;
            p.ctime = now;
        }
        Ok(())
    }

    fn do_link(&self, ino: u64, newparent: u64, newname: &OsStr) -> Result<Entry, Errno> {
        let mut t = self.lock();
        let i = t.get(ino)?;
        if i.is_dir() {
            return Err(Errno::EPERM);
        }
        if i.nlink == 0 {
            return Err(Errno::ENOENT);
        }
        if i.nlink >= LINK_MAX {
            return Err(Errno::EMLINK);
        }
        t.dir_for_add(newparent, newname)?;
        let now = SystemTime::now();
        let p = t.get_mut(newparent)?;
        p.dir_mut()?.add(newname, ino);
        p.mtime = now;
        p.ctime = now;
        let i = t.get_mut(ino)?;
        i.nlink += 1;
        i.ctime = now;
        Ok(t.entry(ino, self))
    }
}

fn libc_s_ifreg() -> u32 {
    FileType::RegularFile.mode_bits()
}

/// The namespaces Linux knows; others are EOPNOTSUPP, as on tmpfs.
fn xattr_ns_known(name: &[u8]) -> bool {
    name.starts_with(b"user.") || name.starts_with(b"trusted.") || name.starts_with(b"security.")
}

/// `user.*` is only for regular files and directories, as on Linux.
fn user_ns_denied(i: &Inode, name: &[u8]) -> bool {
    name.starts_with(b"user.") && !matches!(i.body, Body::File(_) | Body::Dir(_))
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
        let now = SystemTime::now();
        let root = Inode {
            mode: FileType::Directory.mode_bits() | 0o755,
            uid: 0,
            gid: 0,
            rdev: 0,
            nlink: 2,
            size: 0,
            atime: now,
            mtime: now,
            ctime: now,
            lookups: 1,
            opens: 0,
            xattrs: Vec::new(),
            body: Body::Dir(Dir::new(ROOT)),
        };
        let (uid, gid) = std::fs::metadata("/proc/self")
            .map(|m| {
                (
                    std::os::unix::fs::MetadataExt::uid(&m),
                    std::os::unix::fs::MetadataExt::gid(&m),
                )
            })
            .unwrap_or((0, 0));
        let root = Inode { uid, gid, ..root };
        mount.debug("memfs-rust: ready");
        Ok(MemFs {
            tree: Mutex::new(Tree {
                inodes: HashMap::from([(ROOT, root)]),
                next_ino: ROOT + 1,
                used: 0,
            }),
            size_limit,
            entry_ttl: seconds(options, "entry_timeout")?,
            attr_ttl: seconds(options, "attr_timeout")?,
        })
    }

    fn lookup(&self, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if name.len() > NAME_MAX {
            return reply.error(Errno::ENAMETOOLONG);
        }
        let res = (|| {
            let mut t = self.lock();
            let d = t.get(parent)?.dir()?;
            let ino = match name.as_bytes() {
                b"." => parent,
                b".." if d.parent != 0 => d.parent,
                _ => d.get(name).ok_or(Errno::ENOENT)?,
            };
            Ok(t.entry(ino, self))
        })();
        reply.result(res, |r, e| r.entry(&e))
    }

    fn forget(&self, ino: u64, nlookup: u64) {
        let mut t = self.lock();
        if let Some(i) = t.inodes.get_mut(&ino) {
            i.lookups = i.lookups.saturating_sub(nlookup);
            t.maybe_free(ino);
        }
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
        let kind = match FileType::from_mode(mode) {
            None if mode & 0o170000 == 0 => FileType::RegularFile, // mknod(2): type 0 is a file
            Some(
                k @ (FileType::RegularFile
                | FileType::CharDevice
                | FileType::BlockDevice
                | FileType::NamedPipe
                | FileType::Socket),
            ) => k,
            _ => return reply.error(Errno::EINVAL),
        };
        let body = match kind {
            FileType::RegularFile => Body::File(Data::default()),
            _ => Body::Special,
        };
        let rdev = if matches!(kind, FileType::CharDevice | FileType::BlockDevice) {
            rdev
        } else {
            0
        };
        let c = Cred::of(reply.request());
        let res = self.make_node(
            &c,
            parent,
            name,
            kind.mode_bits() | (mode & 0o7777),
            rdev,
            body,
        );
        reply.result(res, |r, e| r.entry(&e))
    }

    fn mkdir(&self, parent: u64, name: &OsStr, mode: u32, _umask: u32, reply: ReplyEntry) {
        let c = Cred::of(reply.request());
        let mode = FileType::Directory.mode_bits() | (mode & 0o7777);
        let res = self.make_node(&c, parent, name, mode, 0, Body::Dir(Dir::new(parent)));
        reply.result(res, |r, e| r.entry(&e))
    }

    fn symlink(&self, parent: u64, name: &OsStr, target: &Path, reply: ReplyEntry) {
        let target = target.as_os_str();
        if target.is_empty() {
            return reply.error(Errno::ENOENT);
        }
        if target.len() > SYMLINK_MAX {
            return reply.error(Errno::ENAMETOOLONG);
        }
        let c = Cred::of(reply.request());
        let mode = FileType::Symlink.mode_bits() | 0o777;
        let res = self.make_node(&c, parent, name, mode, 0, Body::Symlink(target.to_owned()));
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
        let mut buf = Vec::new();
        let res = (|| {
            let t = self.lock();
            let i = t.get(ino)?;
            match &i.body {
                Body::File(d) => {
                    if offset < i.size {
                        let n = (i.size - offset).min(size as u64) as usize;
                        d.read(offset, n, &mut buf);
                    }
                    Ok(())
                }
                Body::Dir(_) => Err(Errno::EISDIR),
                _ => Err(Errno::EINVAL),
            }
        })();
        reply.result(res, |r, ()| r.data(&buf))
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
        let mut t = self.lock();
        if let Some(i) = t.inodes.get_mut(&ino) {
            i.opens = i.opens.saturating_sub(1);
            t.maybe_free(ino);
        }
        drop(t);
        reply.ok()
    }

    fn fsync(&self, _ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        reply.ok() // memory is as durable as it gets
    }

    fn opendir(&self, ino: u64, _flags: i32, reply: ReplyOpen) {
        let res = self.lock().get(ino).and_then(|i| i.dir().map(|_| ()));
        reply.result(res, |r, ()| r.opened(Opened::new(0)))
    }

    fn readdir(&self, ino: u64, _fh: u64, offset: u64, mut reply: ReplyDir) {
        let t = self.lock();
        let d = match t.get(ino).and_then(|i| i.dir()) {
            Ok(d) => d,
            Err(e) => {
                drop(t);
                return reply.error(e);
            }
        };
        let dot = [
            (1u64, OsStr::new("."), ino),
            (
                2,
                OsStr::new(".."),
                if d.parent != 0 { d.parent } else { ino },
            ),
        ];
        let dots = dot
            .iter()
            .filter(|(c, _, _)| *c > offset)
            .map(|(c, n, i)| (*c, *n, *i));
        let rest = d
            .entries
            .range(offset.max(2) + 1..)
            .map(|(c, (n, i))| (*c, n.as_os_str(), *i));
        for (cookie, name, child) in dots.chain(rest) {
            let kind = t
                .inodes
                .get(&child)
                .map_or(FileType::RegularFile, |i| i.kind());
            if reply.add(child, cookie, kind, name).is_full() {
                break;
            }
        }
        drop(t);
        reply.ok()
    }

    fn fsyncdir(&self, _ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        reply.ok()
    }

    fn statfs(&self, _ino: u64, reply: ReplyStatfs) {
        let t = self.lock();
        let blocks = self.size_limit / BLKSIZE as u64;
        let used = t.used.div_ceil(BLKSIZE as u64);
        let files = (self.size_limit / BLKSIZE as u64).min(u32::MAX as u64);
        let st = Statfs {
            blocks,
            bfree: blocks.saturating_sub(used),
            bavail: blocks.saturating_sub(used),
            files,
            ffree: files.saturating_sub(t.inodes.len() as u64),
            bsize: BLKSIZE,
            namelen: NAME_MAX as u32,
            frsize: BLKSIZE,
        };
        drop(t);
        reply.statfs(&st)
    }

    fn setxattr(&self, ino: u64, name: &OsStr, value: &[u8], flags: i32, reply: ReplyEmpty) {
        let res = (|| {
            if flags & !(XATTR_CREATE | XATTR_REPLACE) != 0 {
                return Err(Errno::EINVAL);
            }
            let n = name.as_bytes();
            if n.is_empty() || n.len() > XATTR_NAME_MAX {
                return Err(Errno::ERANGE);
            }
            if !xattr_ns_known(n) {
                return Err(Errno::EOPNOTSUPP);
            }
            if value.len() > XATTR_SIZE_MAX {
                return Err(Errno::E2BIG);
            }
            let mut t = self.lock();
            let i = t.get_mut(ino)?;
            if user_ns_denied(i, n) {
                return Err(Errno::EPERM);
            }
            match i.xattrs.iter_mut().find(|(k, _)| k == name) {
                Some(_) if flags & XATTR_CREATE != 0 => return Err(Errno::EEXIST),
                Some((_, v)) => *v = value.to_vec(),
                None if flags & XATTR_REPLACE != 0 => return Err(Errno::ENODATA),
                None => i.xattrs.push((name.to_owned(), value.to_vec())),
            }
            i.touch(false, SystemTime::now());
            Ok(())
        })();
        reply.result(res, |r, ()| r.ok())
    }

    fn getxattr(&self, ino: u64, name: &OsStr, size: u32, reply: ReplyXattr) {
        let res = (|| {
            let n = name.as_bytes();
            if n.len() > XATTR_NAME_MAX {
                return Err(Errno::ERANGE);
            }
            if !xattr_ns_known(n) {
                return Err(Errno::EOPNOTSUPP);
            }
            let t = self.lock();
            let i = t.get(ino)?;
            let (_, v) = i
                .xattrs
                .iter()
                .find(|(k, _)| k == name)
                .ok_or(Errno::ENODATA)?;
            if size != 0 && v.len() > size as usize {
                return Err(Errno::ERANGE);
            }
            Ok(v.clone())
        })();
        reply.result(res, |r, v| {
            if size == 0 {
                r.size(v.len() as u32)
            } else {
                r.data(&v)
            }
        })
    }

    fn listxattr(&self, ino: u64, size: u32, reply: ReplyXattr) {
        let c = Cred::of(reply.request());
        let res = self.lock().get(ino).map(|i| {
            let mut names = Vec::new();
            for (k, _) in &i.xattrs {
                // trusted.* is for privileged callers only
                if c.uid == 0 || !k.as_bytes().starts_with(b"trusted.") {
                    names.extend_from_slice(k.as_bytes());
                    names.push(0);
                }
            }
            names
        });
        reply.result(res, |r, names| {
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
        let res = (|| {
            if !xattr_ns_known(name.as_bytes()) {
                return Err(Errno::EOPNOTSUPP);
            }
            let mut t = self.lock();
            let i = t.get_mut(ino)?;
            let at = i
                .xattrs
                .iter()
                .position(|(k, _)| k == name)
                .ok_or(Errno::ENODATA)?;
            i.xattrs.remove(at);
            i.touch(false, SystemTime::now());
            Ok(())
        })();
        reply.result(res, |r, ()| r.ok())
    }
}

fring::plugin!(MemFs, name: "memfs-rust", version: "1.0",
               description: "a read-write POSIX file system in memory, in Rust");
