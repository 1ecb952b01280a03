// SPDX-License-Identifier: MIT
//! Removing names: unlink and rmdir.
//!
//! A removed inode lives on while the kernel still refers to it or a
//! handle is open (`Tree::maybe_free` drops it after the last one), so
//! files unlinked while open stay readable and writable.
use std::ffi::OsStr;
use std::time::SystemTime;

use fring::Errno;

use crate::dir::NAME_MAX;
use crate::inode::{Body, Tree};
use crate::MemFs;

impl MemFs {
    /// unlink (`dir` false) or rmdir (`dir` true) of `name` in `parent`.
    pub(crate) fn do_remove(&self, parent: u64, name: &OsStr, dir: bool) -> Result<(), Errno> {
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
        t.unlink_entry(parent, name, SystemTime::now());
        Ok(())
    }
}

impl Tree {
    /// Takes `name` out of directory `parent`, updating link counts and
    /// times; frees the inode if that was its last reference.
    fn unlink_entry(&mut self, parent: u64, name: &OsStr, now: SystemTime) {
        let p = self.inodes.get_mut(&parent).unwrap();
        let ino = p.dir_mut().unwrap().remove(name).unwrap();
        p.mtime = now;
        p.ctime = now;
        let i = self.inodes.get_mut(&ino).unwrap();
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
            self.inodes.get_mut(&parent).unwrap().nlink -= 1;
        }
        self.maybe_free(ino);
    }
}
