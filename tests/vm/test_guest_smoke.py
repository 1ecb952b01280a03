# SPDX-License-Identifier: MIT
"""Smoke test of the Linux 7.3+ guest (run inside it by run.sh): the kernel,
FUSE-over-io_uring switched on, /dev/fuse and fusectl, the kernel's FUSE INIT
offer, and memfs served over io_uring with files that round-trip."""

import hashlib
import os
import re
import stat

from conftest import FUSECTL, is_mounted

ENABLE_URING = "/sys/module/fuse/parameters/enable_uring"
FUSE_HAS_IO_URING_BUFPOOL = 1 << 43


def test_kernel_is_7_3_or_later():
    release = os.uname().release
    major, minor = map(int, re.match(r"(\d+)\.(\d+)", release).groups())
    assert (major, minor) >= (7, 3), release


def test_fuse_uring_enabled():
    with open(ENABLE_URING) as f:
        assert f.read().strip() == "Y"


def test_dev_fuse_and_fusectl():
    assert stat.S_ISCHR(os.stat("/dev/fuse").st_mode)
    with open("/proc/self/mountinfo") as f:
        assert any(l.split()[4] == FUSECTL and " - fusectl " in l for l in f)


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        # drop cached pages: the data has to come from the server
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def test_memfs_over_uring_round_trip(spawn, tmpdirs, monkeypatch):
    monkeypatch.setenv("FRING_LOG", "debug")
    mp = tmpdirs("mnt")
    f = spawn(["mount", "memfs", mp, "-t", "uring"], [mp])
    ready = f.wait_ready(1)
    assert ready == ["fring: %s ready (plugin memfs, transport uring)" % mp]

    sizes = [0, 1, 4095, 4096, 65537, (1 << 20) + 1, 8 << 20]
    sums = {}
    for size in sizes:
        data = os.urandom(size)
        name = os.path.join(mp, "f%d" % size)
        with open(name, "wb") as out:
            assert out.write(data) == size
        sums[name] = hashlib.sha256(data).hexdigest()
    os.mkdir(os.path.join(mp, "dir"))
    os.rename(os.path.join(mp, "f1"), os.path.join(mp, "dir", "f1"))
    sums[os.path.join(mp, "dir", "f1")] = sums.pop(os.path.join(mp, "f1"))
    for name, digest in sums.items():
        assert sha256_of(name) == digest, name
        assert os.stat(name).st_size == int(os.path.basename(name)[1:])
    assert sorted(os.listdir(mp)) == sorted(
        ["dir"] + ["f%d" % s for s in sizes if s != 1])
    for name in sums:
        os.unlink(name)
    os.rmdir(os.path.join(mp, "dir"))
    assert os.listdir(mp) == []

    assert f.stop() == 0, f.log()
    assert not is_mounted(mp)
    log = f.log()
    # Linux 7.3 offers FUSE 7.46 and the io_uring buffer pool (bit 43).
    m = re.search(r"FUSE \d+\.\d+ \(kernel 7\.(\d+)\), want 0x[0-9a-f]+ of "
                  r"0x([0-9a-f]+)", log)
    assert m, log
    assert int(m.group(1)) >= 46, m.group(0)
    assert int(m.group(2), 16) & FUSE_HAS_IO_URING_BUFPOOL, m.group(0)
    assert re.search(r"uring: [1-9]\d* requests over the ring", log), log
