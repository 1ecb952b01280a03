// SPDX-License-Identifier: MIT
//! Making names: mknod, mkdir, symlink and link (create, which also
//! opens, is in ops_file.rs).
//!
//! All of them check the parent the same way (`Tree::dir_for_add`) and
//! new inodes go through one place, `Tree::make`, so owner, group and
//! times of new files follow one rule.
use std::ffi::OsStr;
use std::path::Path;
use std::time::SystemTime;

use fring::{Entry, Errno, FileType};

use crate::data::Data;
use crate::dir::Dir;
use crate::inode::{Body, Inode, Tree};
use crate::perm::{new_mode_gid, Cred};
use crate::MemFs;

/// Most hard links to one inode.
const LINK_MAX: u32 = 65000;
/// Longest symlink target (bytes).
const SYMLINK_MAX: usize = 4095;

impl Tree {
    /// Makes an inode of `mode` named `name` in `parent` (checked with
    /// dir_for_add), owned by the caller; the group comes from a setgid
    /// parent, which new directories inherit.
    pub(crate) fn make(
        &mut self,
        c: &Cred,
        parent: u64,
        name: &OsStr,
        mode: u32,
        rdev: u32,
        body: Body,
    ) -> u64 {
        let now = SystemTime::now();
        let is_dir = matches!(body, Body::Dir(_));
        let (mode, gid) = new_mode_gid(c, &self.inodes[&parent], mode, is_dir);
        let ino = self.insert(Inode::new(mode, c.uid, gid, rdev, body, now));
        let p = self.inodes.get_mut(&parent).unwrap();
        p.dir_mut().unwrap().add(name, ino);
        if is_dir {
            p.nlink += 1;
        }
        p.mtime = now;
        p.ctime = now;
        ino
    }
}

impl MemFs {
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

    /// A regular file, device node, FIFO or socket.
    pub(crate) fn do_mknod(
        &self,
        c: &Cred,
        parent: u64,
        name: &OsStr,
        mode: u32,
        rdev: u32,
    ) -> Result<Entry, Errno> {
        let kind = match FileType::from_mode(mode) {
            None if mode & 0o170000 == 0 => FileType::RegularFile, // mknod(2): type 0 is a file
            Some(
                k @ (FileType::RegularFile
                | FileType::CharDevice
                | FileType::BlockDevice
                | FileType::NamedPipe
                | FileType::Socket),
            ) => k,
            _ => return Err(Errno::EINVAL),
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
        let mode = kind.mode_bits() | (mode & 0o7777);
        self.make_node(c, parent, name, mode, rdev, body)
    }

    pub(crate) fn do_mkdir(
        &self,
        c: &Cred,
        parent: u64,
        name: &OsStr,
        mode: u32,
    ) -> Result<Entry, Errno> {
        let mode = FileType::Directory.mode_bits() | (mode & 0o7777);
        self.make_node(c, parent, name, mode, 0, Body::Dir(Dir::new(parent)))
    }

    pub(crate) fn do_symlink(
        &self,
        c: &Cred,
        parent: u64,
        name: &OsStr,
        target: &Path,
    ) -> Result<Entry, Errno> {
        let target = target.as_os_str();
        if target.is_empty() {
            return Err(Errno::ENOENT);
        }
        if target.len() > SYMLINK_MAX {
            return Err(Errno::ENAMETOOLONG);
        }
        let mode = FileType::Symlink.mode_bits() | 0o777;
        self.make_node(c, parent, name, mode, 0, Body::Symlink(target.to_owned()))
    }

    /// A new name `newname` in `newparent` for `ino` (not a directory).
    pub(crate) fn do_link(
        &self,
        ino: u64,
        newparent: u64,
        newname: &OsStr,
    ) -> Result<Entry, Errno> {
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
