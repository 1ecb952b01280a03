// SPDX-License-Identifier: MIT
//! Unit tests through the C boundary, with a fake host table: the
//! descriptor the entry returns, each callback called as fring would, each
//! answer recorded per request. No mount needed.
#![allow(clippy::type_complexity)]
use std::ffi::{c_char, c_void, CStr, OsStr};
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::export::{entry, Descriptor, Instance, Meta};
use crate::sys;
use crate::*;

// ---- the fake host ------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Answer {
    Err(i32),
    Entry { ino: u64, mode: u32, size: u64, entry_ns: u64, mtime: (i64, u32) },
    Create { ino: u64, fh: u64, flags: u32 },
    Attr { ino: u64, mode: u32, size: u64, ttl: u64 },
    Readlink(Vec<u8>),
    Open { fh: u64, flags: u32 },
    Write(u32),
    Data(Vec<u8>),
    Statfs { bsize: u32, namelen: u32 },
    XattrSize(u32),
    Dir(Vec<(Vec<u8>, u64, u32, u64)>),
    ReadFd { offset: u64, len: u32 },
    WriteFd { offset: u64 },
    Lock { start: u64, end: u64, kind: u32, pid: u32 },
    Statx { mask: u32, ino: u64, btime: (i64, u32) },
}

/// What a `fring_req *` points to in these tests.
#[derive(Default)]
struct FakeReq {
    answers: Mutex<Vec<Answer>>,
    dir: Mutex<Vec<(Vec<u8>, u64, u32, u64)>>,
    dir_room: usize,
    refuse_fd: bool,
}

impl FakeReq {
    fn new() -> Box<FakeReq> {
        Box::new(FakeReq { dir_room: 100, ..Default::default() })
    }
    fn ptr(&self) -> *mut sys::fring_req {
        self as *const FakeReq as *mut sys::fring_req
    }
    fn answers(&self) -> Vec<Answer> {
        self.answers.lock().unwrap().clone()
    }
    /// The one answer (fails on none or several).
    fn answer(&self) -> Answer {
        let a = self.answers();
        assert_eq!(a.len(), 1, "answers: {a:?}");
        a[0].clone()
    }
}

fn fake(r: *mut sys::fring_req) -> &'static FakeReq {
    // SAFETY: every request in these tests is a live Box<FakeReq>.
    unsafe { &*(r as *const FakeReq) }
}

fn answer(r: *mut sys::fring_req, a: Answer) -> i32 {
    let mut v = fake(r).answers.lock().unwrap();
    v.push(a);
    if v.len() > 1 {
        -libc::EALREADY
    } else {
        0
    }
}

static LOGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn logged(needle: &str) -> bool {
    LOGS.lock().unwrap().iter().any(|l| l.contains(needle))
}

unsafe extern "C" fn f_log(_m: *mut sys::fring_mount, _level: i32, msg: *const c_char) {
    let s = unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned();
    LOGS.lock().unwrap().push(s);
}
unsafe extern "C" fn f_log_enabled(_m: *mut sys::fring_mount, _level: i32) -> i32 {
    1
}
unsafe extern "C" fn f_parse_size(s: *const c_char, out: *mut u64) -> i32 {
    let s = unsafe { CStr::from_ptr(s) }.to_str().unwrap_or("");
    let (num, mul) = match s.strip_suffix("KiB") {
        Some(n) => (n, 1024),
        None => (s, 1),
    };
    match num.parse::<u64>() {
        Ok(n) => {
            unsafe { *out = n * mul };
            0
        }
        Err(_) => -libc::EINVAL,
    }
}
unsafe extern "C" fn f_parse_bool(s: *const c_char, out: *mut i32) -> i32 {
    match unsafe { CStr::from_ptr(s) }.to_bytes() {
        b"true" | b"yes" => unsafe { *out = 1 },
        b"false" | b"no" => unsafe { *out = 0 },
        _ => return -libc::EINVAL,
    }
    0
}
unsafe extern "C" fn f_req_ctx(_r: *mut sys::fring_req, out: *mut sys::fring_req_ctx) -> i32 {
    unsafe {
        (*out).uid = 1000;
        (*out).gid = 100;
        (*out).pid = 42;
    }
    0
}
unsafe extern "C" fn f_req_mount(_r: *mut sys::fring_req) -> *mut sys::fring_mount {
    std::ptr::null_mut()
}
unsafe extern "C" fn f_reply_err(r: *mut sys::fring_req, e: i32) -> i32 {
    answer(r, Answer::Err(e))
}
unsafe extern "C" fn f_reply_entry(r: *mut sys::fring_req, e: *const sys::fring_entry) -> i32 {
    let e = unsafe { &*e };
    answer(
        r,
        Answer::Entry {
            ino: e.ino,
            mode: e.attr.mode,
            size: e.attr.size,
            entry_ns: e.entry_timeout_ns,
            mtime: (e.attr.mtime_sec, e.attr.mtime_nsec),
        },
    )
}
unsafe extern "C" fn f_reply_create(
    r: *mut sys::fring_req,
    e: *const sys::fring_entry,
    o: *const sys::fring_open_out,
) -> i32 {
    let (e, o) = unsafe { (&*e, &*o) };
    answer(r, Answer::Create { ino: e.ino, fh: o.fh, flags: o.open_flags })
}
unsafe extern "C" fn f_reply_attr(r: *mut sys::fring_req, a: *const sys::fring_attr, ttl: u64) -> i32 {
    let a = unsafe { &*a };
    answer(r, Answer::Attr { ino: a.ino, mode: a.mode, size: a.size, ttl })
}
unsafe extern "C" fn f_reply_readlink(r: *mut sys::fring_req, t: *const c_char, len: u32) -> i32 {
    let t = unsafe { std::slice::from_raw_parts(t as *const u8, len as usize) };
    answer(r, Answer::Readlink(t.to_vec()))
}
unsafe extern "C" fn f_reply_open(r: *mut sys::fring_req, o: *const sys::fring_open_out) -> i32 {
    let o = unsafe { &*o };
    answer(r, Answer::Open { fh: o.fh, flags: o.open_flags })
}
unsafe extern "C" fn f_reply_write(r: *mut sys::fring_req, n: u32) -> i32 {
    answer(r, Answer::Write(n))
}
unsafe extern "C" fn f_reply_data(r: *mut sys::fring_req, d: *const c_void, len: u32) -> i32 {
    let d = unsafe { std::slice::from_raw_parts(d as *const u8, len as usize) };
    answer(r, Answer::Data(d.to_vec()))
}
unsafe extern "C" fn f_reply_statfs(r: *mut sys::fring_req, s: *const sys::fring_statfs) -> i32 {
    let s = unsafe { &*s };
    answer(r, Answer::Statfs { bsize: s.bsize, namelen: s.namelen })
}
unsafe extern "C" fn f_reply_xattr_size(r: *mut sys::fring_req, n: u32) -> i32 {
    answer(r, Answer::XattrSize(n))
}
unsafe extern "C" fn f_dir_add(
    r: *mut sys::fring_req,
    name: *const c_char,
    len: u32,
    ino: u64,
    kind: u32,
    next: u64,
) -> i32 {
    let f = fake(r);
    let mut d = f.dir.lock().unwrap();
    let n = unsafe { std::slice::from_raw_parts(name as *const u8, len as usize) };
    // as the host's encoder: a bad name is refused before the room is checked
    if n.is_empty() || n.contains(&b'/') || n.contains(&0) {
        return -libc::EINVAL;
    }
    if d.len() >= f.dir_room {
        return 0;
    }
    d.push((n.to_vec(), ino, kind, next));
    1
}
unsafe extern "C" fn f_dir_add_plus(
    r: *mut sys::fring_req,
    name: *const c_char,
    len: u32,
    e: *const sys::fring_entry,
    next: u64,
) -> i32 {
    let e = unsafe { &*e };
    unsafe { f_dir_add(r, name, len, e.ino, e.attr.mode & libc::S_IFMT, next) }
}
unsafe extern "C" fn f_reply_dir(r: *mut sys::fring_req) -> i32 {
    let d = fake(r).dir.lock().unwrap().clone();
    answer(r, Answer::Dir(d))
}
unsafe extern "C" fn f_req_read_fd(r: *mut sys::fring_req, fd: i32, offset: u64, len: u32, _f: u32) -> i32 {
    if fake(r).refuse_fd || fd < 0 {
        return -libc::EBADF;
    }
    answer(r, Answer::ReadFd { offset, len })
}
unsafe extern "C" fn f_req_write_fd(r: *mut sys::fring_req, fd: i32, offset: u64, _f: u32) -> i32 {
    if fake(r).refuse_fd || fd < 0 {
        return -libc::EBADF;
    }
    answer(r, Answer::WriteFd { offset })
}

unsafe extern "C" fn f_reply_lock(r: *mut sys::fring_req, l: *const sys::fring_lock) -> i32 {
    let l = unsafe { &*l };
    answer(r, Answer::Lock { start: l.start, end: l.end, kind: l.type_, pid: l.pid })
}
unsafe extern "C" fn f_reply_statx(r: *mut sys::fring_req, sx: *const sys::fring_statx, _ttl: u64) -> i32 {
    let sx = unsafe { &*sx };
    answer(r, Answer::Statx { mask: sx.mask, ino: sx.attr.ino, btime: (sx.btime_sec, sx.btime_nsec) })
}

static HOST: OnceLock<usize> = OnceLock::new();

fn host() -> *const sys::fring_host_api {
    *HOST.get_or_init(|| {
        let h = sys::fring_host_api {
            size: std::mem::size_of::<sys::fring_host_api>() as u32,
            abi_major: sys::FRING_ABI_MAJOR as u16,
            abi_minor: sys::FRING_ABI_MINOR as u16,
            log: Some(f_log),
            log_enabled: Some(f_log_enabled),
            parse_size: Some(f_parse_size),
            parse_bool: Some(f_parse_bool),
            req_ctx: Some(f_req_ctx),
            req_mount: Some(f_req_mount),
            reply_err: Some(f_reply_err),
            reply_entry: Some(f_reply_entry),
            reply_create: Some(f_reply_create),
            reply_attr: Some(f_reply_attr),
            reply_readlink: Some(f_reply_readlink),
            reply_open: Some(f_reply_open),
            reply_write: Some(f_reply_write),
            reply_data: Some(f_reply_data),
            reply_statfs: Some(f_reply_statfs),
            reply_xattr_size: Some(f_reply_xattr_size),
            dir_add: Some(f_dir_add),
            dir_add_plus: Some(f_dir_add_plus),
            reply_dir: Some(f_reply_dir),
            req_read_fd: Some(f_req_read_fd),
            req_write_fd: Some(f_req_write_fd),
            reply_lock: Some(f_reply_lock),
            reply_statx: Some(f_reply_statx),
            ..Default::default()
        };
        Box::leak(Box::new(h)) as *const sys::fring_host_api as usize
    }) as *const sys::fring_host_api
}

// ---- the filesystems under test ------------------------------------------

const TTL: Duration = Duration::from_secs(1);

/// Answers by name, to exercise every way a request can end.
struct TestFs {
    source: std::path::PathBuf,
    cache: Option<u64>,
    tags: Vec<String>,
    forgotten: Mutex<Vec<(u64, u64)>>,
    file: File,
    dir_results: Mutex<Vec<DirAdd>>,
}

impl Filesystem for TestFs {
    const OPTIONS: &'static [Opt] = &[
        Opt::path("source", "directory to serve").required(),
        Opt::size("cache", "cache size"),
        Opt::bool("ro", "read-only"),
        Opt::str("tag", "a tag").repeated(),
        Opt::i64("delta", "a signed number"),
    ];
    const READDIRPLUS: bool = true;
    const POSIX_LOCKS: bool = true;
    const ATOMIC_O_TRUNC: bool = true;

    fn new(o: &Options, _m: Mount) -> std::result::Result<Self, String> {
        let source = o.path("source").unwrap().to_path_buf();
        if source == Path::new("/refused") {
            return Err("source /refused is not allowed".into());
        }
        if source == Path::new("/panic") {
            panic!("new panicked on purpose");
        }
        let tags = o
            .get_all("tag")
            .map(|v| match v {
                Value::Str(s) => s.clone(),
                _ => unreachable!(),
            })
            .collect();
        Ok(TestFs {
            source,
            cache: o.size("cache"),
            tags,
            forgotten: Mutex::new(Vec::new()),
            file: File::open("/dev/null").unwrap(),
            dir_results: Mutex::new(Vec::new()),
        })
    }

    fn lookup(&self, parent: u64, name: &OsStr, reply: ReplyEntry) {
        match name.as_bytes() {
            b"hello" => {
                let mut a = Attr::new(2, FileType::RegularFile, 0o644);
                a.size = 11;
                a.mtime = UNIX_EPOCH - Duration::new(1, 250_000_000);
                reply.entry(&Entry::new(a, TTL))
            }
            b"\xffraw" => reply.entry(&Entry::new(Attr::new(3, FileType::Symlink, 0o777), TTL)),
            b"negative" => reply.negative(Duration::from_millis(5)),
            b"panic" => panic!("lookup panicked on purpose in {parent}"),
            b"drop" => drop(reply),
            b"thread" => {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(20));
                    reply.entry(&Entry::new(Attr::new(9, FileType::Directory, 0o700), TTL))
                });
            }
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn getlk(&self, _ino: u64, _fh: u64, owner: u64, lock: Lock, reply: ReplyLock) {
        assert_eq!((owner, lock.kind, lock.end), (99, LockType::Write, Lock::TO_EOF));
        reply.lock(&Lock { start: 10, end: 19, kind: LockType::Read, pid: 1234 })
    }

    fn statx(&self, ino: u64, fh: Option<u64>, _mask: u32, reply: ReplyStatx) {
        assert_eq!(fh, Some(4));
        let btime = UNIX_EPOCH + Duration::new(100, 7);
        reply.statx(&Attr::new(ino, FileType::RegularFile, 0o600), Some(btime), TTL)
    }

    fn forget(&self, ino: u64, nlookup: u64) {
        self.forgotten.lock().unwrap().push((ino, nlookup));
    }

    fn setattr(&self, ino: u64, set: SetAttr, reply: ReplyAttr) {
        assert_eq!(set.uid, None);
        assert_eq!(set.atime, Some(TimeOrNow::Now));
        assert_eq!(set.mtime, Some(TimeOrNow::Time(UNIX_EPOCH + Duration::new(5, 6))));
        let mut a = Attr::new(ino, FileType::RegularFile, set.mode.unwrap_or(0) as u16);
        a.size = set.size.unwrap_or(0);
        reply.attr(&a, TTL)
    }

    fn readlink(&self, _ino: u64, reply: ReplyReadlink) {
        reply.target(OsStr::from_bytes(b"target\xfe"))
    }

    fn read(&self, _ino: u64, fh: u64, offset: u64, _size: u32, reply: ReplyRead) {
        match fh {
            7 => reply.read_fd(&self.file, offset, 1 << 20).unwrap(),
            8 => {
                if let Err(refused) = reply.read_fd(&self.file, offset, 4) {
                    refused.reply.error(refused.errno)
                }
            }
            _ => reply.data(&b"hello world"[offset as usize..]),
        }
    }

    fn write(&self, _ino: u64, _fh: u64, offset: u64, _flags: u32, reply: ReplyWrite) {
        match reply.data() {
            Some(d) => {
                let n = d.len() as u32;
                reply.written(n)
            }
            None => reply.write_fd(&self.file, offset).unwrap(),
        }
    }

    fn readdir(&self, _ino: u64, _fh: u64, offset: u64, mut reply: ReplyDir) {
        let ents =
            [(".", 1, FileType::Directory), ("..", 1, FileType::Directory), ("a", 5, FileType::RegularFile)];
        if _ino == 7 {
            // names before and after bad ones: only "full" ends the listing
            let names: [&[u8]; 6] = [b"before", b"bad/name", b"", b"mid", b"x\0y", b"after"];
            let mut got = Vec::new();
            for (i, n) in names.iter().enumerate().skip(offset as usize) {
                let r = reply.add(10 + i as u64, i as u64 + 1, FileType::RegularFile, OsStr::from_bytes(n));
                got.push(r);
                if r.is_full() {
                    break;
                }
            }
            *self.dir_results.lock().unwrap() = got;
            return reply.ok();
        }
        for (i, (n, ino, kind)) in ents.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, i as u64 + 1, *kind, n).is_full() {
                break;
            }
        }
        reply.ok()
    }

    fn readdirplus(&self, _ino: u64, _fh: u64, _offset: u64, mut reply: ReplyDirPlus) {
        assert_eq!(reply.add_plain(1, 1, FileType::Directory, "."), DirAdd::Added);
        let e = Entry::new(Attr::new(5, FileType::RegularFile, 0o600), TTL);
        assert_eq!(reply.add(&e, 2, "no/slash"), DirAdd::Refused(Errno::EINVAL));
        assert!(reply.add(&e, 2, "a").is_added());
        reply.ok()
    }

    fn create(&self, _parent: u64, _name: &OsStr, _mode: u32, _umask: u32, _flags: i32, reply: ReplyCreate) {
        let info = reply.request();
        assert_eq!((info.uid, info.gid, info.pid), (1000, 100, 42));
        reply.created(
            &Entry::new(Attr::new(11, FileType::RegularFile, 0o600), TTL),
            Opened::new(77).with_flags(fopen::IO_URING_ZERO_COPY),
        )
    }
}

/// Every method left to its default.
struct Minimal;

impl Filesystem for Minimal {
    fn new(_: &Options, _: Mount) -> std::result::Result<Self, String> {
        Ok(Minimal)
    }
}

static TEST_DESC: OnceLock<Descriptor> = OnceLock::new();
static MIN_DESC: OnceLock<Descriptor> = OnceLock::new();

const META: Meta = Meta { name: "test-fs", version: "1.2", description: "a test" };

fn plugin<F: Filesystem>(slot: &'static OnceLock<Descriptor>) -> &'static sys::fring_plugin {
    let p = entry::<F>(host(), slot, META);
    assert!(!p.is_null());
    // SAFETY: the descriptor lives in `slot` forever.
    unsafe { &*p }
}

/// One mount's instance, made as the host does: create, config per
/// option, config_complete. Returns each config result, then complete's.
fn mount<F: Filesystem>(
    slot: &'static OnceLock<Descriptor>,
    opts: &[(&str, &str)],
) -> (*mut c_void, Vec<i32>) {
    let p = plugin::<F>(slot);
    let mut inst = std::ptr::null_mut();
    // SAFETY: the callbacks as the host calls them, with valid pointers.
    unsafe {
        assert_eq!(p.create.unwrap()(std::ptr::null_mut(), &mut inst), 0);
        let mut rets = Vec::new();
        for (k, v) in opts {
            let (k, v) = (std::ffi::CString::new(*k).unwrap(), std::ffi::CString::new(*v).unwrap());
            rets.push(p.config.unwrap()(inst, k.as_ptr(), v.as_ptr()));
        }
        rets.push(p.config_complete.unwrap()(inst));
        (inst, rets)
    }
}

fn test_fs() -> (&'static sys::fring_fs_ops, *mut c_void) {
    let (inst, rets) =
        mount::<TestFs>(&TEST_DESC, &[("source", "/src"), ("cache", "64KiB"), ("tag", "a"), ("tag", "b")]);
    assert!(rets.iter().all(|r| *r == 0), "{rets:?}");
    // SAFETY: the descriptor's ops table, static.
    (unsafe { &*plugin::<TestFs>(&TEST_DESC).ops }, inst)
}

fn name_args(parent: u64, name: &[u8]) -> (sys::fring_name_args, Vec<u8>) {
    let mut buf = name.to_vec();
    buf.push(0);
    let a = sys::fring_name_args {
        size: std::mem::size_of::<sys::fring_name_args>() as u32,
        namelen: name.len() as u32,
        parent,
        name: buf.as_ptr() as *const c_char,
    };
    (a, buf)
}

fn lookup(ops: &sys::fring_fs_ops, inst: *mut c_void, name: &[u8]) -> Box<FakeReq> {
    let r = FakeReq::new();
    let (a, _buf) = name_args(1, name);
    // SAFETY: as the host calls it.
    unsafe { ops.lookup.unwrap()(inst, r.ptr(), &a) };
    r
}

fn read_args(fh: u64, offset: u64, len: u32) -> sys::fring_read_args {
    sys::fring_read_args { size: 48, len, nodeid: 2, fh, offset, ..Default::default() }
}

// ---- the tests -------------------------------------------------------------

#[test]
fn descriptor_has_the_header_identity_and_option_help() {
    let p = plugin::<TestFs>(&TEST_DESC);
    assert_eq!(p.magic, sys::FRING_PLUGIN_MAGIC);
    assert_eq!((p.abi_major as u32, p.abi_minor as u32), (sys::FRING_ABI_MAJOR, sys::FRING_ABI_MINOR));
    assert_eq!(p.size as usize, std::mem::size_of::<sys::fring_plugin>());
    assert_eq!(p.thread_model, sys::FRING_THREAD_SERIALIZE);
    let s = |c: *const c_char| unsafe { CStr::from_ptr(c) }.to_str().unwrap().to_owned();
    assert_eq!(
        (s(p.name), s(p.version), s(p.description)),
        ("test-fs".into(), "1.2".into(), "a test".into())
    );
    let help = s(p.config_help);
    assert!(
        help.starts_with("source: path: directory to serve (required)\ncache: size: cache size\n"),
        "{help}"
    );
    assert!(help.ends_with("tag: string: a tag (repeatable)\ndelta: integer: a signed number"), "{help}");
    // SAFETY: static ops tables.
    let (ops, min_ops) = unsafe { (&*p.ops, &*plugin::<Minimal>(&MIN_DESC).ops) };
    assert!(ops.readdirplus.is_some() && min_ops.readdirplus.is_none());
    assert!(ops.getlk.is_some() && ops.setlk.is_some() && ops.flock.is_none() && ops.statx.is_some());
    assert!(min_ops.getlk.is_none() && min_ops.setlk.is_none() && min_ops.flock.is_none());
    assert!(min_ops.lookup.is_some() && min_ops.create.is_some() && min_ops.statfs.is_some());
    assert!(plugin::<Minimal>(&MIN_DESC).config_help.is_null());
}

#[test]
fn features_follow_the_constants() {
    // TestFs says its open truncates; Minimal (the default open, which
    // ignores O_TRUNC) must not have the host negotiate ATOMIC_O_TRUNC.
    #[allow(clippy::unnecessary_cast)]
    let (trunc, perms) =
        (sys::FRING_FEATURE_ATOMIC_O_TRUNC as u64, sys::FRING_FEATURE_CHECKS_PERMISSIONS as u64);
    assert_eq!(trunc, 1 << 1);
    assert_eq!(plugin::<TestFs>(&TEST_DESC).features, trunc);
    assert_eq!(plugin::<Minimal>(&MIN_DESC).features, 0);
    assert_eq!(crate::export::features::<Perms>(), perms);
    const _: () = assert!(sys::FRING_ABI_MINOR >= 6);
}

/// Only CHECKS_PERMISSIONS set.
struct Perms;

impl Filesystem for Perms {
    const CHECKS_PERMISSIONS: bool = true;
    fn new(_: &Options, _: Mount) -> std::result::Result<Self, String> {
        Ok(Perms)
    }
}

#[test]
fn options_are_typed() {
    let (_, inst) = test_fs();
    // SAFETY: the instance test_fs made.
    let i = unsafe { &*(inst as *const Instance<TestFs>) };
    let fs = i.fs.get().unwrap();
    assert_eq!(fs.source, Path::new("/src"));
    assert_eq!(fs.cache, Some(65536));
    assert_eq!(fs.tags, ["a", "b"]);
}

#[test]
fn bad_options_are_refused_with_a_logged_reason() {
    let (_, rets) = mount::<TestFs>(
        &TEST_DESC,
        &[
            ("source", "/src"),
            ("colour", "blue"),
            ("cache", "lots"),
            ("ro", "maybe"),
            ("delta", "-12"),
            ("delta", "3"),
            ("source", ""),
        ],
    );
    assert_eq!(rets, [0, -libc::EINVAL, -libc::EINVAL, -libc::EINVAL, 0, -libc::EINVAL, -libc::EINVAL, 0]);
    assert!(logged("test-fs: unknown option 'colour' (known: source, cache, ro, tag, delta)"));
    assert!(logged("test-fs: bad value 'lots' for option 'cache': expected a size (4096, 64KiB, 1M, 2GiB)"));
    assert!(logged("bad value 'maybe' for option 'ro': expected a boolean"));
    assert!(logged("test-fs: option 'delta' given more than once"));

    let (_, rets) = mount::<TestFs>(&TEST_DESC, &[("cache", "1")]);
    assert_eq!(rets, [0, -libc::EINVAL]);
    assert!(logged("test-fs: missing required option 'source'"));

    let (_, rets) = mount::<TestFs>(&TEST_DESC, &[("source", "/refused")]);
    assert_eq!(rets, [0, -libc::EINVAL]);
    assert!(logged("test-fs: source /refused is not allowed"));

    let (_, rets) = mount::<TestFs>(&TEST_DESC, &[("source", "/panic")]);
    assert_eq!(rets, [0, -libc::EIO]);
    assert!(logged("new panicked: new panicked on purpose"));
}

#[test]
fn lookup_answers_a_typed_entry() {
    let (ops, inst) = test_fs();
    let r = lookup(ops, inst, b"hello");
    // 1.25 s before the epoch: -2 s + 0.75 s.
    assert_eq!(
        r.answer(),
        Answer::Entry {
            ino: 2,
            mode: libc::S_IFREG | 0o644,
            size: 11,
            entry_ns: 1_000_000_000,
            mtime: (-2, 750_000_000),
        }
    );
    assert_eq!(lookup(ops, inst, b"nope").answer(), Answer::Err(-libc::ENOENT));
    let neg = lookup(ops, inst, b"negative").answer();
    assert_eq!(neg, Answer::Entry { ino: 0, mode: 0, size: 0, entry_ns: 5_000_000, mtime: (0, 0) });
}

#[test]
fn names_are_bytes() {
    let (ops, inst) = test_fs();
    let r = lookup(ops, inst, b"\xffraw");
    assert!(matches!(r.answer(), Answer::Entry { ino: 3, .. }));
    let r = FakeReq::new();
    let a = sys::fring_node_args { size: 16, padding: 0, nodeid: 3 };
    unsafe { ops.readlink.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(r.answer(), Answer::Readlink(b"target\xfe".to_vec()));
}

#[test]
fn a_dropped_reply_answers_eio_and_logs() {
    let (ops, inst) = test_fs();
    assert_eq!(lookup(ops, inst, b"drop").answer(), Answer::Err(-libc::EIO));
    assert!(logged("lookup: reply dropped without an answer: answering EIO"));
}

#[test]
fn a_panic_answers_eio_with_its_message_logged() {
    let (ops, inst) = test_fs();
    assert_eq!(lookup(ops, inst, b"panic").answer(), Answer::Err(-libc::EIO));
    assert!(logged("lookup: the method panicked: answering EIO"));
    assert!(logged("test-fs: lookup panicked: lookup panicked on purpose in 1"));
}

#[test]
fn a_reply_can_be_answered_later_from_another_thread() {
    let (ops, inst) = test_fs();
    let r = lookup(ops, inst, b"thread");
    assert!(r.answers().is_empty(), "answered during the call");
    for _ in 0..500 {
        if !r.answers().is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(matches!(r.answer(), Answer::Entry { ino: 9, .. }));
}

#[test]
fn defaults_answer_as_the_host_does_for_null_slots() {
    let (inst, rets) = mount::<Minimal>(&MIN_DESC, &[]);
    assert_eq!(rets, [0]);
    // SAFETY: static ops table.
    let ops = unsafe { &*plugin::<Minimal>(&MIN_DESC).ops };
    assert_eq!(lookup(ops, inst, b"x").answer(), Answer::Err(-libc::ENOSYS));
    let node = sys::fring_node_args { size: 16, padding: 0, nodeid: 1 };
    let open = sys::fring_open_args { size: 24, nodeid: 1, ..Default::default() };
    let rel = sys::fring_release_args { size: 40, nodeid: 1, ..Default::default() };
    let fsync = sys::fring_fsync_args { size: 24, nodeid: 1, ..Default::default() };
    let make = sys::fring_make_args { size: 64, parent: 1, ..Default::default() };
    let xattr = sys::fring_xattr_args { size: 56, nodeid: 1, ..Default::default() };
    let ra = read_args(0, 0, 10);
    let cases: Vec<(Box<dyn Fn(*mut sys::fring_req)>, Answer)> = unsafe {
        vec![
            (Box::new(|r| ops.statfs.unwrap()(inst, r, &node)), Answer::Statfs { bsize: 512, namelen: 255 }),
            (Box::new(|r| ops.open.unwrap()(inst, r, &open)), Answer::Open { fh: 0, flags: 0 }),
            (Box::new(|r| ops.opendir.unwrap()(inst, r, &open)), Answer::Open { fh: 0, flags: 0 }),
            (Box::new(|r| ops.flush.unwrap()(inst, r, &rel)), Answer::Err(0)),
            (Box::new(|r| ops.release.unwrap()(inst, r, &rel)), Answer::Err(0)),
            (Box::new(|r| ops.releasedir.unwrap()(inst, r, &rel)), Answer::Err(0)),
            (Box::new(|r| ops.fsyncdir.unwrap()(inst, r, &fsync)), Answer::Err(0)),
            (Box::new(|r| ops.fsync.unwrap()(inst, r, &fsync)), Answer::Err(-libc::ENOSYS)),
            (Box::new(|r| ops.create.unwrap()(inst, r, &make)), Answer::Err(-libc::ENOSYS)),
            (Box::new(|r| ops.mkdir.unwrap()(inst, r, &make)), Answer::Err(-libc::ENOSYS)),
            (Box::new(|r| ops.getxattr.unwrap()(inst, r, &xattr)), Answer::Err(-libc::ENOSYS)),
            (Box::new(|r| ops.read.unwrap()(inst, r, &ra)), Answer::Err(-libc::ENOSYS)),
            (Box::new(|r| ops.readdir.unwrap()(inst, r, &ra)), Answer::Err(-libc::ENOSYS)),
        ]
    };
    for (i, (call, want)) in cases.iter().enumerate() {
        let r = FakeReq::new();
        call(r.ptr());
        assert_eq!(r.answer(), *want, "case {i}");
    }
    // FORGET: no request, nothing to answer, nothing to fail.
    let items = [sys::fring_forget_one { nodeid: 2, nlookup: 1 }];
    unsafe { ops.forget.unwrap()(inst, items.as_ptr(), 1) };
    unsafe { plugin::<Minimal>(&MIN_DESC).destroy.unwrap()(inst) };
}

#[test]
fn read_answers_bytes_or_has_the_host_read_the_fd() {
    let (ops, inst) = test_fs();
    let read = |fh, off, len, refuse| {
        let mut r = FakeReq::new();
        r.refuse_fd = refuse;
        let a = read_args(fh, off, len);
        unsafe { ops.read.unwrap()(inst, r.ptr(), &a) };
        r.answer()
    };
    assert_eq!(read(0, 6, 3, false), Answer::Data(b"wor".to_vec()), "cut to the size asked");
    assert_eq!(read(7, 4096, 8192, false), Answer::ReadFd { offset: 4096, len: 8192 }, "len cut to the size");
    assert_eq!(read(8, 0, 10, true), Answer::Err(-libc::EBADF), "refused: the reply came back");
}

#[test]
fn write_data_is_optional_and_write_fd_takes_the_rest() {
    let (ops, inst) = test_fs();
    let payload = b"12345";
    let write = |data: *const c_void| {
        let r = FakeReq::new();
        let a = sys::fring_write_args {
            size: 56,
            len: 5,
            nodeid: 2,
            fh: 1,
            offset: 100,
            data,
            ..Default::default()
        };
        unsafe { ops.write.unwrap()(inst, r.ptr(), &a) };
        r.answer()
    };
    assert_eq!(write(payload.as_ptr() as *const c_void), Answer::Write(5));
    // A zero-copied WRITE: data NULL, len 5.
    assert_eq!(write(std::ptr::null()), Answer::WriteFd { offset: 100 });
}

#[test]
fn readdir_stops_when_the_reply_is_full() {
    let (ops, inst) = test_fs();
    let mut r = FakeReq::new();
    r.dir_room = 2;
    let a = read_args(0, 0, 4096);
    unsafe { ops.readdir.unwrap()(inst, r.ptr(), &a) };
    let dir = libc::S_IFDIR;
    assert_eq!(r.answer(), Answer::Dir(vec![(b".".to_vec(), 1, dir, 1), (b"..".to_vec(), 1, dir, 2)]));
    let r = FakeReq::new();
    let a = read_args(0, 2, 4096);
    unsafe { ops.readdir.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(r.answer(), Answer::Dir(vec![(b"a".to_vec(), 5, libc::S_IFREG, 3)]));
    let r = FakeReq::new();
    unsafe { ops.readdirplus.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(
        r.answer(),
        Answer::Dir(vec![(b".".to_vec(), 1, dir, 1), (b"a".to_vec(), 5, libc::S_IFREG, 2)])
    );
}

#[test]
fn readdir_goes_on_past_a_refused_name_and_stops_when_full() {
    let (ops, inst) = test_fs();
    // SAFETY: the instance test_fs made.
    let fs = unsafe { &*(inst as *const Instance<TestFs>) }.fs.get().unwrap();
    let reg = libc::S_IFREG;
    let mut a = read_args(0, 0, 4096);
    a.nodeid = 7;
    let r = FakeReq::new();
    unsafe { ops.readdir.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(
        r.answer(),
        Answer::Dir(vec![
            (b"before".to_vec(), 10, reg, 1),
            (b"mid".to_vec(), 13, reg, 4),
            (b"after".to_vec(), 15, reg, 6)
        ]),
        "every good name, before and after the bad ones"
    );
    let inval = DirAdd::Refused(Errno::EINVAL);
    assert_eq!(
        *fs.dir_results.lock().unwrap(),
        [DirAdd::Added, inval, inval, DirAdd::Added, inval, DirAdd::Added]
    );
    // Room for two: a refused entry takes none, full is Full, not Refused.
    let mut r = FakeReq::new();
    r.dir_room = 2;
    unsafe { ops.readdir.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(
        r.answer(),
        Answer::Dir(vec![(b"before".to_vec(), 10, reg, 1), (b"mid".to_vec(), 13, reg, 4)])
    );
    assert_eq!(
        *fs.dir_results.lock().unwrap(),
        [DirAdd::Added, inval, inval, DirAdd::Added, inval, DirAdd::Full]
    );
    assert!(DirAdd::Full.is_full() && !inval.is_full() && !DirAdd::Added.is_full());
    // the kernel continues from "mid"'s offset: "after" comes next
    let mut a = read_args(0, 4, 4096);
    a.nodeid = 7;
    let r = FakeReq::new();
    unsafe { ops.readdir.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(r.answer(), Answer::Dir(vec![(b"after".to_vec(), 15, reg, 6)]));
}

#[test]
fn setattr_gets_the_valid_fields_only() {
    let (ops, inst) = test_fs();
    let r = FakeReq::new();
    let a = sys::fring_setattr_args {
        size: 96,
        valid: sys::FRING_SET_MODE | sys::FRING_SET_SIZE | sys::FRING_SET_ATIME_NOW | sys::FRING_SET_MTIME,
        nodeid: 2,
        file_size: 4096,
        mode: 0o100640,
        uid: 77, // not valid: ignored
        mtime_sec: 5,
        mtime_nsec: 6,
        ..Default::default()
    };
    unsafe { ops.setattr.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(
        r.answer(),
        Answer::Attr { ino: 2, mode: libc::S_IFREG | 0o640, size: 4096, ttl: 1_000_000_000 }
    );
}

#[test]
fn create_answers_entry_and_open_and_sees_the_caller() {
    let (ops, inst) = test_fs();
    let r = FakeReq::new();
    let name = b"new\0";
    let a = sys::fring_make_args {
        size: 64,
        namelen: 3,
        parent: 1,
        name: name.as_ptr() as *const c_char,
        ..Default::default()
    };
    unsafe { ops.create.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(r.answer(), Answer::Create { ino: 11, fh: 77, flags: sys::FRING_FOPEN_IO_URING_ZERO_COPY });
}

#[test]
fn forget_is_called_per_item() {
    let (ops, inst) = test_fs();
    let items =
        [sys::fring_forget_one { nodeid: 2, nlookup: 3 }, sys::fring_forget_one { nodeid: 5, nlookup: 1 }];
    unsafe { ops.forget.unwrap()(inst, items.as_ptr(), 2) };
    let i = unsafe { &*(inst as *const Instance<TestFs>) };
    assert_eq!(*i.fs.get().unwrap().forgotten.lock().unwrap(), [(2, 3), (5, 1)]);
}

#[test]
fn times_convert_both_sides_of_the_epoch() {
    use crate::types::{from_timespec, to_timespec};
    for (t, ts) in [
        (UNIX_EPOCH, (0, 0)),
        (UNIX_EPOCH + Duration::new(3, 5), (3, 5)),
        (UNIX_EPOCH - Duration::new(0, 1), (-1, 999_999_999)),
        (UNIX_EPOCH - Duration::new(2, 0), (-2, 0)),
    ] {
        assert_eq!(to_timespec(t), ts);
        assert_eq!(from_timespec(ts.0, ts.1), t);
    }
    let now = SystemTime::now();
    let (s, n) = to_timespec(now);
    assert_eq!(from_timespec(s, n), now);
}

#[test]
fn errno_keeps_the_os_error() {
    let e: Errno = std::io::Error::from_raw_os_error(libc::ENOTEMPTY).into();
    assert_eq!(e, Errno::ENOTEMPTY);
    let e: Errno = std::io::Error::other("no errno").into();
    assert_eq!(e, Errno::EIO);
    assert_eq!(Errno::new(0), Errno::EIO);
    assert_eq!(Errno::from_neg(-libc::EROFS), Errno::EROFS);
    let md = std::fs::metadata("/").unwrap();
    let a = Attr::from_metadata(&md);
    assert_eq!(a.kind, FileType::Directory);
    assert_eq!(a.mode(), std::os::unix::fs::MetadataExt::mode(&md));
}

#[test]
fn locks_and_statx_are_typed() {
    let (ops, inst) = test_fs();
    let r = FakeReq::new();
    let a = sys::fring_lock_args {
        size: 56,
        nodeid: 2,
        fh: 1,
        owner: 99,
        lock: sys::fring_lock { start: 0, end: i64::MAX as u64, type_: libc::F_WRLCK as u32, pid: 0 },
        ..Default::default()
    };
    unsafe { ops.getlk.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(r.answer(), Answer::Lock { start: 10, end: 19, kind: libc::F_RDLCK as u32, pid: 1234 });
    let r = FakeReq::new();
    unsafe { ops.setlk.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(r.answer(), Answer::Err(-libc::ENOSYS));
    let r = FakeReq::new();
    let a = sys::fring_statx_args {
        size: 32,
        getattr_flags: sys::FRING_GETATTR_FH,
        nodeid: 2,
        fh: 4,
        ..Default::default()
    };
    unsafe { ops.statx.unwrap()(inst, r.ptr(), &a) };
    assert_eq!(r.answer(), Answer::Statx { mask: 0x0fff, ino: 2, btime: (100, 7) });
}
