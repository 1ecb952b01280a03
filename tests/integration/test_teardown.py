# SPDX-License-Identifier: MIT
"""Transport fallback when the kernel has FUSE io_uring switched off, and
clean endings: a client killed with requests in flight, unmount with
fusermount3 -u (20 times per transport, never taken for a covered mount),
SIGTERM under load (over whichever transport auto picks)."""
import os
import signal
import subprocess
import time

import pytest

from conftest import (FRING, devfuse_fallback_reason, fring_env, is_mounted,
                      run_fring, serving_pid)

ENABLE_URING = "/sys/module/fuse/parameters/enable_uring"


@pytest.fixture
def uring_disabled():
    """enable_uring = N for the test, restored whatever happens."""
    try:
        with open(ENABLE_URING) as f:
            old = f.read().strip()
    except OSError:
        pytest.skip("this kernel has no FUSE io_uring switch")
    with open(ENABLE_URING, "w") as f:
        f.write("N")
    try:
        yield
    finally:
        with open(ENABLE_URING, "w") as f:
            f.write(old)


def test_enable_uring_n_auto_falls_back_with_the_reason(uring_disabled, tmpdirs):
    mp = tmpdirs("mnt")
    proc = subprocess.Popen([FRING, "mount", "memfs", mp], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=fring_env(), text=True)
    reason, _ = devfuse_fallback_reason(proc, mp, "served over /dev/fuse")
    assert "enable_uring is N" in reason, reason


def test_enable_uring_n_uring_mode_refuses_to_start(uring_disabled, tmpdirs):
    mp = tmpdirs("mnt")
    res = subprocess.run([FRING, "mount", "memfs", mp, "-t", "uring"],
                         capture_output=True, text=True, timeout=30, env=fring_env())
    assert res.returncode == 1
    assert "ready" not in res.stdout
    assert "enable_uring is N" in res.stderr, res.stderr
    assert not is_mounted(mp)


def test_killed_client_with_requests_in_flight(mount, tmpdirs):
    src = tmpdirs("src")
    mp = mount("passthrough", {"source": src})
    with open(os.path.join(src, "big"), "wb") as f:
        f.truncate(256 << 20)
    # Readers and writers with O_DIRECT keep requests in flight; kill them.
    script = ("import os,sys\n"
              "fd=os.open(sys.argv[1],os.O_RDWR|os.O_DIRECT)\n"
              "import mmap\nb=mmap.mmap(-1,1<<20)\n"
              "while True:\n"
              " for off in range(0,256<<20,1<<20):\n"
              "  os.preadv(fd,[b],off); os.pwritev(fd,[b],off)\n")
    clients = [subprocess.Popen(["python3", "-c", script, os.path.join(mp, "big")])
               for _ in range(4)]
    time.sleep(1.0)
    for c in clients:
        assert c.poll() is None, "client ended early"
        c.kill()
    for c in clients:
        c.wait(10)
    # The mount still serves, with nothing stuck.
    with open(os.path.join(mp, "after"), "w") as f:
        f.write("ok")
    with open(os.path.join(src, "after")) as f:
        assert f.read() == "ok"
    # teardown of the `mount` fixture asserts SIGTERM -> exit 0, unmounted


def test_fusermount_unmount_ends_fring_cleanly(spawn, tmpdirs):
    mp = tmpdirs("mnt")
    f = spawn(["mount", "memfs", mp], [mp])
    f.wait_ready(1)
    server = serving_pid(f.proc.pid)
    with open(os.path.join(mp, "x"), "w") as fh:
        fh.write("x")
    subprocess.run(["fusermount3", "-u", mp], check=True, timeout=30)
    assert f.proc.wait(15) == 0, f.log()
    assert not is_mounted(mp)
    assert not os.path.exists("/proc/%d/fd" % server) or \
        open("/proc/%d/stat" % server).read().split(") ")[-1][0] == "Z"


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_fusermount_unmount_never_looks_like_a_covered_mount(spawn, tmpdirs,
                                                              transport):
    """fusermount3 -u takes the mount out of the namespace at once, but the
    connection's fusectl directory goes only once the kernel tore the
    superblock down, a few ms after the workers saw the end. Stop used to
    decide "ours is not on the mountpoint + the abort worked = another
    mount covers ours" in that window (about 1 run in 3): a false warning
    and an abort. 20 runs per transport, each a clean end."""
    for _ in range(20):
        mp = tmpdirs("mnt")
        f = spawn(["mount", "memfs", mp, "-t", transport], [mp])
        f.wait_ready(1)
        subprocess.run(["fusermount3", "-u", mp], check=True, timeout=30)
        rc = f.proc.wait(15)
        log = f.log()
        assert rc == 0, log
        assert "covers ours" not in log and "aborted" not in log, log
        assert "%s was unmounted" % mp in log, log
        assert not is_mounted(mp)


def test_sigterm_under_load_exits_promptly(spawn, tmpdirs):
    src = tmpdirs("src")
    mp = tmpdirs("mnt")
    f = spawn(["mount", "passthrough", mp, "-o", "source=%s" % src], [mp])
    f.wait_ready(1)
    script = ("import os,sys\nb=os.urandom(1<<20)\ni=0\n"
              "while True:\n"
              " p=os.path.join(sys.argv[1],'f%d'%(i%8)); i+=1\n"
              " with open(p,'wb') as fh:\n"
              "  for _ in range(8): fh.write(b)\n")
    clients = [subprocess.Popen(["python3", "-c", script, mp],
                                stderr=subprocess.DEVNULL) for _ in range(3)]
    try:
        time.sleep(1.0)
        t0 = time.monotonic()
        rc = f.stop(signal.SIGTERM, timeout=10)
        elapsed = time.monotonic() - t0
    finally:
        for c in clients:
            c.kill()
            c.wait(10)
    assert rc == 0, f.log()
    assert not is_mounted(mp)
    assert elapsed < 2.0, "SIGTERM under load took %.2fs" % elapsed


def conn_id(path):
    st = os.stat(path)
    return (os.major(st.st_dev) << 20) | os.minor(st.st_dev)


def test_stopping_never_unmounts_a_mount_stacked_on_top(spawn, tmpdirs):
    """Someone mounted over fring's mountpoint (here a tmpfs): stopping
    fring must not unmount by path what is on top now."""
    mp = tmpdirs("mnt")
    first = spawn(["mount", "memfs", mp], [mp])
    first.wait_ready(1)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "fring-test", mp],
                   check=True)
    try:
        with open(os.path.join(mp, "top"), "w") as f:
            f.write("tmpfs")
        top = conn_id(mp)
        assert first.stop(signal.SIGTERM) == 0, first.log()
        # The tmpfs is still the mount on top, with its file.
        assert conn_id(mp) == top
        with open(os.path.join(mp, "top")) as f:
            assert f.read() == "tmpfs"
        assert "another mount now covers ours" in first.log()
    finally:
        subprocess.run(["umount", mp])  # ours: the tmpfs on top
    # fring's own connection, covered, was aborted: cleared by the fixture.


def test_refuses_to_mount_over_a_serving_fuse_mount(spawn, tmpdirs):
    """A second fring on the same mountpoint would hide the first one's
    files and leave a dead mount behind when the first stops: refused."""
    mp = tmpdirs("mnt")
    first = spawn(["mount", "memfs", mp], [mp])
    first.wait_ready(1)
    with open(os.path.join(mp, "mine"), "w") as f:
        f.write("first")
    r = run_fring("mount", "memfs", mp, timeout=20)
    assert r.returncode == 1
    assert r.stderr == ("fring: %s is already a FUSE mountpoint that serves; "
                        "mounting over it would hide its files (stop that "
                        "server or unmount it first: fusermount3 -u %s)\n"
                        % (mp, mp))
    with open(os.path.join(mp, "mine")) as f:
        assert f.read() == "first"
    # A directory inside a FUSE file system is a fine mountpoint.
    inner = os.path.join(mp, "inner")
    os.mkdir(inner)
    second = spawn(["mount", "memfs", inner], [inner])
    second.wait_ready(1)
    assert second.stop(signal.SIGTERM) == 0, second.log()
    assert first.stop(signal.SIGTERM) == 0, first.log()


def test_aborted_connection_is_an_error_not_a_clean_unmount(spawn, tmpdirs):
    mp = tmpdirs("mnt")
    f = spawn(["mount", "memfs", mp], [mp])
    f.wait_ready(1)
    cid = conn_id(mp)
    if not os.path.isdir("/sys/fs/fuse/connections/%d" % cid):
        subprocess.run(["mount", "-t", "fusectl", "none", "/sys/fs/fuse/connections"])
    with open("/sys/fs/fuse/connections/%d/abort" % cid, "w") as a:
        a.write("1")
    rc = f.proc.wait(15)
    assert rc == 1, f.log()
    log = f.log()
    assert "the FUSE connection was aborted" in log
    assert "fusermount3 -u %s" % mp in log
    # Left detectably dead (libfuse never unmounts an aborted connection
    # by path); the fixture clears it.
