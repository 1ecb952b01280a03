# SPDX-License-Identifier: MIT
"""Faults, through real mounts of the `faulty` fixture plugin
(tests/fixtures/faulty): a plugin that replies twice, replies too much,
replies an errno out of range, a reply of the wrong kind, or never (or
too late) answers an interrupted request costs the caller a valid result,
EINTR or EIO (never a hang), leaves a log line naming the fault, and the
mount keeps serving. A
plugin that crashes takes its serving process down: fring exits 1 saying so
and the mount is detectably dead. SIGTERM during heavy I/O unmounts within
2 s without losing acknowledged data; running out of memory for buffers
fails the mount at start, never mid-request."""

import errno
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from conftest import (FRING, Fring, force_unmount, fring_env, is_mounted,
                      remove_tempdir, serving_pid)

FRING_PATH = shutil.which(FRING) or FRING
FIXTURE_DIR = os.environ.get("FRING_FIXTURE_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(FRING_PATH))), "tests", "fixtures")
FAULTY = os.path.join(FIXTURE_DIR, "faulty.so")
STOP_BUDGET = 2.0          # SIGTERM -> exited and unmounted
INTERRUPT_DEADLINE = 1.0   # the runtime answers an interrupted request itself
LATE = 1.5                 # faulty's "late" replies this long after the interrupt
CLIENT_TIMEOUT = 8         # a client slower than this is hung


def transports():
    """devfuse always; uring when this kernel and build serve it."""
    found = ["devfuse"]
    mp = tempfile.mkdtemp(prefix="fring-faults-probe-")
    f = Fring(["mount", "-t", "uring", "memfs", mp], [mp])
    try:
        if "transport uring" in " ".join(f.wait_ready(1)):
            found.append("uring")
    except AssertionError:
        pass  # exited: this kernel or build has no io_uring transport
    finally:
        f.stop()
        f.cleanup()
        remove_tempdir(mp)
    return found


TRANSPORTS = transports()


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    return request.param


SERVERS = []  # serving processes (the supervisor's children) of this test


@pytest.fixture(autouse=True)
def no_orphan_servers():
    """After the spawn fixture killed what is left of a test: a serving
    process must not outlive its supervisor (it follows it with SIGTERM)."""
    yield
    left = []
    for pid in SERVERS:
        deadline = time.monotonic() + 3
        while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        try:  # still ours: not a zombie, and running fring (no pid reuse)
            with open("/proc/%d/stat" % pid) as fh:
                alive = fh.read().split()[2] != "Z"
            with open("/proc/%d/cmdline" % pid, "rb") as fh:
                alive = alive and fh.read().split(b"\0")[0] == FRING_PATH.encode()
        except OSError:
            alive = False
        if alive:
            os.kill(pid, signal.SIGKILL)
            left.append(pid)
    SERVERS.clear()
    assert not left, "serving process(es) %s outlived fring" % left


def start(spawn, args, mp):
    f = spawn(args, [mp])
    f.wait_ready(1)
    child = serving_pid(f.proc.pid)
    if child != f.proc.pid:
        SERVERS.append(child)
    return f


def stop_cleanly(f, mp):
    """SIGTERM: exit 0 within the stop budget and nothing left mounted."""
    t = time.monotonic()
    rc = f.stop(signal.SIGTERM)
    took = time.monotonic() - t
    assert rc == 0, "exit code %s after SIGTERM; stderr:\n%s" % (rc, f.log())
    assert took <= STOP_BUDGET, "stop took %.2fs; stderr:\n%s" % (took, f.log())
    assert not is_mounted(mp)


def wait_log(f, pattern, timeout=3):
    """The first stderr line matching `pattern` (a log line is written
    around the reply, so give it a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        for line in f.log().splitlines():
            if re.search(pattern, line):
                return line
        if time.monotonic() > deadline:
            raise AssertionError("no log line matching %r; stderr:\n%s"
                                 % (pattern, f.log()))
        time.sleep(0.05)


# A client in its own process, so a hang cannot take pytest with it: read
# one file, optionally with SIGALRM armed to interrupt the read. read(2)
# through ctypes, since os.read would retry after EINTR.
CLIENT = r"""
import ctypes, json, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
signal.signal(signal.SIGALRM, lambda sig, frame: None)  # no SA_RESTART
path, alarm = sys.argv[1], float(sys.argv[2])
out = {}
try:
    fd = os.open(path, os.O_RDONLY)
    buf = ctypes.create_string_buffer(65536)
    t = time.monotonic()
    if alarm:
        signal.setitimer(signal.ITIMER_REAL, alarm)
    n = libc.read(fd, buf, len(buf))
    out["secs"] = time.monotonic() - t
    if n < 0:
        out["errno"] = ctypes.get_errno()
    else:
        out["data"] = buf.raw[:n].decode()
except OSError as e:
    out["errno"] = e.errno
print(json.dumps(out))
"""


def client_start(mp, name, alarm=0.0, op=CLIENT):
    path = os.path.join(mp, name) if name else mp
    return subprocess.Popen([sys.executable, "-c", op, path, str(alarm)],
                            stdout=subprocess.PIPE, text=True)


def client_result(p, mp):
    try:
        out, _ = p.communicate(timeout=CLIENT_TIMEOUT)
    except subprocess.TimeoutExpired:
        force_unmount(mp)  # the abort is what frees a caller stuck in FUSE
        p.kill()
        p.communicate()
        pytest.fail("a client of %s hung for %ds" % (p.args[3], CLIENT_TIMEOUT))
    return json.loads(out)


def client(mp, name, alarm=0.0, op=CLIENT):
    """Run `op` on mp/name (name "" for mp itself); its JSON result."""
    return client_result(client_start(mp, name, alarm, op), mp)


def faulty_mount(spawn, tmpdirs, transport):
    mp = tmpdirs("mnt")
    return mp, start(spawn, ["mount", FAULTY, mp, "-t", transport], mp)


def assert_serves(mp):
    got = client(mp, "ok")
    got.pop("secs", None)
    assert got == {"data": "content of ok\n"}


# name: (what the client gets, a log line naming the fault)
BAD_REPLIES = {
    "twice": ({"data": "content of twice\n"}, r"plugin replied twice to READ"),
    "toomuch": ({"errno": errno.EIO}, r"answered READ .* with reply_data\(len > requested size\)"),
    "wrongkind": ({"errno": errno.EIO}, r"answered READ .* with reply_entry"),
    "errpos": ({"errno": errno.EIO}, r"plugin replied 5 to READ .*not a negative errno"),
    "err600": ({"errno": errno.EIO}, r"plugin replied -600 to READ .*not a negative errno"),
    "err512": ({"errno": errno.EIO}, r"plugin replied -512 to READ .*not a negative errno"),
}


@pytest.mark.parametrize("name", sorted(BAD_REPLIES))
def test_bad_reply_is_caught(spawn, tmpdirs, transport, name):
    expect, log = BAD_REPLIES[name]
    mp, f = faulty_mount(spawn, tmpdirs, transport)
    got = client(mp, name)
    got.pop("secs", None)
    assert got == expect, f.log()
    wait_log(f, log)
    assert_serves(mp)
    assert_serves(mp)  # not a one-off: the worker/entry is reusable
    stop_cleanly(f, mp)


def test_each_distinct_bad_errno_is_logged(spawn, tmpdirs, transport):
    """Three different bad errnos within a second: each gets its line (a
    5 s rate limit used to keep only the first), a repeat none."""
    mp, f = faulty_mount(spawn, tmpdirs, transport)
    for name in ("errpos", "err600", "err512", "err600"):
        assert client(mp, name)["errno"] == errno.EIO, f.log()
    for value in ("5", "-600", "-512"):
        wait_log(f, r"plugin replied %s to READ .*not a negative errno" % value)
    stop_cleanly(f, mp)
    assert len(re.findall(r"plugin replied -600 to READ", f.log())) == 1, f.log()


def test_interrupted_request_answered_by_plugin(spawn, tmpdirs, transport):
    mp, f = faulty_mount(spawn, tmpdirs, transport)
    got = client(mp, "hang", alarm=0.3)
    assert got["errno"] == errno.EINTR, (got, f.log())
    assert got["secs"] < 0.3 + 1.0, got
    wait_log(f, r"faulty: hang: interrupted, replying -EINTR")
    assert_serves(mp)
    stop_cleanly(f, mp)


def test_interrupted_request_never_answered(spawn, tmpdirs, transport):
    """The kernel keeps a caller whose request reached the server waiting
    (even against SIGKILL) until the server answers. When the plugin
    ignores the INTERRUPT, the runtime answers EINTR itself after its
    deadline, keeps the request for the plugin and drops its late reply.
    On io_uring a request can only be answered by committing its ring
    entry, which hands the plugin's arguments back to the kernel: there the
    runtime logs it, the mount serves on with its other entries, and the
    caller is released when the mount stops."""
    mp, f = faulty_mount(spawn, tmpdirs, transport)
    p = client_start(mp, "lost", alarm=0.3)
    wait_log(f, r"faulty: lost: holding the READ forever")
    if transport == "uring":
        wait_log(f, r"plugin did not answer the interrupted request \d+ within "
                 r"\d+ ms; io_uring requests can only be answered by the plugin",
                 timeout=0.3 + INTERRUPT_DEADLINE + 2)
        assert p.poll() is None  # still waiting, as the kernel makes it
        assert_serves(mp)
        stop_cleanly(f, mp)
        got = client_result(p, mp)
        assert got["errno"] in (errno.ECONNABORTED, errno.ENOTCONN), got
        return
    got = client_result(p, mp)
    assert got["errno"] == errno.EINTR, (got, f.log())
    assert 0.3 + INTERRUPT_DEADLINE * 0.8 <= got["secs"] < 0.3 + INTERRUPT_DEADLINE + 1.5, got
    wait_log(f, r"plugin did not answer the interrupted READ .*answered EINTR")
    assert_serves(mp)
    # The plugin still holds the request: stop must not wait for it.
    stop_cleanly(f, mp)


def test_late_reply_after_the_deadline(spawn, tmpdirs, transport):
    """The plugin answers 1.5 s after the interrupt. On /dev/fuse the
    runtime answered EINTR at its 1 s deadline: the late reply gets
    -EALREADY and finishes the request. On io_uring it is the answer."""
    mp, f = faulty_mount(spawn, tmpdirs, transport)
    got = client(mp, "late", alarm=0.3)
    if transport == "uring":
        assert got["data"] == "content of late\n", (got, f.log())
        assert got["secs"] >= 0.3 + LATE * 0.9, got
        wait_log(f, r"faulty: late: replied 16 bytes 1500 ms after the interrupt: 0$")
    else:
        assert got["errno"] == errno.EINTR, (got, f.log())
        assert got["secs"] < 0.3 + INTERRUPT_DEADLINE + 1.0, got
        wait_log(f, r"faulty: late: replied 16 bytes 1500 ms after the interrupt: %d$"
                 % -errno.EALREADY)
    assert_serves(mp)
    stop_cleanly(f, mp)


def write_yaml(tmpdirs, mp, options, transport, extra=""):
    path = os.path.join(tmpdirs("cfg"), "fring.yaml")
    with open(path, "w") as fh:
        fh.write("mounts:\n  - mountpoint: %s\n    plugin: %s\n"
                 "    options: { %s }\n    transport: { mode: %s%s }\n"
                 % (mp, FAULTY, options, transport, extra))
    return path


# Read "stale", then "slow" from `n` threads at once, all on CPU 0.
STALE_CLIENT = r"""
import json, os, sys, threading
os.sched_setaffinity(0, {0})
mp, n = sys.argv[1], int(sys.argv[2])
def rd(name):
    try:
        with open(os.path.join(mp, name), "rb") as fh:
            return fh.read().decode()
    except OSError as e:
        return e.errno
out = {"stale": rd("stale"), "slow": [None] * n}
def slow(i):
    out["slow"][i] = rd("slow")
ts = [threading.Thread(target=slow, args=(i,)) for i in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(json.dumps(out))
"""


def test_reply_through_a_stale_handle_is_refused(spawn, tmpdirs, transport):
    """The plugin answers "stale", keeps the handle and replies again
    200 ms later, when the request's memory holds a "slow" READ the plugin
    is still working on. The handle's generation no longer matches: the
    second reply gets -EALREADY and the slow READ its own data, not EIO.
    Over io_uring one ring entry per queue and a client on CPU 0 make the
    reuse certain; over /dev/fuse every worker reads one of the 4 slow
    READs, the one that answered "stale" into the same buffer."""
    mp = tmpdirs("mnt")
    n = 1 if transport == "uring" else 4
    cfg = write_yaml(tmpdirs, mp, "", transport,
                     ", queue_depth: 1" if transport == "uring" else "")
    f = start(spawn, ["run", cfg], mp)
    p = subprocess.run([sys.executable, "-c", STALE_CLIENT, mp, str(n)],
                       capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
    got = json.loads(p.stdout)
    assert got == {"stale": "content of stale\n",
                   "slow": ["content of slow\n"] * n}, (got, f.log())
    wait_log(f, r"faulty: stale: second reply 200 ms after the first: %d$"
             % -errno.EALREADY)
    if transport == "uring":
        wait_log(f, r"plugin used the handle of a request it had answered "
                 r"\(the slot holds a newer request\); refused")
    assert_serves(mp)
    stop_cleanly(f, mp)


STAT = r"""
import json, os, sys
try:
    os.stat(sys.argv[1])
    print(json.dumps({"data": "ok"}))
except OSError as e:
    print(json.dumps({"errno": e.errno}))
"""


@pytest.mark.parametrize("how,signame", [("abort", "Aborted"), ("segv", "Segmentation fault")])
def test_plugin_crash_kills_the_server_and_leaves_a_dead_mount(spawn, tmpdirs, transport,
                                                               how, signame):
    mp = tmpdirs("mnt")
    f = start(spawn, ["run", write_yaml(tmpdirs, mp, "crash: " + how, transport)], mp)
    try:
        assert_serves(mp)
        got = client(mp, "crash", op=STAT)
        assert got.get("errno") in (errno.ECONNABORTED, errno.ENOTCONN), got
        rc = f.proc.wait(5)
        log = f.log()
        assert rc == 1, log
        assert re.search(r"^fring: the serving process \(pid \d+\) died: %s$" % signame,
                         log, re.M), log
        assert "faulty: crash: " in log  # the plugin's last words came first
        assert "aborted the connection of %s" % mp in log
        assert "fusermount3 -u %s" % mp in log
        # Detectably dead: ENOTCONN at once, not a hang.
        assert client(mp, "", op=STAT) == {"errno": errno.ENOTCONN}
    finally:
        force_unmount(mp)
    assert not is_mounted(mp)


# Writes files of random data through the mount, fsync'ing each, and
# reports each file once fsync succeeded ("synced"), or what write(2) had
# acknowledged when the mount went away ("partial"). Paths are opened
# relative to a directory fd, so nothing lands on the bare mountpoint once
# it is unmounted.
WRITER = r"""
import hashlib, json, os, random, sys
mp, wid = sys.argv[1], int(sys.argv[2])
CHUNK, CHUNKS = 128 << 10, 16
rnd = random.Random(wid)
dfd = os.open(mp, os.O_RDONLY | os.O_DIRECTORY)
i = 0
while True:
    name, acked, h = "w%d-%d" % (wid, i), 0, hashlib.sha256()
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dfd)
    except OSError as e:
        print(json.dumps({"stopped": e.errno}), flush=True)
        break
    try:
        for _ in range(CHUNKS):
            buf = rnd.randbytes(CHUNK)
            while buf:
                n = os.write(fd, buf)
                h.update(buf[:n])
                acked += n
                buf = buf[n:]
        os.fsync(fd)
    except OSError as e:
        print(json.dumps({"partial": name, "acked": acked, "sha": h.hexdigest(),
                          "errno": e.errno}), flush=True)
        break
    print(json.dumps({"synced": name, "size": acked, "sha": h.hexdigest()}), flush=True)
    try:
        os.close(fd)
    except OSError as e:
        print(json.dumps({"stopped": e.errno}), flush=True)
        break
    i += 1
"""


def collect(proc, records):
    for line in proc.stdout:
        records.append(json.loads(line))


def sha_prefix(path, n):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read(n)).hexdigest()


def test_sigterm_during_heavy_io(spawn, tmpdirs, transport):
    src, mp = tmpdirs("src"), tmpdirs("mnt")
    f = start(spawn, ["mount", "passthrough", mp, "-o", "source=" + src,
                      "-t", transport], mp)
    records, writers, readers = [], [], []
    try:
        for wid in range(3):
            p = subprocess.Popen([sys.executable, "-c", WRITER, mp, str(wid)],
                                 stdout=subprocess.PIPE, text=True)
            writers.append(p)
            t = threading.Thread(target=collect, args=(p, records), daemon=True)
            t.start()
            readers.append(t)
        deadline = time.monotonic() + 20
        while sum("synced" in r for r in records) < 3:
            assert time.monotonic() < deadline, "writers too slow: %s" % records
            assert all(p.poll() is None for p in writers), records
            time.sleep(0.02)
        time.sleep(0.3)  # mid-file, mid-write

        t0 = time.monotonic()
        f.proc.send_signal(signal.SIGTERM)
        rc = f.proc.wait(10)
        took = time.monotonic() - t0
        mounted = is_mounted(mp)
        for p in writers:
            try:
                p.wait(CLIENT_TIMEOUT)
            except subprocess.TimeoutExpired:
                force_unmount(mp)
                pytest.fail("a writer is still blocked after fring exited")
        for t in readers:
            t.join(5)
    finally:
        for p in writers:
            if p.poll() is None:
                p.kill()
                p.wait()

    log = f.log()
    assert rc == 0, log
    assert took <= STOP_BUDGET, "SIGTERM to exit took %.2fs; stderr:\n%s" % (took, log)
    assert not mounted
    synced = [r for r in records if "synced" in r]
    partial = [r for r in records if "partial" in r]
    assert len(synced) >= 3 and len(partial) + sum("stopped" in r for r in records) == 3, records
    for r in synced:  # fsync returned success: the data is on the backing store
        path = os.path.join(src, r["synced"])
        assert os.path.getsize(path) == r["size"], r
        assert sha_prefix(path, r["size"]) == r["sha"], r
    for r in partial:  # every byte write(2) acknowledged reached the source
        path = os.path.join(src, r["partial"])
        assert os.path.getsize(path) >= r["acked"], r
        assert sha_prefix(path, r["acked"]) == r["sha"], r
        assert r["errno"] in (errno.ENOTCONN, errno.ECONNABORTED, errno.ENODEV), r


# AddressSanitizer reserves terabytes of shadow address space at start, so
# an address-space limit kills a sanitizer build before fring runs.
NO_AS_LIMIT = pytest.mark.skipif("ASAN_OPTIONS" in os.environ,
                                 reason="prlimit --as cannot run an ASan build")


@NO_AS_LIMIT
@pytest.mark.skipif("uring" not in TRANSPORTS, reason="no io_uring transport here")
def test_uring_buffers_out_of_memory_fail_the_mount_at_start(tmpdirs):
    """queue_depth 4096 wants about 4 GiB of ring buffers per queue; with a
    1 GiB address-space limit the mount fails at start, naming the cause."""
    mp = tmpdirs("mnt")
    path = os.path.join(tmpdirs("cfg"), "fring.yaml")
    with open(path, "w") as fh:
        fh.write("mounts:\n  - mountpoint: %s\n    plugin: memfs\n"
                 "    transport: { mode: uring, queue_depth: 4096 }\n" % mp)
    r = subprocess.run(["prlimit", "--as=%d" % (1 << 30), FRING_PATH, "run", path],
                       capture_output=True, text=True, timeout=30, env=fring_env())
    assert r.returncode == 1, r
    assert r.stdout == ""
    assert re.search(r"^fring: .*%s.*(out of memory|Cannot allocate memory)" % re.escape(mp),
                     r.stderr, re.M), r.stderr
    assert not is_mounted(mp)


class Limited(Fring):
    """A Fring under an address-space limit (prlimit --as)."""

    def __init__(self, limit_bytes, args, mountpoints):
        self.mountpoints = list(mountpoints)
        self.stderr = tempfile.TemporaryFile()
        env = dict(fring_env(), FRING_LOG="warn")  # errors and warnings only
        self.proc = subprocess.Popen(["prlimit", "--as=%d" % limit_bytes, FRING_PATH,
                                      *args], stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env)
        self.ready = []


@NO_AS_LIMIT
def test_devfuse_memory_limits_fail_at_start_or_serve_fully(tmpdirs):
    """Under address-space limits from too small to enough, fring either
    fails at start (exit 1, one line, nothing mounted) or mounts with every
    request buffer it needs: reads work and nothing runs out later. A
    read-only passthrough mount, so the plugin itself allocates nothing."""
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    with open(os.path.join(src, "f"), "w") as fh:
        fh.write("some data\n")
    outcomes = set()
    for mib in range(24, 72, 2):
        f = Limited(mib << 20, ["mount", "-t", "devfuse", "passthrough", mp,
                                "-o", "source=" + src], [mp])
        try:
            try:
                f.wait_ready(1)
            except AssertionError:
                rc, log = f.proc.wait(10), f.log()
                assert rc == 1, (mib, log)
                assert len(log.splitlines()) == 1 and log.startswith("fring: "), (mib, log)
                assert not is_mounted(mp), mib
                outcomes.add("failed")
                continue
            readers = [client_start(mp, "f") for _ in range(4)]
            for p in readers:
                got = client_result(p, mp)
                got.pop("secs", None)
                assert got == {"data": "some data\n"}, (mib, got, f.log())
            assert f.stop() == 0, (mib, f.log())
            assert not re.search(r"out of memory|Cannot allocate", f.log()), (mib, f.log())
            assert not is_mounted(mp)
            outcomes.add("served")
        finally:
            f.cleanup()
    assert outcomes == {"failed", "served"}, outcomes  # the range spans both


# Writes 8 MiB of random data, does not fsync or close, reports, waits.
IDLE_WRITER = r"""
import hashlib, json, os, random, sys, time
data = random.Random(7).randbytes(8 << 20)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
view = memoryview(data)
while view:
    view = view[os.write(fd, view):]
print(json.dumps({"sha": hashlib.sha256(data).hexdigest()}), flush=True)
time.sleep(60)
"""


def test_sigterm_flushes_the_writeback_cache(spawn, tmpdirs, transport):
    """With the kernel's writeback cache a write(2) is acknowledged from
    the page cache. A file written and left open (no fsync, no close) is
    still only dirty pages when SIGTERM comes: stop writes them back to
    the backing store before it unmounts."""
    src, mp = tmpdirs("src"), tmpdirs("mnt")
    f = start(spawn, ["mount", "passthrough", mp, "-o", "source=" + src,
                      "-o", "writeback=true", "-t", transport], mp)
    w = subprocess.Popen([sys.executable, "-c", IDLE_WRITER,
                          os.path.join(mp, "dirty")], stdout=subprocess.PIPE,
                         text=True)
    try:
        sha = json.loads(w.stdout.readline())["sha"]
        t0 = time.monotonic()
        rc = f.stop(signal.SIGTERM)
        took = time.monotonic() - t0
    finally:
        w.kill()
        w.wait()
    assert rc == 0, f.log()
    assert took <= STOP_BUDGET, "stop took %.2fs; stderr:\n%s" % (took, f.log())
    assert not is_mounted(mp)
    path = os.path.join(src, "dirty")
    assert os.path.getsize(path) == 8 << 20, f.log()
    assert sha_prefix(path, 8 << 20) == sha
