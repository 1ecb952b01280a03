// SPDX-License-Identifier: MIT
//! A test plugin (`cargo build --example overwrite`, used by
//! tests/integration/test_rust.py): a flat directory of files in memory
//! whose `open` is the trait's default, which ignores `O_TRUNC`, and which
//! leaves `Filesystem::ATOMIC_O_TRUNC` false. The host must then not
//! negotiate FUSE_ATOMIC_O_TRUNC, so the kernel truncates an `O_TRUNC`
//! open through `setattr` (size 0): overwriting a file leaves exactly the
//! new bytes.
#![deny(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::sync::Mutex;
use std::time::Duration;

use fring::{Attr, Entry, Errno, FileType, Filesystem, Mount, Opened, Options, SetAttr};
use fring::{ReplyAttr, ReplyCreate, ReplyDir, ReplyEmpty, ReplyEntry, ReplyRead, ReplyWrite};

const TTL: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Files {
    by_name: BTreeMap<OsString, u64>,
    data: BTreeMap<u64, Vec<u8>>,
    next: u64,
}

struct Overwrite {
    files: Mutex<Files>,
}

fn attr(ino: u64, f: &Files) -> Option<Attr> {
    if ino == 1 {
        return Some(Attr::new(1, FileType::Directory, 0o777));
    }
    let d = f.data.get(&ino)?;
    Some(Attr { size: d.len() as u64, ..Attr::new(ino, FileType::RegularFile, 0o666) })
}

impl Filesystem for Overwrite {
    fn new(_: &Options, _: Mount) -> Result<Self, String> {
        Ok(Overwrite { files: Mutex::new(Files { next: 2, ..Default::default() }) })
    }

    fn lookup(&self, parent: u64, name: &OsStr, reply: ReplyEntry) {
        let f = self.files.lock().unwrap();
        match f.by_name.get(name).filter(|_| parent == 1).and_then(|&i| attr(i, &f)) {
            Some(a) => reply.entry(&Entry::new(a, TTL)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        let f = self.files.lock().unwrap();
        match attr(ino, &f) {
            Some(a) => reply.attr(&a, TTL),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(&self, ino: u64, set: SetAttr, reply: ReplyAttr) {
        let mut f = self.files.lock().unwrap();
        if let (Some(size), Some(d)) = (set.size, f.data.get_mut(&ino)) {
            d.resize(size as usize, 0);
        }
        match attr(ino, &f) {
            Some(a) => reply.attr(&a, TTL),
            None => reply.error(Errno::ENOENT),
        }
    }

    // `open` is left to the default: success, fh 0, O_TRUNC ignored.

    fn create(&self, parent: u64, name: &OsStr, _mode: u32, _umask: u32, _flags: i32, reply: ReplyCreate) {
        if parent != 1 {
            return reply.error(Errno::ENOENT);
        }
        let mut f = self.files.lock().unwrap();
        let ino = f.next;
        f.next += 1;
        f.by_name.insert(name.to_owned(), ino);
        f.data.insert(ino, Vec::new());
        let a = attr(ino, &f).unwrap();
        reply.created(&Entry::new(a, TTL), Opened::new(0))
    }

    fn read(&self, ino: u64, _fh: u64, offset: u64, size: u32, reply: ReplyRead) {
        let f = self.files.lock().unwrap();
        let d = f.data.get(&ino).map_or(&[][..], |d| d.as_slice());
        let start = (offset as usize).min(d.len());
        let end = (start + size as usize).min(d.len());
        reply.data(&d[start..end])
    }

    fn write(&self, ino: u64, _fh: u64, offset: u64, _flags: u32, reply: ReplyWrite) {
        let mut f = self.files.lock().unwrap();
        let (Some(d), Some(new)) = (f.data.get_mut(&ino), reply.data()) else {
            return reply.error(Errno::EIO);
        };
        let end = offset as usize + new.len();
        if d.len() < end {
            d.resize(end, 0);
        }
        d[offset as usize..end].copy_from_slice(new);
        let n = new.len() as u32;
        reply.written(n)
    }

    fn unlink(&self, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        let mut f = self.files.lock().unwrap();
        match f.by_name.remove(name).filter(|_| parent == 1) {
            Some(ino) => {
                f.data.remove(&ino);
                reply.ok()
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn readdir(&self, ino: u64, _fh: u64, offset: u64, mut reply: ReplyDir) {
        if ino != 1 {
            return reply.error(Errno::ENOTDIR);
        }
        let f = self.files.lock().unwrap();
        let mut list = vec![(OsString::from("."), 1), (OsString::from(".."), 1)];
        list.extend(f.by_name.iter().map(|(n, &i)| (n.clone(), i)));
        for (i, (name, ino)) in list.iter().enumerate().skip(offset as usize) {
            let kind = if *ino == 1 { FileType::Directory } else { FileType::RegularFile };
            if reply.add(*ino, i as u64 + 1, kind, name).is_full() {
                break;
            }
        }
        reply.ok()
    }
}

fring::plugin!(Overwrite, name: "overwrite-rust", version: "1.0",
               description: "test: the default open, which ignores O_TRUNC");
