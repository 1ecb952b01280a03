# SPDX-License-Identifier: MIT
"""passthrough with `io_threads: N`: READ and WRITE are queued and served
by the plugin's own worker threads, so the runtime answers requests (and
runs req_read_fd / req_write_fd) from threads that are not the request's
queue thread. Concurrent direct and buffered I/O checked against the
backing files, the option's validation, and a stop while the workers are
busy, over both transports."""

import concurrent.futures
import hashlib
import mmap
import os
import random
import signal
import subprocess
import time

import pytest

from conftest import is_mounted, run_fring, serving_pid

TRANSPORTS = ["uring", "devfuse"]
BLOCKS = [4096, 8192, 16384, 65536, 131072, 262144, 524288, 1 << 20]
JOBS = 32
JOBS_TIMEOUT = 120  # seconds; about 3 s here


def io_threads(pid):
    """{tid: (comm, utime + stime ticks)} of the plugin's worker threads."""
    found = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                comm = f.read().strip()
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if comm.startswith("pt-io"):
            # fields[0] is the state (field 3): utime, stime are 14, 15
            found[int(tid)] = (comm, int(fields[11]) + int(fields[12]))
    return found


def sha(data):
    return hashlib.sha256(data).hexdigest()


def file_sha(path):
    with open(path, "rb") as f:
        return sha(f.read())


def job(mp, j, passes=2):
    """One writer, then reader, of its own file: blocks of 4k..1MiB written
    in random order, read back with another block size (half the jobs
    reopen the file every 8 blocks, so RELEASE meets queued I/O); O_DIRECT
    for half the jobs; each pass overwrites the last. Returns (name,
    sha256 of what was written last)."""
    for p in range(passes):
        name, digest = job_pass(mp, j, p)
    return name, digest


def job_pass(mp, j, p):
    bs = BLOCKS[j % len(BLOCKS)]
    direct = (j // len(BLOCKS)) % 2 == 0
    rng = random.Random(j * 100 + p)
    size = max(3 << 20, 4 * bs) + rng.randrange(1, 4096)  # a short tail
    data = rng.randbytes(size)
    name = "job%02d-%s-%d" % (j, "direct" if direct else "buffered", bs)
    path = os.path.join(mp, name)
    extra = os.O_DIRECT if direct else 0

    buf = mmap.mmap(-1, bs)  # page aligned, as O_DIRECT callers use
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | extra, 0o644)
    try:
        offsets = list(range(0, size, bs))
        rng.shuffle(offsets)
        for off in offsets:
            chunk = data[off:off + bs]
            view = memoryview(buf)[:len(chunk)]
            view[:] = chunk
            assert os.pwritev(fd, [view], off) == len(chunk), (name, off)
            view.release()
        os.fsync(fd)
    finally:
        os.close(fd)

    rbs = BLOCKS[(j + 3) % len(BLOCKS)]
    rbuf = mmap.mmap(-1, rbs)
    reopen = j % 2 == 1
    got = bytearray()
    fd = os.open(path, os.O_RDONLY | extra)
    try:
        off, n = 0, 0
        while True:
            if reopen and n and n % 8 == 0:
                os.close(fd)
                fd = os.open(path, os.O_RDONLY | extra)
            k = os.preadv(fd, [rbuf], off)
            if k == 0:
                break
            got += rbuf[:k]
            off += k
            n += 1
    finally:
        os.close(fd)
    assert len(got) == size, (name, len(got), size)
    assert sha(got) == sha(data), "%s: read back differs" % name
    return name, sha(data)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_concurrent_direct_and_buffered_io_on_workers(mount, tmpdirs, transport):
    src = tmpdirs("src")
    mp = mount("passthrough", {"source": src, "io_threads": 4},
               transport=transport)
    before = io_threads(mp.pid)
    assert sorted(c for c, _ in before.values()) == \
        ["pt-io0", "pt-io1", "pt-io2", "pt-io3"], before

    pool = concurrent.futures.ThreadPoolExecutor(JOBS)
    futures = [pool.submit(job, mp, j) for j in range(JOBS)]
    _, late = concurrent.futures.wait(futures, timeout=JOBS_TIMEOUT)
    # A request nobody answers would hold its job forever: fail instead
    # (the fixture's teardown then stops fring, which frees the threads).
    pool.shutdown(wait=not late)
    assert not late, "%d of %d jobs unfinished after %ds" % (
        len(late), JOBS, JOBS_TIMEOUT)
    results = [f.result() for f in futures]

    assert len(results) == JOBS
    for name, digest in results:
        assert file_sha(os.path.join(src, name)) == digest, \
            "%s: backing file differs" % name
    assert sorted(os.listdir(src)) == sorted(n for n, _ in results)
    # The workers did the reads and writes (several thousand requests):
    # they used CPU time, and none of them died.
    after = io_threads(mp.pid)
    assert after.keys() == before.keys(), (before, after)
    assert sum(t for _, t in after.values()) > sum(t for _, t in before.values()), \
        (before, after)


def test_zero_copy_off_and_inline_default(mount, tmpdirs):
    """zero_copy: false and io_threads: 0 (the default: no worker threads,
    I/O on the calling thread) both serve data correctly."""
    for opts in ({"zero_copy": "false", "io_threads": 2}, {"io_threads": 0}, {}):
        src = tmpdirs("src")
        mp = mount("passthrough", dict(opts, source=src))
        want = 2 if opts.get("io_threads") else 0
        assert len(io_threads(mp.pid)) == want, (opts, io_threads(mp.pid))
        name, digest = job(mp, 0)
        assert file_sha(os.path.join(src, name)) == digest
        name, digest = job(mp, 13)
        assert file_sha(os.path.join(src, name)) == digest


BAD_COUNTS = ["65", "-1", "1000", "four", "4.0", " 4", "", "0x4"]


@pytest.mark.parametrize("value", BAD_COUNTS)
def test_io_threads_value_is_validated(tmpdirs, value):
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    reason = ("plugin 'passthrough' rejected option 'io_threads': passthrough: "
              "io_threads: expected a count 0..64, got '%s'" % value)
    r = run_fring("mount", "passthrough", mp, "-o", "source=" + src,
                  "-o", "io_threads=" + value)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "fring: %s\n" % reason)
    assert not is_mounted(mp)
    # From a file: the place of the option, and nothing mounted.
    path = os.path.join(tmpdirs("cfg"), "fring.yaml")
    with open(path, "w") as f:
        f.write("mounts:\n  - mountpoint: %s\n    plugin: passthrough\n"
                "    options:\n      source: %s\n      io_threads: '%s'\n"
                % (mp, src, value))
    for cmd in ("check", "run"):
        r = run_fring(cmd, path)
        assert (r.returncode, r.stdout) == (1, ""), (cmd, r)
        assert r.stderr == "fring: %s:6:7: %s\n" % (path, reason), (cmd, r.stderr)
    assert not is_mounted(mp)


def test_io_threads_bounds_and_zero_copy_value(tmpdirs):
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    for value in ("0", "1", "64"):
        r = run_fring("mount", "passthrough", mp, "-o", "source=" + src,
                      "-o", "io_threads=" + value, "-o", "kernel_passthrough=maybe")
        # io_threads was accepted: the next option is the one refused
        assert "rejected option 'kernel_passthrough'" in r.stderr, (value, r.stderr)
    r = run_fring("mount", "passthrough", mp, "-o", "source=" + src,
                  "-o", "zero_copy=sometimes")
    assert (r.returncode, r.stderr) == (1, (
        "fring: plugin 'passthrough' rejected option 'zero_copy': passthrough: "
        "zero_copy: expected a boolean, got 'sometimes'\n"))
    r = run_fring("plugins", "-v")
    assert "  io_threads: count 0..64: " in r.stdout, r.stdout
    assert "  zero_copy: bool: " in r.stdout, r.stdout
    assert not is_mounted(mp)


CLIENT = r"""
import mmap, os, sys
mode, mp, name, bs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
# Names relative to the mount's root, not its path: once the mount is
# detached the path leads to the directory beneath.
root = os.open(mp, os.O_PATH | os.O_DIRECTORY)
buf = mmap.mmap(-1, bs)
buf[:] = os.urandom(bs)
print("started", flush=True)
try:
    while True:
        if mode == "read":
            fd = os.open(name, os.O_RDONLY | os.O_DIRECT, dir_fd=root)
            off = 0
            while os.preadv(fd, [buf], off):
                off += bs
        else:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC |
                         os.O_DIRECT, 0o644, dir_fd=root)
            for i in range(16):
                os.pwritev(fd, [buf], i * bs)
        os.close(fd)
except OSError as e:
    # The mount went away under us: expected at the stop.
    print("ended", e.errno, flush=True)
    sys.exit(3)
"""


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_sigterm_while_workers_are_busy(spawn, tmpdirs, transport):
    """SIGTERM (to the fring we started, by pid) while 8 clients keep the
    4 workers busy, three times: fring exits 0 promptly and unmounted,
    the clients end instead of hanging, and what was written and synced
    before is intact in the backing files."""
    for rnd in range(3):
        src, mp = tmpdirs("src"), tmpdirs("mnt")
        f = spawn(["mount", "passthrough", mp, "-t", transport,
                   "-o", "source=" + src, "-o", "io_threads=4"], [mp])
        ready = f.wait_ready(1)
        assert ready[0].endswith("transport %s)" % transport), ready
        server = serving_pid(f.proc.pid)
        assert len(io_threads(server)) == 4

        kept = {}
        for i in range(4):
            data = random.Random(rnd * 10 + i).randbytes((1 << 20) + 512 * i)
            with open(os.path.join(mp, "kept%d" % i), "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            kept["kept%d" % i] = sha(data)

        clients = []
        try:
            for i in range(8):
                mode = "read" if i % 2 == 0 else "write"
                name = "kept%d" % (i // 2) if mode == "read" else "busy%d" % i
                clients.append(subprocess.Popen(
                    ["python3", "-c", CLIENT, mode, mp, name,
                     str(BLOCKS[(i * 3) % len(BLOCKS)])],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
            for c in clients:
                assert c.stdout.readline() == "started\n", c.stderr.read()
            time.sleep(0.5 + 0.25 * rnd)
            for c in clients:
                assert c.poll() is None, "client ended early: %s" % c.stderr.read()
            busy = io_threads(server)
            t0 = time.monotonic()
            rc = f.stop(signal.SIGTERM, timeout=15)
            elapsed = time.monotonic() - t0
            # No client hangs on the gone mount.
            ends = [c.wait(15) for c in clients]
        finally:
            for c in clients:
                if c.poll() is None:
                    c.kill()
                    c.wait(10)
                c.stdout.close()
                c.stderr.close()
        log = f.log()
        assert rc == 0, "round %d: exit %s; stderr:\n%s" % (rnd, rc, log)
        assert elapsed < 5.0, "round %d: SIGTERM took %.2fs" % (rnd, elapsed)
        assert not is_mounted(mp)
        assert all(e in (0, 3) for e in ends), (ends, log)
        assert sum(t for _, t in busy.values()) > 0 or transport == "uring", busy
        for name, digest in kept.items():
            assert file_sha(os.path.join(src, name)) == digest, \
                "round %d: %s changed" % (rnd, name)
