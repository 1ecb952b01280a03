// SPDX-License-Identifier: MIT
//! Reply objects: each owns one request and is consumed by the answer, so a
//! request is answered exactly once by construction.
use std::ffi::{c_char, c_void, OsStr};
use std::fmt;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;
use std::ptr::{self, NonNull};
use std::time::Duration;

use fring_sys as sys;

use crate::host::{host_fn, log_to, Level, Mount};
use crate::types::{duration_ns, to_timespec, Attr, Entry, Errno, FileType, Lock, Opened, Statfs};
use std::time::SystemTime;

/// Calls a host reply function; its return value only says whether the host
/// took the answer, and a refused one is logged and answered EIO by the
/// host itself.
macro_rules! reply_call {
    ($slot:ident($($arg:expr),*)) => {
        match host_fn!($slot) {
            // SAFETY: a host reply function, called once for a request this
            // object owned, with arguments valid for the call.
            Some(f) => unsafe { f($($arg),*) },
            None => -libc::ENOSYS,
        }
    };
}

/// Answers `req` (consumed) through host function `slot`; the handle is
/// the first argument.
macro_rules! answer {
    ($req:expr, $slot:ident($($arg:expr),*)) => {{
        let r = $req.take();
        reply_call!($slot(r $(, $arg)*));
    }};
}

/// One request not answered yet: the handle and the operation's name.
pub(crate) struct Req {
    raw: NonNull<sys::fring_req>,
    op: &'static str,
}

// SAFETY: plugin.h lets a request be kept and answered later from any one
// thread it is handed to; Req is not Sync (one thread at a time), and the
// move itself synchronises.
unsafe impl Send for Req {}

impl Req {
    /// # Safety
    /// `raw` is a request handle the host just gave the plugin, not
    /// answered yet; the new Req is its only owner.
    pub(crate) unsafe fn new(raw: *mut sys::fring_req, op: &'static str) -> Option<Req> {
        NonNull::new(raw).map(|raw| Req { raw, op })
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::fring_req {
        self.raw.as_ptr()
    }

    /// Gives up ownership: the caller answers through the returned handle.
    fn take(self) -> *mut sys::fring_req {
        let r = self.raw.as_ptr();
        std::mem::forget(self);
        r
    }

    fn error(self, e: Errno) {
        let r = self.take();
        reply_call!(reply_err(r, -e.raw()));
    }

    fn ok(self) {
        let r = self.take();
        reply_call!(reply_err(r, 0));
    }

    fn mount(&self) -> Mount {
        match host_fn!(req_mount) {
            // SAFETY: a host function on a request we own.
            Some(f) => Mount::from_raw(unsafe { f(self.as_ptr()) }),
            None => Mount::from_raw(ptr::null_mut()),
        }
    }

    fn info(&self) -> RequestInfo {
        let mut c = sys::fring_req_ctx {
            size: std::mem::size_of::<sys::fring_req_ctx>() as u32,
            ..Default::default()
        };
        if let Some(f) = host_fn!(req_ctx) {
            // SAFETY: a host function on a request we own; c is ours.
            unsafe { f(self.as_ptr(), &mut c) };
        }
        RequestInfo {
            uid: c.uid,
            gid: c.gid,
            pid: c.pid,
            unique: c.unique,
            opcode: c.opcode,
            nodeid: c.nodeid,
            queue: c.queue,
        }
    }

    fn interrupted(&self) -> bool {
        match host_fn!(req_interrupted) {
            // SAFETY: a host function on a request we own.
            Some(f) => unsafe { f(self.as_ptr()) == 1 },
            None => false,
        }
    }
}

impl Drop for Req {
    /// An unanswered request is answered EIO, and logged: dropped replies
    /// are bugs, and a method that panicked lands here while unwinding.
    fn drop(&mut self) {
        let why =
            if std::thread::panicking() { "the method panicked" } else { "reply dropped without an answer" };
        log_to(self.mount().raw_ptr(), Level::Error, &format!("{}: {why}: answering EIO", self.op));
        reply_call!(reply_err(self.raw.as_ptr(), -libc::EIO));
    }
}

/// Who sent a request (`struct fring_req_ctx`, the FUSE request header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    /// The caller's effective uid.
    pub uid: u32,
    /// The caller's effective gid.
    pub gid: u32,
    /// The caller's thread id (0 for kernel-initiated requests).
    pub pid: u32,
    /// The kernel's request id.
    pub unique: u64,
    /// The FUSE opcode.
    pub opcode: u32,
    /// The inode the request names.
    pub nodeid: u64,
    /// The io_uring queue (or /dev/fuse worker) serving it.
    pub queue: u32,
}

/// Declares a reply type: the request, any extra fields, the common methods.
macro_rules! reply_type {
    ($(#[$m:meta])* $name:ident $({ $($field:ident: $ty:ty),* $(,)? })?) => {
        $(#[$m])*
        #[must_use = "dropping a reply answers EIO"]
        pub struct $name {
            pub(crate) req: Req,
            $($(pub(crate) $field: $ty,)*)?
        }
        common!($name);
    };
}

macro_rules! common {
    ($t:ident) => {
        impl $t {
            /// Answers with an error.
            pub fn error(self, errno: Errno) {
                self.req.error(errno)
            }

            /// Answers `Err(e)` with [`error`](Self::error), `Ok(v)` with
            /// `answer(self, v)`: `reply.result(res, Self::attr_ttl)`-style
            /// glue for methods written with `?`.
            pub fn result<T>(self, res: Result<T, Errno>, answer: impl FnOnce(Self, T)) {
                match res {
                    Ok(v) => answer(self, v),
                    Err(e) => self.error(e),
                }
            }

            /// Who sent the request.
            pub fn request(&self) -> RequestInfo {
                self.req.info()
            }

            /// Whether the caller was interrupted (it got a signal): the
            /// filesystem may then stop early with `error(Errno::EINTR)`.
            pub fn interrupted(&self) -> bool {
                self.req.interrupted()
            }

            /// The mount the request came through.
            pub fn mount(&self) -> Mount {
                self.req.mount()
            }
        }

        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($t), "({})"), self.req.op)
            }
        }
    };
}

/// A reply a data-path service refused ([`ReplyRead::read_fd`],
/// [`ReplyWrite::write_fd`]): the reason, and the reply, still to be
/// answered.
pub struct Refused<R> {
    /// Why the host refused (wrong fd, length over the request's size,
    /// `ENOTCONN` once the rings stopped, `ENOSYS` from a host before ABI 1.1).
    pub errno: Errno,
    /// The request, still the filesystem's to answer.
    pub reply: R,
}

impl<R> fmt::Debug for Refused<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Refused({:?})", self.errno)
    }
}

reply_type! {
    /// The answer to LOOKUP, MKNOD, MKDIR, SYMLINK and LINK.
    ReplyEntry
}

impl ReplyEntry {
    /// Answers with an entry (it adds one to the inode's lookup count).
    pub fn entry(self, entry: &Entry) {
        let e = entry.to_sys();
        answer!(self.req, reply_entry(&e));
    }

    /// A negative entry: the name does not exist, and the kernel may
    /// remember that for `ttl` (LOOKUP only).
    pub fn negative(self, ttl: Duration) {
        let e = sys::fring_entry { entry_timeout_ns: duration_ns(ttl), ..Default::default() };
        answer!(self.req, reply_entry(&e));
    }
}

reply_type! {
    /// The answer to GETATTR and SETATTR.
    ReplyAttr
}

impl ReplyAttr {
    /// Answers with attributes the kernel may cache for `ttl`.
    pub fn attr(self, attr: &Attr, ttl: Duration) {
        let a = attr.to_sys();
        answer!(self.req, reply_attr(&a, duration_ns(ttl)));
    }
}

reply_type! {
    /// The answer to READLINK.
    ReplyReadlink
}

impl ReplyReadlink {
    /// Answers with the link's target.
    pub fn target(self, target: impl AsRef<OsStr>) {
        let t = target.as_ref().as_bytes();
        let Ok(len) = u32::try_from(t.len()) else {
            return self.error(Errno::ENAMETOOLONG);
        };
        answer!(self.req, reply_readlink(t.as_ptr() as *const c_char, len));
    }
}

reply_type! {
    /// The answer to OPEN and OPENDIR.
    ReplyOpen { kill_suidgid: bool }
}

impl ReplyOpen {
    /// Whether this OPEN asks the filesystem to clear the file's setuid
    /// bit (and setgid, with group execute) as it truncates: an `O_TRUNC`
    /// open by a caller without CAP_FSETID (`FUSE_OPEN_KILL_SUIDGID`;
    /// only with [`Filesystem::ATOMIC_O_TRUNC`](crate::Filesystem::ATOMIC_O_TRUNC)).
    pub fn kill_suidgid(&self) -> bool {
        self.kill_suidgid
    }

    /// Answers with the open file's handle and flags.
    pub fn opened(self, open: Opened) {
        let o = open.to_sys();
        answer!(self.req, reply_open(&o));
    }
}

reply_type! {
    /// The answer to CREATE (and TMPFILE).
    ReplyCreate
}

impl ReplyCreate {
    /// Answers with the new file's entry and its open file.
    pub fn created(self, entry: &Entry, open: Opened) {
        let e = entry.to_sys();
        let o = open.to_sys();
        answer!(self.req, reply_create(&e, &o));
    }
}

reply_type! {
    /// An answer without data: success (`ok`) or an error. UNLINK, RMDIR,
    /// RENAME, FLUSH, RELEASE, FSYNC, RELEASEDIR, FSYNCDIR, ACCESS, SETXATTR,
    /// REMOVEXATTR, FALLOCATE, SETLK, FLOCK.
    ReplyEmpty
}

impl ReplyEmpty {
    /// Answers success.
    pub fn ok(self) {
        self.req.ok()
    }
}

reply_type! {
    /// The answer to READ: bytes, or the host reading them from a file
    /// ([`read_fd`](Self::read_fd), fring's fixed-buffer and zero-copy path).
    ReplyRead { size: u32 }
}

impl ReplyRead {
    /// The most bytes the kernel asked for.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Answers with `data` (cut to the requested size; shorter is end of
    /// file). A zero-copied READ (the open used
    /// [`fopen::IO_URING_ZERO_COPY`](crate::fopen::IO_URING_ZERO_COPY))
    /// refuses bytes: answer it with [`read_fd`](Self::read_fd).
    pub fn data(self, data: &[u8]) {
        let n = data.len().min(self.size as usize);
        answer!(self.req, reply_data(data.as_ptr() as *const c_void, n as u32));
    }

    /// Has the host answer with up to `len` bytes of `fd` at `offset`
    /// (host `req_read_fd`): on io_uring a `READ_FIXED` straight into the
    /// ring's registered buffer, or into the caller's pages when the
    /// request is zero-copied, without blocking the queue thread; on
    /// /dev/fuse a `pread`. A short read answers short, an I/O error its
    /// errno. `len` is cut to the requested size.
    ///
    /// The I/O may finish after this returns: keep the file open until
    /// the open file's RELEASE (the kernel sends it only after every READ
    /// on it was answered), e.g. by keeping it in a table under the `fh`.
    /// On refusal (bad fd, rings stopped) the request comes back in
    /// [`Refused`].
    pub fn read_fd(self, fd: impl AsFd, offset: u64, len: u32) -> Result<(), Refused<ReplyRead>> {
        let len = len.min(self.size);
        let fd = fd.as_fd().as_raw_fd();
        let ret = reply_call!(req_read_fd(self.req.as_ptr(), fd, offset, len, 0));
        if ret == 0 {
            // Accepted: the host answers when the I/O completes.
            let _ = self.req.take();
            Ok(())
        } else {
            Err(Refused { errno: Errno::from_neg(ret), reply: self })
        }
    }
}

reply_type! {
    /// The answer to WRITE: the count written, or the host writing the data
    /// to a file ([`write_fd`](Self::write_fd)).
    ReplyWrite { data: *const u8, len: u32 }
}
// SAFETY: `data` points into the request's args, which stay valid until
// the reply wherever the request goes (plugin.h); only read through &self.
unsafe impl Send for ReplyWrite {}

impl ReplyWrite {
    /// Bytes to write.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes to write; `None` when the request is zero-copied (the
    /// open used [`fopen::IO_URING_ZERO_COPY`](crate::fopen::IO_URING_ZERO_COPY)
    /// and the data sits in the caller's pages): only
    /// [`write_fd`](Self::write_fd) can move it. Borrowed from the reply,
    /// so it cannot outlive the answer.
    pub fn data(&self) -> Option<&[u8]> {
        if self.len == 0 {
            Some(&[])
        } else if self.data.is_null() {
            None
        } else {
            // SAFETY: the host's payload of `len` bytes, valid until the
            // reply; the borrow of self ends before any answer.
            Some(unsafe { std::slice::from_raw_parts(self.data, self.len as usize) })
        }
    }

    /// Whether the data is only reachable through [`write_fd`](Self::write_fd).
    pub fn is_zero_copy(&self) -> bool {
        self.data().is_none()
    }

    /// Answers that `count` bytes were written. A zero-copied WRITE
    /// refuses a count above 0: use [`write_fd`](Self::write_fd).
    pub fn written(self, count: u32) {
        answer!(self.req, reply_write(count));
    }

    /// Has the host write this request's data to `fd` at `offset` and
    /// answer the count (host `req_write_fd`): a `WRITE_FIXED` from the
    /// ring's buffer, or from the caller's pages when zero-copied, on
    /// io_uring; a `pwrite` on /dev/fuse. Keep the file open until the
    /// open file's RELEASE, as for [`ReplyRead::read_fd`]. On refusal the
    /// request comes back in [`Refused`].
    pub fn write_fd(self, fd: impl AsFd, offset: u64) -> Result<(), Refused<ReplyWrite>> {
        let fd = fd.as_fd().as_raw_fd();
        let ret = reply_call!(req_write_fd(self.req.as_ptr(), fd, offset, 0));
        if ret == 0 {
            let _ = self.req.take();
            Ok(())
        } else {
            Err(Refused { errno: Errno::from_neg(ret), reply: self })
        }
    }
}

reply_type! {
    /// The answer to STATFS.
    ReplyStatfs
}

impl ReplyStatfs {
    /// Answers with the statistics.
    pub fn statfs(self, st: &Statfs) {
        let s = st.to_sys();
        answer!(self.req, reply_statfs(&s));
    }
}

reply_type! {
    /// The answer to GETXATTR and LISTXATTR: the size when the caller probes
    /// (`size == 0` in the call), else the bytes, or `ERANGE` when they do not
    /// fit.
    ReplyXattr
}

impl ReplyXattr {
    /// Answers a size probe with the value's size.
    pub fn size(self, size: u32) {
        answer!(self.req, reply_xattr_size(size));
    }

    /// Answers with the value (GETXATTR) or the NUL-separated names
    /// (LISTXATTR).
    pub fn data(self, data: &[u8]) {
        let Ok(len) = u32::try_from(data.len()) else {
            return self.error(Errno::E2BIG);
        };
        answer!(self.req, reply_data(data.as_ptr() as *const c_void, len));
    }
}

reply_type! {
    /// The answer to LSEEK (SEEK_DATA / SEEK_HOLE).
    ReplyLseek
}

impl ReplyLseek {
    /// Answers with the offset found (`ENXIO` past the end of file).
    pub fn offset(self, offset: u64) {
        answer!(self.req, reply_lseek(offset));
    }
}

reply_type! {
    /// The answer to COPY_FILE_RANGE.
    ReplyCopy
}

impl ReplyCopy {
    /// Answers that `count` bytes were copied.
    pub fn copied(self, count: u32) {
        answer!(self.req, reply_write(count));
    }
}

/// What [`ReplyDir::add`] / [`ReplyDirPlus::add`] did with an entry.
///
/// Only [`Full`](DirAdd::Full) ends a listing: stop adding and answer with
/// `ok()` (the kernel asks again from the last entry's offset). A
/// [`Refused`](DirAdd::Refused) entry was skipped (the host logs it) and
/// the entries after it still fit, so keep going:
///
/// ```ignore
/// for (i, (name, ino, kind)) in entries.iter().enumerate().skip(offset as usize) {
///     if reply.add(*ino, i as u64 + 1, *kind, name).is_full() {
///         break;
///     }
/// }
/// reply.ok()
/// ```
#[must_use = "a full reply must end the listing: check is_full()"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirAdd {
    /// The entry is in the reply.
    Added,
    /// The reply is full: the entry was NOT added; answer now with `ok()`
    /// and list it in the next call (its offset comes back).
    Full,
    /// The host refused this one entry (an invalid name such as
    /// `"bad/name"`, `""`, a name with NUL, one longer than the kernel
    /// takes; or, for [`ReplyDirPlus::add`], an entry the host will not
    /// let the kernel cache): it was skipped and logged, and the reply
    /// has room for the next ones.
    Refused(Errno),
}

impl DirAdd {
    /// Whether the reply is full: the only result that ends the listing.
    pub fn is_full(self) -> bool {
        self == DirAdd::Full
    }

    /// Whether the entry was added.
    pub fn is_added(self) -> bool {
        self == DirAdd::Added
    }

    /// The host's `dir_add` return value: 1 added, 0 full, negative errno.
    fn from_host(ret: i32) -> DirAdd {
        match ret {
            1 => DirAdd::Added,
            0 => DirAdd::Full,
            e => DirAdd::Refused(Errno::from_neg(e)),
        }
    }
}

fn dir_add(req: &Req, name: &OsStr, ino: u64, kind: FileType, next: u64) -> DirAdd {
    let n = name.as_bytes();
    let Ok(len) = u32::try_from(n.len()) else {
        return DirAdd::Refused(Errno::ENAMETOOLONG);
    };
    DirAdd::from_host(reply_call!(dir_add(
        req.as_ptr(),
        n.as_ptr() as *const c_char,
        len,
        ino,
        kind.mode_bits(),
        next
    )))
}

reply_type! {
    /// The answer to READDIR: entries added one by one, then [`ok`](Self::ok).
    ReplyDir
}

impl ReplyDir {
    /// Adds an entry; `next_offset` is the offset the kernel passes back
    /// to continue after it (stable, not 0). Returns [`DirAdd::Full`] when
    /// the reply is full (the entry was not added: answer now with
    /// [`ok`](Self::ok)), [`DirAdd::Refused`] for an entry the host
    /// skipped (an invalid name: go on with the next one).
    pub fn add(&mut self, ino: u64, next_offset: u64, kind: FileType, name: impl AsRef<OsStr>) -> DirAdd {
        dir_add(&self.req, name.as_ref(), ino, kind, next_offset)
    }

    /// Sends the entries added (none: end of directory).
    pub fn ok(self) {
        answer!(self.req, reply_dir());
    }
}

reply_type! {
    /// The answer to READDIRPLUS: entries with attributes, then
    /// [`ok`](Self::ok). Only called when the filesystem sets
    /// [`Filesystem::READDIRPLUS`](crate::Filesystem::READDIRPLUS).
    ReplyDirPlus
}

impl ReplyDirPlus {
    /// Adds an entry with its attributes; an entry with `ino != 0` counts
    /// as a lookup (forgotten later), one with `ino == 0` does not, and
    /// neither does one that was not added. Returns as
    /// [`ReplyDir::add`]: stop at [`DirAdd::Full`] only. An entry refused
    /// because the host will not let the kernel cache it (not for a bad
    /// name) makes the whole listing fail with EIO at [`ok`](Self::ok).
    pub fn add(&mut self, entry: &Entry, next_offset: u64, name: impl AsRef<OsStr>) -> DirAdd {
        let n = name.as_ref().as_bytes();
        let Ok(len) = u32::try_from(n.len()) else {
            return DirAdd::Refused(Errno::ENAMETOOLONG);
        };
        let e = entry.to_sys();
        DirAdd::from_host(reply_call!(dir_add_plus(
            self.req.as_ptr(),
            n.as_ptr() as *const c_char,
            len,
            &e,
            next_offset
        )))
    }

    /// Adds an entry without attributes (no lookup), such as "." and "..".
    pub fn add_plain(
        &mut self,
        ino: u64,
        next_offset: u64,
        kind: FileType,
        name: impl AsRef<OsStr>,
    ) -> DirAdd {
        dir_add(&self.req, name.as_ref(), ino, kind, next_offset)
    }

    /// Sends the entries added (none: end of directory).
    pub fn ok(self) {
        answer!(self.req, reply_dir());
    }
}

reply_type! {
    /// The answer to GETLK.
    ReplyLock
}

impl ReplyLock {
    /// Answers with the conflicting lock, or [`Lock::unlocked`] for none.
    pub fn lock(self, lock: &Lock) {
        let l = lock.to_sys();
        answer!(self.req, reply_lock(&l));
    }
}

reply_type! {
    /// The answer to STATX (ABI 1.1).
    ReplyStatx
}

impl ReplyStatx {
    /// Answers with the basic attributes and, when known, the birth time
    /// (`STATX_BTIME`), cacheable for `ttl`.
    pub fn statx(self, attr: &Attr, btime: Option<SystemTime>, ttl: Duration) {
        const STATX_BASIC_STATS: u32 = 0x07ff;
        const STATX_BTIME: u32 = 0x0800;
        let (btime_sec, btime_nsec) = btime.map_or((0, 0), to_timespec);
        let sx = sys::fring_statx {
            size: std::mem::size_of::<sys::fring_statx>() as u32,
            mask: STATX_BASIC_STATS | if btime.is_some() { STATX_BTIME } else { 0 },
            attr: attr.to_sys(),
            btime_sec,
            btime_nsec,
            ..Default::default()
        };
        answer!(self.req, reply_statx(&sx, duration_ns(ttl)));
    }
}
