# SPDX-License-Identifier: MIT
"""Helpers for the conformance suite: running a syscall as another user,
errno capture, and the libc calls Python's os module does not expose with
full control (utimensat with UTIME_NOW/UTIME_OMIT, renameat2, xattr size
probes, readlink into a short buffer)."""

import ctypes
import errno
import os
import pickle
import time

# --- other users ----------------------------------------------------------


class User:
    def __init__(self, uid, gid, groups=()):
        self.uid, self.gid, self.groups = uid, gid, list(groups)

    def __repr__(self):
        return "User(%d, %d, %r)" % (self.uid, self.gid, self.groups)

    def with_groups(self, *groups):
        return User(self.uid, self.gid, groups)


SHARED_GID = 2100      # a group alice belongs to (when asked) and bob does not
OTHER_GID = 2200       # a group nobody in the tests belongs to
ALICE = User(2001, 2001)
BOB = User(2002, 2002)
CAROL = User(2003, 2003)


def run_as(user, fn, *args):
    """Run fn(*args) in a forked child with user's uid, gid and
    supplementary groups (and so without root's capabilities). Returns fn's
    (picklable) result; an OSError in the child is raised again here with
    the same errno."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            os.close(r)
            os.setgroups(user.groups)
            os.setgid(user.gid)
            os.setuid(user.uid)
            try:
                result = ("ok", fn(*args))
            except OSError as e:
                result = ("errno", e.errno)
            except BaseException as e:          # a bug in the test itself
                result = ("error", repr(e))
            data = pickle.dumps(result)
            while data:
                data = data[os.write(w, data):]
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert status == 0 and chunks, \
        "child running as %r ended without a result (wait status %#x)" % (
            user, status)
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "errno":
        raise OSError(value, "%s (as uid %d)" % (os.strerror(value), user.uid))
    if kind == "error":
        raise AssertionError("child running as %r raised %s" % (user, value))
    return value


def err_as(user, fn, *args):
    """errno of fn(*args) run as user, 0 on success."""
    try:
        run_as(user, fn, *args)
        return 0
    except OSError as e:
        return e.errno


def err(fn, *args, **kwargs):
    """errno of fn(*args) run here, 0 on success."""
    try:
        fn(*args, **kwargs)
        return 0
    except OSError as e:
        return e.errno


def name(code):
    return errno.errorcode.get(code, str(code)) if code else "success"


def expect(code, fn, *args, **kwargs):
    """Assert that fn(*args) fails with errno `code` (0: succeeds)."""
    got = err(fn, *args, **kwargs)
    assert got == code, "%s%r: expected %s, got %s" % (
        getattr(fn, "__name__", fn), args, name(code), name(got))


def expect_as(user, code, fn, *args):
    got = err_as(user, fn, *args)
    assert got == code, "%s%r as uid %d: expected %s, got %s" % (
        getattr(fn, "__name__", fn), args, user.uid, name(code), name(got))


# --- small file helpers ----------------------------------------------------


def write_file(path, data=b"", mode=0o644):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def append_file(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        return os.write(fd, data)
    finally:
        os.close(fd)


def open_close(path, flags, mode=0o644):
    os.close(os.open(path, flags, mode))


# --- timestamps ------------------------------------------------------------

TICK = 0.015     # sleep between "before" and the operation (> a 10 ms jiffy)


class Times:
    def __init__(self, st):
        self.atime, self.mtime, self.ctime = st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns

    def __repr__(self):
        return "Times(a=%d, m=%d, c=%d)" % (self.atime, self.mtime, self.ctime)


def times(path, follow=True):
    return Times(os.stat(path, follow_symlinks=follow))


def tick():
    time.sleep(TICK)


# --- libc ------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)

AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
UTIME_NOW = (1 << 30) - 1
UTIME_OMIT = (1 << 30) - 2
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2


class _timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


_libc.utimensat.argtypes = [ctypes.c_int, ctypes.c_char_p,
                            ctypes.POINTER(_timespec), ctypes.c_int]
_libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                            ctypes.c_char_p, ctypes.c_uint]
for _f in ("getxattr", "lgetxattr"):
    getattr(_libc, _f).argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                   ctypes.c_void_p, ctypes.c_size_t]
    getattr(_libc, _f).restype = ctypes.c_ssize_t
_libc.listxattr.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
_libc.listxattr.restype = ctypes.c_ssize_t
_libc.readlink.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
_libc.readlink.restype = ctypes.c_ssize_t


def _raise(path):
    e = ctypes.get_errno()
    raise OSError(e, os.strerror(e), path)


def utimensat(path, atime, mtime, follow=True):
    """atime/mtime: (sec, nsec) tuples, or UTIME_NOW / UTIME_OMIT; both None
    passes a NULL times pointer."""
    def ts(v):
        if v in (UTIME_NOW, UTIME_OMIT):
            return _timespec(0, v)
        return _timespec(v[0], v[1])
    arr = None
    if atime is not None or mtime is not None:
        arr = (_timespec * 2)(ts(atime), ts(mtime))
    flags = 0 if follow else AT_SYMLINK_NOFOLLOW
    if _libc.utimensat(AT_FDCWD, os.fsencode(path), arr, flags) != 0:
        _raise(path)


def renameat2(old, new, flags):
    if _libc.renameat2(AT_FDCWD, os.fsencode(old), AT_FDCWD,
                       os.fsencode(new), flags) != 0:
        _raise(old)


AT_SYMLINK_FOLLOW = 0x400
_libc.linkat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                         ctypes.c_char_p, ctypes.c_int]


def linkat(old, new, follow):
    """linkat(2); follow=True passes AT_SYMLINK_FOLLOW (os.link does not
    reliably do so on Linux)."""
    flags = AT_SYMLINK_FOLLOW if follow else 0
    if _libc.linkat(AT_FDCWD, os.fsencode(old), AT_FDCWD, os.fsencode(new),
                    flags) != 0:
        _raise(old)


def getxattr_raw(path, attr, size, follow=True):
    """getxattr(2) into a buffer of exactly `size` bytes (0: size probe).
    Returns (return value, bytes read)."""
    buf = ctypes.create_string_buffer(size) if size else None
    fn = _libc.getxattr if follow else _libc.lgetxattr
    ret = fn(os.fsencode(path), os.fsencode(attr), buf, size)
    if ret < 0:
        _raise(path)
    return ret, (buf.raw[:ret] if buf else b"")


def listxattr_raw(path, size):
    buf = ctypes.create_string_buffer(size) if size else None
    ret = _libc.listxattr(os.fsencode(path), buf, size)
    if ret < 0:
        _raise(path)
    return ret, (buf.raw[:ret] if buf else b"")


def readlink_raw(path, size):
    buf = ctypes.create_string_buffer(size)
    ret = _libc.readlink(os.fsencode(path), buf, size)
    if ret < 0:
        _raise(path)
    return buf.raw[:ret]
