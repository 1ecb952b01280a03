# SPDX-License-Identifier: MIT
"""Linux 7.3 buffer pools, on the real kernel (runs in the tests/vm guest).

Each test mounts over io_uring with a `transport:` section and checks what
the kernel and fring did: the mount's one `payload:` line, the FRING_LOG=
debug pool counters at stop, data through the pool (checksums, O_DIRECT and
buffered), a pool smaller than the queue under 32 readers, payload requests
while every buffer is lent, the kernel's refusal of a command without the
registered pool's index, and stopping or killing the server while buffers
are lent.
"""

import errno
import hashlib
import os
import re
import signal
import subprocess
import threading
import time

import pytest

import conftest as itg  # tests/vm/conftest.py: the integration fixtures

BUILD = os.path.dirname(os.path.dirname(itg.FRING)) if os.path.isabs(itg.FRING) else ""
FAULTY = os.path.join(BUILD, "tests", "fixtures", "faulty.so")
MIB = 1 << 20


def kernel_has_pools():
    rel = os.uname().release.split("-")[0].split(".")
    return (int(rel[0]), int(rel[1])) >= (7, 3)


pytestmark = pytest.mark.skipif(not kernel_has_pools(),
                                reason="needs Linux 7.3 (run through tests/vm)")


def write_yaml(d, mp, plugin, transport, options=None):
    path = os.path.join(d, "fring.yaml")
    lines = ["mounts:", "  - mountpoint: %s" % mp, "    plugin: %s" % plugin]
    if options:
        lines.append("    options: { %s }" % ", ".join(
            "%s: %s" % kv for kv in options.items()))
    lines.append("    transport: %s" % transport)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def serve(spawn, tmpdirs, transport, plugin="memfs", options=None, debug=True):
    """Mount over io_uring with this transport section; (mountpoint, Fring)."""
    mp = tmpdirs("mnt")
    cfg = write_yaml(tmpdirs("cfg"), mp, plugin, transport, options)
    if debug:
        os.environ["FRING_LOG"] = "debug"
    try:
        f = spawn(["run", cfg], [mp])
    finally:
        os.environ.pop("FRING_LOG", None)
    ready = f.wait_ready(1, timeout=30)
    assert ready[0].endswith("transport uring)"), ready
    return mp, f


def payload_line(f):
    m = re.search(r"payload: (.*)", f.log())
    assert m, f.log()
    return m.group(1)


def stop_clean(f, mp):
    rc = f.stop(signal.SIGTERM, timeout=30)
    log = f.log()
    assert rc == 0, log
    assert not itg.is_mounted(mp)
    return log


def pool_stats(log):
    m = re.search(r"bufpool: (\d+) requests in pool buffers, pool full (\d+) "
                  r"times \((\d+) buffers per qid\)", log)
    assert m, log
    return tuple(int(x) for x in m.groups())


def sha(data):
    return hashlib.sha256(data).hexdigest()


def rw(path, data, direct):
    """Write data and read it back (O_DIRECT: page-aligned memory)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | (os.O_DIRECT if direct else 0)
    fd = os.open(path, flags, 0o644)
    try:
        if direct:
            import mmap
            n = (len(data) + 4095) & ~4095
            buf = mmap.mmap(-1, n)
            buf[:len(data)] = data
            os.ftruncate(fd, 0)
            assert os.pwritev(fd, [memoryview(buf)[:n]], 0) == n
            os.ftruncate(fd, len(data))
            buf2 = mmap.mmap(-1, n)
            got = os.preadv(fd, [buf2], 0)
            return bytes(buf2[:got])
        assert os.write(fd, data) == len(data)
        os.fsync(fd)
    finally:
        os.close(fd)
    with open(path, "rb") as f:
        return f.read()


# ---- the pool is in use, and data goes through it ----

@pytest.mark.parametrize("plugin", ["memfs", "passthrough"])
@pytest.mark.parametrize("direct", [False, True], ids=["buffered", "odirect"])
def test_checksums_through_the_pool(spawn, tmpdirs, plugin, direct):
    options = {"source": tmpdirs("src")} if plugin == "passthrough" else None
    mp, f = serve(spawn, tmpdirs, "{ mode: uring, queue_depth: 16, "
                  "bufpool: { size: 4MiB } }", plugin, options)
    assert payload_line(f) == ("bufpool, registered, 4 x 1 MiB per queue, "
                               "16 entries per queue")
    for size in (4096, 65536, MIB - 1, MIB, 3 * MIB + 4096):
        data = os.urandom(size)
        got = rw(os.path.join(mp, "f%d" % size), data, direct)
        assert sha(got) == sha(data), size
        if options:  # what passthrough wrote is on the backing file
            with open(os.path.join(options["source"], "f%d" % size), "rb") as b:
                assert sha(b.read()) == sha(data)
    log = stop_clean(f, mp)
    hits, _, bufs = pool_stats(log)
    assert bufs == 4 and hits > 0
    # fring never sent a command the registered pool's rule refuses.
    assert "failed: Invalid argument" not in log, log
    # READ and WRITE went over the ring, so through pool buffers.
    assert re.search(r"\b(\d+) requests over the ring", log)


def test_registered_off_and_bufpool_off_same_kernel(spawn, tmpdirs):
    data = os.urandom(2 * MIB + 17)
    mp, f = serve(spawn, tmpdirs, "{ mode: uring, bufpool: { size: 2MiB, "
                  "registered: false } }")
    assert payload_line(f) == ("bufpool, not registered, 2 x 1 MiB per queue, "
                               "8 entries per queue")
    assert sha(rw(os.path.join(mp, "a"), data, True)) == sha(data)
    assert pool_stats(stop_clean(f, mp))[0] > 0

    mp, f = serve(spawn, tmpdirs, "{ mode: uring, bufpool: off }")
    assert payload_line(f) == ("per-entry buffers (transport.bufpool off), "
                               "8 x 1 MiB per queue")
    assert sha(rw(os.path.join(mp, "a"), data, True)) == sha(data)
    assert "bufpool:" not in stop_clean(f, mp).split("payload:")[1]


def test_default_is_a_registered_pool(spawn, tmpdirs):
    mp, f = serve(spawn, tmpdirs, "{ mode: uring }")
    assert payload_line(f) == ("bufpool, registered, 8 x 1 MiB per queue, "
                               "8 entries per queue")
    stop_clean(f, mp)


def test_size_that_holds_no_buffer_is_a_config_error(tmpdirs):
    cfg = write_yaml(tmpdirs("cfg"), tmpdirs("mnt"), "memfs",
                     "{ bufpool: { size: 512KiB } }")
    r = itg.run_fring("check", cfg)
    assert r.returncode == 1
    assert re.search(r"fring\.yaml:\d+:\d+: transport\.bufpool\.size must be "
                     r"a size 1MiB\.\.1GiB .*at least one 1MiB buffer", r.stderr), r.stderr


# ---- a pool smaller than the queue ----

def parallel(n, fn):
    errors, threads = [], []

    def run(i):
        try:
            fn(i)
        except BaseException as e:  # reported below
            errors.append(repr(e))

    for i in range(n):
        threads.append(threading.Thread(target=run, args=(i,)))
        threads[-1].start()
    for t in threads:
        t.join(120)
        assert not t.is_alive(), "a client hung"
    assert not errors, errors


def test_pool_smaller_than_queue_under_32_readers(spawn, tmpdirs):
    """passthrough's reads are READ_FIXED into the pool buffer, so many
    requests hold buffers at once (memfs answers each on the queue thread
    before the next one arrives). FRING_URING_NO_INLINE keeps them
    asynchronous on the guest's tmpfs too, where they would be copied
    inline."""
    os.environ["FRING_URING_NO_INLINE"] = "1"
    try:
        # zero_copy off: zero-copied READs take no pool buffer.
        mp, f = serve(spawn, tmpdirs, "{ mode: uring, queue_depth: 32, "
                      "bufpool: { size: 2MiB }, zero_copy: off }", "passthrough",
                      {"source": tmpdirs("src")})
    finally:
        os.environ.pop("FRING_URING_NO_INLINE")
    data = os.urandom(4 * MIB)
    with open(os.path.join(mp, "big"), "wb") as w:
        w.write(data)
    digest = sha(data)

    def reader(i):
        fd = os.open(os.path.join(mp, "big"), os.O_RDONLY | os.O_DIRECT)
        import mmap
        buf = mmap.mmap(-1, MIB)
        try:
            for _ in range(3):
                h = hashlib.sha256()
                for off in range(0, len(data), MIB):
                    n = os.preadv(fd, [buf], off)
                    h.update(buf[:n])
                assert h.hexdigest() == digest
        finally:
            os.close(fd)

    parallel(32, reader)
    hits, full, bufs = pool_stats(stop_clean(f, mp))
    assert bufs == 2
    assert full > 0, "32 readers never used the whole 2-buffer pool"


def test_payloadless_requests_while_the_pool_is_full(spawn, tmpdirs):
    """One buffer per queue, kept busy by 1 MiB readers, while stat,
    a 10,000-entry readdir and unlinks go on: none fails or hangs."""
    mp, f = serve(spawn, tmpdirs, "{ mode: uring, queue_depth: 16, "
                  "bufpool: { size: 1MiB } }")
    d = os.path.join(mp, "d")
    os.mkdir(d)
    for i in range(10000):
        os.close(os.open(os.path.join(d, "%05d" % i), os.O_CREAT | os.O_WRONLY, 0o644))
    with open(os.path.join(mp, "big"), "wb") as w:
        w.write(os.urandom(8 * MIB))
    stop = threading.Event()

    def reader(i):
        import mmap
        buf = mmap.mmap(-1, MIB)
        fd = os.open(os.path.join(mp, "big"), os.O_RDONLY | os.O_DIRECT)
        try:
            while not stop.is_set():
                for off in range(0, 8 * MIB, MIB):
                    assert os.preadv(fd, [buf], off) == MIB
        finally:
            os.close(fd)

    readers = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for t in readers:
        t.start()
    try:
        time.sleep(0.5)
        names = os.listdir(d)
        assert len(names) == 10000
        for n in names[:500]:
            os.stat(os.path.join(d, n))
        for n in names[:2000]:
            os.unlink(os.path.join(d, n))
        assert len(os.listdir(d)) == 8000
    finally:
        stop.set()
        for t in readers:
            t.join(60)
            assert not t.is_alive(), "a reader hung"
    hits, full, bufs = pool_stats(stop_clean(f, mp))
    assert bufs == 1 and full > 0


# ---- the registered pool's fixed-buffer rule ----

def test_commit_without_the_pool_index_is_refused_and_aborts(spawn, tmpdirs):
    """FRING_TEST_FIXED_FAULT=commit: qid 0's first COMMIT_AND_FETCH names
    another buf_index. The kernel must answer -EINVAL, and fring must say so
    and abort the connection, so the caller gets an error instead of
    waiting forever."""
    os.environ["FRING_TEST_FIXED_FAULT"] = "commit"
    try:
        mp, f = serve(spawn, tmpdirs, "{ mode: uring, bufpool: on }")
    finally:
        os.environ.pop("FRING_TEST_FIXED_FAULT")
    # Run clients on both CPUs: whichever reaches qid 0 trips the fault.
    results = []

    def client(cpu):
        os.sched_setaffinity(0, {cpu})
        try:
            for i in range(20):
                with open(os.path.join(mp, "x%d-%d" % (cpu, i)), "wb") as w:
                    w.write(b"x" * 4096)
            results.append("ok")
        except OSError as e:
            results.append(e.errno)

    t = [threading.Thread(target=client, args=(c,)) for c in sorted(os.sched_getaffinity(0))]
    for x in t:
        x.start()
    for x in t:
        x.join(60)
        assert not x.is_alive(), "a client hung on the refused commit"
    log = f.log()
    assert "FRING_TEST_FIXED_FAULT=commit" in log, log
    assert re.search(r"COMMIT_AND_FETCH \(qid 0, commit_id \d+\) failed: "
                     r"Invalid argument", log), log
    assert "a commit was rejected: aborting the FUSE connection" in log, log
    assert errno.ENOTCONN in results or errno.ECONNABORTED in results, results
    f.stop(signal.SIGTERM, timeout=30)


def test_register_without_the_flag_falls_back_to_devfuse(spawn, tmpdirs):
    """FRING_TEST_FIXED_FAULT=register: qid 0's first REGISTER lacks
    IORING_URING_CMD_FIXED. The kernel refuses it (-EINVAL) and turns
    io_uring off for the connection; every request then comes over
    /dev/fuse, which fring keeps serving."""
    os.environ["FRING_TEST_FIXED_FAULT"] = "register"
    try:
        mp, f = serve(spawn, tmpdirs, "{ mode: uring, bufpool: on }")
    finally:
        os.environ.pop("FRING_TEST_FIXED_FAULT")
    data = os.urandom(MIB + 5)
    with open(os.path.join(mp, "a"), "wb") as w:
        w.write(data)
    with open(os.path.join(mp, "a"), "rb") as r:
        assert sha(r.read()) == sha(data)
    log = stop_clean(f, mp)
    assert re.search(r"REGISTER of qid 0 failed: Invalid argument; the kernel "
                     r"serves /dev/fuse instead", log), log
    assert re.search(r"uring: 0 requests over the ring", log), log


def test_refused_add_bufpool_falls_back_to_per_entry_buffers(spawn, tmpdirs):
    """FRING_TEST_FIXED_FAULT=addpool: qid 0's ADD_BUFPOOL is refused
    (-EINVAL). That queue registers per-entry buffers carved from its pool
    (as many entries as buffers); the other keeps its pool; io_uring stays."""
    os.environ["FRING_TEST_FIXED_FAULT"] = "addpool"
    try:
        # zero_copy off: a zero-copy queue cannot serve without its pool
        # (test_zero_copy.py has that case).
        mp, f = serve(spawn, tmpdirs, "{ mode: uring, queue_depth: 8, "
                      "bufpool: { size: 4MiB }, zero_copy: off }")
    finally:
        os.environ.pop("FRING_TEST_FIXED_FAULT")
    data = os.urandom(3 * MIB + 1)
    for cpu in sorted(os.sched_getaffinity(0)):  # reach both queues
        os.sched_setaffinity(0, {cpu})
        got = rw(os.path.join(mp, "c%d" % cpu), data, True)
        assert sha(got) == sha(data)
    os.sched_setaffinity(0, set(range(os.cpu_count())))
    log = stop_clean(f, mp)
    assert re.search(r"qid 0: ADD_BUFPOOL failed: Invalid argument; serving it "
                     r"with 4 per-entry buffers from its pool instead", log), log
    m = re.search(r"uring: (\d+) requests over the ring \(qid 0: (\d+), "
                  r"qid 1: (\d+)\)", log)
    assert m and int(m.group(2)) > 0 and int(m.group(3)) > 0, log


# ---- stopping and killing with buffers lent ----

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill9"])
def test_stop_with_pool_buffers_in_use(spawn, tmpdirs, sig):
    """Readers of faulty's "lost" file hold every pool buffer (the plugin
    never answers). SIGTERM (to fring) or kill -9 (of the serving process)
    must leave no caller hanging: each gets ENOTCONN (or another error)."""
    mp = tmpdirs("mnt")
    cfg = write_yaml(tmpdirs("cfg"), mp, FAULTY, "{ mode: uring, queue_depth: 8, "
                     "bufpool: { size: 2MiB } }")
    f = spawn(["run", cfg], [mp])
    f.wait_ready(1, timeout=30)
    pid = itg.serving_pid(f.proc.pid)
    errs = []

    def reader(i):
        try:
            with open(os.path.join(mp, "lost"), "rb") as r:
                r.read(4096)
            errs.append("read returned")
        except OSError as e:
            errs.append(e.errno)

    t = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(6)]
    for x in t:
        x.start()
    deadline = time.monotonic() + 20
    while f.log().count("faulty: lost") < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert f.log().count("faulty: lost") >= 2, f.log()
    if sig == signal.SIGKILL:
        os.kill(pid, signal.SIGKILL)
        rc = f.proc.wait(30)
        assert rc == 1
    else:
        rc = f.stop(signal.SIGTERM, timeout=30)
        assert rc is not None, "fring did not exit on SIGTERM"
    for x in t:
        x.join(30)
        assert not x.is_alive(), "a reader hung after the server stopped"
    # The kernel ends them with the connection: ENOTCONN / ECONNABORTED,
    # ECANCELED for those its ring teardown cancelled, EIO from fring.
    assert errs and all(e in (errno.ENOTCONN, errno.ECONNABORTED, errno.EIO,
                              errno.ECANCELED, errno.EINTR) for e in errs), errs
