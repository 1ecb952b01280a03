# SPDX-License-Identifier: MIT
"""The handlers of the operations on inodes and files: each decodes its
C arguments, calls the method (serve.call: ENOSYS when the class lacks
it) and returns the reply to send. The directory ones are in dirs.py.
A method missing from the class answers what the host answers for a NULL
slot: success for open (fh 0), flush and release, an empty file system
for statfs, ENOSYS for the rest."""
import errno
import os

from . import answers as A
from . import serve as S
from .serve import BadAnswer, call
from .types import FromFd, Lock, SetAttr, StatFs, Statx, ToFd


def _empty(r):
    return lambda: S.host.reply_err(r, 0)


def _bytes_of(ptr, length):
    return S.ffi.buffer(ptr, length)[:] if length else b""


# ---- names: lookup, make, remove, rename, link ----------------------------

async def lookup(mnt, r, a):
    e = A.entry(mnt, await call(mnt, "lookup", a.parent, A.decode(a.name, a.namelen)))
    return lambda: S.host.reply_entry(r, e)


def _with_umask(a):
    S.current().umask = a.umask


async def mknod(mnt, r, a):
    _with_umask(a)
    e = A.entry(mnt, await call(mnt, "mknod", a.parent, A.decode(a.name, a.namelen),
                                a.mode, a.rdev))
    return lambda: S.host.reply_entry(r, e)


async def mkdir(mnt, r, a):
    _with_umask(a)
    e = A.entry(mnt, await call(mnt, "mkdir", a.parent, A.decode(a.name, a.namelen),
                                a.mode))
    return lambda: S.host.reply_entry(r, e)


async def symlink(mnt, r, a):
    _with_umask(a)
    e = A.entry(mnt, await call(mnt, "symlink", a.parent, A.decode(a.name, a.namelen),
                                A.decode(a.link_target, a.link_target_len)))
    return lambda: S.host.reply_entry(r, e)


async def link(mnt, r, a):
    e = A.entry(mnt, await call(mnt, "link", a.nodeid, a.newparent,
                                A.decode(a.newname, a.newnamelen)))
    return lambda: S.host.reply_entry(r, e)


async def unlink(mnt, r, a):
    await call(mnt, "unlink", a.parent, A.decode(a.name, a.namelen))
    return _empty(r)


async def rmdir(mnt, r, a):
    await call(mnt, "rmdir", a.parent, A.decode(a.name, a.namelen))
    return _empty(r)


async def rename(mnt, r, a):
    await call(mnt, "rename", a.parent, A.decode(a.name, a.namelen),
               a.newparent, A.decode(a.newname, a.newnamelen), a.flags)
    return _empty(r)


def _created(mnt, ans):
    """create's / tmpfile's answer: (Attr or Entry, fh or None or Open),
    or an Attr / Entry alone (fh 0)."""
    if isinstance(ans, tuple):
        if len(ans) != 2:
            raise TypeError("create must answer (Attr or Entry, fh or Open)")
        return A.entry(mnt, ans[0]), A.open_out(ans[1])
    return A.entry(mnt, ans), A.open_out(None)


async def create(mnt, r, a):
    _with_umask(a)
    e, o = _created(mnt, await call(mnt, "create", a.parent,
                                    A.decode(a.name, a.namelen), a.mode, a.flags))
    return lambda: S.host.reply_create(r, e, o)


async def tmpfile(mnt, r, a):
    _with_umask(a)
    e, o = _created(mnt, await call(mnt, "tmpfile", a.parent, a.mode, a.flags))
    return lambda: S.host.reply_create(r, e, o)


async def forget(mnt, r, items):
    if "forget" not in mnt.has:
        return
    for nodeid, nlookup in items:
        try:
            await call(mnt, "forget", nodeid, nlookup)
        except Exception as e:
            S.fail(mnt, None, "forget", e)


# ---- attributes -----------------------------------------------------------

async def getattr_(mnt, r, a):
    c = S.ffi.new("struct fring_attr *")
    A.fill_attr(c, await call(mnt, "getattr", a.nodeid))
    return lambda: S.host.reply_attr(r, c, A.timeout_ns(mnt.fs, "attr_timeout"))


def setattr_args(a):
    lib, v = S.lib, a.valid
    s = SetAttr()
    s.valid = v
    if v & lib.FRING_SET_MODE:
        s.mode = a.mode & 0o7777
    if v & lib.FRING_SET_UID:
        s.uid = a.uid
    if v & lib.FRING_SET_GID:
        s.gid = a.gid
    if v & lib.FRING_SET_SIZE:
        s.size = a.file_size
    if v & lib.FRING_SET_FH:
        s.fh = a.fh
    if v & lib.FRING_SET_LOCKOWNER:
        s.lock_owner = a.lock_owner
    s.atime, s.atime_ns = A.time_arg(v, lib.FRING_SET_ATIME, lib.FRING_SET_ATIME_NOW,
                                     a.atime_sec, a.atime_nsec)
    s.mtime, s.mtime_ns = A.time_arg(v, lib.FRING_SET_MTIME, lib.FRING_SET_MTIME_NOW,
                                     a.mtime_sec, a.mtime_nsec)
    s.ctime, s.ctime_ns = A.time_arg(v, lib.FRING_SET_CTIME, 0, a.ctime_sec,
                                     a.ctime_nsec)
    return s


async def setattr_(mnt, r, a):
    c = S.ffi.new("struct fring_attr *")
    A.fill_attr(c, await call(mnt, "setattr", a.nodeid, setattr_args(a)))
    return lambda: S.host.reply_attr(r, c, A.timeout_ns(mnt.fs, "attr_timeout"))


async def readlink(mnt, r, a):
    t = A.name_bytes(await call(mnt, "readlink", a.nodeid), "readlink's answer")
    return lambda: S.host.reply_readlink(r, t, len(t))


async def statx(mnt, r, a):
    fh = a.fh if a.getattr_flags & S.lib.FRING_GETATTR_FH else None
    ans = await call(mnt, "statx", a.nodeid, fh, a.sx_mask)
    if not isinstance(ans, Statx):
        raise TypeError("statx must answer Statx, not %s" % type(ans).__name__)
    sx = S.ffi.new("struct fring_statx *")
    sx.size = S.ffi.sizeof("struct fring_statx")
    A.fill_attr(sx.attr, ans.attr)
    sx.mask = 0x7ff                       # STATX_BASIC_STATS
    if ans.btime is not None or ans.btime_ns is not None:
        sx.mask |= 0x800                  # STATX_BTIME
        sx.btime_sec, sx.btime_nsec = A._split(ans.btime, ans.btime_ns)
    sx.attributes, sx.attributes_mask = ans.attributes, ans.attributes_mask
    return lambda: S.host.reply_statx(r, sx, A.timeout_ns(mnt.fs, "attr_timeout"))


async def statfs(mnt, r, a):
    if "statfs" in mnt.has:
        ans = await call(mnt, "statfs", a.nodeid)
        if not isinstance(ans, StatFs):
            raise TypeError("statfs must answer StatFs, not %s" % type(ans).__name__)
    else:
        ans = StatFs(bsize=512)           # the host's default: an empty fs
    s = S.ffi.new("struct fring_statfs *")
    for k in ("blocks", "bfree", "bavail", "files", "ffree", "bsize",
              "namelen", "frsize"):
        setattr(s, k, getattr(ans, k))
    return lambda: S.host.reply_statfs(r, s)


async def access(mnt, r, a):
    await call(mnt, "access", a.nodeid, a.mask)
    return _empty(r)


# ---- open files -----------------------------------------------------------

async def open_(mnt, r, a):
    res = await call(mnt, "open", a.nodeid, a.flags) if "open" in mnt.has else None
    o = A.open_out(res)
    return lambda: S.host.reply_open(r, o)


def _has_host(field):
    """FRING_HAS_FIELD(host, struct fring_host_api, field)."""
    return S.host.size >= (S.ffi.offsetof("struct fring_host_api", field)
                           + S.ffi.sizeof("void *"))


def _from_fd(r, ans, offset, size):
    if not isinstance(ans.fd, int) or ans.fd < 0:
        raise BadAnswer("fd", "returned FromFd with fd %r" % (ans.fd,))
    off = offset if ans.offset is None else ans.offset
    n = size if ans.size is None else max(0, min(int(ans.size), size))
    if not _has_host("req_read_fd"):      # a host before ABI 1.1
        data = os.pread(ans.fd, n, off)
        S.host.reply_data(r, S.ffi.from_buffer(data), len(data))
        return
    rc = S.host.req_read_fd(r, ans.fd, off, n, 0)
    if rc < 0:                            # not accepted: still ours
        raise OSError(-rc, "req_read_fd")


def _to_fd(r, ans, offset, a):
    if not isinstance(ans.fd, int) or ans.fd < 0:
        raise BadAnswer("fd", "returned ToFd with fd %r" % (ans.fd,))
    off = offset if ans.offset is None else ans.offset
    if not _has_host("req_write_fd"):
        S.host.reply_write(r, os.pwrite(ans.fd, S.ffi.buffer(a.data, a.len), off))
        return
    rc = S.host.req_write_fd(r, ans.fd, off, 0)
    if rc < 0:
        raise OSError(-rc, "req_write_fd")


def _data_reply(r, data, size, what):
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("%s must return bytes, not %s" % (what, type(data).__name__))
    data = bytes(data)
    if len(data) > size:
        raise BadAnswer("long", "returned %d bytes, more than the %d asked "
                        "for" % (len(data), size))
    return lambda: S.host.reply_data(r, S.ffi.from_buffer(data), len(data))


async def read(mnt, r, a):
    ino, fh, offset, size = a.nodeid, a.fh, a.offset, a.len
    data = await call(mnt, "read", ino, fh, offset, size)
    if isinstance(data, FromFd):
        return lambda: _from_fd(r, data, offset, size)
    return _data_reply(r, data, size, "read (or FromFd)")


async def write(mnt, r, a):
    ino, fh, offset, size = a.nodeid, a.fh, a.offset, a.len
    if "write_fd" in mnt.has:
        to = await call(mnt, "write_fd", ino, fh, offset, size)
        if isinstance(to, ToFd):
            return lambda: _to_fd(r, to, offset, a)
        if to is not None:
            raise TypeError("write_fd must return ToFd or None, not %s"
                            % type(to).__name__)
    if a.data == S.ffi.NULL:
        raise BadAnswer("zero-copy", "got a zero-copied write, whose bytes "
                        "only write_fd (ToFd) can move")
    n = await call(mnt, "write", ino, fh, offset, S.ffi.buffer(a.data, size)[:])
    if not isinstance(n, int) or not 0 <= n <= size:
        raise BadAnswer("count", "returned %r for %d bytes (an int 0..%d)"
                        % (n, size, size))
    return lambda: S.host.reply_write(r, n)


async def flush(mnt, r, a):
    if "flush" in mnt.has:
        await call(mnt, "flush", a.nodeid, a.fh, a.lock_owner)
    return _empty(r)


async def release(mnt, r, a):
    if "release" in mnt.has:
        await call(mnt, "release", a.nodeid, a.fh)
    return _empty(r)


async def fsync(mnt, r, a):
    await call(mnt, "fsync", a.nodeid, a.fh, bool(a.datasync))
    return _empty(r)


async def fallocate(mnt, r, a):
    await call(mnt, "fallocate", a.nodeid, a.fh, a.offset, a.length, a.mode)
    return _empty(r)


async def lseek(mnt, r, a):
    off = await call(mnt, "lseek", a.nodeid, a.fh, a.offset, a.whence)
    if not isinstance(off, int) or off < 0:
        raise TypeError("lseek must return an offset (int >= 0), not %r" % (off,))
    return lambda: S.host.reply_lseek(r, off)


async def copy_file_range(mnt, r, a):
    n = await call(mnt, "copy_file_range", a.nodeid_in, a.fh_in, a.off_in,
                   a.nodeid_out, a.fh_out, a.off_out, a.len, a.flags)
    if not isinstance(n, int) or not 0 <= n <= min(a.len, 0xffffffff):
        raise BadAnswer("copied", "returned %r for %d bytes" % (n, a.len))
    return lambda: S.host.reply_write(r, n)


# ---- locks ----------------------------------------------------------------

def _lock(a):
    return Lock(a.lock.type, a.lock.start, a.lock.end, a.lock.pid)


async def getlk(mnt, r, a):
    ans = await call(mnt, "getlk", a.nodeid, a.fh, a.owner, _lock(a))
    if not isinstance(ans, Lock):
        raise TypeError("getlk must answer Lock, not %s" % type(ans).__name__)
    lk = S.ffi.new("struct fring_lock *")
    lk.type, lk.start, lk.end, lk.pid = ans.type, ans.start, ans.end, ans.pid
    return lambda: S.host.reply_lock(r, lk)


async def setlk(mnt, r, a):
    await call(mnt, "setlk", a.nodeid, a.fh, a.owner, _lock(a), bool(a.sleep))
    return _empty(r)


async def flock(mnt, r, a):
    await call(mnt, "flock", a.nodeid, a.fh, a.owner, a.lock.type, bool(a.sleep))
    return _empty(r)


# ---- extended attributes ----------------------------------------------------

async def setxattr(mnt, r, a):
    await call(mnt, "setxattr", a.nodeid, A.decode(a.name, a.namelen),
               _bytes_of(a.value, a.value_len), a.flags)
    return _empty(r)


def _xattr_reply(r, data, size):
    """A size probe (size 0) answered with the length, else the bytes or
    ERANGE when they do not fit."""
    if size == 0:
        return lambda: S.host.reply_xattr_size(r, len(data))
    if len(data) > size:
        raise OSError(errno.ERANGE, "xattr")
    return lambda: S.host.reply_data(r, S.ffi.from_buffer(data), len(data))


async def getxattr(mnt, r, a):
    v = await call(mnt, "getxattr", a.nodeid, A.decode(a.name, a.namelen))
    return _xattr_reply(r, A.name_bytes(v, "getxattr's answer"), a.max)


async def listxattr(mnt, r, a):
    names = await call(mnt, "listxattr", a.nodeid)
    if isinstance(names, (bytes, bytearray)):
        data = bytes(names)
    else:
        data = b"".join(A.name_bytes(n, "an xattr name") + b"\0" for n in names)
    return _xattr_reply(r, data, a.max)


async def removexattr(mnt, r, a):
    await call(mnt, "removexattr", a.nodeid, A.decode(a.name, a.namelen))
    return _empty(r)
