# SPDX-License-Identifier: MIT
"""FUSE-over-io_uring on the running kernel: transport selection, every
possible CPU's queue in use, one thread serving several queues, backing I/O
through READ_FIXED/WRITE_FIXED, the fallback and its reason. "Served over
the ring" is asserted from fring's own statistics (the FRING_LOG=debug line
printed at stop), never inferred from timing."""

import mmap
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import (FRING, devfuse_fallback_reason, fring_env, is_mounted, read_text,
                      serving_pid, uring_usable)

STATS_RE = re.compile(
    r"uring: (\d+) requests over the ring \(([^)]*)\), (\d+) commits, "
    r"(\d+) off-thread, (\d+) fixed reads, (\d+) fixed writes, (\d+) I/O "
    r"errors; (\d+) threads, (\d+) entries per qid, ring [^;]*; (\d+) inline "
    r"reads, (\d+) inline writes")
POLLS_RE = re.compile(r"uring: busy-poll: (\d+) polls, (\d+) given up because "
                      r"another task wanted the CPU")


pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not uring_usable(),
    reason="needs root and FUSE io_uring (enable_uring=Y)")


def possible_cpus():
    cpus = []
    for part in read_text("/sys/devices/system/cpu/possible").split(","):
        lo, _, hi = part.partition("-")
        cpus += range(int(lo), int(hi or lo) + 1)
    return cpus


def online_cpus():
    return sorted(os.sched_getaffinity(0))


@pytest.fixture
def debug_log(monkeypatch):
    monkeypatch.setenv("FRING_LOG", "debug")


def start(spawn, mp, args):
    f = spawn(args, [mp])
    ready = f.wait_ready(1)[0]
    return f, ready


def stop_stats(f, mp):
    """SIGTERM, require a clean exit, and parse the ring statistics."""
    rc = f.stop(signal.SIGTERM)
    log = f.log()
    assert rc == 0, log
    assert not is_mounted(mp), log
    m = STATS_RE.search(log)
    if not m:
        return None, log
    per_qid = {int(q): int(n) for q, n in
               re.findall(r"qid (\d+): (\d+)", m.group(2))}
    keys = ("requests", "commits", "remote", "fixed_reads", "fixed_writes",
            "io_errors", "threads", "depth", "inline_reads", "inline_writes")
    vals = [int(m.group(i)) for i in (1, 3, 4, 5, 6, 7, 8, 9, 10, 11)]
    stats = dict(zip(keys, vals))
    stats["per_qid"] = per_qid
    return stats, log


def on_cpu(cpu, code):
    """Run python code pinned to one CPU (the kernel picks the queue by the
    caller's CPU)."""
    subprocess.run([sys.executable, "-c",
                    "import os; os.sched_setaffinity(0, {%d}); %s" % (cpu, code)],
                   check=True, timeout=60)


def exercise(mp):
    data = os.urandom(3 << 20)
    path = os.path.join(mp, "data")
    with open(path, "wb") as f:
        f.write(data)
    for cpu in online_cpus():
        name = os.path.join(mp, "cpu%d" % cpu)
        on_cpu(cpu, "open(%r, 'wb').write(b'x' * 100000); "
                    "assert open(%r, 'rb').read() == b'x' * 100000; "
                    "os.stat(%r); os.listdir(%r)" % (name, name, name, mp))
    buf = bytearray()
    while True:
        chunk = direct_pread(path, 1 << 20, len(buf))
        if not chunk:
            break
        buf += chunk
    assert bytes(buf) == data
    return data


def direct_pread(path, size, offset):
    """O_DIRECT read (every read reaches the server, no page cache) into a
    page-aligned buffer, as O_DIRECT on the backing file requires."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        with mmap.mmap(-1, size) as buf:
            n = os.preadv(fd, [buf], offset)
            return buf[:n]
    finally:
        os.close(fd)


def write_config(tmpdirs, mp, plugin, transport, options=None):
    cfg = os.path.join(tmpdirs("cfg"), "fring.yaml")
    with open(cfg, "w") as f:
        f.write("mounts:\n  - mountpoint: %s\n    plugin: %s\n" % (mp, plugin))
        if options:
            f.write("    options: { %s }\n" % ", ".join(
                "%s: %s" % kv for kv in options.items()))
        f.write("    transport: { %s }\n" % ", ".join(
            "%s: %s" % kv for kv in transport.items()))
    return cfg


def test_uring_mode_serves_every_queue(spawn, tmpdirs, debug_log):
    mp = tmpdirs("mnt")
    f, ready = start(spawn, mp, ["mount", "memfs", mp, "-t", "uring"])
    assert ready.endswith("transport uring)"), ready
    exercise(mp)
    stats, log = stop_stats(f, mp)
    assert stats, log
    assert stats["requests"] > 0
    # Every request received in a ring entry was committed exactly once.
    assert stats["commits"] == stats["requests"], log
    assert stats["threads"] == len(possible_cpus())
    assert sorted(stats["per_qid"]) == list(range(len(possible_cpus())))
    # A caller on CPU n is served through qid n (fs/fuse/dev_uring.c
    # fuse_uring_task_to_queue).
    for cpu in online_cpus():
        assert stats["per_qid"][cpu] > 0, log
    assert "FUSE_INIT failed" not in log


def test_auto_prefers_uring(spawn, tmpdirs):
    mp = tmpdirs("mnt")
    f, ready = start(spawn, mp, ["mount", "memfs", mp, "-t", "auto"])
    assert ready.endswith("transport uring)"), ready
    with open(os.path.join(mp, "f"), "wb") as out:
        out.write(b"auto")
    assert open(os.path.join(mp, "f"), "rb").read() == b"auto"
    assert f.stop() == 0


def test_devfuse_mode_keeps_off_the_ring(spawn, tmpdirs, debug_log):
    mp = tmpdirs("mnt")
    f, ready = start(spawn, mp, ["mount", "memfs", mp, "-t", "devfuse"])
    assert ready.endswith("transport devfuse)"), ready
    exercise(mp)
    stats, log = stop_stats(f, mp)
    assert stats is None, log
    assert "io_uring not used" not in log  # asked for, not a fallback


@pytest.mark.parametrize("poll_us", [None, 0, 200])
def test_busy_poll_budget(spawn, tmpdirs, debug_log, poll_us):
    """transport.poll_us (default 1000) reaches the queue threads, and the
    rings serve with polling on or off; the stop line counts the polls."""
    mp = tmpdirs("mnt")
    transport = {"mode": "uring"}
    if poll_us is not None:
        transport["poll_us"] = poll_us
    f, ready = start(spawn, mp, ["run", write_config(tmpdirs, mp, "memfs",
                                                     transport)])
    assert "transport uring" in ready
    exercise(mp)
    stats, log = stop_stats(f, mp)
    assert stats and stats["commits"] == stats["requests"], log
    assert re.search(r"uring: \d+ qids on \d+ threads, .*, busy-poll %d us$"
                     % (1000 if poll_us is None else poll_us), log, re.M), log
    polls = POLLS_RE.search(log)
    if poll_us == 0:
        assert not polls, log
    else:
        assert polls and int(polls.group(1)) > 0, log


def test_busy_poll_gives_way_to_a_busy_cpu(spawn, tmpdirs, debug_log):
    """A queue thread polls only a CPU with nothing else to run: beside a
    CPU-bound process on its CPU, a poll ends at the first yield that let
    that process run, instead of taking a share of the CPU from it."""
    mp = tmpdirs("mnt")
    cfg = write_config(tmpdirs, mp, "memfs", {"mode": "uring", "placement": "local",
                                               "poll_us": 1000})
    f, ready = start(spawn, mp, ["run", cfg])
    assert "transport uring" in ready
    hog = subprocess.Popen([sys.executable, "-c",
                            "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass"])
    try:
        # unique names: every stat is a LOOKUP on qid 0's thread (CPU 0);
        # the client sleeps 200 us between them, within the budget
        on_cpu(0, "import time\n"
               "for i in range(3000):\n"
               "    try: os.stat(%r + '/n%%d' %% i)\n"
               "    except FileNotFoundError: pass\n"
               "    time.sleep(0.0002)\n" % mp)
    finally:
        hog.kill()
        hog.wait()
    stats, log = stop_stats(f, mp)
    assert stats and stats["per_qid"][0] >= 3000, log
    m = POLLS_RE.search(log)
    assert m, log
    polls, cut = int(m.group(1)), int(m.group(2))
    assert polls >= 300 and cut >= polls // 2, log


def cpu_ticks(pid):
    """utime + stime of every thread of pid, in clock ticks."""
    with open("/proc/%d/stat" % pid) as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_idle_queues_sleep(spawn, tmpdirs):
    """Busy-polling (default 1000 us) ends with the burst: a mount that just
    served a burst and is now idle costs no CPU (a poller that never
    stopped would burn one tick per 10 ms per queue thread)."""
    mp = tmpdirs("mnt")
    f, ready = start(spawn, mp, ["mount", "memfs", mp, "-t", "uring"])
    assert ready.endswith("transport uring)"), ready
    pid = serving_pid(f.proc.pid)
    exercise(mp)
    time.sleep(0.3)
    before = cpu_ticks(pid)
    time.sleep(2)
    used = cpu_ticks(pid) - before
    assert used <= 3, "%d ticks in 2 s idle" % used
    assert f.stop() == 0


def test_one_thread_serves_all_queues(spawn, tmpdirs, debug_log):
    """transport.queues lowers the thread count; every qid still gets
    entries (6.18 waits for all of them) and serves its CPU."""
    mp = tmpdirs("mnt")
    cfg = write_config(tmpdirs, mp, "memfs",
                       {"mode": "uring", "queues": 1, "queue_depth": 2})
    f, ready = start(spawn, mp, ["run", cfg])
    assert "transport uring" in ready
    exercise(mp)
    stats, log = stop_stats(f, mp)
    assert stats, log
    assert stats["threads"] == 1 and stats["depth"] == 2
    for cpu in online_cpus():
        assert stats["per_qid"][cpu] > 0, log
    assert stats["commits"] == stats["requests"]


@pytest.mark.parametrize("inline", [False, True])
def test_passthrough_backing_io_uses_fixed_buffers(spawn, tmpdirs, debug_log,
                                                   monkeypatch, inline):
    """req_read_fd / req_write_fd on a ring request become READ_FIXED /
    WRITE_FIXED into the entry's registered payload buffer; with the inline
    fast path on (the default), I/O that cannot block (tmpfs) is done at
    once with RWF_NOWAIT instead."""
    if not inline:
        monkeypatch.setenv("FRING_URING_NO_INLINE", "1")
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    # The copy path: on Linux 7.3 as root, zero-copy would take these
    # reads and writes (tests/vm/test_zero_copy.py covers that path).
    cfg = write_config(tmpdirs, mp, "passthrough", {"mode": "uring",
                                                    "zero_copy": "off"},
                       {"source": src})
    f, ready = start(spawn, mp, ["run", cfg])
    assert "transport uring" in ready
    data = exercise(mp)
    with open(os.path.join(src, "data"), "rb") as backing:
        assert backing.read() == data
    # A short read at EOF is a short reply, not an error.
    path = os.path.join(mp, "data")
    assert direct_pread(path, 1 << 20, len(data) - 4096) == data[-4096:]
    assert direct_pread(path, 1 << 20, len(data)) == b""
    stats, log = stop_stats(f, mp)
    assert stats, log
    if inline:
        # Reads of cached data never block; whether a write may (block
        # allocation) depends on the backing fs: either path is right.
        assert stats["inline_reads"] > 0, log
        assert stats["inline_writes"] + stats["fixed_writes"] > 0, log
    else:
        assert stats["fixed_reads"] > 0 and stats["fixed_writes"] > 0, log
        assert stats["inline_reads"] == 0 and stats["inline_writes"] == 0, log
    assert stats["io_errors"] == 0
    assert stats["commits"] == stats["requests"]


def _no_memlock(args):
    """Run fring without CAP_IPC_LOCK and with a 64 KiB RLIMIT_MEMLOCK:
    the ring buffers (16 MiB on 2 CPUs) cannot be pinned."""
    return ["setpriv", "--bounding-set", "-ipc_lock", "--inh-caps", "-ipc_lock",
            "prlimit", "--memlock=65536:65536", FRING, *args]


@pytest.mark.skipif(subprocess.run(["which", "setpriv", "prlimit"],
                                   capture_output=True).returncode != 0,
                    reason="needs setpriv and prlimit (util-linux)")
def test_auto_falls_back_with_reason(tmpdirs):
    mp = tmpdirs("mnt")
    proc = subprocess.Popen(_no_memlock(["mount", "memfs", mp, "-t", "auto"]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=fring_env(), text=True)
    reason, err = devfuse_fallback_reason(proc, mp, "still served")
    # Which limit, how much was needed, and what to change.
    # (On Linux 7.3, in tests/vm, the need is a pool.)
    assert re.search(r"the ring buffers pin [\d.]+ MiB \(\d+ queues x (8 entries "
                     r"x 1028 KiB|a pool of 8 x 1024 KiB)\) but RLIMIT_MEMLOCK is "
                     r"0\.1 MiB: lower transport\.(queue_depth|bufpool\.size)"
                     r".*raise the limit \(ulimit -l", reason), reason
    assert "FUSE_INIT failed" not in err


@pytest.mark.skipif(subprocess.run(["which", "setpriv", "prlimit"],
                                   capture_output=True).returncode != 0,
                    reason="needs setpriv and prlimit (util-linux)")
def test_uring_mode_refuses_to_fall_back(tmpdirs):
    mp = tmpdirs("mnt")
    res = subprocess.run(_no_memlock(["mount", "memfs", mp, "-t", "uring"]),
                         capture_output=True, text=True, timeout=30,
                         env=fring_env())
    assert res.returncode != 0
    assert "ready" not in res.stdout
    assert "io_uring unavailable: the ring buffers pin" in res.stderr, res.stderr
    assert "RLIMIT_MEMLOCK" in res.stderr, res.stderr
    # Refused before the mount existed: no INIT ever happened.
    assert "FUSE_INIT" not in res.stderr, res.stderr
    assert not is_mounted(mp)


def test_unmount_from_outside_ends_the_queues(spawn, tmpdirs, debug_log):
    """An external umount completes every parked entry with -ENOTCONN; the
    queue threads end and fring exits cleanly on its own signal."""
    mp = tmpdirs("mnt")
    f, ready = start(spawn, mp, ["mount", "memfs", mp, "-t", "uring"])
    assert "transport uring" in ready
    open(os.path.join(mp, "x"), "wb").close()
    subprocess.run(["umount", mp], check=True, timeout=20)
    try:
        rc = f.proc.wait(15)
    except subprocess.TimeoutExpired:
        rc = f.stop()  # the session ended; SIGTERM finishes the process
    assert rc == 0, f.log()
    assert not is_mounted(mp)
    assert STATS_RE.search(f.log()), f.log()


def kernel_has_bufpools():
    """Linux 7.3 offers FUSE_HAS_IO_URING_BUFPOOL; 6.18 does not."""
    major, minor = (int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    return (major, minor) >= (7, 3)


def test_payload_line_names_the_mode_and_why(spawn, tmpdirs):
    """One info line per mount: a pool where the kernel has them, else the
    per-entry buffers with the reason (the host, Linux 6.18: the kernel has
    none; tests/vm checks the pools on 7.3)."""
    mp = tmpdirs("mnt")
    f, ready = start(spawn, mp, ["mount", "memfs", mp, "-t", "uring"])
    assert ready.endswith("transport uring)"), ready
    with open(os.path.join(mp, "f"), "wb") as out:
        out.write(b"x" * 5000)
    assert f.stop() == 0
    lines = [l for l in f.log().splitlines() if ": payload: " in l]
    assert len(lines) == 1, f.log()
    if kernel_has_bufpools():
        assert lines[0].endswith("payload: bufpool, registered, 8 x 1 MiB per "
                                 "queue, 8 entries per queue"), lines
    else:
        assert lines[0].endswith("payload: per-entry buffers (kernel has no "
                                 "buffer pools), 8 x 1 MiB per queue"), lines


@pytest.mark.skipif(kernel_has_bufpools(), reason="the kernel has buffer pools")
def test_bufpool_on_refuses_a_kernel_without_pools(tmpdirs):
    mp = tmpdirs("mnt")
    cfg = write_config(tmpdirs, mp, "memfs", {"bufpool": "on"})
    res = subprocess.run([FRING, "run", cfg], capture_output=True, text=True,
                         timeout=30, env=fring_env())
    assert res.returncode == 1, res
    assert "ready" not in res.stdout
    assert ("transport.bufpool on: the kernel has no io_uring buffer pools "
            "(they need FUSE 7.46, Linux 7.3)") in res.stderr, res.stderr
    assert not is_mounted(mp)


def test_bufpool_off_on_any_kernel(spawn, tmpdirs):
    mp = tmpdirs("mnt")
    cfg = write_config(tmpdirs, mp, "memfs", {"mode": "uring", "bufpool": "off"})
    f, ready = start(spawn, mp, ["run", cfg])
    assert f.stop() == 0
    assert ("payload: per-entry buffers (transport.bufpool off), 8 x 1 MiB "
            "per queue") in f.log(), f.log()


@pytest.mark.skipif(kernel_has_bufpools(), reason="the kernel has zero-copy")
def test_zero_copy_falls_back_cleanly_on_a_kernel_without_it(spawn, tmpdirs):
    """Linux 6.18: auto serves (passthrough opts files in; the host drops
    the flag) and says why not; on refuses, over io_uring and devfuse."""
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    cfg = write_config(tmpdirs, mp, "passthrough", {"mode": "uring"},
                       {"source": src})
    f, ready = start(spawn, mp, ["run", cfg])
    data = os.urandom(300000)
    with open(os.path.join(mp, "f"), "wb") as out:
        out.write(data)
    with open(os.path.join(mp, "f"), "rb") as back:
        assert back.read() == data
    assert f.stop() == 0
    assert ("zero-copy: off (the kernel has no io_uring zero-copy (FUSE 7.46, "
            "Linux 7.3))") in f.log(), f.log()
    for mode in ("uring", "devfuse"):
        cfg = write_config(tmpdirs, mp, "memfs", {"mode": mode, "zero_copy": "on"})
        res = subprocess.run([FRING, "run", cfg], capture_output=True, text=True,
                             timeout=30, env=fring_env())
        assert res.returncode == 1, res
        assert "ready" not in res.stdout
        want = ("transport.zero_copy on: the kernel has no io_uring zero-copy"
                if mode == "uring" else
                "transport.zero_copy on needs io_uring, but transport.mode is devfuse")
        assert want in res.stderr, res.stderr
        assert not is_mounted(mp)
