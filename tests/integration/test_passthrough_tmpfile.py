# SPDX-License-Identifier: MIT
"""O_TMPFILE through a mount (FUSE_TMPFILE, Linux 6.1+): an unnamed file is
made in the backing directory, read, written and fstat'ed through its
descriptor, then given a name by linkat(fd, "", AT_EMPTY_PATH) (LINK of its
nodeid). Passthrough in handle and path mode (path mode with a 2-entry fd
cache, so the unnamed inode must keep its own descriptor) and with kernel
passthrough, and memfs, over both transports."""

import ctypes
import errno
import os
import stat
import time

import pytest

TRANSPORTS = ["devfuse", "uring"]
AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
DATA = bytes(range(256)) * 256  # 64 KiB

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")

_libc = ctypes.CDLL(None, use_errno=True)


def link_fd(fd, path):
    """linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH): name an O_TMPFILE
    (root has the CAP_DAC_READ_SEARCH it needs)."""
    if _libc.linkat(fd, b"", AT_FDCWD, os.fsencode(path), AT_EMPTY_PATH):
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)


KINDS = {
    "handles": {},
    "paths": {"handles": "false", "fd_cache": "2"},
    "kpassthrough": {"kernel_passthrough": "true"},
}


@pytest.fixture(params=[(k, t) for k in list(KINDS) + ["memfs"]
                        for t in TRANSPORTS],
                ids=lambda p: "%s-%s" % p)
def target(request, mount, tmpdirs):
    """(mountpoint, backing source or None for memfs)."""
    kind, transport = request.param
    if kind == "memfs":
        return mount("memfs", transport=transport), None
    source = tmpdirs("src")
    opts = dict(KINDS[kind], source=source)
    return mount("passthrough", opts, transport=transport), source


def listing(d):
    return sorted(os.listdir(d))


def test_tmpfile_write_read_fstat_link(target):
    mp, source = target
    sub = os.path.join(mp, "sub")
    os.mkdir(sub)
    fd = os.open(sub, os.O_TMPFILE | os.O_RDWR, 0o640)
    try:
        assert os.write(fd, DATA) == len(DATA)
        assert os.pread(fd, len(DATA), 0) == DATA
        st = os.fstat(fd)
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o640
        assert (st.st_size, st.st_nlink) == (len(DATA), 0)
        assert listing(sub) == []
        if source:
            assert listing(os.path.join(source, "sub")) == []
        # Other names looked up meanwhile (path mode's 2-entry cache
        # evicts everything else): the unnamed inode must stay reachable.
        for i in range(8):
            with open(os.path.join(mp, "other%d" % i), "w") as f:
                f.write("o")
        for i in range(8):
            os.stat(os.path.join(mp, "other%d" % i))
        assert os.fstat(fd).st_size == len(DATA)

        link_fd(fd, os.path.join(sub, "named"))
        named = os.path.join(sub, "named")
        assert listing(sub) == ["named"]
        st2 = os.stat(named)
        assert st2.st_ino == st.st_ino and st2.st_nlink == 1
        assert os.fstat(fd).st_nlink == 1
        with open(named, "rb") as f:
            assert f.read() == DATA
        if source:
            with open(os.path.join(source, "sub", "named"), "rb") as f:
                assert f.read() == DATA
        # Still the same open file: a write after the link lands in it.
        os.pwrite(fd, b"tail", len(DATA))
    finally:
        os.close(fd)
    with open(named, "rb") as f:
        assert f.read() == DATA + b"tail"
    if source:
        with open(os.path.join(source, "sub", "named"), "rb") as f:
            assert f.read() == DATA + b"tail"
    # A second name through the mount, as for any file.
    os.link(named, os.path.join(mp, "again"))
    assert os.stat(os.path.join(mp, "again")).st_nlink == 2


def test_unnamed_tmpfile_leaves_nothing(target):
    mp, source = target
    fds = lambda: len(os.listdir("/proc/%d/fd" % mp.pid))
    base = fds()
    for _ in range(50):
        fd = os.open(mp, os.O_TMPFILE | os.O_WRONLY, 0o600)
        os.write(fd, b"scratch")
        os.close(fd)
    assert listing(mp) == []
    if source:
        assert listing(source) == []
    if source:
        # The kernel forgets each closed unnamed inode; the plugin then
        # closes the descriptor it kept for it.
        deadline = time.monotonic() + 5
        while fds() > base + 5:
            assert time.monotonic() < deadline, \
                "%d fds held, %d before" % (fds(), base)
            time.sleep(0.05)


def test_tmpfile_excl_cannot_be_linked(target):
    mp, _ = target
    fd = os.open(mp, os.O_TMPFILE | os.O_RDWR | os.O_EXCL, 0o600)
    try:
        os.write(fd, b"never named")
        with pytest.raises(OSError) as e:
            link_fd(fd, os.path.join(mp, "named"))
        assert e.value.errno == errno.ENOENT
    finally:
        os.close(fd)
    assert listing(mp) == []
