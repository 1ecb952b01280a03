//! A test plugin (`cargo build --example replies`, used by
//! tests/integration/test_rust.py): a root directory whose names say how
//! their LOOKUP ends. `panic` panics in the method, `drop` drops the reply,
//! `later` is answered 200 ms later from another thread, `file` at once;
//! anything else is ENOENT.
#![deny(unsafe_code)]

use std::ffi::OsStr;
use std::time::Duration;

use fring::{Attr, Entry, Errno, FileType, Filesystem, Mount, Options, ReplyAttr, ReplyEntry};

struct Replies;

fn attr(ino: u64) -> Attr {
    match ino {
        1 => Attr::new(1, FileType::Directory, 0o755),
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

    fn lookup(&self, _parent: u64, name: &OsStr, reply: ReplyEntry) {
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
            Some("file") => reply.entry(&entry(2)),
            _ => reply.error(Errno::ENOENT),
        }
    }
}

fring::plugin!(Replies, name: "replies-rust", version: "1.0", description: "test replies");
