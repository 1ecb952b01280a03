// SPDX-License-Identifier: MIT
//! rust-mirror: serves a directory (option `source`) as it is, written with
//! the safe `fring` crate and no `unsafe`. Names, attributes and listings
//! come from `std::fs`; file data never passes through this code: READ is
//! answered by the host reading the open file (`ReplyRead::read_fd`, host
//! `req_read_fd`) and WRITE by the host writing it (`ReplyWrite::write_fd`),
//! so the bytes take fring's fixed-buffer path on io_uring, and its
//! zero-copy path on Linux 7.3 (every open opts in with
//! `fopen::IO_URING_ZERO_COPY`, option `zero_copy`).
//!
//! Inode numbers are the mirror's own (the root is 1): a table from node
//! id to path relative to the source, with the kernel's lookup counts, so
//! FORGET can drop entries. A hard link gets its own node id per name.
#![deny(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::{self, DirBuilder, File, FileTimes, OpenOptions, Permissions};
use std::os::unix::fs::{DirBuilderExt, DirEntryExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fring::{fopen, Attr, Entry, Errno, FileType, Filesystem, Mount, Opened, Opt, Options};
use fring::{ReplyAttr, ReplyCreate, ReplyDir, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyRead};
use fring::{ReplyReadlink, ReplyStatfs, ReplyWrite, SetAttr, Statfs, TimeOrNow};

const ROOT: u64 = 1;
const TTL: Duration = Duration::from_secs(1);
const O_ACCMODE: i32 = 0o3;
const O_WRONLY: i32 = 0o1;
const O_RDWR: i32 = 0o2;
const O_TRUNC: i32 = 0o1000;
const O_EXCL: i32 = 0o200;

struct Node {
    path: PathBuf, // relative to the source; "" is the root
    lookups: u64,
}

#[derive(Default)]
struct Nodes {
    by_ino: HashMap<u64, Node>,
    by_path: HashMap<PathBuf, u64>,
    next: u64,
}

/// One directory listing, taken at OPENDIR: readdir offsets index it, so
/// they stay stable however the kernel splits the listing.
type Listing = Vec<(OsString, FileType, u64)>;

struct Mirror {
    source: PathBuf,
    zero_copy: bool,
    nodes: Mutex<Nodes>,
    /// Open files by fh. The host's I/O on a file may finish after
    /// read_fd/write_fd returned; the kernel sends RELEASE only after every
    /// READ and WRITE on the open file was answered, so dropping it there
    /// is safe.
    files: Mutex<HashMap<u64, Arc<File>>>,
    dirs: Mutex<HashMap<u64, Arc<Listing>>>,
    next_fh: AtomicU64,
}

impl Mirror {
    fn path_of(&self, ino: u64) -> Result<PathBuf, Errno> {
        let nodes = self.nodes.lock().unwrap();
        let node = nodes.by_ino.get(&ino).ok_or(Errno::ESTALE)?;
        Ok(self.source.join(&node.path))
    }

    fn child(&self, parent: u64, name: &OsStr) -> Result<(PathBuf, PathBuf), Errno> {
        let nodes = self.nodes.lock().unwrap();
        let node = nodes.by_ino.get(&parent).ok_or(Errno::ESTALE)?;
        let rel = node.path.join(name);
        Ok((self.source.join(&rel), rel))
    }

    /// The entry for `rel` (one more lookup of its node).
    fn entry(&self, rel: PathBuf, md: &fs::Metadata) -> Entry {
        let mut nodes = self.nodes.lock().unwrap();
        let ino = match nodes.by_path.get(&rel) {
            Some(&ino) => ino,
            None => {
                nodes.next += 1;
                let ino = nodes.next;
                nodes.by_path.insert(rel.clone(), ino);
                nodes.by_ino.insert(
                    ino,
                    Node {
                        path: rel,
                        lookups: 0,
                    },
                );
                ino
            }
        };
        nodes.by_ino.get_mut(&ino).unwrap().lookups += 1;
        let mut attr = Attr::from_metadata(md);
        attr.ino = ino;
        Entry::new(attr, TTL)
    }

    fn attr(&self, ino: u64, md: &fs::Metadata) -> Attr {
        Attr {
            ino,
            ..Attr::from_metadata(md)
        }
    }

    fn lookup_path(&self, path: &Path, rel: PathBuf) -> Result<Entry, Errno> {
        let md = fs::symlink_metadata(path)?;
        Ok(self.entry(rel, &md))
    }

    fn file(&self, fh: u64) -> Option<Arc<File>> {
        self.files.lock().unwrap().get(&fh).cloned()
    }

    fn keep(&self, file: File) -> Opened {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        self.files.lock().unwrap().insert(fh, Arc::new(file));
        let flags = if self.zero_copy {
            fopen::IO_URING_ZERO_COPY
        } else {
            0
        };
        Opened::new(fh).with_flags(flags)
    }

    fn setattr_now(&self, ino: u64, set: &SetAttr) -> Result<Attr, Errno> {
        let path = self.path_of(ino)?;
        if let Some(mode) = set.mode {
            fs::set_permissions(&path, Permissions::from_mode(mode & 0o7777))?;
        }
        if set.uid.is_some() || set.gid.is_some() {
            std::os::unix::fs::lchown(&path, set.uid, set.gid)?;
        }
        let open_file = set.fh.and_then(|fh| self.file(fh));
        if let Some(size) = set.size {
            match &open_file {
                Some(f) => f.set_len(size)?,
                None => OpenOptions::new().write(true).open(&path)?.set_len(size)?,
            }
        }
        if set.atime.is_some() || set.mtime.is_some() {
            let time = |t: TimeOrNow| match t {
                TimeOrNow::Now => SystemTime::now(),
                TimeOrNow::Time(t) => t,
            };
            let mut times = FileTimes::new();
            if let Some(t) = set.atime {
                times = times.set_accessed(time(t));
            }
            if let Some(t) = set.mtime {
                times = times.set_modified(time(t));
            }
            match &open_file {
                Some(f) => f.set_times(times)?,
                None => File::open(&path)?.set_times(times)?,
            }
        }
        Ok(self.attr(ino, &fs::symlink_metadata(&path)?))
    }

    /// Moves the node of `from` (and everything under it) to `to`; a node
    /// that `to` named before is left without a path.
    fn renamed(&self, from: &Path, to: &Path) {
        let mut nodes = self.nodes.lock().unwrap();
        if let Some(old) = nodes.by_path.remove(to) {
            nodes.by_ino.remove(&old);
        }
        let moved: Vec<(PathBuf, u64)> = nodes
            .by_path
            .iter()
            .filter(|(p, _)| p.starts_with(from))
            .map(|(p, &ino)| (p.clone(), ino))
            .collect();
        for (p, ino) in moved {
            let new = to.join(p.strip_prefix(from).unwrap());
            nodes.by_path.remove(&p);
            nodes.by_path.insert(new.clone(), ino);
            if let Some(n) = nodes.by_ino.get_mut(&ino) {
                n.path = new;
            }
        }
    }

    /// unlink or rmdir (`how`) of `name` in `parent`.
    fn remove(
        &self,
        parent: u64,
        name: &OsStr,
        how: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> Result<(), Errno> {
        let (path, rel) = self.child(parent, name)?;
        how(&path)?;
        // The node stays (the kernel may still use it until FORGET), but
        // its name is free for a new file.
        self.nodes.lock().unwrap().by_path.remove(&rel);
        Ok(())
    }
}

fn open_options(flags: i32) -> OpenOptions {
    let mut o = OpenOptions::new();
    match flags & O_ACCMODE {
        O_WRONLY => o.write(true),
        O_RDWR => o.read(true).write(true),
        _ => o.read(true),
    };
    // O_APPEND is left out: the kernel sends each WRITE with its offset.
    o.truncate(flags & O_TRUNC != 0 && flags & O_ACCMODE != 0);
    o
}

impl Filesystem for Mirror {
    const OPTIONS: &'static [Opt] = &[
        Opt::path("source", "directory to mirror").required(),
        Opt::bool(
            "zero_copy",
            "opt every open file in to io_uring zero-copy (default true)",
        ),
    ];
    const PARALLEL: bool = true;

    fn new(options: &Options, mount: Mount) -> Result<Self, String> {
        let given = options.path("source").expect("required");
        let source =
            fs::canonicalize(given).map_err(|e| format!("source {}: {e}", given.display()))?;
        if !source.is_dir() {
            return Err(format!("source {} is not a directory", source.display()));
        }
        if let Some(mp) = mount.mount_point() {
            if mp.starts_with(&source) {
                return Err(format!(
                    "mountpoint {} is inside source {}",
                    mp.display(),
                    source.display()
                ));
            }
        }
        let mut nodes = Nodes {
            next: ROOT,
            ..Default::default()
        };
        nodes.by_ino.insert(
            ROOT,
            Node {
                path: PathBuf::new(),
                lookups: 1,
            },
        );
        nodes.by_path.insert(PathBuf::new(), ROOT);
        mount.info(&format!("mirror-rust: serving {}", source.display()));
        Ok(Mirror {
            source,
            zero_copy: options.bool("zero_copy").unwrap_or(true),
            nodes: Mutex::new(nodes),
            files: Mutex::new(HashMap::new()),
            dirs: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
        })
    }

    fn lookup(&self, parent: u64, name: &OsStr, reply: ReplyEntry) {
        let res = self
            .child(parent, name)
            .and_then(|(path, rel)| self.lookup_path(&path, rel));
        reply.result(res, |r, e| r.entry(&e))
    }

    fn forget(&self, ino: u64, nlookup: u64) {
        let mut nodes = self.nodes.lock().unwrap();
        let Some(node) = nodes.by_ino.get_mut(&ino) else {
            return;
        };
        node.lookups = node.lookups.saturating_sub(nlookup);
        if node.lookups == 0 && ino != ROOT {
            let node = nodes.by_ino.remove(&ino).unwrap();
            if nodes.by_path.get(&node.path) == Some(&ino) {
                nodes.by_path.remove(&node.path);
            }
        }
    }

    fn getattr(&self, ino: u64, fh: Option<u64>, reply: ReplyAttr) {
        let md = match fh.and_then(|fh| self.file(fh)) {
            Some(f) => f.metadata(),
            None => match self.path_of(ino) {
                Ok(p) => fs::symlink_metadata(p),
                Err(e) => return reply.error(e),
            },
        };
        match md {
            Ok(md) => reply.attr(&self.attr(ino, &md), TTL),
            Err(e) => reply.error(e.into()),
        }
    }

    fn setattr(&self, ino: u64, set: SetAttr, reply: ReplyAttr) {
        reply.result(self.setattr_now(ino, &set), |r, a| r.attr(&a, TTL))
    }

    fn readlink(&self, ino: u64, reply: ReplyReadlink) {
        match self
            .path_of(ino)
            .and_then(|p| fs::read_link(p).map_err(Errno::from))
        {
            Ok(t) => reply.target(t),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(&self, parent: u64, name: &OsStr, mode: u32, _umask: u32, reply: ReplyEntry) {
        let res = self.child(parent, name).and_then(|(path, rel)| {
            DirBuilder::new().mode(mode & 0o7777).create(&path)?;
            self.lookup_path(&path, rel)
        });
        reply.result(res, |r, e| r.entry(&e))
    }

    fn symlink(&self, parent: u64, name: &OsStr, target: &Path, reply: ReplyEntry) {
        let res = self.child(parent, name).and_then(|(path, rel)| {
            std::os::unix::fs::symlink(target, &path)?;
            self.lookup_path(&path, rel)
        });
        reply.result(res, |r, e| r.entry(&e))
    }

    fn unlink(&self, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        reply.result(
            self.remove(parent, name, |p| fs::remove_file(p)),
            |r, ()| r.ok(),
        )
    }

    fn rmdir(&self, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        reply.result(self.remove(parent, name, |p| fs::remove_dir(p)), |r, ()| {
            r.ok()
        })
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
        if flags != 0 {
            return reply.error(Errno::EINVAL); // RENAME_NOREPLACE etc. need renameat2
        }
        let res = self.child(parent, name).and_then(|(from, from_rel)| {
            let (to, to_rel) = self.child(newparent, newname)?;
            fs::rename(from, to)?;
            self.renamed(&from_rel, &to_rel);
            Ok(())
        });
        reply.result(res, |r, ()| r.ok())
    }

    fn link(&self, ino: u64, newparent: u64, newname: &OsStr, reply: ReplyEntry) {
        let res = self.path_of(ino).and_then(|from| {
            let (to, to_rel) = self.child(newparent, newname)?;
            fs::hard_link(from, &to)?;
            self.lookup_path(&to, to_rel)
        });
        reply.result(res, |r, e| r.entry(&e))
    }

    fn open(&self, ino: u64, flags: i32, reply: ReplyOpen) {
        let res = self
            .path_of(ino)
            .and_then(|p| Ok(open_options(flags).open(p)?));
        reply.result(res, |r, f| r.opened(self.keep(f)))
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
        let res = self.child(parent, name).and_then(|(path, rel)| {
            let mut o = open_options(flags);
            if flags & O_EXCL != 0 {
                o.create_new(true);
            } else {
                o.create(true);
            }
            if flags & O_ACCMODE == 0 {
                o.write(true); // O_CREAT|O_RDONLY: std's create needs write access
            }
            let f = o.mode(mode & 0o7777).open(&path)?;
            let md = f.metadata()?;
            Ok((self.entry(rel, &md), f))
        });
        reply.result(res, |r, (e, f)| r.created(&e, self.keep(f)))
    }

    fn read(&self, _ino: u64, fh: u64, offset: u64, size: u32, reply: ReplyRead) {
        let Some(file) = self.file(fh) else {
            return reply.error(Errno::EBADF);
        };
        // The host reads the file into the request (READ_FIXED on
        // io_uring, into the caller's pages when zero-copied).
        if let Err(refused) = reply.read_fd(&*file, offset, size) {
            refused.reply.error(refused.errno)
        }
    }

    fn write(&self, _ino: u64, fh: u64, offset: u64, _flags: u32, reply: ReplyWrite) {
        let Some(file) = self.file(fh) else {
            return reply.error(Errno::EBADF);
        };
        // The host writes the request's data to the file (reply.data() is
        // None when the request is zero-copied: this is the only way).
        if let Err(refused) = reply.write_fd(&*file, offset) {
            refused.reply.error(refused.errno)
        }
    }

    fn release(&self, _ino: u64, fh: u64, _flags: i32, reply: ReplyEmpty) {
        self.files.lock().unwrap().remove(&fh);
        reply.ok()
    }

    fn fsync(&self, _ino: u64, fh: u64, datasync: bool, reply: ReplyEmpty) {
        let Some(file) = self.file(fh) else {
            return reply.error(Errno::EBADF);
        };
        let res = if datasync {
            file.sync_data()
        } else {
            file.sync_all()
        };
        reply.result(res.map_err(Errno::from), |r, ()| r.ok())
    }

    fn opendir(&self, ino: u64, _flags: i32, reply: ReplyOpen) {
        let res = self.path_of(ino).and_then(|p| {
            let mut list: Listing = vec![
                (".".into(), FileType::Directory, ino),
                ("..".into(), FileType::Directory, ROOT),
            ];
            for e in fs::read_dir(p)? {
                let e = e?;
                list.push((e.file_name(), FileType::from_std(e.file_type()?), e.ino()));
            }
            Ok(list)
        });
        reply.result(res, |r, list| {
            let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
            self.dirs.lock().unwrap().insert(fh, Arc::new(list));
            r.opened(Opened::new(fh))
        })
    }

    fn readdir(&self, _ino: u64, fh: u64, offset: u64, mut reply: ReplyDir) {
        let Some(list) = self.dirs.lock().unwrap().get(&fh).cloned() else {
            return reply.error(Errno::EBADF);
        };
        for (i, (name, kind, ino)) in list.iter().enumerate().skip(offset as usize) {
            // only a full reply ends the listing: a name the host refuses
            // (logged) is skipped and the next ones still go in
            if reply.add(*ino, i as u64 + 1, *kind, name).is_full() {
                break;
            }
        }
        reply.ok()
    }

    fn releasedir(&self, _ino: u64, fh: u64, _flags: i32, reply: ReplyEmpty) {
        self.dirs.lock().unwrap().remove(&fh);
        reply.ok()
    }

    fn statfs(&self, _ino: u64, reply: ReplyStatfs) {
        reply.result(Statfs::of_path(&self.source), |r, st| r.statfs(&st))
    }
}

fring::plugin!(Mirror, name: "mirror-rust", version: "1.0",
               description: "mirrors a directory, in Rust; data moved by the host");
