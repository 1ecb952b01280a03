# SPDX-License-Identifier: MIT
"""Kernel passthrough (passthrough option kernel_passthrough, ABI 1.3
backing_open): the kernel serves read, write and mmap from the backing file
itself. That the data never reaches fring is asserted from fring's own
per-opcode counts (the FRING_LOG=debug line printed at stop), on both
transports; without the option the same I/O is served by fring."""

import mmap
import os
import re
import signal
import subprocess

import pytest

from conftest import is_mounted, run_fring

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="FUSE passthrough needs CAP_SYS_ADMIN")

OPCODES_RE = re.compile(r"requests by opcode: (.*)")


@pytest.fixture
def kp(spawn, tmpdirs, monkeypatch):
    """kp(transport, kernel_passthrough=True) -> (mountpoint, source, stop)
    where stop() SIGTERMs fring, requires a clean exit and returns the
    per-opcode request counts and the log."""
    monkeypatch.setenv("FRING_LOG", "debug")

    def start(transport, kernel_passthrough=True):
        src, mp = tmpdirs("src"), tmpdirs("mnt")
        f = spawn(["mount", "passthrough", mp, "-t", transport,
                   "-o", "source=" + src,
                   "-o", "kernel_passthrough=%s" % str(kernel_passthrough).lower()],
                  [mp])
        ready = f.wait_ready(1)[0]
        assert ready.endswith("transport %s)" % transport), ready

        def stop():
            rc = f.stop(signal.SIGTERM)
            log = f.log()
            assert rc == 0 and not is_mounted(mp), log
            m = OPCODES_RE.search(log)
            assert m, log
            counts = {}
            for item in m.group(1).split(", "):
                if item != "none":
                    name, n = item.rsplit(" ", 1)
                    counts[name] = int(n)
            return counts, log
        return mp, src, stop
    return start


def exercise(mp):
    """Buffered, O_DIRECT and mmap I/O through the mount; returns the
    file's expected content."""
    data = bytearray(os.urandom(4 << 20))
    path = os.path.join(mp, "f")
    with open(path, "wb") as f:              # CREATE + buffered writes
        f.write(data)
    with open(path, "rb") as f:              # OPEN + buffered reads
        assert f.read() == data
    buf = mmap.mmap(-1, 1 << 20)             # page-aligned for O_DIRECT
    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    try:
        assert os.preadv(fd, [buf], 1 << 20) == 1 << 20
        assert buf[:] == data[1 << 20:2 << 20]
        buf[:] = os.urandom(1 << 20)
        assert os.pwritev(fd, [buf], 3 << 20) == 1 << 20
        data[3 << 20:] = buf[:]
    finally:
        os.close(fd)
    with open(path, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
        m[:5] = b"mmap!"
        m.flush()
        m.close()
    data[:5] = b"mmap!"
    return bytes(data)


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_data_never_reaches_fring(kp, transport):
    mp, src, stop = kp(transport)
    data = exercise(mp)
    with open(os.path.join(src, "f"), "rb") as f:
        assert f.read() == data              # it is in the backing file
    with open(os.path.join(mp, "f"), "rb") as f:
        assert f.read() == data
    counts, log = stop()
    assert counts.get("CREATE", 0) + counts.get("OPEN", 0) >= 4, counts
    assert counts.get("READ", 0) == 0 and counts.get("WRITE", 0) == 0, counts
    assert "kernel passthrough unavailable" not in log, log


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_without_the_option_fring_serves_the_data(kp, transport):
    mp, src, stop = kp(transport, kernel_passthrough=False)
    data = exercise(mp)
    with open(os.path.join(src, "f"), "rb") as f:
        assert f.read() == data
    counts, _ = stop()
    assert counts.get("READ", 0) > 0 and counts.get("WRITE", 0) > 0, counts


def test_concurrent_and_repeated_opens_share_the_backing_file(kp):
    """The kernel takes one backing file per inode: read-only, write-only
    and read-write opens held at once all pass through (any mismatch would
    fail the open), and the registration is dropped and made again as the
    opens come and go."""
    mp, src, stop = kp("uring")
    path = os.path.join(mp, "g")
    with open(path, "wb") as f:
        f.write(b"a" * 8192)
    for round_ in range(20):
        r = os.open(path, os.O_RDONLY)
        w = os.open(path, os.O_WRONLY)
        rw = os.open(path, os.O_RDWR)
        try:
            mark = b"%04d" % round_
            os.pwrite(w, mark, 0)
            assert os.pread(r, 4, 0) == mark
            os.pwrite(rw, mark, 4096)
            assert os.pread(rw, 4, 4096) == mark
        finally:
            for fd in (r, w, rw):
                os.close(fd)
    with open(os.path.join(src, "g"), "rb") as f:
        assert f.read(4) == b"0019"
    counts, _ = stop()
    assert counts.get("OPEN", 0) >= 60, counts
    assert counts.get("READ", 0) == 0 and counts.get("WRITE", 0) == 0, counts


def test_writer_beside_a_reader_of_an_append_only_file(kp):
    """The first open registers the inode's backing file; a later open with
    other access (here O_APPEND on a chattr +a file, which refuses O_RDWR)
    must still pass through: the kernel opens its own backing file per
    open, with that caller's flags."""
    mp, src, stop = kp("uring")
    backing = os.path.join(src, "log")
    with open(backing, "w") as f:
        f.write("line1\n")
    subprocess.run(["chattr", "+a", backing], check=True)
    try:
        r = os.open(os.path.join(mp, "log"), os.O_RDONLY)
        try:
            w = os.open(os.path.join(mp, "log"), os.O_WRONLY | os.O_APPEND)
            try:
                assert os.write(w, b"line2\n") == 6
            finally:
                os.close(w)
            assert os.pread(r, 100, 0) == b"line1\nline2\n"
        finally:
            os.close(r)
    finally:
        subprocess.run(["chattr", "-a", backing], check=True)
    counts, _ = stop()
    assert counts.get("WRITE", 0) == 0, counts


def test_kernel_passthrough_with_writeback_is_a_config_error(tmpdirs):
    src, mp = tmpdirs("src"), tmpdirs("mnt")
    r = run_fring("mount", "passthrough", mp, "-o", "source=" + src,
                  "-o", "kernel_passthrough=true", "-o", "writeback=true")
    assert r.returncode != 0
    assert "kernel_passthrough and writeback exclude each other" in r.stderr, \
        r.stderr
    assert not is_mounted(mp)
