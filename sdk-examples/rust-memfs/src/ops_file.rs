// SPDX-License-Identifier: MIT
//! Open files: open, create, read and write.
//!
//! `open` and `create` truncate on `O_TRUNC` themselves (the filesystem
//! declares `ATOMIC_O_TRUNC`, so the kernel sends no separate truncate);
//! writes grow files and charge their new chunks to the `size` limit.
use std::ffi::OsStr;
use std::time::SystemTime;

use fring::{Entry, Errno, FileType, Opened};

use crate::data::{Data, CHUNK, MAX_FILE_SIZE};
use crate::dir::check_name;
use crate::inode::Body;
use crate::perm::{kill_suidgid, Cred};
use crate::MemFs;

const O_ACCMODE: i32 = 0o3;
const O_RDONLY: i32 = 0;
const O_EXCL: i32 = 0o200;
const O_TRUNC: i32 = 0o1000;

impl MemFs {
    /// Opens `ino`; `kill`: the open truncates for an unprivileged caller,
    /// so setuid/setgid go with the data.
    pub(crate) fn do_open(&self, ino: u64, flags: i32, kill: bool) -> Result<Opened, Errno> {
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

    pub(crate) fn do_create(
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
                    FileType::RegularFile.mode_bits() | (mode & 0o7777),
                    0,
                    Body::File(Data::default()),
                )
            }
        };
        t.get_mut(ino)?.opens += 1;
        let e = t.entry(ino, self);
        Ok((e, Opened::new(ino).with_flags(fring::fopen::KEEP_CACHE)))
    }

    /// Up to `size` bytes from `offset` (fewer at the end of the file).
    pub(crate) fn do_read(&self, ino: u64, offset: u64, size: u32) -> Result<Vec<u8>, Errno> {
        let mut buf = Vec::new();
        let t = self.lock();
        let i = t.get(ino)?;
        i.file_or(Errno::EINVAL)?;
        if let Body::File(d) = &i.body {
            if offset < i.size {
                let n = (i.size - offset).min(size as u64) as usize;
                d.read(offset, n, &mut buf);
            }
        }
        Ok(buf)
    }

    pub(crate) fn do_write(
        &self,
        ino: u64,
        offset: u64,
        data: &[u8],
        flags: u32,
    ) -> Result<u32, Errno> {
        let mut t = self.lock();
        t.get(ino)?.file_or(Errno::EINVAL)?;
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
}
