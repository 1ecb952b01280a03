// SPDX-License-Identifier: MIT
//! The host table: where it is kept, logging through it, the mount handle,
//! the FUSE_INIT negotiation.
use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd};
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use fring_sys as sys;

use crate::types::Errno;

/// The host table, stored by the entry point (and load) before anything
/// else runs. Kept as a raw pointer: its `size` says how much of it the
/// host wrote, and only that much is read (`host_fn!`).
static HOST: AtomicPtr<sys::fring_host_api> = AtomicPtr::new(ptr::null_mut());

pub(crate) fn set_host(h: *const sys::fring_host_api) {
    if !h.is_null() {
        HOST.store(h as *mut _, Ordering::Release);
    }
}

pub(crate) fn raw_host() -> *const sys::fring_host_api {
    HOST.load(Ordering::Acquire)
}

/// The host function in `slot`, if the host table has it (its `size` covers
/// the slot, as `FRING_HAS_FIELD` checks) and it is not NULL.
macro_rules! host_fn {
    ($slot:ident) => {{
        let p = $crate::host::raw_host();
        if p.is_null() {
            None
        } else {
            // SAFETY: the host table stays valid for the life of the
            // plugin (plugin.h) and is at least `size` bytes long; the slot
            // is read only when `size` covers it.
            unsafe {
                let size = ::core::ptr::addr_of!((*p).size).read() as usize;
                if size
                    >= ::core::mem::offset_of!(::fring_sys::fring_host_api, $slot)
                        + ::core::mem::size_of::<usize>()
                {
                    ::core::ptr::addr_of!((*p).$slot).read()
                } else {
                    None
                }
            }
        }
    }};
}
pub(crate) use host_fn;

/// Log levels of the host's log (`FRING_LOG_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Something failed.
    Error = 0,
    /// Something is wrong but serving goes on.
    Warn = 1,
    /// Worth knowing (the default level shows it).
    Info = 2,
    /// Detail (`FRING_LOG=debug`).
    Debug = 3,
}

/// Turns a message into C lines: one host log call per line, NUL bytes
/// shown as `\0`.
fn c_lines(msg: &str) -> impl Iterator<Item = CString> + '_ {
    let msg = msg.strip_suffix('\n').unwrap_or(msg);
    msg.split('\n').map(|l| CString::new(l.replace('\0', "\\0")).unwrap_or_else(|_| CString::from(c"?")))
}

pub(crate) fn log_to(m: *mut sys::fring_mount, level: Level, msg: &str) {
    match host_fn!(log) {
        Some(f) => {
            for line in c_lines(msg) {
                // SAFETY: a host function; any thread, any mount pointer the
                // host gave us (or NULL), a NUL-terminated line.
                unsafe { f(m, level as i32, line.as_ptr()) }
            }
        }
        None => eprintln!("{msg}"),
    }
}

/// Logs `msg` through the host (its log level and format; no mount
/// prefix). Any thread. A message of several lines is logged line by line.
/// See also [`Mount::log`] and the [`error!`](crate::error)... macros.
pub fn log(level: Level, msg: &str) {
    log_to(ptr::null_mut(), level, msg)
}

/// Whether the host's log shows `level` (to skip building a debug message).
pub fn log_enabled(level: Level) -> bool {
    match host_fn!(log_enabled) {
        // SAFETY: a host function, any thread; NULL mount is allowed.
        Some(f) => unsafe { f(ptr::null_mut(), level as i32) != 0 },
        None => level <= Level::Info,
    }
}

/// Logs a formatted message at error level through the host:
/// `fring::error!("cannot open {}: {e}", path.display())`.
#[macro_export]
macro_rules! error {
    ($($t:tt)*) => { $crate::__log_fmt!($crate::Level::Error, $($t)*) };
}
/// Logs a formatted message at warning level through the host.
#[macro_export]
macro_rules! warn {
    ($($t:tt)*) => { $crate::__log_fmt!($crate::Level::Warn, $($t)*) };
}
/// Logs a formatted message at info level through the host.
#[macro_export]
macro_rules! info {
    ($($t:tt)*) => { $crate::__log_fmt!($crate::Level::Info, $($t)*) };
}
/// Logs a formatted message at debug level through the host (formatted
/// only when the host's level shows debug).
#[macro_export]
macro_rules! debug {
    ($($t:tt)*) => { $crate::__log_fmt!($crate::Level::Debug, $($t)*) };
}
#[doc(hidden)]
#[macro_export]
macro_rules! __log_fmt {
    ($lvl:expr, $($t:tt)*) => {
        if $crate::log_enabled($lvl) {
            $crate::log($lvl, &::std::format!($($t)*))
        }
    };
}

/// The host side of one mount: logging with the mountpoint as prefix, the
/// mountpoint, shutdown, kernel passthrough registrations. Cheap to copy
/// and usable from any thread while the mount's filesystem value lives
/// (the host frees it after dropping the filesystem).
#[derive(Clone, Copy, Debug)]
pub struct Mount {
    raw: *mut sys::fring_mount,
}

// SAFETY: every host function taking a mount may be called from any thread
// (plugin.h); the pointer is only ever passed back to them.
unsafe impl Send for Mount {}
// SAFETY: as above; Mount has no interior state.
unsafe impl Sync for Mount {}

impl Mount {
    pub(crate) fn from_raw(raw: *mut sys::fring_mount) -> Mount {
        Mount { raw }
    }

    pub(crate) fn raw_ptr(&self) -> *mut sys::fring_mount {
        self.raw
    }

    /// Logs `msg` prefixed with the mountpoint.
    pub fn log(&self, level: Level, msg: &str) {
        log_to(self.raw, level, msg)
    }

    /// [`Mount::log`] at error level.
    pub fn error(&self, msg: &str) {
        self.log(Level::Error, msg)
    }

    /// [`Mount::log`] at warning level.
    pub fn warn(&self, msg: &str) {
        self.log(Level::Warn, msg)
    }

    /// [`Mount::log`] at info level.
    pub fn info(&self, msg: &str) {
        self.log(Level::Info, msg)
    }

    /// [`Mount::log`] at debug level.
    pub fn debug(&self, msg: &str) {
        self.log(Level::Debug, msg)
    }

    /// The directory the mount is served on, absolute with symlinks
    /// resolved (ABI 1.2); `None` from an older host. Lets a filesystem
    /// refuse a mountpoint inside its own backing tree.
    pub fn mount_point(&self) -> Option<PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        let f = host_fn!(mount_point)?;
        // SAFETY: a host function; the string is valid until destroy and
        // copied at once.
        let p = unsafe { f(self.raw) };
        if p.is_null() {
            return None;
        }
        // SAFETY: NUL-terminated, owned by the host, valid for this call.
        let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }

    /// Asks the mount to shut down (unmount) as soon as possible.
    pub fn request_shutdown(&self) {
        if let Some(f) = host_fn!(mount_request_shutdown) {
            // SAFETY: a host function, any thread.
            unsafe { f(self.raw) }
        }
    }

    /// Registers an open regular file for kernel passthrough (ABI 1.3,
    /// needs [`cap::PASSTHROUGH`] wanted in [`Filesystem::init`](crate::Filesystem::init)):
    /// the id goes into [`Opened::backing_id`](crate::Opened::backing_id)
    /// with [`fopen::PASSTHROUGH`](crate::fopen::PASSTHROUGH). The kernel keeps
    /// its own reference, so `fd` may be closed afterwards. Give every
    /// concurrent open of one inode the same id (plugin.h).
    pub fn backing_open(&self, fd: impl AsFd) -> Result<i32, Errno> {
        let f = host_fn!(backing_open).ok_or(Errno::EOPNOTSUPP)?;
        // SAFETY: a host function; fd is open for the call.
        let ret = unsafe { f(self.raw, fd.as_fd().as_raw_fd(), 0) };
        if ret > 0 {
            Ok(ret)
        } else {
            Err(Errno::from_neg(ret))
        }
    }

    /// Drops a backing registration ([`Mount::backing_open`]); only once no
    /// open reply naming it can still be on its way (the inode's last
    /// release is safe).
    pub fn backing_close(&self, backing_id: i32) -> Result<(), Errno> {
        let f = host_fn!(backing_close).ok_or(Errno::EOPNOTSUPP)?;
        // SAFETY: a host function.
        match unsafe { f(self.raw, backing_id) } {
            0 => Ok(()),
            e => Err(Errno::from_neg(e)),
        }
    }
}

/// Kernel INIT capability bits (`FRING_CAP_*`) for [`Conn`].
#[allow(clippy::unnecessary_cast)] // bindgen picks u32 or u64 per value
pub mod cap {
    use fring_sys as sys;
    /// Asynchronous reads.
    pub const ASYNC_READ: u64 = sys::FRING_CAP_ASYNC_READ as u64;
    /// `O_TRUNC` handled in OPEN: the filesystem's `open` truncates the
    /// file itself. Wanted by the host only for a filesystem that sets
    /// [`Filesystem::ATOMIC_O_TRUNC`](crate::Filesystem::ATOMIC_O_TRUNC);
    /// one whose `open` truncates only on some mounts may add it in
    /// `init` instead. Never add it for an `open` that ignores `O_TRUNC`:
    /// overwritten files would keep their old bytes.
    pub const ATOMIC_O_TRUNC: u64 = sys::FRING_CAP_ATOMIC_O_TRUNC as u64;
    /// Lookups of "." and "..".
    pub const EXPORT_SUPPORT: u64 = sys::FRING_CAP_EXPORT_SUPPORT as u64;
    /// The kernel does not apply the umask.
    pub const DONT_MASK: u64 = sys::FRING_CAP_DONT_MASK as u64;
    /// Invalidate cached data when mtime changes.
    pub const AUTO_INVAL_DATA: u64 = sys::FRING_CAP_AUTO_INVAL_DATA as u64;
    /// Asynchronous direct I/O.
    pub const ASYNC_DIO: u64 = sys::FRING_CAP_ASYNC_DIO as u64;
    /// Write-back caching.
    pub const WRITEBACK_CACHE: u64 = sys::FRING_CAP_WRITEBACK_CACHE as u64;
    /// Parallel lookups and readdirs in one directory.
    pub const PARALLEL_DIROPS: u64 = sys::FRING_CAP_PARALLEL_DIROPS as u64;
    /// The fs clears setuid/setgid on write/chown/truncate.
    pub const HANDLE_KILLPRIV: u64 = sys::FRING_CAP_HANDLE_KILLPRIV as u64;
    /// POSIX ACLs.
    pub const POSIX_ACL: u64 = sys::FRING_CAP_POSIX_ACL as u64;
    /// The kernel caches symlink targets.
    pub const CACHE_SYMLINKS: u64 = sys::FRING_CAP_CACHE_SYMLINKS as u64;
    /// Killpriv, version 2.
    pub const HANDLE_KILLPRIV_V2: u64 = sys::FRING_CAP_HANDLE_KILLPRIV_V2 as u64;
    /// Extended SETXATTR.
    pub const SETXATTR_EXT: u64 = sys::FRING_CAP_SETXATTR_EXT as u64;
    /// Kernel passthrough (ABI 1.3).
    pub const PASSTHROUGH: u64 = sys::FRING_CAP_PASSTHROUGH as u64;
}

/// The transport a mount is set up to use ([`Conn::transport`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `/dev/fuse` read/write.
    DevFuse,
    /// FUSE-over-io_uring.
    Uring,
}

/// FUSE_INIT negotiation, handed to [`Filesystem::init`](crate::Filesystem::init).
/// `want` starts as what the host intends to accept (already limited to
/// the kernel's offer, to the operations the plugin has and to what its
/// constants declare: [`cap::ATOMIC_O_TRUNC`] only with
/// [`Filesystem::ATOMIC_O_TRUNC`](crate::Filesystem::ATOMIC_O_TRUNC)).
pub struct Conn<'a> {
    raw: &'a mut sys::fring_conn,
}

impl<'a> Conn<'a> {
    pub(crate) fn new(raw: &'a mut sys::fring_conn) -> Conn<'a> {
        Conn { raw }
    }

    /// The kernel's FUSE protocol version (major, minor).
    pub fn proto(&self) -> (u32, u32) {
        (self.raw.proto_major, self.raw.proto_minor)
    }

    /// What the kernel offers ([`cap`] bits).
    pub fn capable(&self) -> u64 {
        self.raw.capable
    }

    /// What will be accepted ([`cap`] bits).
    pub fn want(&self) -> u64 {
        self.raw.want
    }

    /// Asks for `caps` too; the host keeps only what the kernel offers.
    pub fn add_want(&mut self, caps: u64) {
        self.raw.want |= caps;
    }

    /// Declines `caps`.
    pub fn remove_want(&mut self, caps: u64) {
        self.raw.want &= !caps;
    }

    /// Largest WRITE in bytes.
    pub fn max_write(&self) -> u32 {
        self.raw.max_write
    }

    /// Lowers the largest WRITE (raising it has no effect).
    pub fn set_max_write(&mut self, bytes: u32) {
        self.raw.max_write = self.raw.max_write.min(bytes);
    }

    /// Read-ahead in bytes.
    pub fn max_readahead(&self) -> u32 {
        self.raw.max_readahead
    }

    /// Lowers the read-ahead.
    pub fn set_max_readahead(&mut self, bytes: u32) {
        self.raw.max_readahead = self.raw.max_readahead.min(bytes);
    }

    /// Time granularity in nanoseconds.
    pub fn time_gran(&self) -> u32 {
        self.raw.time_gran
    }

    /// Raises the time granularity.
    pub fn set_time_gran(&mut self, ns: u32) {
        self.raw.time_gran = self.raw.time_gran.max(ns);
    }

    /// The transport the host intends to use (a ring setup failure may
    /// still put the mount on /dev/fuse: do not depend on it).
    pub fn transport(&self) -> Transport {
        if self.raw.transport == sys::FRING_TRANSPORT_URING {
            Transport::Uring
        } else {
            Transport::DevFuse
        }
    }

    /// io_uring queues, or /dev/fuse worker threads.
    pub fn nr_queues(&self) -> u32 {
        self.raw.nr_queues
    }
}
