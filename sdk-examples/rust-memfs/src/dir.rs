// SPDX-License-Identifier: MIT
//! Directories: their entries, name checks, lookup and readdir.
//!
//! Entries are kept by readdir cookie so that offsets stay stable while a
//! directory changes under an open listing (a removed name never shifts
//! the others; a rename onto a name keeps that name's cookie).
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use fring::{Entry, Errno, FileType, ReplyDir};

use crate::inode::{Tree, ROOT};
use crate::MemFs;

/// Longest name (bytes).
pub(crate) const NAME_MAX: usize = 255;

/// A directory: entries by readdir cookie (stable offsets; "." is 1, ".."
/// is 2, the others from 3), and the cookie of each name.
pub(crate) struct Dir {
    pub(crate) entries: BTreeMap<u64, (OsString, u64)>,
    names: HashMap<OsString, u64>,
    next_cookie: u64,
    /// The parent directory (".."); 0 once this one is removed.
    pub(crate) parent: u64,
}

impl Dir {
    pub(crate) fn new(parent: u64) -> Dir {
        Dir {
            entries: BTreeMap::new(),
            names: HashMap::new(),
            next_cookie: 3,
            parent,
        }
    }

    pub(crate) fn get(&self, name: &OsStr) -> Option<u64> {
        self.names.get(name).map(|c| self.entries[c].1)
    }

    pub(crate) fn add(&mut self, name: &OsStr, ino: u64) {
        let cookie = self.next_cookie;
        self.next_cookie += 1;
        self.entries.insert(cookie, (name.to_owned(), ino));
        self.names.insert(name.to_owned(), cookie);
    }

    /// Points an existing name at another inode (keeping its cookie).
    pub(crate) fn set(&mut self, name: &OsStr, ino: u64) {
        let c = self.names[name];
        self.entries.get_mut(&c).unwrap().1 = ino;
    }

    pub(crate) fn remove(&mut self, name: &OsStr) -> Option<u64> {
        let c = self.names.remove(name)?;
        self.entries.remove(&c).map(|(_, ino)| ino)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

pub(crate) fn check_name(name: &OsStr) -> Result<(), Errno> {
    match name.len() {
        0 => Err(Errno::EINVAL),
        n if n > NAME_MAX => Err(Errno::ENAMETOOLONG),
        _ => Ok(()),
    }
}

impl Tree {
    /// The directory `parent` as a place for a new name.
    pub(crate) fn dir_for_add(&self, parent: u64, name: &OsStr) -> Result<(), Errno> {
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

    /// Is directory `dir` equal to or below directory `top`?
    pub(crate) fn in_subtree(&self, top: u64, dir: u64) -> bool {
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

impl MemFs {
    pub(crate) fn do_lookup(&self, parent: u64, name: &OsStr) -> Result<Entry, Errno> {
        if name.len() > NAME_MAX {
            return Err(Errno::ENAMETOOLONG);
        }
        let mut t = self.lock();
        let d = t.get(parent)?.dir()?;
        let ino = match name.as_bytes() {
            b"." => parent,
            b".." if d.parent != 0 => d.parent,
            _ => d.get(name).ok_or(Errno::ENOENT)?,
        };
        Ok(t.entry(ino, self))
    }

    pub(crate) fn do_opendir(&self, ino: u64) -> Result<(), Errno> {
        self.lock().get(ino).and_then(|i| i.dir().map(|_| ()))
    }

    /// Lists `ino` from after cookie `offset` until the reply is full.
    pub(crate) fn do_readdir(&self, ino: u64, offset: u64, mut reply: ReplyDir) {
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
}
