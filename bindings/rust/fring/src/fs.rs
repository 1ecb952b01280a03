// SPDX-License-Identifier: MIT
//! The `Filesystem` trait: one method per operation.
use std::ffi::OsStr;
use std::path::Path;

use crate::host::{Conn, Mount};
use crate::options::{Opt, Options};
use crate::reply::*;
use crate::types::{Errno, Lock, LockType, Opened, SetAttr, Statfs};

/// A filesystem served by fring. One value per mount, made by
/// [`new`](Self::new) from the mount's options, dropped at unmount (the
/// plugin's destroy).
///
/// Operations are inode based (the FUSE low-level vocabulary: 1 is the
/// root). Every method gets a reply object it must consume: answer now,
/// or move it (it is `Send`) to another thread and answer later; dropping
/// it unanswered answers `EIO` and logs. A method that panics answers `EIO`
/// with the panic message logged; the panic never reaches fring.
///
/// Defaults are the host's own for an operation a C plugin leaves NULL:
/// `ENOSYS` for most (the kernel then stops sending FLUSH, FSYNC,
/// FSYNCDIR, xattr ops, ACCESS, CREATE, FALLOCATE, LSEEK and
/// COPY_FILE_RANGE), success for [`open`](Self::open) and
/// [`opendir`](Self::opendir) (fh 0), [`flush`](Self::flush),
/// [`release`](Self::release), [`releasedir`](Self::releasedir) and
/// [`fsyncdir`](Self::fsyncdir), an empty file system for
/// [`statfs`](Self::statfs), nothing for [`forget`](Self::forget). A
/// read-only filesystem should answer the modifying operations with
/// `EROFS` instead of leaving them (users would see "Function not
/// implemented").
///
/// Names are `&OsStr` (any bytes but `/` and NUL), copied out of the
/// request, so they may be used after answering.
///
/// At unmount the value is dropped (the plugin's destroy); no reply and no
/// [`Mount`] may be used after that, so a filesystem that hands replies
/// to its own threads answers them and joins those threads in its `Drop`.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait Filesystem: Sized + Send + Sync + 'static {
    /// The options this filesystem takes (`fring mount -o key=value`, or
    /// the YAML `options:` map). Any other key, a value that does not
    /// parse as its type, a repeated key not marked
    /// [`repeated`](Opt::repeated) or a missing
    /// [`required`](Opt::required) one fails the load with a logged reason
    /// (fring shows where in the YAML file). Also `fring plugins -v`'s help.
    const OPTIONS: &'static [Opt] = &[];

    /// Whether fring may call the methods from several threads at once
    /// (`FRING_THREAD_PARALLEL`); `false`, the default, serialises them
    /// (one at a time per mount; replies kept for later still go anywhere).
    const PARALLEL: bool = false;

    /// Whether [`readdirplus`](Self::readdirplus) is implemented: the host
    /// negotiates READDIRPLUS only for a plugin that has it.
    const READDIRPLUS: bool = false;

    /// Whether [`getlk`](Self::getlk) and [`setlk`](Self::setlk) are
    /// implemented (POSIX locks are negotiated only then; otherwise the
    /// kernel keeps them locally).
    const POSIX_LOCKS: bool = false;

    /// Whether [`flock`](Self::flock) is implemented (BSD locks are
    /// negotiated only then).
    const FLOCK_LOCKS: bool = false;

    /// The filesystem checks callers' permissions itself (from
    /// [`RequestInfo`](crate::RequestInfo)) (`FRING_FEATURE_CHECKS_PERMISSIONS`): without it an
    /// `allow_other` mount gets `default_permissions`.
    const CHECKS_PERMISSIONS: bool = false;

    /// Set `true` only if your [`open`](Self::open) truncates the file to
    /// 0 bytes itself when `flags` has `O_TRUNC`
    /// (`FRING_FEATURE_ATOMIC_O_TRUNC`, ABI 1.6). Only then does the host
    /// negotiate FUSE_ATOMIC_O_TRUNC, telling the kernel that OPEN
    /// truncates. Left `false` (the default), the kernel strips `O_TRUNC`
    /// from OPEN and sends a [`setattr`](Self::setattr) with size 0 after
    /// it, so an `open` that ignores the flag (the default `open`
    /// included) still leaves no old bytes behind; such a filesystem
    /// needs `setattr` with sizes for `O_TRUNC` opens to work.
    const ATOMIC_O_TRUNC: bool = false;

    /// Whether [`state_save`](Self::state_save) and
    /// [`state_load`](Self::state_load) are implemented (plugin ABI 1.7):
    /// only then can `fring restart` hand a live mount to a new process
    /// (a new binary or plugin, the same mount); without them a takeover
    /// is refused and the old server keeps serving.
    const TAKEOVER: bool = false;

    /// Makes the mount's filesystem from its parsed options, after each
    /// was checked against [`OPTIONS`](Self::OPTIONS). An error fails the
    /// load, its message logged.
    fn new(options: &Options, mount: Mount) -> Result<Self, String>;

    /// FUSE_INIT: may change what is negotiated. An error fails the mount.
    fn init(&self, conn: &mut Conn<'_>) -> Result<(), Errno> {
        Ok(())
    }

    /// A takeover, in the old instance once it takes no more requests:
    /// the whole state and the version of its format. Node ids and file
    /// handles the kernel holds must mean the same after
    /// [`state_load`](Self::state_load) in the new instance. An error
    /// refuses the takeover (the old server keeps serving).
    fn state_save(&self) -> Result<(u32, Vec<u8>), Errno> {
        Err(Errno::EOPNOTSUPP)
    }

    /// A takeover, in the new instance after [`new`](Self::new) and
    /// before any request: rebuild from what `state_save` gave. A version
    /// it cannot read: log why (through [`Mount`]) and answer
    /// `Errno::EPROTO`; the takeover is refused, the old server keeps
    /// serving.
    fn state_load(&self, version: u32, data: &[u8]) -> Result<(), Errno> {
        Err(Errno::EOPNOTSUPP)
    }

    /// Look up `name` in directory `parent`.
    fn lookup(&self, parent: u64, name: &OsStr, reply: ReplyEntry) {
        reply.error(Errno::ENOSYS)
    }

    /// The kernel dropped `nlookup` references to `ino` (FORGET and
    /// BATCH_FORGET, per item; no reply).
    fn forget(&self, ino: u64, nlookup: u64) {}

    /// Attributes of `ino`; `fh` when the kernel named an open file.
    fn getattr(&self, ino: u64, fh: Option<u64>, reply: ReplyAttr) {
        reply.error(Errno::ENOSYS)
    }

    /// Change attributes (chmod, chown, truncate, utimens...): apply the
    /// `Some` fields of `set`, answer the new attributes.
    fn setattr(&self, ino: u64, set: SetAttr, reply: ReplyAttr) {
        reply.error(Errno::ENOSYS)
    }

    /// The target of symlink `ino`.
    fn readlink(&self, ino: u64, reply: ReplyReadlink) {
        reply.error(Errno::ENOSYS)
    }

    /// Make a node (file, device, fifo, socket): `mode` has the type bits;
    /// `umask` is the caller's (already applied unless DONT_MASK).
    fn mknod(&self, parent: u64, name: &OsStr, mode: u32, umask: u32, rdev: u32, reply: ReplyEntry) {
        reply.error(Errno::ENOSYS)
    }

    /// Make a directory.
    fn mkdir(&self, parent: u64, name: &OsStr, mode: u32, umask: u32, reply: ReplyEntry) {
        reply.error(Errno::ENOSYS)
    }

    /// Make a symlink `name` in `parent` pointing to `target`.
    fn symlink(&self, parent: u64, name: &OsStr, target: &Path, reply: ReplyEntry) {
        reply.error(Errno::ENOSYS)
    }

    /// Remove a non-directory.
    fn unlink(&self, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        reply.error(Errno::ENOSYS)
    }

    /// Remove an empty directory.
    fn rmdir(&self, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        reply.error(Errno::ENOSYS)
    }

    /// Rename; `flags`: `RENAME_NOREPLACE` (1), `RENAME_EXCHANGE` (2),
    /// `RENAME_WHITEOUT` (4), 0 for a plain rename.
    fn rename(
        &self,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: u32,
        reply: ReplyEmpty,
    ) {
        reply.error(Errno::ENOSYS)
    }

    /// A new hard link `newname` in `newparent` to `ino`.
    fn link(&self, ino: u64, newparent: u64, newname: &OsStr, reply: ReplyEntry) {
        reply.error(Errno::ENOSYS)
    }

    /// Open a file; `flags` are open(2) flags. Default: success, fh 0.
    /// `flags` holds `O_TRUNC` only with
    /// [`ATOMIC_O_TRUNC`](Self::ATOMIC_O_TRUNC) set (or
    /// [`cap::ATOMIC_O_TRUNC`](crate::cap::ATOMIC_O_TRUNC) wanted in
    /// [`init`](Self::init)): the open must then truncate the file itself.
    fn open(&self, ino: u64, flags: i32, reply: ReplyOpen) {
        reply.opened(Opened::new(0))
    }

    /// Read up to `size` bytes at `offset` (answer bytes, or have the host
    /// read a file: [`ReplyRead::read_fd`]).
    fn read(&self, ino: u64, fh: u64, offset: u64, size: u32, reply: ReplyRead) {
        reply.error(Errno::ENOSYS)
    }

    /// Write [`ReplyWrite::data`] at `offset` (or have the host write it to
    /// a file: [`ReplyWrite::write_fd`]); `write_flags`: FUSE_WRITE_* bits.
    fn write(&self, ino: u64, fh: u64, offset: u64, write_flags: u32, reply: ReplyWrite) {
        reply.error(Errno::ENOSYS)
    }

    /// A close of a file descriptor (may come several times per open).
    /// Default: success.
    fn flush(&self, ino: u64, fh: u64, lock_owner: u64, reply: ReplyEmpty) {
        reply.ok()
    }

    /// The last close of an open file. Default: success.
    fn release(&self, ino: u64, fh: u64, flags: i32, reply: ReplyEmpty) {
        reply.ok()
    }

    /// Sync a file (`datasync`: data only).
    fn fsync(&self, ino: u64, fh: u64, datasync: bool, reply: ReplyEmpty) {
        reply.error(Errno::ENOSYS)
    }

    /// Open a directory. Default: success, fh 0.
    fn opendir(&self, ino: u64, flags: i32, reply: ReplyOpen) {
        reply.opened(Opened::new(0))
    }

    /// List a directory from `offset` (0, or the `next_offset` of the last
    /// entry the kernel got): [`ReplyDir::add`] until it is full, then
    /// [`ReplyDir::ok`].
    fn readdir(&self, ino: u64, fh: u64, offset: u64, reply: ReplyDir) {
        reply.error(Errno::ENOSYS)
    }

    /// List a directory with attributes; called only with
    /// [`READDIRPLUS`](Self::READDIRPLUS) set.
    fn readdirplus(&self, ino: u64, fh: u64, offset: u64, reply: ReplyDirPlus) {
        reply.error(Errno::ENOSYS)
    }

    /// Close a directory. Default: success.
    fn releasedir(&self, ino: u64, fh: u64, flags: i32, reply: ReplyEmpty) {
        reply.ok()
    }

    /// Sync a directory. Default: success.
    fn fsyncdir(&self, ino: u64, fh: u64, datasync: bool, reply: ReplyEmpty) {
        reply.ok()
    }

    /// File system statistics. Default: an empty file system, so `df`
    /// keeps working.
    fn statfs(&self, ino: u64, reply: ReplyStatfs) {
        reply.statfs(&Statfs::empty())
    }

    /// Set an extended attribute; `flags`: XATTR_CREATE / XATTR_REPLACE.
    fn setxattr(&self, ino: u64, name: &OsStr, value: &[u8], flags: i32, reply: ReplyEmpty) {
        reply.error(Errno::ENOSYS)
    }

    /// Get an extended attribute: `size` 0 is a size probe
    /// ([`ReplyXattr::size`]); otherwise the value, or `ERANGE` when it
    /// is longer than `size`.
    fn getxattr(&self, ino: u64, name: &OsStr, size: u32, reply: ReplyXattr) {
        reply.error(Errno::ENOSYS)
    }

    /// List extended attribute names (NUL-separated), as for getxattr.
    fn listxattr(&self, ino: u64, size: u32, reply: ReplyXattr) {
        reply.error(Errno::ENOSYS)
    }

    /// Remove an extended attribute.
    fn removexattr(&self, ino: u64, name: &OsStr, reply: ReplyEmpty) {
        reply.error(Errno::ENOSYS)
    }

    /// Check access: `mask` is `R_OK|W_OK|X_OK` or `F_OK`.
    fn access(&self, ino: u64, mask: i32, reply: ReplyEmpty) {
        reply.error(Errno::ENOSYS)
    }

    /// Create and open a file (without it the kernel uses mknod + open).
    fn create(&self, parent: u64, name: &OsStr, mode: u32, umask: u32, flags: i32, reply: ReplyCreate) {
        reply.error(Errno::ENOSYS)
    }

    /// Allocate or punch space (`mode`: FALLOC_FL_* bits).
    fn fallocate(&self, ino: u64, fh: u64, offset: u64, length: u64, mode: i32, reply: ReplyEmpty) {
        reply.error(Errno::ENOSYS)
    }

    /// SEEK_DATA (3) / SEEK_HOLE (4) from `offset`.
    fn lseek(&self, ino: u64, fh: u64, offset: u64, whence: i32, reply: ReplyLseek) {
        reply.error(Errno::ENOSYS)
    }

    /// Copy `len` bytes between two open files.
    fn copy_file_range(
        &self,
        ino_in: u64,
        fh_in: u64,
        offset_in: u64,
        ino_out: u64,
        fh_out: u64,
        offset_out: u64,
        len: u64,
        flags: u64,
        reply: ReplyCopy,
    ) {
        reply.error(Errno::ENOSYS)
    }

    /// The first lock that would conflict with `lock` held by `owner`
    /// ([`Lock::unlocked`] for none). Only with [`POSIX_LOCKS`](Self::POSIX_LOCKS).
    fn getlk(&self, ino: u64, fh: u64, owner: u64, lock: Lock, reply: ReplyLock) {
        reply.error(Errno::ENOSYS)
    }

    /// Take or release a POSIX lock for `owner`; `sleep` (SETLKW): wait for
    /// it, else `EAGAIN` on a conflict. Only with [`POSIX_LOCKS`](Self::POSIX_LOCKS).
    fn setlk(&self, ino: u64, fh: u64, owner: u64, lock: Lock, sleep: bool, reply: ReplyEmpty) {
        reply.error(Errno::ENOSYS)
    }

    /// Take or release a whole-file BSD lock for `owner`; `sleep`: wait.
    /// Only with [`FLOCK_LOCKS`](Self::FLOCK_LOCKS).
    fn flock(&self, ino: u64, fh: u64, owner: u64, kind: LockType, sleep: bool, reply: ReplyEmpty) {
        reply.error(Errno::ENOSYS)
    }

    /// Extended attributes (`statx` fields GETATTR lacks, such as the birth
    /// time); `mask` is the `STATX_*` fields asked for. The default
    /// (`ENOSYS`) makes the kernel use GETATTR for the rest of the
    /// connection, as the host does without a statx op.
    fn statx(&self, ino: u64, fh: Option<u64>, mask: u32, reply: ReplyStatx) {
        reply.error(Errno::ENOSYS)
    }

    /// Create an unnamed temporary file in `parent` (O_TMPFILE) and open it.
    fn tmpfile(&self, parent: u64, mode: u32, umask: u32, flags: i32, reply: ReplyCreate) {
        reply.error(Errno::ENOSYS)
    }
}
