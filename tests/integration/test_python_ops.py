# SPDX-License-Identifier: MIT
"""Every operation of the C ABI reaches a Python filesystem (fring.plugin),
sync and async, over both transports: a filesystem built on
sdk-examples/python-memfs that logs each method called, used through a
real mount (create, mkdir, unlink, rmdir, rename with flags, link,
symlink, readlink, setattr for chmod / truncate / utimes, statfs (df),
xattrs, fsync, fallocate, lseek, copy_file_range, POSIX and BSD locks,
readdirplus, the request context); a public method the binding does not
know is warned about at mount; a readdir entry the runtime refuses is
skipped, not the rest of the listing; and an overwrite (O_TRUNC) leaves
exactly the new bytes, whether the class truncates in open
(atomic_o_trunc) or in setattr."""
import ctypes
import errno
import fcntl
import os
import signal
import stat
import struct
import subprocess

import pytest

from conftest import is_mounted
from test_python import ROOT, py_plugin  # noqa: F401  (the fixture)

pytest.importorskip("cffi", reason="cffi not installed (pip install cffi)")
TRANSPORTS = ["devfuse", "uring"]
MEMFS = os.path.join(ROOT, "sdk-examples/python-memfs/memfs.py")

# memfs.py plus locks, readdirplus and statx, each method logging its name
# (and the caller's uid); `async=1` makes every method async def.
OPSFS = '''
import asyncio, errno, fcntl, functools, importlib.util, os, stat
from fring.plugin import Entry, Lock, Statx, context

spec = importlib.util.spec_from_file_location("pymemfs", %(memfs)r)
base = importlib.util.module_from_spec(spec)
spec.loader.exec_module(base)

OPS = ["lookup", "forget", "getattr", "setattr", "readlink", "mknod", "mkdir",
       "symlink", "unlink", "rmdir", "rename", "link", "open", "read", "write",
       "flush", "release", "fsync", "opendir", "readdir", "readdirplus",
       "releasedir", "fsyncdir", "statfs", "setxattr", "getxattr", "listxattr",
       "removexattr", "access", "create", "getlk", "setlk", "flock",
       "fallocate", "lseek", "copy_file_range", "tmpfile", "statx"]


class Filesystem(base.Filesystem):
    def __init__(self, options):
        self.log = open(options.pop("log"), "a", buffering=1)
        options.pop("async", None)
        super().__init__(options)
        self.locks = {}     # ino -> [(owner, type, start, end, pid)]
        self.flocks = {}    # ino -> {owner: type}

    def _note(self, name):
        try:
            uid = context().uid
        except LookupError:
            uid = None
        self.log.write("%%s uid=%%s\\n" %% (name, uid))

    def readdirplus(self, ino):
        d = self._dir(ino)
        for name, i in list(d.children.items()):
            node = self.nodes[i]
            node.lookups += 1
            yield name, Entry(node.attr())

    def _conflict(self, ino, owner, lock):
        for o, t, s, e, pid in self.locks.get(ino, []):
            if o != owner and s <= lock.end and lock.start <= e and \\
                    fcntl.F_WRLCK in (t, lock.type):
                return Lock(t, s, e, pid)
        return None

    def getlk(self, ino, fh, owner, lock):
        return self._conflict(ino, owner, lock) or Lock(fcntl.F_UNLCK)

    def setlk(self, ino, fh, owner, lock, sleep):
        held = self.locks.setdefault(ino, [])
        if lock.type == fcntl.F_UNLCK:
            held[:] = [h for h in held if h[0] != owner]
        elif self._conflict(ino, owner, lock):
            raise OSError(errno.EAGAIN, "locked")
        else:
            held.append((owner, lock.type, lock.start, lock.end, lock.pid))

    def flock(self, ino, fh, owner, type, sleep):
        held = self.flocks.setdefault(ino, {})
        if type == fcntl.F_UNLCK:
            held.pop(owner, None)
        elif any(o != owner and fcntl.F_WRLCK in (t, type) for o, t in held.items()):
            raise OSError(errno.EWOULDBLOCK, "locked")
        else:
            held[owner] = type

    def flush(self, ino, fh, lock_owner):
        pass

    def statx(self, ino, fh, mask):
        return Statx(self._node(ino).attr(), btime_ns=123456789)

    def mkdri(self, parent, name, mode):      # a typo: warned about
        raise AssertionError("never called")


def logged(fn, name, make_async):
    if make_async:
        @functools.wraps(fn)
        async def method(self, *args):
            await asyncio.sleep(0)
            self._note(name)
            return fn(self, *args)
    else:
        @functools.wraps(fn)
        def method(self, *args):
            self._note(name)
            return fn(self, *args)
    return method


ASYNC = %(async)r
for _name in OPS:
    _fn = getattr(Filesystem, _name, None)
    if _fn is not None:
        setattr(Filesystem, _name, logged(_fn, _name, ASYNC))
'''


def _module(tmp_path, name, text):
    mod = tmp_path / name
    mod.write_text(text)
    return str(mod)


def _serve(spawn, tmpdirs, plugin, options, transport):
    mp = tmpdirs("mnt")
    args = ["mount", plugin, mp, "-t", transport]
    for kv in options.items():
        args += ["-o", "%s=%s" % kv]
    f = spawn(args, [mp])
    ready = f.wait_ready(1)
    assert ready[0].endswith("transport %s)" % transport), ready
    return mp, f


def _stop(f, mp):
    assert f.stop(signal.SIGTERM) == 0, f.log()
    assert not is_mounted(mp)
    return f.log()


def _renameat2(old, new, flags):
    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.renameat2(-100, os.fsencode(old), -100, os.fsencode(new), flags)
    return 0 if rc == 0 else ctypes.get_errno()


def _in_child(fn):
    """fn() in a forked child (another lock owner); its int result."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 255
        try:
            code = fn()
        finally:
            os.write(w, bytes([code]))
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    out = os.read(r, 1)
    os.close(r)
    return out[0]


def _try_lock(path, how):
    def attempt():
        fd = os.open(path, os.O_RDWR)
        try:
            if how == "posix":
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return 0
        except OSError as e:
            return e.errno
        finally:
            os.close(fd)
    return _in_child(attempt)


def _getlk_pid(path):
    def ask():
        fd = os.open(path, os.O_RDWR)
        try:
            req = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
            got = struct.unpack("hhqqi4x", fcntl.fcntl(fd, fcntl.F_GETLK, req))
            return 1 if got[0] == fcntl.F_WRLCK and got[4] == os.getppid() else 2
        finally:
            os.close(fd)
    return _in_child(ask)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_every_operation_through_a_mount(py_plugin, spawn, tmpdirs, tmp_path,
                                         transport, flavour):
    mod = _module(tmp_path, "opsfs.py", OPSFS % {"memfs": MEMFS,
                                                 "async": flavour == "async"})
    log = tmp_path / "calls.log"
    mp, f = _serve(spawn, tmpdirs, py_plugin, {"module": mod, "log": str(log)},
                   transport)
    p = lambda *names: os.path.join(mp, *names)   # noqa: E731

    # create, write, read; the file belongs to the caller (context())
    with open(p("f"), "w") as fh:
        fh.write("hello world\n")
    assert open(p("f")).read() == "hello world\n"
    assert os.stat(p("f")).st_uid == os.getuid()
    os.mkdir(p("d"), 0o750)
    assert stat.S_IMODE(os.stat(p("d")).st_mode) == 0o750 & ~_umask()
    os.mkfifo(p("d", "fifo"))
    assert stat.S_ISFIFO(os.lstat(p("d", "fifo")).st_mode)
    os.unlink(p("d", "fifo"))
    os.rmdir(p("d"))
    assert not os.path.exists(p("d"))
    # rename, RENAME_NOREPLACE, RENAME_EXCHANGE
    os.rename(p("f"), p("g"))
    with open(p("h"), "w") as fh:
        fh.write("h\n")
    assert _renameat2(p("g"), p("h"), 1) == errno.EEXIST
    assert _renameat2(p("g"), p("h"), 2) == 0
    assert open(p("g")).read() == "h\n" and open(p("h")).read() == "hello world\n"
    # hard and symbolic links
    os.link(p("h"), p("h2"))
    assert os.stat(p("h")).st_nlink == 2
    os.symlink("h", p("s"))
    assert os.readlink(p("s")) == "h"
    assert open(p("s")).read() == "hello world\n"
    # setattr: chmod, truncate, utimes (nanoseconds)
    os.chmod(p("h"), 0o600)
    assert stat.S_IMODE(os.stat(p("h")).st_mode) == 0o600
    os.truncate(p("h"), 5)
    assert open(p("h"), "rb").read() == b"hello"
    os.utime(p("h"), ns=(1_000_000_123, 2_000_000_456))
    st = os.stat(p("h"))
    assert (st.st_atime_ns, st.st_mtime_ns) == (1_000_000_123, 2_000_000_456)
    # statfs: df shows the size
    vfs = os.statvfs(mp)
    assert vfs.f_blocks > 0 and vfs.f_namemax == 255
    df = subprocess.run(["df", "-P", mp], capture_output=True, text=True)
    assert df.returncode == 0 and df.stdout.splitlines()[1].split()[1] != "0", df
    # xattrs
    os.setxattr(p("h"), "user.k", b"value")
    assert os.getxattr(p("h"), "user.k") == b"value"
    assert "user.k" in os.listxattr(p("h"))
    with pytest.raises(OSError) as e:
        os.setxattr(p("h"), "user.k", b"v", os.XATTR_CREATE)
    assert e.value.errno == errno.EEXIST
    os.removexattr(p("h"), "user.k")
    assert os.listxattr(p("h")) == []
    # fsync, fallocate, lseek, copy_file_range
    fd = os.open(p("h"), os.O_RDWR)
    try:
        os.fsync(fd)
        os.posix_fallocate(fd, 0, 8192)
        assert os.fstat(fd).st_size == 8192
        assert os.lseek(fd, 10, os.SEEK_DATA) == 10
        assert os.lseek(fd, 10, os.SEEK_HOLE) == 8192
        out = os.open(p("copy"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            assert os.copy_file_range(fd, out, 5, 0, 0) == 5
            assert os.pread(out, 10, 0) == b"hello"
        finally:
            os.close(out)
        # POSIX locks and flock are the filesystem's
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert _try_lock(p("h"), "posix") == errno.EAGAIN
        assert _getlk_pid(p("h")) == 1
        fcntl.lockf(fd, fcntl.LOCK_UN)
        assert _try_lock(p("h"), "posix") == 0
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert _try_lock(p("h"), "flock") == errno.EWOULDBLOCK
        fcntl.flock(fd, fcntl.LOCK_UN)
        assert _try_lock(p("h"), "flock") == 0
    finally:
        os.close(fd)
    assert sorted(os.listdir(mp)) == ["copy", "g", "h", "h2", "s"]
    # statx: the birth time only statx has (FUSE_STATX)
    born = subprocess.run(["stat", "-c", "%w", p("h")], capture_output=True,
                          text=True)
    assert born.returncode == 0 and ".123456789" in born.stdout, born
    os.unlink(p("h2"))
    assert os.stat(p("h")).st_nlink == 1
    text = _stop(f, mp)
    calls = {line.split()[0] for line in log.read_text().splitlines()}
    for op in ("lookup", "getattr", "setattr", "readlink", "mknod", "mkdir",
               "symlink", "unlink", "rmdir", "rename", "link", "open", "read",
               "write", "flush", "release", "fsync", "readdirplus", "statfs",
               "setxattr", "getxattr", "listxattr", "removexattr", "create",
               "getlk", "setlk", "flock", "fallocate", "lseek",
               "copy_file_range"):
        assert op in calls, (op, sorted(calls))
    assert "create uid=%d" % os.getuid() in log.read_text()
    warn = [l for l in text.splitlines() if "Filesystem.mkdri" in l]
    assert len(warn) == 1 and "did you mean mkdir?" in warn[0], text


def _umask():
    old = os.umask(0)
    os.umask(old)
    return old


BADDIR = '''
import asyncio, errno, stat
from fring.plugin import Attr

NAMES = ["a", "b", "bad/name", "c", "d"]

class Filesystem:
    def __init__(self, options):
        pass

    def getattr(self, ino):
        if ino == 1:
            return Attr(1, stat.S_IFDIR | 0o755, nlink=2)
        return Attr(ino, stat.S_IFREG | 0o444)

    def lookup(self, parent, name):
        if name not in NAMES:
            raise OSError(errno.ENOENT, name)
        return self.getattr(2 + NAMES.index(name))

    %(kind)sdef %(op)s(self, ino):
        for i, name in enumerate(NAMES):
            %(yield)s
'''


@pytest.mark.parametrize("op", ["readdir", "readdirplus"])
@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_bad_entry_is_skipped_not_the_rest(py_plugin, spawn, tmpdirs,
                                             tmp_path, op, flavour):
    entry = ("(name, 2 + i, stat.S_IFREG)" if op == "readdir"
             else "(name, Attr(2 + i, stat.S_IFREG | 0o444))")
    text = BADDIR % {"kind": "async " if flavour == "async" else "", "op": op,
                     "yield": ("await asyncio.sleep(0); " if flavour == "async"
                               else "") + "yield " + entry}
    mod = _module(tmp_path, "baddir.py", text)
    mp, f = _serve(spawn, tmpdirs, py_plugin, {"module": mod}, "devfuse")
    assert sorted(os.listdir(mp)) == ["a", "b", "c", "d"]
    assert sorted(os.listdir(mp)) == ["a", "b", "c", "d"]   # a second pass
    log = _stop(f, mp)
    assert "invalid directory entry name" in log, log


# memfs.py as it is (atomic_o_trunc unset: the truncation is a setattr),
# or a class whose open truncates (atomic_o_trunc) and whose setattr
# refuses any size change, so that only open can have truncated.
ATOMIC = '''
import errno, importlib.util, os, time
spec = importlib.util.spec_from_file_location("pymemfs", %(memfs)r)
base = importlib.util.module_from_spec(spec)
spec.loader.exec_module(base)


class Filesystem(base.Filesystem):
    atomic_o_trunc = True

    def open(self, ino, flags):
        node = self._node(ino)
        if flags & os.O_TRUNC and node.size:
            self._truncate(node, 0)
            node.touch()
        node.opens += 1
        return 0

    def setattr(self, ino, s):
        if s.size is not None:
            raise OSError(errno.EIO, "the open should have truncated")
        return base.Filesystem.setattr(self, ino, s)
'''


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("how", ["setattr", "atomic_open"])
def test_overwrite_leaves_exactly_the_new_bytes(py_plugin, mount, tmp_path,
                                                transport, how):
    module = MEMFS if how == "setattr" else _module(
        tmp_path, "atomic.py", ATOMIC % {"memfs": MEMFS})
    mnt = mount(py_plugin, {"module": module}, transport=transport)
    f = os.path.join(mnt, "f")
    r = subprocess.run(["sh", "-c", 'echo "a long first line" > "$1"; '
                        'echo short > "$1"; cat "$1"', "sh", f],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "short\n"
    big, small = os.path.join(mnt, "big"), tmp_path / "small"
    with open(big, "wb") as fh:
        fh.write(os.urandom(1 << 20) * 50)
    data = os.urandom(1000)
    small.write_bytes(data)
    subprocess.run(["cp", str(small), big], check=True, timeout=60)
    assert os.stat(big).st_size == 1000
    with open(big, "rb") as fh:
        assert fh.read() == data


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_mirror_overwrite(py_plugin, mount, tmpdirs, transport):
    src = tmpdirs("src")
    with open(os.path.join(src, "f"), "w") as fh:
        fh.write("a long first line\n")
    mnt = mount(py_plugin, {"module": os.path.join(
        ROOT, "sdk-examples/python-mirror/mirror.py"), "source": src},
        transport=transport)
    with open(os.path.join(mnt, "f"), "w") as fh:
        fh.write("short\n")
    with open(os.path.join(mnt, "f")) as fh:
        assert fh.read() == "short\n"
    with open(os.path.join(src, "f")) as fh:
        assert fh.read() == "short\n"
    os.truncate(os.path.join(mnt, "f"), 2)
    with open(os.path.join(src, "f")) as fh:
        assert fh.read() == "sh"
