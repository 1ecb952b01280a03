# SPDX-License-Identifier: MIT
"""plugins/s3's writes against the real Ceph RADOS Gateway, over io_uring
and /dev/fuse, each change read back by the test's own SigV4 client (curl,
gateway.request) from the bucket, never through the mount: new files of
0 B to 3 parts (part_size 5 MiB: one PUT up to it, a multipart upload
past it, a 1-byte last part) with their SHA-256, an overwrite through
O_TRUNC, random writes and appends into an object refused (EOPNOTSUPP)
with the object kept, unlink, mkdir's marker and rmdir (ENOTEMPTY while a
key is under it), rename of a file (copy + delete), over another file,
across directories, RENAME_NOREPLACE, and of a directory (EXDEV), the
POSIX errors of tests/conformance that S3 semantics allow (EEXIST,
ENOTDIR, EISDIR, ENOENT, the bucket left unchanged), scandir's types and
stat of new entries, and a writer killed mid-file (what it wrote becomes
the object, plugins/s3/README.md)."""
import ctypes
import errno
import hashlib
import os
import re
import signal
import stat
import subprocess
import sys
import time
import uuid

import pytest

from s3_mount import S3Mount

TRANSPORTS = ["uring", "devfuse"]
MIB = 1 << 20
PART = 5 * MIB


def sha(b):
    return hashlib.sha256(b).hexdigest()


def get(gw, key):
    """The object's bytes, or None if the bucket has no such key."""
    st, body = gw.request("GET", "/%s/%s" % (gw.bucket, key))
    if st == 404:
        return None
    assert st == 200, (key, st, body[-300:])
    return body


def put(gw, key, data):
    st, body = gw.request("PUT", "/%s/%s" % (gw.bucket, key), data=data)
    assert st == 200, (key, st, body[-300:])


def keys(gw, prefix):
    """Every key under prefix (one page: the tests make few)."""
    st, body = gw.request("GET", "/%s?list-type=2&prefix=%s"
                          % (gw.bucket, prefix))
    assert st == 200, body[-300:]
    return re.findall(r"<Key>([^<]*)</Key>", body.decode())


@pytest.fixture(params=TRANSPORTS)
def mnt(request, gateway):
    """A mount of a fresh prefix of the bucket (part_size 5 MiB, metadata
    not cached, so what the bucket holds is what stat sees): (S3Mount,
    the prefix)."""
    prefix = "w-%s/" % uuid.uuid4().hex[:12]
    m = S3Mount(gateway, [("prefix", prefix), ("part_size", "5MiB"),
                          ("meta_ttl", "0")], request.param)
    try:
        m.wait_ready()
        yield m, prefix
        rc = m.stop()
        assert rc == 0, "exit %s after SIGTERM:\n%s" % (rc, m.log())
    finally:
        m.cleanup()


@pytest.mark.parametrize("size", [0, 1, 4096, PART, PART + 1, 2 * PART + 7 * 4096])
def test_new_file_is_the_object(mnt, gateway, size):
    m, prefix = mnt
    data = os.urandom(size)
    with open(m.path("f.bin"), "wb") as f:
        for i in range(0, size, 128 * 1024):  # writes of 128 KiB
            f.write(data[i:i + 128 * 1024])
    got = get(gateway, prefix + "f.bin")
    assert got is not None and len(got) == size and sha(got) == sha(data)
    assert os.stat(m.path("f.bin")).st_size == size


def test_overwrite_with_o_trunc(mnt, gateway):
    m, prefix = mnt
    put(gateway, prefix + "o.txt", b"x" * 100000)
    with open(m.path("o.txt"), "wb") as f:  # O_TRUNC
        f.write(b"new bytes")
    assert get(gateway, prefix + "o.txt") == b"new bytes"
    with open(m.path("o.txt"), "rb") as f:
        assert f.read() == b"new bytes"


def test_random_write_and_append_refused(mnt, gateway):
    m, prefix = mnt
    put(gateway, prefix + "keep.txt", b"old body")
    for flags in (os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_APPEND):
        with pytest.raises(OSError) as e:
            fd = os.open(m.path("keep.txt"), flags)
            try:
                os.pwrite(fd, b"Z", 3)
            finally:
                os.close(fd)
        assert e.value.errno == errno.EOPNOTSUPP, flags
    assert get(gateway, prefix + "keep.txt") == b"old body"


def test_unlink(mnt, gateway):
    m, prefix = mnt
    put(gateway, prefix + "gone", b"bye")
    assert os.path.exists(m.path("gone"))
    os.unlink(m.path("gone"))
    assert get(gateway, prefix + "gone") is None
    assert not os.path.exists(m.path("gone"))
    with pytest.raises(FileNotFoundError):
        os.unlink(m.path("gone"))


def test_mkdir_rmdir(mnt, gateway):
    m, prefix = mnt
    os.mkdir(m.path("d"))
    assert get(gateway, prefix + "d/") == b""  # the zero-byte marker
    assert os.path.isdir(m.path("d"))
    with open(m.path("d", "in"), "wb") as f:
        f.write(b"1")
    with pytest.raises(OSError) as e:
        os.rmdir(m.path("d"))
    assert e.value.errno == errno.ENOTEMPTY
    os.unlink(m.path("d", "in"))
    os.rmdir(m.path("d"))
    assert get(gateway, prefix + "d/") is None
    assert not os.path.exists(m.path("d"))


def test_rename(mnt, gateway):
    m, prefix = mnt
    data = os.urandom(PART + 3)
    put(gateway, prefix + "a.bin", data)
    os.rename(m.path("a.bin"), m.path("b.bin"))
    assert get(gateway, prefix + "a.bin") is None
    got = get(gateway, prefix + "b.bin")
    assert got is not None and sha(got) == sha(data)
    assert sorted(os.listdir(m.mp)) == ["b.bin"]
    os.mkdir(m.path("d1"))
    with pytest.raises(OSError) as e:
        os.rename(m.path("d1"), m.path("d2"))
    assert e.value.errno == errno.EXDEV


def test_rename_over_across_noreplace(mnt, gateway):
    m, prefix = mnt
    put(gateway, prefix + "a", b"A" * 10)
    put(gateway, prefix + "b", b"B" * 20)
    os.mkdir(m.path("sub"))
    os.rename(m.path("a"), m.path("b"))         # over an existing file
    assert get(gateway, prefix + "a") is None
    assert get(gateway, prefix + "b") == b"A" * 10
    assert os.stat(m.path("b")).st_size == 10
    os.rename(m.path("b"), m.path("sub", "c"))  # across directories
    assert get(gateway, prefix + "b") is None
    assert get(gateway, prefix + "sub/c") == b"A" * 10
    with open(m.path("sub", "c"), "rb") as f:
        assert f.read() == b"A" * 10
    assert os.listdir(m.path("sub")) == ["c"]
    put(gateway, prefix + "d", b"D")
    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, noreplace = -100, 1
    rc = libc.renameat2(at_fdcwd, m.path("d").encode(), at_fdcwd,
                        m.path("sub", "c").encode(), noreplace)
    assert rc == -1 and ctypes.get_errno() == errno.EEXIST
    assert get(gateway, prefix + "d") == b"D"
    assert get(gateway, prefix + "sub/c") == b"A" * 10


def test_posix_errors_leave_the_bucket(mnt, gateway):
    """The answers tests/conformance checks on tmpfs that S3 semantics
    allow; none of these calls changes a key."""
    m, prefix = mnt
    with open(m.path("f"), "wb") as f:
        f.write(b"1")
    os.mkdir(m.path("d"))
    p = m.path
    cases = [
        (lambda: os.open(p("f"), os.O_WRONLY | os.O_CREAT | os.O_EXCL),
         errno.EEXIST),
        (lambda: os.open(p("d"), os.O_WRONLY | os.O_CREAT | os.O_EXCL),
         errno.EEXIST),
        (lambda: os.mkdir(p("d")), errno.EEXIST),
        (lambda: os.mkdir(p("f")), errno.EEXIST),
        (lambda: os.rmdir(p("f")), errno.ENOTDIR),
        (lambda: os.unlink(p("d")), errno.EISDIR),     # Linux (POSIX: EPERM)
        (lambda: os.rmdir(p("nope")), errno.ENOENT),
        (lambda: os.unlink(p("nope")), errno.ENOENT),
        (lambda: open(p("nope", "x"), "wb"), errno.ENOENT),
        (lambda: os.mkdir(p("nope", "x")), errno.ENOENT),
        (lambda: open(p("f", "x"), "wb"), errno.ENOTDIR),
        (lambda: os.open(p("f"), os.O_RDONLY | os.O_DIRECTORY),
         errno.ENOTDIR),
        (lambda: open(p("d"), "wb"), errno.EISDIR),
        (lambda: os.rename(p("f"), p("d")), errno.EISDIR),
        (lambda: os.rename(p("nope"), p("x")), errno.ENOENT),
    ]
    for i, (fn, want) in enumerate(cases):
        with pytest.raises(OSError) as e:
            fn()
        assert e.value.errno == want, (i, e.value)
    assert keys(gateway, prefix) == [prefix + "d/", prefix + "f"]
    assert get(gateway, prefix + "f") == b"1"


def test_new_entries_listed_and_stat(mnt, gateway):
    m, prefix = mnt
    os.makedirs(m.path("x", "y"))
    with open(m.path("x", "y", "z"), "wb") as f:
        f.write(b"zz")
    open(m.path("x", "top"), "wb").close()
    with os.scandir(m.path("x")) as it:
        got = {e.name: (e.is_dir(), e.is_file()) for e in it}
    assert got == {"y": (True, False), "top": (False, True)}
    st = os.stat(m.path("x", "y", "z"))
    assert stat.S_ISREG(st.st_mode) and st.st_size == 2
    assert stat.S_ISDIR(os.stat(m.path("x", "y")).st_mode)
    assert os.stat(m.path("x", "top")).st_size == 0
    assert keys(gateway, prefix) == [prefix + k for k in
                                     ("x/", "x/top", "x/y/", "x/y/z")]


WRITER = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
block = bytes([7]) * (1 << 20)
n = 0
while True:
    n += os.write(fd, block)
    if n == int(sys.argv[2]):
        print(n, flush=True)   # this much is written; it goes on till killed
"""


def test_writer_killed_mid_file(mnt, gateway):
    """FUSE tells a close by a killed process from any other close in no
    way (both FLUSH, then RELEASE): what the writer wrote becomes the
    object, whole bytes, never a torn upload (README.md, the semantics
    table)."""
    m, prefix = mnt
    size = 2 * PART + MIB  # three parts of a multipart upload
    p = subprocess.Popen([sys.executable, "-c", WRITER, m.path("k.bin"),
                          str(size)], stdout=subprocess.PIPE, text=True)
    try:
        assert int(p.stdout.readline()) == size
        p.send_signal(signal.SIGKILL)
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    deadline = time.monotonic() + 30
    while (got := get(gateway, prefix + "k.bin")) is None:
        assert time.monotonic() < deadline, "no object 30 s after the kill"
        time.sleep(0.2)
    assert len(got) >= size and got == bytes([7]) * len(got)
