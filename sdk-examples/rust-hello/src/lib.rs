// SPDX-License-Identifier: MIT
//! rust-hello: a root directory holding one read-only file, "hello",
//! written with the safe `fring` crate (bindings/rust/fring): the same
//! filesystem as sdk-examples/c-hello, method for method, and no `unsafe`.
#![deny(unsafe_code)]

use std::ffi::OsStr;
use std::time::Duration;

use fring::{Attr, Entry, Errno, FileType, Filesystem, Mount, Options};
use fring::{ReplyAttr, ReplyDir, ReplyEntry, ReplyRead};

const ROOT: u64 = 1; // the kernel's root inode
const HELLO: u64 = 2;
const TTL: Duration = Duration::from_secs(1);
const TEXT: &[u8] = b"hello from Rust\n";

/// No state: the one file is a constant.
struct Hello;

fn attr(ino: u64) -> Attr {
    if ino == ROOT {
        Attr::new(ROOT, FileType::Directory, 0o755)
    } else {
        Attr {
            size: TEXT.len() as u64,
            ..Attr::new(HELLO, FileType::RegularFile, 0o444)
        }
    }
}

/// The format of the (empty) state a takeover hands over.
const STATE_VERSION: u32 = 1;

impl Filesystem for Hello {
    // `fring restart` may hand the mount to a new process: with no state,
    // there is nothing to carry but the format's version.
    const TAKEOVER: bool = true;

    fn new(_options: &Options, _mount: Mount) -> Result<Self, String> {
        Ok(Hello)
    }

    fn state_save(&self) -> Result<(u32, Vec<u8>), Errno> {
        Ok((STATE_VERSION, Vec::new()))
    }

    fn state_load(&self, version: u32, _data: &[u8]) -> Result<(), Errno> {
        if version == STATE_VERSION {
            Ok(())
        } else {
            Err(Errno::EPROTO)
        }
    }

    fn lookup(&self, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if parent == ROOT && name == "hello" {
            reply.entry(&Entry::new(attr(HELLO), TTL))
        } else {
            reply.error(Errno::ENOENT)
        }
    }

    fn getattr(&self, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match ino {
            ROOT | HELLO => reply.attr(&attr(ino), TTL),
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn read(&self, _ino: u64, _fh: u64, offset: u64, _size: u32, reply: ReplyRead) {
        let off = (offset as usize).min(TEXT.len());
        reply.data(&TEXT[off..]) // cut to the size asked by the reply
    }

    fn readdir(&self, _ino: u64, _fh: u64, offset: u64, mut reply: ReplyDir) {
        let entries = [
            (ROOT, FileType::Directory, "."),
            (ROOT, FileType::Directory, ".."),
            (HELLO, FileType::RegularFile, "hello"),
        ];
        // offset is the next_offset of the last entry the kernel got
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, i as u64 + 1, *kind, name).is_full() {
                break; // full: the kernel asks again from here
            }
        }
        reply.ok()
    }
}

fring::plugin!(Hello, name: "hello-rust", version: "1.0", description: "one read-only file, in Rust");
