// SPDX-License-Identifier: MIT
//! rust-null: plugins/null in safe Rust (the `fring` crate, no `unsafe`),
//! method for method, so that a benchmark of the two measures the cost of
//! the binding. The root holds `files` regular files f0, f1... of `size`
//! bytes (inodes 2...), mode 0666: a READ is answered with zeros up to the
//! file size, a WRITE with its full count (the data dropped), a SETATTR
//! with the unchanged attributes. Nothing ever changes, so names and
//! attributes are cached for an hour.
#![deny(unsafe_code)]

use std::ffi::OsStr;
use std::time::Duration;

use fring::{Attr, Entry, Errno, FileType, Filesystem, Mount, Opt, Options, SetAttr, Statfs};
use fring::{ReplyAttr, ReplyDir, ReplyEntry, ReplyRead, ReplyStatfs, ReplyWrite};

const ROOT: u64 = 1;
const TTL: Duration = Duration::from_secs(3600);
const MAX_FILES: u64 = 1_000_000;
/// Reads are answered from here; max_write (1 MiB) bounds a READ.
static ZEROS: [u8; 1 << 20] = [0; 1 << 20];

struct Null {
    size: u64, // bytes per file
    files: u64,
}

impl Null {
    fn is_file(&self, ino: u64) -> bool {
        ino >= 2 && ino < 2 + self.files
    }

    fn attr(&self, ino: u64) -> Option<Attr> {
        if ino == ROOT {
            return Some(Attr {
                blksize: 4096,
                ..Attr::new(ROOT, FileType::Directory, 0o755)
            });
        }
        self.is_file(ino).then(|| Attr {
            size: self.size,
            blocks: self.size.div_ceil(512),
            blksize: 4096,
            ..Attr::new(ino, FileType::RegularFile, 0o666)
        })
    }

    /// "f<n>" with n < files, no leading zeros: its inode.
    fn file_ino(&self, name: &OsStr) -> Option<u64> {
        let digits = name.to_str()?.strip_prefix('f')?;
        let ok = digits.bytes().all(|b| b.is_ascii_digit())
            && !digits.is_empty()
            && (digits == "0" || !digits.starts_with('0'));
        let n: u64 = digits.parse().ok().filter(|_| ok)?;
        (n < self.files).then_some(2 + n)
    }

    fn reply_attr(&self, ino: u64, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(a) => reply.attr(&a, TTL),
            None => reply.error(Errno::ENOENT),
        }
    }
}

impl Filesystem for Null {
    const OPTIONS: &'static [Opt] = &[
        Opt::size("size", "bytes per file (1GiB)"),
        Opt::u64("files", "files f0, f1... in the root (4)"),
    ];
    const PARALLEL: bool = true;

    fn new(options: &Options, _mount: Mount) -> Result<Self, String> {
        let size = options.size("size").unwrap_or(1 << 30);
        if size > i64::MAX as u64 {
            return Err("null-rust: size: expected a size below 8EiB".into());
        }
        let files = options.u64("files").unwrap_or(4);
        if !(1..=MAX_FILES).contains(&files) {
            return Err(format!(
                "null-rust: files: expected a count 1..{MAX_FILES}, got {files}"
            ));
        }
        Ok(Null { size, files })
    }

    fn lookup(&self, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if parent != ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        match self.file_ino(name).and_then(|ino| self.attr(ino)) {
            Some(a) => reply.entry(&Entry::new(a, TTL)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        self.reply_attr(ino, reply)
    }

    /// Every change (size included: O_TRUNC) is accepted and dropped.
    fn setattr(&self, ino: u64, _set: SetAttr, reply: ReplyAttr) {
        self.reply_attr(ino, reply)
    }

    // open: left out, which answers success with fh 0, as null_open does.

    fn read(&self, _ino: u64, _fh: u64, offset: u64, size: u32, reply: ReplyRead) {
        let n = self
            .size
            .saturating_sub(offset)
            .min(size as u64)
            .min(ZEROS.len() as u64);
        reply.data(&ZEROS[..n as usize])
    }

    fn write(&self, _ino: u64, _fh: u64, _offset: u64, _flags: u32, reply: ReplyWrite) {
        let n = reply.data().map_or(0, |d| d.len() as u32);
        reply.written(n)
    }

    fn readdir(&self, _ino: u64, _fh: u64, offset: u64, mut reply: ReplyDir) {
        // offsets: 1 after ".", 2 after "..", 3 + n after f<n>
        for i in offset..2 + self.files {
            let added = match i {
                0 => reply.add(ROOT, 1, FileType::Directory, "."),
                1 => reply.add(ROOT, 2, FileType::Directory, ".."),
                _ => reply.add(i, i + 1, FileType::RegularFile, format!("f{}", i - 2)),
            };
            if added.is_full() {
                break;
            }
        }
        reply.ok()
    }

    fn statfs(&self, _ino: u64, reply: ReplyStatfs) {
        reply.statfs(&Statfs {
            blocks: self.size.div_ceil(4096) * self.files,
            files: self.files + 1,
            bsize: 4096,
            frsize: 4096,
            namelen: 255,
            ..Default::default()
        })
    }
}

fring::plugin!(Null, name: "null-rust", version: "1.0",
               description: "files of zeros that swallow writes, in Rust: benchmarks the binding");
