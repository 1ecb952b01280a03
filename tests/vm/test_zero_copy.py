# SPDX-License-Identifier: MIT
"""Linux 7.3 io_uring zero-copy, on the real kernel (runs in the tests/vm guest).

passthrough opts regular files in (FOPEN_IO_URING_ZERO_COPY); the kernel then
puts the client's pages into each entry's slot of the ring's buffer table and
fring moves the data with READ_FIXED/WRITE_FIXED against it. Each test checks
what happened through the mount's `zero-copy:` line and the FRING_LOG=debug
counters at stop, and the data by checksums against the backing files.
"""

import errno
import os
import re
import signal
import subprocess
import threading
import time

import pytest

import conftest as itg
from test_bufpool import FAULTY, MIB, kernel_has_pools, rw, serve, sha, stop_clean, write_yaml

pytestmark = pytest.mark.skipif(not kernel_has_pools(),
                                reason="needs Linux 7.3 (run through tests/vm)")

ZC = "{ mode: uring, zero_copy: on }"


def zc_line(f):
    m = re.search(r"zero-copy: (.*)", f.log())
    assert m, f.log()
    return m.group(1)


def zc_stats(log):
    m = re.search(r"zero-copy: (\d+) reads, (\d+) writes; fallbacks: (\d+) "
                  r"READ/WRITE copied by the kernel.*?, (\d+) replies refused.*?; "
                  r"on the owner thread (\d+) without an atomic read-modify-write "
                  r"for the handle, (\d+) with one", log)
    assert m, log
    keys = ("reads", "writes", "copied", "refused", "owner_plain", "owner_rmw")
    return dict(zip(keys, (int(x) for x in m.groups())))


def ring_stats(log):
    m = re.search(r"(\d+) commits, (\d+) off-thread", log)
    assert m, log
    return {"commits": int(m.group(1)), "remote": int(m.group(2))}


def passthrough(spawn, tmpdirs, transport=ZC, **opts):
    src = tmpdirs("src")
    options = {"source": src}
    options.update(opts)
    mp, f = serve(spawn, tmpdirs, transport, "passthrough", options)
    return mp, f, src


def backing_sha(src, name):
    with open(os.path.join(src, name), "rb") as b:
        return sha(b.read())


# ---- zero-copy is in use, and the data is right ----

@pytest.mark.parametrize("direct", [False, True], ids=["buffered", "odirect"])
def test_checksums_4k_to_1mib(spawn, tmpdirs, direct):
    mp, f, src = passthrough(spawn, tmpdirs)
    assert zc_line(f) == "on (8 slots per queue)"
    for size in (4096, 65536, 128 * 1024 + 512, MIB, 3 * MIB + 4096):
        data = os.urandom(size)
        name = "f%d" % size
        assert sha(rw(os.path.join(mp, name), data, direct)) == sha(data), size
        assert backing_sha(src, name) == sha(data), size
    st = zc_stats(stop_clean(f, mp))
    assert st["reads"] > 0 and st["writes"] > 0, st
    assert st["refused"] == 0, st
    # The owner thread served them all without an atomic RMW on the handle.
    assert st["owner_plain"] == st["reads"] + st["writes"], st
    assert st["owner_rmw"] == 0, st


def test_short_reads_at_eof_and_holes(spawn, tmpdirs):
    mp, f, src = passthrough(spawn, tmpdirs)
    # A sparse backing file: data, a 1 MiB hole, data, EOF mid-page.
    with open(os.path.join(src, "sparse"), "wb") as b:
        b.write(b"A" * 5000)
        b.seek(5000 + MIB)
        b.write(b"B" * 7000)
    with open(os.path.join(src, "sparse"), "rb") as b:
        want = b.read()
    assert len(want) == 5000 + MIB + 7000
    for direct in (False, True):
        fd = os.open(os.path.join(mp, "sparse"), os.O_RDONLY |
                     (os.O_DIRECT if direct else 0))
        try:
            import mmap
            buf = mmap.mmap(-1, 2 * MIB)
            for off, n in ((0, MIB), (4096, MIB), (MIB, MIB), (2 * MIB - 4096 * 2, MIB)):
                got = os.preadv(fd, [memoryview(buf)[:n]], off)
                assert bytes(buf[:got]) == want[off:off + n], (direct, off, n)
            # Past EOF: 0 bytes.
            assert os.preadv(fd, [memoryview(buf)[:4096]], len(want) + 8192) == 0
        finally:
            os.close(fd)
    st = zc_stats(stop_clean(f, mp))
    assert st["reads"] > 0, st


def test_mmap_of_an_opted_in_file(spawn, tmpdirs):
    import mmap
    mp, f, src = passthrough(spawn, tmpdirs)
    data = os.urandom(3 * MIB)
    with open(os.path.join(src, "m"), "wb") as b:
        b.write(data)
    with open(os.path.join(mp, "m"), "r+b") as fh:
        m = mmap.mmap(fh.fileno(), 0)
        assert sha(m[:]) == sha(data)
        m[4096:8192] = b"Z" * 4096
        m.flush()
        m.close()
    want = data[:4096] + b"Z" * 4096 + data[8192:]
    assert backing_sha(src, "m") == sha(want)
    st = zc_stats(stop_clean(f, mp))
    assert st["reads"] > 0, st  # readahead of the mapping went zero-copy


def test_file_not_opted_in_beside_one_that_is(spawn, tmpdirs):
    """zero_copy_min: files smaller than that at open are not opted in: the
    kernel copies theirs (the 'copied' fallback), beside zero-copied ones."""
    mp, f, src = passthrough(spawn, tmpdirs, zero_copy_min="64KiB")
    small, big = os.urandom(8192), os.urandom(2 * MIB)
    for name, data in (("small", small), ("big", big)):
        with open(os.path.join(src, name), "wb") as b:
            b.write(data)
    with open(os.path.join(mp, "small"), "rb") as s, \
            open(os.path.join(mp, "big"), "rb") as b:
        assert sha(s.read()) == sha(small)
        assert sha(b.read()) == sha(big)
    st = zc_stats(stop_clean(f, mp))
    assert st["reads"] > 0 and st["copied"] > 0, st


# ---- off the queue thread ----

def fio(mp, name, rw_, bs, jobs, size="4M", runtime=None, direct=1, extra=()):
    cmd = ["fio", "--name=" + name, "--directory=" + mp, "--rw=" + rw_,
           "--bs=" + bs, "--numjobs=%d" % jobs, "--size=" + size,
           "--direct=%d" % direct, "--ioengine=psync", "--group_reporting",
           "--verify=crc32c", "--do_verify=1", "--verify_state_save=0",
           "--output-format=terse"]
    if runtime:
        cmd += ["--time_based", "--runtime=%d" % runtime]
    return cmd + list(extra)


def test_worker_threads_under_32_jobs(spawn, tmpdirs):
    mp, f, src = passthrough(spawn, tmpdirs, io_threads=4)
    for bs, direct in (("4k", 1), ("128k", 0), ("1M", 1)):
        p = subprocess.run(fio(mp, "w" + bs, "write", bs, 32, size="2M",
                               direct=direct), capture_output=True, text=True,
                           timeout=600)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "bad magic" not in p.stderr and "crc32c" not in p.stderr, p.stderr
    log = stop_clean(f, mp)
    st, rs = zc_stats(log), ring_stats(log)
    assert st["reads"] > 0 and st["writes"] > 0, st
    # The backing I/O was handed to the owner from the plugin's workers.
    assert rs["remote"] >= st["reads"] + st["writes"], (rs, st)
    assert st["owner_plain"] == 0, st


@pytest.mark.parametrize("workers", [0, 4], ids=["owner", "workers"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill9"])
def test_signal_during_zero_copied_io(spawn, tmpdirs, sig, workers):
    """SIGTERM to fring, or kill -9 of the serving process, while 8 fio jobs
    move data zero-copy (with io_threads 4: while the plugin's workers hold
    handles). No caller hangs; what was written before stays intact."""
    opts = {"io_threads": workers} if workers else {}
    mp, f, src = passthrough(spawn, tmpdirs, **opts)
    keep = os.urandom(MIB)
    with open(os.path.join(mp, "keep"), "wb") as k:
        k.write(keep)
        os.fsync(k.fileno())
    load = subprocess.Popen(fio(mp, "load", "randrw", "64k", 8, size="4M",
                                runtime=60, extra=["--verify=0"]),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(os.listdir(src)) < 9:
            time.sleep(0.2)
        time.sleep(2)
        if sig == signal.SIGKILL:
            os.kill(itg.serving_pid(f.proc.pid), signal.SIGKILL)
            rc = f.proc.wait(60)
            assert rc is not None
        else:
            rc = f.stop(signal.SIGTERM, timeout=60)
            assert rc is not None, "fring did not exit on SIGTERM"
        load.wait(120)  # fio ends with errors, never hangs
    finally:
        if load.poll() is None:
            load.kill()
            load.wait()
    assert backing_sha(src, "keep") == sha(keep)
    if sig == signal.SIGTERM:
        assert "Segmentation" not in f.log() and "AddressSanitizer" not in f.log()


# ---- misuse and late handles ----

def faulty(spawn, tmpdirs, transport=ZC):
    mp = tmpdirs("mnt")
    cfg = write_yaml(tmpdirs("cfg"), mp, FAULTY, transport, {"zero_copy": "true"})
    os.environ["FRING_LOG"] = "debug"
    try:
        f = spawn(["run", cfg], [mp])
    finally:
        os.environ.pop("FRING_LOG", None)
    f.wait_ready(1, timeout=30)
    return mp, f


def test_reply_data_to_a_zero_copied_read_is_eio(spawn, tmpdirs):
    mp, f = faulty(spawn, tmpdirs)
    with pytest.raises(OSError) as e:
        with open(os.path.join(mp, "ok"), "rb") as r:
            r.read(4096)
    assert e.value.errno == errno.EIO
    log = stop_clean(f, mp)
    assert "plugin answered a zero-copied READ" in log, log
    assert zc_stats(log)["refused"] >= 1


def test_handle_used_after_its_connection_was_aborted(spawn, tmpdirs):
    """faulty holds a zero-copied READ of "zclate"; the connection is
    aborted (fusectl), fring stops, and at destroy the plugin calls
    req_read_fd on the dead handle: a negative errno and a log line, no
    crash, no hang."""
    mp, f = faulty(spawn, tmpdirs)
    res = []

    def reader():
        try:
            with open(os.path.join(mp, "zclate"), "rb") as r:
                res.append(r.read(4096))
        except OSError as e:
            res.append(e.errno)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while "faulty: zclate" not in f.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "faulty: zclate" in f.log(), f.log()
    # Our connection: the fusectl entry named by the mount's device minor.
    dev = None
    with open("/proc/self/mountinfo") as mi:
        for line in mi:
            fields = line.split()
            if fields[4] == mp:
                dev = fields[2]
    assert dev, "mount not found"
    minor = dev.split(":")[1]
    assert os.path.exists("/sys/fs/fuse/connections/%s/abort" % minor), dev
    with open("/sys/fs/fuse/connections/%s/abort" % minor, "w") as a:
        a.write("1")
    t.join(30)
    assert not t.is_alive(), "the reader hung after the abort"
    assert res and res[0] in (errno.ENOTCONN, errno.ECONNABORTED, errno.EIO), res
    rc = f.stop(signal.SIGTERM, timeout=60)
    assert rc is not None, "fring did not exit"
    log = f.log()
    m = re.search(r"faulty: zclate: late req_read_fd: (-?\d+)", log)
    assert m, log
    assert int(m.group(1)) < 0, log
    assert "Segmentation" not in log


# ---- requirements: the capability, the kernel ----

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_without_cap_sys_admin_auto_copies_and_on_refuses(tmpdirs):
    """An unprivileged server (uid nobody, mounting through fusermount3)
    has no CAP_SYS_ADMIN: auto serves with the copy path and says why, on
    refuses to start with that reason."""
    top = tmpdirs("nocap")
    os.chmod(top, 0o777)
    src, mp = os.path.join(top, "src"), os.path.join(top, "mnt")
    for d in (src, mp):
        os.mkdir(d)
        os.chmod(d, 0o777)
    # Small pools: RLIMIT_MEMLOCK of an unprivileged user is 8 MiB.
    transport = "{ mode: uring, queue_depth: 2, bufpool: { size: 2MiB }, zero_copy: %s }"
    for mode in ("auto", "on"):
        cfg = write_yaml(top, mp, "passthrough", transport % mode, {"source": src})
        os.chmod(cfg, 0o644)
        p = subprocess.Popen(NOBODY + [itg.FRING, "run", cfg], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=itg.fring_env())
        try:
            if mode == "on":
                out, err = p.communicate(timeout=60)
                assert p.returncode != 0, err
                assert b"transport.zero_copy on: CAP_SYS_ADMIN is not in the " \
                       b"effective set" in err, err
                assert not itg.is_mounted(mp)
                continue
            deadline = time.monotonic() + 60
            while not itg.is_mounted(mp) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert itg.is_mounted(mp)
            io = subprocess.run(NOBODY + ["sh", "-c", "head -c 1048577 /dev/urandom "
                                          "> %s/a && cmp %s/a %s/a && echo same"
                                          % (mp, mp, src)],
                                capture_output=True, timeout=60)
            assert io.stdout.strip() == b"same", io
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
            assert b"zero-copy: off (CAP_SYS_ADMIN is not in the effective set)" in err, err
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            itg.force_unmount(mp)


def test_zero_copy_off_and_without_a_pool(spawn, tmpdirs):
    mp, f, _ = passthrough(spawn, tmpdirs, "{ mode: uring, zero_copy: off }")
    assert zc_line(f) == "off (transport.zero_copy off)"
    assert sha(rw(os.path.join(mp, "a"), b"x" * 9000, True)) == sha(b"x" * 9000)
    stop_clean(f, mp)
    mp, f, _ = passthrough(spawn, tmpdirs, "{ mode: uring, bufpool: off }")
    assert zc_line(f) == "off (it needs a buffer pool (transport.bufpool is off))"
    stop_clean(f, mp)


def test_refused_pool_on_a_zero_copy_queue_is_a_clear_error(spawn, tmpdirs):
    """A zero-copy queue takes only pool REGISTERs: when the kernel refuses
    its ADD_BUFPOOL (FRING_TEST_FIXED_FAULT=addpool), fring says so and the
    mount ends instead of hanging."""
    mp = tmpdirs("mnt")
    cfg = write_yaml(tmpdirs("cfg"), mp, "passthrough", ZC, {"source": tmpdirs("src")})
    os.environ["FRING_TEST_FIXED_FAULT"] = "addpool"
    try:
        f = spawn(["run", cfg], [mp])
    finally:
        os.environ.pop("FRING_TEST_FIXED_FAULT")
    deadline = time.monotonic() + 60
    while "ADD_BUFPOOL failed on a zero-copy queue" not in f.log() and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    assert "ADD_BUFPOOL failed on a zero-copy queue" in f.log(), f.log()
