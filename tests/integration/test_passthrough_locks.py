# SPDX-License-Identifier: MIT
"""File locks on a passthrough mount are the kernel's (plugins/passthrough/
README.md, "Locks"): the plugin has no getlk/setlk/flock, so INIT asks for
neither POSIX_LOCKS nor FLOCK_LOCKS and the kernel keeps POSIX (fcntl) and
BSD (flock) locks on the mount's own inodes. Two processes on one mount
exclude each other, a blocked F_SETLKW / LOCK_EX waits until the holder's
close, F_GETLK names the holder's pid; a process on the backing directory
is not excluded (nor would a second mount be). Over both transports."""

import errno
import fcntl
import os
import select
import struct
import subprocess
import sys

import pytest

TRANSPORTS = ["devfuse", "uring"]
FLOCK = "@hhqqi4x"  # struct flock on Linux x86_64/arm64: type, whence, start, len, pid

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")

# A second process: takes the lock (blocking when told to), says "locked",
# closes the file on the next line of stdin (which drops the lock), says
# "closed", and exits on the next.
LOCKER = r"""
import fcntl, os, struct, sys
path, kind, wait = sys.argv[1], sys.argv[2], sys.argv[3] == "wait"
fd = os.open(path, os.O_RDWR)
if kind == "posix":
    cmd = fcntl.F_SETLKW if wait else fcntl.F_SETLK
    fcntl.fcntl(fd, cmd, struct.pack("%s", fcntl.F_WRLCK, 0, 0, 0, 0))
else:
    fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
print("locked", flush=True)
sys.stdin.readline()
os.close(fd)
print("closed", flush=True)
sys.stdin.readline()
""" % FLOCK


class Locker:
    def __init__(self, path, kind, wait=False):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", LOCKER, path, kind,
             "wait" if wait else "now"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

    def said(self, word, timeout):
        """True if the next line is `word` within timeout, False if none."""
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not r:
            return False
        line = self.proc.stdout.readline().strip()
        assert line == word, "locker said %r; stderr: %s" % (
            line, self.proc.stderr.read() if self.proc.poll() is not None
            else "")
        return True

    def next(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def end(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            f.close()


@pytest.fixture
def lockers():
    made = []

    def make(*args, **kw):
        made.append(Locker(*args, **kw))
        return made[-1]

    yield make
    for lk in made:
        lk.end()


@pytest.fixture(params=TRANSPORTS)
def pt(request, mount, tmpdirs):
    source = tmpdirs("src")
    mp = mount("passthrough", {"source": source}, transport=request.param)
    with open(os.path.join(mp, "f"), "w") as f:
        f.write("x" * 100)
    return os.path.join(mp, "f"), os.path.join(source, "f")


def posix_try(fd, typ=fcntl.F_WRLCK):
    """F_SETLK on the whole file: None if taken, else the errno."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETLK, struct.pack(FLOCK, typ, 0, 0, 0, 0))
        return None
    except OSError as e:
        return e.errno


def posix_holder(fd):
    """F_GETLK for a write lock: (type, pid) of a conflicting lock."""
    out = fcntl.fcntl(fd, fcntl.F_GETLK,
                      struct.pack(FLOCK, fcntl.F_WRLCK, 0, 0, 0, 0))
    typ, _, _, _, pid = struct.unpack(FLOCK, out)
    return typ, pid


def flock_try(fd, op=fcntl.LOCK_EX):
    try:
        fcntl.flock(fd, op | fcntl.LOCK_NB)
        return None
    except OSError as e:
        return e.errno


TRY = {"posix": posix_try, "flock": flock_try}
UNLOCK = {"posix": lambda fd: posix_try(fd, fcntl.F_UNLCK),
          "flock": lambda fd: flock_try(fd, fcntl.LOCK_UN)}


@pytest.mark.parametrize("kind", ["posix", "flock"])
def test_two_processes_on_the_mount_exclude_each_other(pt, lockers, kind):
    path, backing = pt
    holder = lockers(path, kind)
    assert holder.said("locked", 10)
    fd = os.open(path, os.O_RDWR)
    try:
        assert TRY[kind](fd) in (errno.EAGAIN, errno.EACCES)
        if kind == "posix":
            assert posix_holder(fd) == (fcntl.F_WRLCK, holder.proc.pid)
        # Kernel-local (README "Locks"): the backing file knows nothing of
        # the mount's locks, so a process there is not excluded.
        bfd = os.open(backing, os.O_RDWR)
        try:
            assert TRY[kind](bfd) is None
            UNLOCK[kind](bfd)
        finally:
            os.close(bfd)
        # The holder's close releases it.
        holder.next()
        assert holder.said("closed", 10)
        assert TRY[kind](fd) is None
        if kind == "posix":
            assert posix_holder(fd)[0] == fcntl.F_UNLCK
        UNLOCK[kind](fd)
    finally:
        os.close(fd)


@pytest.mark.parametrize("kind", ["posix", "flock"])
def test_a_blocked_waiter_gets_the_lock_at_the_holders_close(pt, lockers,
                                                             kind):
    path, _ = pt
    holder = lockers(path, kind)
    assert holder.said("locked", 10)
    waiter = lockers(path, kind, wait=True)
    assert not waiter.said("locked", 0.5), "the waiter was not excluded"
    holder.next()
    assert holder.said("closed", 10)
    assert waiter.said("locked", 10), "the waiter never got the lock"
    fd = os.open(path, os.O_RDWR)
    try:
        assert TRY[kind](fd) in (errno.EAGAIN, errno.EACCES)
        waiter.next()
        assert waiter.said("closed", 10)
        assert TRY[kind](fd) is None
    finally:
        os.close(fd)


def test_flock_is_per_open_file_and_posix_per_process(pt):
    """The usual local semantics: two opens in one process exclude each
    other with flock, never with POSIX locks (one owner)."""
    path, _ = pt
    a, b = os.open(path, os.O_RDWR), os.open(path, os.O_RDWR)
    try:
        assert flock_try(a) is None
        assert flock_try(b) == errno.EWOULDBLOCK
        flock_try(a, fcntl.LOCK_UN)
        assert posix_try(a) is None
        assert posix_try(b) is None
    finally:
        os.close(a)
        os.close(b)
