# SPDX-License-Identifier: MIT
"""Filesystems written in Python, served by fring through fring_python.so
(`pip install bindings/python` builds it into the package; or
`python3 -m fring.build_plugin OUTDIR`). bindings/python/README.md is the
guide, with every method's errors; this is the reference.

A module (the mount option `module: PATH`) defines `Filesystem`, a class
whose constructor takes the mount's other options as a dict of strings,
and some of these methods (the FUSE low-level vocabulary, inode based;
inode 1 is the root; names are str, undecodable bytes surrogate-escaped).
Each returns its answer or raises OSError(errno). "Entry" below means an
Attr or an Entry (Attr plus generation and timeouts); it adds one to the
inode's lookup count, which forget later subtracts.

    lookup(parent, name)              -> Entry of the child
    forget(ino, nlookup)              -> None (no reply)
    getattr(ino)                      -> Attr
    setattr(ino, set)                 -> Attr after the change; set is a
                                         SetAttr (None: unchanged)
    readlink(ino)                     -> str or bytes
    mknod(parent, name, mode, rdev)   -> Entry (mode has the S_IF* type)
    mkdir(parent, name, mode)         -> Entry
    symlink(parent, name, target)     -> Entry
    unlink(parent, name)              -> None
    rmdir(parent, name)               -> None
    rename(parent, name, newparent, newname, flags)
                                      -> None (flags: RENAME_NOREPLACE 1,
                                         RENAME_EXCHANGE 2, RENAME_WHITEOUT 4)
    link(ino, newparent, newname)     -> Entry
    open(ino, flags)                  -> fh (int), None for 0, or Open(...)
    read(ino, fh, offset, size)       -> bytes (at most size), or FromFd(...)
    write_fd(ino, fh, offset, size)   -> ToFd(...), or None: call write()
    write(ino, fh, offset, data)      -> bytes written (int, at most len(data))
    flush(ino, fh, lock_owner)        -> None (each close(2))
    release(ino, fh)                  -> None (the last close)
    fsync(ino, fh, datasync)          -> None
    opendir(ino, flags)               -> fh, None or Open (kept for the
                                         calls below)
    readdir(ino[, fh])                -> iterable of (name, ino, mode), without
                                         . and ..: a list, or a generator
                                         (streamed: pulled as the kernel reads)
    readdirplus(ino[, fh])            -> iterable of (name, Entry)
    releasedir(ino, fh)               -> None
    fsyncdir(ino, fh, datasync)       -> None
    statfs(ino)                       -> StatFs
    setxattr(ino, name, value, flags) -> None (flags: XATTR_CREATE 1,
                                         XATTR_REPLACE 2)
    getxattr(ino, name)               -> bytes (the binding answers size
                                         probes and ERANGE itself)
    listxattr(ino)                    -> iterable of names (or bytes with
                                         NUL-terminated names)
    removexattr(ino, name)            -> None
    access(ino, mask)                 -> None (mask: os.R_OK|W_OK|X_OK, F_OK)
    create(parent, name, mode, flags) -> (Entry, fh or None or Open), or
                                         an Entry alone (fh 0)
    tmpfile(parent, mode, flags)      -> as create
    getlk(ino, fh, owner, lock)       -> Lock (type F_UNLCK: no conflict)
    setlk(ino, fh, owner, lock, sleep) -> None (EAGAIN on a conflict
                                         unless sleep)
    flock(ino, fh, owner, type, sleep) -> None (type F_RDLCK / F_WRLCK /
                                         F_UNLCK, the whole file)
    fallocate(ino, fh, offset, length, mode) -> None
    lseek(ino, fh, offset, whence)    -> the offset (SEEK_DATA / SEEK_HOLE)
    copy_file_range(ino_in, fh_in, off_in, ino_out, fh_out, off_out,
                    length, flags)    -> bytes copied (int)
    statx(ino, fh, mask)              -> Statx (fh None without a file)
    init(conn)                        -> None; FUSE_INIT: may change
                                         conn.want (FRING_CAP_* bits) and
                                         the limits (Conn)

Class attributes: attr_timeout and entry_timeout (seconds the kernel
caches attributes and names, default 1.0); atomic_o_trunc (default
False): True says "my open() truncates the file when flags has
O_TRUNC", and the kernel then sends no separate truncation; without it
the kernel strips O_TRUNC from open and sends setattr(size=0) after it,
so such a class needs setattr. Any other public method (a typo like
mkdri) is logged as unknown at mount.

context() is the caller of the request being answered: Context(uid,
gid, pid, umask), valid during a method's call.

Any method may be `async def` (readdir also an async generator): the
filesystem is then served on one asyncio event loop thread owned by the
plugin, every method of it (plain ones too) runs there, and each request
is answered when its coroutine finishes, so a slow one (awaiting) holds
no other. Without any async method, calls run one at a time on the
runtime's thread, under the GIL, with no event loop.

Data path: FromFd(fd, offset, size) answers a read with the bytes of fd
(the runtime reads them into the reply, io_uring READ_FIXED or Linux 7.3
zero-copy: they never enter Python); ToFd(fd, offset) from write_fd has
the runtime write the request's bytes to fd and reply the count. fd must
stay open until the reply. Open(fh, zero_copy=True) opts an open file in
to io_uring zero-copy, whose reads and writes must then be answered
through FromFd / ToFd.

Methods left out answer as a C plugin's NULL slot does: ENOSYS for most
(the kernel then stops asking, where it can), success for open, opendir
(fh 0), flush, release, releasedir and fsyncdir, an empty file system
for statfs, nothing for forget; capabilities whose ops are missing
(READDIRPLUS, POSIX and BSD locks) are not negotiated. The kernel clears
setuid/setgid bits on write, truncate and chown itself (a setattr of the
mode). Any other exception (SystemExit included) or a wrong answer type
is logged with its traceback and answers EIO. An answer the kernel cannot
be given (an OSError whose errno is not 1..511, a read longer than size,
a write count over len(data)) answers EIO and is logged once per mount
and kind (each distinct errno once). readdir is called once per pass
over an open directory (opendir or rewinddir); the kernel's later chunks
continue from the same iterator, at the offset it passes back (a seek
elsewhere starts a new pass and skips to it); an entry the runtime
refuses (a name with "/") is logged and skipped.
"""
from .serve import context
from .types import (NOW, OFFSET_MAX, Attr, Conn, Context, Entry, FromFd, Lock,
                    Open, SetAttr, StatFs, Statx, ToFd)

__all__ = ["Attr", "Entry", "Open", "FromFd", "ToFd", "SetAttr", "StatFs",
           "Lock", "Statx", "Conn", "Context", "NOW", "OFFSET_MAX", "context"]


def _bind(ffi, lib):
    """Called once by fring_python.so's init code with its ffi and lib."""
    from . import bind
    bind.bind(ffi, lib)
