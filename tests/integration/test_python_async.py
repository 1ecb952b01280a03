# SPDX-License-Identifier: MIT
"""Python filesystems that scale (fring.plugin): async methods run on the
plugin's event loop, so a slow read does not hold the others; FromFd /
ToFd have the runtime move a passthrough's bytes between the request and
an fd (host req_read_fd / req_write_fd) without them entering Python;
readdir streams a generator (or an async generator) with offsets, in
time linear in the directory's size."""
import os
import signal
import threading
import time

import pytest

from conftest import is_mounted
from test_python import py_plugin  # noqa: F401  (the fixture)

pytest.importorskip("cffi", reason="cffi not installed (pip install cffi)")
TRANSPORTS = ["devfuse", "uring"]

SLOW = '''
import asyncio, errno, stat
from fring.plugin import Attr, Open

NAMES = {"a": 2, "b": 3}

class Filesystem:
    def __init__(self, options):
        self.delay = float(options["delay"])

    def getattr(self, ino):
        if ino == 1:
            return Attr(1, stat.S_IFDIR | 0o755, nlink=2)
        return Attr(ino, stat.S_IFREG | 0o444, size=4096)

    def lookup(self, parent, name):
        if name not in NAMES:
            raise OSError(errno.ENOENT, name)
        return self.getattr(NAMES[name])

    def open(self, ino, flags):
        return Open(ino, direct_io=True)      # every read reaches us

    async def read(self, ino, fh, offset, size):
        if ino == 2:
            await asyncio.sleep(self.delay)
        return (b"A" if ino == 2 else b"B") * min(size, 4096 - offset)

    async def readdir(self, ino):
        for name, i in NAMES.items():
            await asyncio.sleep(0)
            yield (name, i, stat.S_IFREG)
'''


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_slow_async_read_holds_no_other(py_plugin, mount, tmp_path, transport):
    mod = tmp_path / "slow.py"
    mod.write_text(SLOW)
    mnt = mount(py_plugin, {"module": str(mod), "delay": "2"}, transport=transport)
    assert sorted(os.listdir(mnt)) == ["a", "b"]      # an async generator
    got = {}

    def read_a():
        t0 = time.monotonic()
        with open(os.path.join(mnt, "a"), "rb") as f:
            got["a"] = f.read(100)
        got["a_time"] = time.monotonic() - t0

    t = threading.Thread(target=read_a)
    t.start()
    time.sleep(0.3)                     # a's read is pending in its sleep
    t0 = time.monotonic()
    for _ in range(20):
        with open(os.path.join(mnt, "b"), "rb") as f:
            assert f.read(100) == b"B" * 100
    b_time = time.monotonic() - t0
    assert t.is_alive(), "a's read ended early: %r" % got
    t.join(10)
    assert got["a"] == b"A" * 100
    assert b_time < 1.0, b_time         # while a's read waited 2 s
    assert 1.5 < got["a_time"] < 5, got


PASS = '''
import errno, os, stat
from fring.plugin import Attr, FromFd, Open, ToFd

class Filesystem:
    """A passthrough of one file, "data": its bytes go between the request
    and the file by the runtime (FromFd, ToFd); no read() bytes, no write()."""
    def __init__(self, options):
        self.path = options["source"]
        self.fds = {}

    def getattr(self, ino):
        if ino == 1:
            return Attr(1, stat.S_IFDIR | 0o755, nlink=2)
        return Attr(2, stat.S_IFREG | 0o644, size=os.stat(self.path).st_size)

    def lookup(self, parent, name):
        if name != "data":
            raise OSError(errno.ENOENT, name)
        return self.getattr(2)

    def open(self, ino, flags):
        fd = os.open(self.path, os.O_RDWR)
        self.fds[fd] = fd
        return Open(fd, zero_copy=True)      # where the mount serves it

    def read(self, ino, fh, offset, size):
        return FromFd(self.fds[fh], offset)

    def write_fd(self, ino, fh, offset, size):
        return ToFd(self.fds[fh])            # at the request's offset

    def release(self, ino, fh):
        os.close(self.fds.pop(fh))
'''


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_passthrough_bytes_move_through_fds(py_plugin, mount, tmp_path, transport):
    src = tmp_path / "source"
    blob = os.urandom(3 * 1024 * 1024 + 123)
    src.write_bytes(blob)
    mod = tmp_path / "pass.py"
    mod.write_text(PASS)
    mnt = mount(py_plugin, {"module": str(mod), "source": str(src)},
                transport=transport)
    path = os.path.join(mnt, "data")
    with open(path, "rb") as f:
        assert f.read() == blob
    patch = os.urandom(200000)
    with open(path, "r+b") as f:
        f.seek(4096 * 7 + 5)
        f.write(patch)
    expect = blob[:4096 * 7 + 5] + patch + blob[4096 * 7 + 5 + len(patch):]
    assert src.read_bytes() == expect
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        assert os.pread(fd, 1 << 20, 1 << 20) == expect[1 << 20:2 << 20]
    finally:
        os.close(fd)


STREAM = '''
import stat
from fring.plugin import Attr

class Filesystem:
    def __init__(self, options):
        self.n = int(options["n"])

    def getattr(self, ino):
        return Attr(1, stat.S_IFDIR | 0o755, nlink=2)

    def readdir(self, ino):                  # a generator: streamed
        for i in range(self.n):
            yield ("entry-%06d" % i, 2 + i, stat.S_IFREG)
'''


def _list_time(mnt, n, runs=3):
    best = None
    for _ in range(runs):
        t0 = time.monotonic()
        count = sum(1 for _ in os.scandir(mnt))
        dt = time.monotonic() - t0
        assert count == n
        best = dt if best is None else min(best, dt)
    return best


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_readdir_streams_in_linear_time(py_plugin, mount, tmp_path, transport):
    mod = tmp_path / "stream.py"
    mod.write_text(STREAM)
    times = {}
    for n in (20000, 100000):
        mnt = mount(py_plugin, {"module": str(mod), "n": str(n)},
                    transport=transport)
        times[n] = _list_time(mnt, n)
    # 5x the entries: linear is ~5x the time, quadratic 25x (min of 3 runs
    # each; 0.25 s: below that the 20k run is too short to time well)
    assert times[100000] < max(15 * times[20000], 0.25), times
    assert times[100000] < 30, times


def test_stop_with_an_async_request_pending(py_plugin, spawn, tmpdirs, tmp_path):
    """destroy cancels the mount's pending tasks: a read awaiting 30 s
    does not hold the stop, and nothing answers it afterwards."""
    mod = tmp_path / "slow.py"
    mod.write_text(SLOW)
    mp = tmpdirs("mnt")
    f = spawn(["mount", py_plugin, mp, "-o", "module=" + str(mod),
               "-o", "delay=30"], [mp])
    f.wait_ready(1)
    errs = []

    def read_a():
        try:
            with open(os.path.join(mp, "a"), "rb") as fh:
                fh.read(100)
        except OSError as e:
            errs.append(e.errno)

    t = threading.Thread(target=read_a, daemon=True)
    t.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    assert f.stop(signal.SIGTERM) == 0, f.log()
    assert time.monotonic() - t0 < 8
    t.join(10)
    assert not t.is_alive() and errs, errs
    assert not is_mounted(mp)
