// SPDX-License-Identifier: MIT
//! The values a filesystem reads and answers with: errors, file types,
//! attributes, entries, open results, statfs, setattr changes.
use std::fmt;
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fring_sys as sys;

/// An error answered to the kernel: a positive errno value (`Errno::ENOENT`),
/// never 0. Every operation that can fail answers with one through its
/// reply's `error` method; `From<io::Error>` keeps the OS's errno (EIO when
/// the error has none), so `?` on `std::fs` calls works in helpers that
/// return [`Result`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Errno(i32);

macro_rules! errnos {
    ($($name:ident),* $(,)?) => {
        impl Errno {
            $(
                #[doc = concat!("`", stringify!($name), "` (libc).")]
                pub const $name: Errno = Errno(libc::$name);
            )*
        }
    };
}
errnos!(
    EPERM,
    ENOENT,
    EIO,
    ENXIO,
    EBADF,
    EAGAIN,
    ENOMEM,
    EACCES,
    EFAULT,
    EBUSY,
    EEXIST,
    EXDEV,
    ENODEV,
    ENOTDIR,
    EISDIR,
    EINVAL,
    ENFILE,
    EMFILE,
    EFBIG,
    ENOSPC,
    ESPIPE,
    EROFS,
    EMLINK,
    ERANGE,
    ENAMETOOLONG,
    ENOSYS,
    ENOTEMPTY,
    ELOOP,
    ENODATA,
    EOPNOTSUPP,
    EINTR,
    ENOTSUP,
    EOVERFLOW,
    ETIMEDOUT,
    EALREADY,
    ENOTCONN,
    E2BIG,
    ESTALE,
    EPROTO,
);

impl Errno {
    /// An errno from its positive value; 0 or a negative value becomes EIO
    /// (an answer must be an error, and plugin.h's values are positive
    /// here).
    pub fn new(errno: i32) -> Errno {
        if errno > 0 {
            Errno(errno)
        } else {
            Errno::EIO
        }
    }

    /// An errno from a negative host return value (`-EINVAL` → EINVAL).
    pub fn from_neg(ret: i32) -> Errno {
        Errno::new(ret.saturating_neg())
    }

    /// The positive errno value.
    pub fn raw(self) -> i32 {
        self.0
    }
}

impl From<io::Error> for Errno {
    fn from(e: io::Error) -> Errno {
        Errno::new(e.raw_os_error().unwrap_or(libc::EIO))
    }
}

impl From<Errno> for io::Error {
    fn from(e: Errno) -> io::Error {
        io::Error::from_raw_os_error(e.0)
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Errno({}: {})", self.0, io::Error::from_raw_os_error(self.0))
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&io::Error::from_raw_os_error(self.0), f)
    }
}

impl std::error::Error for Errno {}

/// `Result<T, Errno>`, for a filesystem's helper functions.
pub type Result<T> = std::result::Result<T, Errno>;

/// The type of an inode: the `S_IF*` bits of its mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileType {
    /// `S_IFREG`.
    RegularFile,
    /// `S_IFDIR`.
    Directory,
    /// `S_IFLNK`.
    Symlink,
    /// `S_IFCHR`.
    CharDevice,
    /// `S_IFBLK`.
    BlockDevice,
    /// `S_IFIFO`.
    NamedPipe,
    /// `S_IFSOCK`.
    Socket,
}

impl FileType {
    /// The `S_IF*` bits (`mode & S_IFMT`).
    pub fn mode_bits(self) -> u32 {
        match self {
            FileType::RegularFile => libc::S_IFREG,
            FileType::Directory => libc::S_IFDIR,
            FileType::Symlink => libc::S_IFLNK,
            FileType::CharDevice => libc::S_IFCHR,
            FileType::BlockDevice => libc::S_IFBLK,
            FileType::NamedPipe => libc::S_IFIFO,
            FileType::Socket => libc::S_IFSOCK,
        }
    }

    /// The type in a mode's `S_IFMT` bits; `None` for none of the seven.
    pub fn from_mode(mode: u32) -> Option<FileType> {
        Some(match mode & libc::S_IFMT {
            m if m == libc::S_IFREG => FileType::RegularFile,
            m if m == libc::S_IFDIR => FileType::Directory,
            m if m == libc::S_IFLNK => FileType::Symlink,
            m if m == libc::S_IFCHR => FileType::CharDevice,
            m if m == libc::S_IFBLK => FileType::BlockDevice,
            m if m == libc::S_IFIFO => FileType::NamedPipe,
            m if m == libc::S_IFSOCK => FileType::Socket,
            _ => return None,
        })
    }

    /// The type of a `std::fs::FileType`.
    pub fn from_std(t: std::fs::FileType) -> FileType {
        use std::os::unix::fs::FileTypeExt;
        if t.is_dir() {
            FileType::Directory
        } else if t.is_symlink() {
            FileType::Symlink
        } else if t.is_char_device() {
            FileType::CharDevice
        } else if t.is_block_device() {
            FileType::BlockDevice
        } else if t.is_fifo() {
            FileType::NamedPipe
        } else if t.is_socket() {
            FileType::Socket
        } else {
            FileType::RegularFile
        }
    }
}

/// Seconds and nanoseconds since the epoch, as the ABI carries times
/// (negative seconds before 1970, nanoseconds always 0..1e9).
pub(crate) fn to_timespec(t: SystemTime) -> (i64, u32) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs().min(i64::MAX as u64) as i64, d.subsec_nanos()),
        Err(e) => {
            let d = e.duration();
            let secs = d.as_secs().min(i64::MAX as u64) as i64;
            match d.subsec_nanos() {
                0 => (-secs, 0),
                n => (-secs - 1, 1_000_000_000 - n),
            }
        }
    }
}

/// The inverse of `to_timespec` (nanoseconds clamped below 1e9).
pub(crate) fn from_timespec(sec: i64, nsec: u32) -> SystemTime {
    let nsec = nsec.min(999_999_999);
    if sec >= 0 {
        UNIX_EPOCH + Duration::new(sec as u64, nsec)
    } else {
        UNIX_EPOCH - Duration::from_secs(sec.unsigned_abs()) + Duration::from_nanos(nsec as u64)
    }
}

pub(crate) fn duration_ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// File attributes (`struct fring_attr`, the kernel's `fuse_attr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    /// Inode number the kernel knows this file by (1 is the root).
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Allocated 512-byte blocks.
    pub blocks: u64,
    /// Last access.
    pub atime: SystemTime,
    /// Last modification of the data.
    pub mtime: SystemTime,
    /// Last status change.
    pub ctime: SystemTime,
    /// The file's type (the `S_IF*` bits of its mode).
    pub kind: FileType,
    /// Permission bits, `0o7777` at most (setuid, setgid, sticky, rwx).
    pub perm: u16,
    /// Hard links.
    pub nlink: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Device number of a device node (`makedev` encoding), else 0.
    pub rdev: u32,
    /// Preferred I/O size; 0 lets the kernel choose.
    pub blksize: u32,
    /// `FUSE_ATTR_*` bits, normally 0.
    pub flags: u32,
}

impl Attr {
    /// Attributes of a `kind` inode with permission bits `perm`: size 0,
    /// one link (two for a directory), uid and gid 0, every time the epoch.
    pub fn new(ino: u64, kind: FileType, perm: u16) -> Attr {
        Attr {
            ino,
            size: 0,
            blocks: 0,
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            kind,
            perm: perm & 0o7777,
            nlink: if kind == FileType::Directory { 2 } else { 1 },
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 0,
            flags: 0,
        }
    }

    /// Attributes from `std::fs` metadata (`lstat`/`fstat`), with its
    /// inode number; a filesystem that numbers its inodes itself then sets
    /// `ino` (the root must be 1).
    pub fn from_metadata(md: &Metadata) -> Attr {
        Attr {
            ino: md.ino(),
            size: md.size(),
            blocks: md.blocks(),
            atime: from_timespec(md.atime(), md.atime_nsec() as u32),
            mtime: from_timespec(md.mtime(), md.mtime_nsec() as u32),
            ctime: from_timespec(md.ctime(), md.ctime_nsec() as u32),
            kind: FileType::from_mode(md.mode()).unwrap_or(FileType::RegularFile),
            perm: (md.mode() & 0o7777) as u16,
            nlink: md.nlink().min(u32::MAX as u64) as u32,
            uid: md.uid(),
            gid: md.gid(),
            rdev: md.rdev() as u32,
            blksize: md.blksize() as u32,
            flags: 0,
        }
    }

    /// The full mode: type bits and permissions.
    pub fn mode(&self) -> u32 {
        self.kind.mode_bits() | (self.perm as u32 & 0o7777)
    }

    pub(crate) fn to_sys(self) -> sys::fring_attr {
        let (atime_sec, atime_nsec) = to_timespec(self.atime);
        let (mtime_sec, mtime_nsec) = to_timespec(self.mtime);
        let (ctime_sec, ctime_nsec) = to_timespec(self.ctime);
        sys::fring_attr {
            ino: self.ino,
            size: self.size,
            blocks: self.blocks,
            atime_sec,
            mtime_sec,
            ctime_sec,
            atime_nsec,
            mtime_nsec,
            ctime_nsec,
            mode: self.mode(),
            nlink: self.nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: self.rdev,
            blksize: self.blksize,
            flags: self.flags,
        }
    }
}

/// A directory entry the kernel may cache (`struct fring_entry`): the
/// answer to LOOKUP, MKNOD, MKDIR, SYMLINK, LINK, CREATE and READDIRPLUS.
/// Each one with `ino != 0` adds one to the inode's lookup count, which
/// [`Filesystem::forget`](crate::Filesystem::forget) later subtracts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The inode (`attr.ino` is what `stat` shows; normally the same).
    pub ino: u64,
    /// Generation: (ino, generation) must be unique for the fs's life.
    pub generation: u64,
    /// The attributes.
    pub attr: Attr,
    /// How long the kernel may cache the name.
    pub entry_ttl: Duration,
    /// How long the kernel may cache the attributes.
    pub attr_ttl: Duration,
}

impl Entry {
    /// An entry for `attr` (its `ino`), generation 0, both caches `ttl`.
    pub fn new(attr: Attr, ttl: Duration) -> Entry {
        Entry { ino: attr.ino, generation: 0, attr, entry_ttl: ttl, attr_ttl: ttl }
    }

    pub(crate) fn to_sys(self) -> sys::fring_entry {
        sys::fring_entry {
            ino: self.ino,
            generation: self.generation,
            entry_timeout_ns: duration_ns(self.entry_ttl),
            attr_timeout_ns: duration_ns(self.attr_ttl),
            attr: self.attr.to_sys(),
        }
    }
}

/// `FOPEN_*` flags for [`Opened::flags`] (kernel values).
pub mod fopen {
    use fring_sys as sys;
    /// Bypass the page cache for this open file.
    pub const DIRECT_IO: u32 = sys::FRING_FOPEN_DIRECT_IO;
    /// Keep cached data from earlier opens.
    pub const KEEP_CACHE: u32 = sys::FRING_FOPEN_KEEP_CACHE;
    /// The file is not seekable.
    pub const NONSEEKABLE: u32 = sys::FRING_FOPEN_NONSEEKABLE;
    /// Cache this directory's listing (OPENDIR).
    pub const CACHE_DIR: u32 = sys::FRING_FOPEN_CACHE_DIR;
    /// A stream: no file position.
    pub const STREAM: u32 = sys::FRING_FOPEN_STREAM;
    /// Do not send FLUSH on close.
    pub const NOFLUSH: u32 = sys::FRING_FOPEN_NOFLUSH;
    /// Allow parallel direct writes.
    pub const PARALLEL_DIRECT_WRITES: u32 = sys::FRING_FOPEN_PARALLEL_DIRECT_WRITES;
    /// Kernel passthrough to [`Opened::backing_id`](crate::Opened::backing_id) (ABI 1.3).
    pub const PASSTHROUGH: u32 = sys::FRING_FOPEN_PASSTHROUGH;
    /// io_uring zero-copy (ABI 1.5): READ and WRITE of this open file may
    /// arrive zero-copied, and must then be answered through
    /// [`ReplyRead::read_fd`](crate::ReplyRead::read_fd) and
    /// [`ReplyWrite::write_fd`](crate::ReplyWrite::write_fd) (or an error);
    /// [`ReplyWrite::data`](crate::ReplyWrite::data) is `None` for such a
    /// WRITE. Always safe to set: the host clears it when the mount does not
    /// serve zero-copy.
    pub const IO_URING_ZERO_COPY: u32 = sys::FRING_FOPEN_IO_URING_ZERO_COPY;
}

/// The answer to OPEN, OPENDIR and CREATE (`struct fring_open_out`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Opened {
    /// Opaque handle the kernel passes back in every later request on this
    /// open file (read, write, release...).
    pub fh: u64,
    /// [`fopen`] flags.
    pub flags: u32,
    /// Backing id from [`Mount::backing_open`](crate::Mount::backing_open)
    /// with [`fopen::PASSTHROUGH`]; 0 for none.
    pub backing_id: i32,
}

impl Opened {
    /// Handle `fh`, no flags.
    pub fn new(fh: u64) -> Opened {
        Opened { fh, flags: 0, backing_id: 0 }
    }

    /// The same with [`fopen`] `flags` added.
    pub fn with_flags(mut self, flags: u32) -> Opened {
        self.flags |= flags;
        self
    }

    pub(crate) fn to_sys(self) -> sys::fring_open_out {
        sys::fring_open_out { fh: self.fh, open_flags: self.flags, backing_id: self.backing_id }
    }
}

/// File system statistics (`struct fring_statfs`, the kernel's
/// `fuse_kstatfs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Statfs {
    /// Total blocks of `frsize` bytes.
    pub blocks: u64,
    /// Free blocks.
    pub bfree: u64,
    /// Free blocks for unprivileged users.
    pub bavail: u64,
    /// Total inodes.
    pub files: u64,
    /// Free inodes.
    pub ffree: u64,
    /// Block size.
    pub bsize: u32,
    /// Longest name.
    pub namelen: u32,
    /// Fragment size.
    pub frsize: u32,
}

impl Statfs {
    /// An empty file system: what the host answers when a plugin has no
    /// statfs (bsize and frsize 512, names up to 255 bytes, no blocks).
    pub fn empty() -> Statfs {
        Statfs { bsize: 512, frsize: 512, namelen: 255, ..Default::default() }
    }

    /// The statistics of the file system holding `path` (`statvfs`), for
    /// a filesystem that mirrors a directory.
    pub fn of_path(path: &std::path::Path) -> Result<Statfs> {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| Errno::EINVAL)?;
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
        // SAFETY: a NUL-terminated path and a statvfs to fill.
        if unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error().into());
        }
        // SAFETY: filled by a successful statvfs (and zeroed before).
        let st = unsafe { st.assume_init() };
        Ok(Statfs {
            blocks: st.f_blocks,
            bfree: st.f_bfree,
            bavail: st.f_bavail,
            files: st.f_files,
            ffree: st.f_ffree,
            bsize: st.f_bsize as u32,
            namelen: st.f_namemax as u32,
            frsize: st.f_frsize as u32,
        })
    }

    pub(crate) fn to_sys(self) -> sys::fring_statfs {
        sys::fring_statfs {
            blocks: self.blocks,
            bfree: self.bfree,
            bavail: self.bavail,
            files: self.files,
            ffree: self.ffree,
            bsize: self.bsize,
            namelen: self.namelen,
            frsize: self.frsize,
            padding: 0,
        }
    }
}

/// A new access or modification time in a SETATTR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeOrNow {
    /// This time.
    Time(SystemTime),
    /// The current time (`utimensat` with `UTIME_NOW`).
    Now,
}

/// What a SETATTR changes: each `Some` field is to be applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetAttr {
    /// New permission bits (`chmod`; may include the type bits, ignore them).
    pub mode: Option<u32>,
    /// New owner.
    pub uid: Option<u32>,
    /// New group.
    pub gid: Option<u32>,
    /// New size (`truncate`).
    pub size: Option<u64>,
    /// New access time.
    pub atime: Option<TimeOrNow>,
    /// New modification time.
    pub mtime: Option<TimeOrNow>,
    /// New status change time.
    pub ctime: Option<SystemTime>,
    /// The open file it came through (`ftruncate`, `futimens`).
    pub fh: Option<u64>,
    /// The lock owner, when the kernel sent one.
    pub lock_owner: Option<u64>,
    /// Clear setuid/setgid as a write by an unprivileged caller would.
    pub kill_suidgid: bool,
}

impl SetAttr {
    pub(crate) fn from_sys(a: &sys::fring_setattr_args) -> SetAttr {
        let v = a.valid;
        let has = |bit: u32| v & bit != 0;
        let time = |set: u32, now: u32, sec: i64, nsec: u32| {
            if has(now) {
                Some(TimeOrNow::Now)
            } else if has(set) {
                Some(TimeOrNow::Time(from_timespec(sec, nsec)))
            } else {
                None
            }
        };
        SetAttr {
            mode: has(sys::FRING_SET_MODE).then_some(a.mode),
            uid: has(sys::FRING_SET_UID).then_some(a.uid),
            gid: has(sys::FRING_SET_GID).then_some(a.gid),
            size: has(sys::FRING_SET_SIZE).then_some(a.file_size),
            atime: time(sys::FRING_SET_ATIME, sys::FRING_SET_ATIME_NOW, a.atime_sec, a.atime_nsec),
            mtime: time(sys::FRING_SET_MTIME, sys::FRING_SET_MTIME_NOW, a.mtime_sec, a.mtime_nsec),
            ctime: has(sys::FRING_SET_CTIME).then(|| from_timespec(a.ctime_sec, a.ctime_nsec)),
            fh: has(sys::FRING_SET_FH).then_some(a.fh),
            lock_owner: has(sys::FRING_SET_LOCKOWNER).then_some(a.lock_owner),
            kill_suidgid: has(sys::FRING_SET_KILL_SUIDGID),
        }
    }
}

/// The type of a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LockType {
    /// `F_RDLCK` (flock: `LOCK_SH`).
    Read,
    /// `F_WRLCK` (flock: `LOCK_EX`).
    Write,
    /// `F_UNLCK` (flock: `LOCK_UN`).
    Unlock,
}

impl LockType {
    pub(crate) fn from_raw(t: u32) -> LockType {
        match t as i32 {
            libc::F_RDLCK => LockType::Read,
            libc::F_WRLCK => LockType::Write,
            _ => LockType::Unlock,
        }
    }

    pub(crate) fn raw(self) -> u32 {
        (match self {
            LockType::Read => libc::F_RDLCK,
            LockType::Write => libc::F_WRLCK,
            LockType::Unlock => libc::F_UNLCK,
        }) as u32
    }
}

/// A POSIX lock range (`struct fring_lock`, the kernel's `fuse_file_lock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lock {
    /// First byte.
    pub start: u64,
    /// Last byte, inclusive ([`Lock::TO_EOF`] for the rest of the file).
    pub end: u64,
    /// Read, write or unlock.
    pub kind: LockType,
    /// The process holding it (GETLK answers).
    pub pid: u32,
}

impl Lock {
    /// `end` of a lock that runs to the end of the file (`OFFSET_MAX`).
    pub const TO_EOF: u64 = i64::MAX as u64;

    /// No conflicting lock: the answer to a GETLK that found none.
    pub fn unlocked() -> Lock {
        Lock { start: 0, end: 0, kind: LockType::Unlock, pid: 0 }
    }

    pub(crate) fn from_sys(l: &sys::fring_lock) -> Lock {
        Lock { start: l.start, end: l.end, kind: LockType::from_raw(l.type_), pid: l.pid }
    }

    pub(crate) fn to_sys(self) -> sys::fring_lock {
        sys::fring_lock { start: self.start, end: self.end, type_: self.kind.raw(), pid: self.pid }
    }
}
