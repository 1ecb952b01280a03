// SPDX-License-Identifier: MIT
//! A test plugin (`cargo build --example replies`, used by
//! tests/integration/test_rust.py): a root directory whose names say how
//! their LOOKUP ends. `panic` panics in the method, `drop` drops the reply,
//! `later` is answered 200 ms later from another thread, `file` at once;
//! anything else is ENOENT. `dir` lists 300 names `f000`..`f299`, with a
//! name the host refuses (`bad/name`, `""`, `x\0y`) after every 50th and
//! "." and ".." first: the listing must go on past each refused name.
#![deny(unsafe_code)]

use std::ffi::OsStr;
use std::time::Duration;

use std::os::unix::ffi::OsStrExt;

use fring::{Attr, Entry, Errno, FileType, Filesystem, Mount, Options, ReplyAttr, ReplyDir, ReplyEntry};

struct Replies;

const DIR: u64 = 4;
const NAMES: u64 = 300;

/// The listing of `dir`: (name, ino); the bad names have ino 0 and must
/// never reach the kernel.
fn listing() -> Vec<(Vec<u8>, u64)> {
    let mut v = vec![(b".".to_vec(), DIR), (b"..".to_vec(), 1)];
    for i in 0..NAMES {
        v.push((format!("f{i:03}").into_bytes(), 100 + i));
        match i % 150 {
            49 => v.push((b"bad/name".to_vec(), 0)),
            99 => v.push((Vec::new(), 0)),
            149 => v.push((b"x\0y".to_vec(), 0)),
            _ => {}
        }
    }
    v
}

fn attr(ino: u64) -> Attr {
    match ino {
        1 | DIR => Attr::new(ino, FileType::Directory, 0o755),
        _ => Attr::new(ino, FileType::RegularFile, 0o644),
    }
}

impl Filesystem for Replies {
    fn new(_: &Options, _: Mount) -> Result<Self, String> {
        Ok(Replies)
    }

    fn getattr(&self, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        reply.attr(&attr(ino), Duration::ZERO)
    }

    fn lookup(&self, parent: u64, name: &OsStr, reply: ReplyEntry) {
        let entry = |ino| Entry::new(attr(ino), Duration::ZERO);
        match name.to_str() {
            Some("panic") => panic!("lookup of {name:?} panics on purpose"),
            Some("drop") => drop(reply),
            Some("later") => {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(200));
                    reply.entry(&entry(3))
                });
            }
            Some("file") if parent == 1 => reply.entry(&entry(2)),
            Some("dir") if parent == 1 => reply.entry(&entry(DIR)),
            Some(n) if parent == DIR && n.len() == 4 && n.starts_with('f') => match n[1..].parse::<u64>() {
                Ok(i) if i < NAMES => reply.entry(&entry(100 + i)),
                _ => reply.error(Errno::ENOENT),
            },
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn readdir(&self, ino: u64, _fh: u64, offset: u64, mut reply: ReplyDir) {
        if ino != DIR {
            return reply.error(Errno::ENOTDIR);
        }
        for (i, (name, child)) in listing().into_iter().enumerate().skip(offset as usize) {
            let kind = if child == DIR || child == 1 { FileType::Directory } else { FileType::RegularFile };
            // a refused name (logged by the host) is skipped: only a full
            // reply ends this call
            if reply.add(child.max(1), i as u64 + 1, kind, OsStr::from_bytes(&name)).is_full() {
                break;
            }
        }
        reply.ok()
    }
}

fring::plugin!(Replies, name: "replies-rust", version: "1.0", description: "test replies");
