# SPDX-License-Identifier: MIT
"""Mounts for the ThreadSanitizer step (tests/tools/tsan.sh): requests answered
from threads that are not the transport's queue threads, over /dev/fuse
and io_uring. Uses the integration suite's fixtures (tests/integration/
conftest.py); tsan.sh also runs the integration tests whose plugin replies
from its own thread (the faulty fixture's watcher: interrupted, late and
stale-handle replies) and the concurrent writers."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from conftest import is_mounted, spawn, tmpdirs  # noqa: E402,F401 (fixtures)
from test_faults import TRANSPORTS  # noqa: E402 (devfuse, and uring if served)

STATS_RE = re.compile(r"uring: \d+ requests over the ring .*?, \d+ commits, "
                      r"(\d+) off-thread,")
FIO = shutil.which("fio")


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    return request.param


def fio(directory, *extra, timeout=240):
    """Four concurrent jobs on their own files: O_DIRECT random writes read
    back with crc32c (every request reaches the plugin), and buffered
    random read/write through the page cache. Returns the JSON result."""
    assert FIO, "fio is missing (tests/setup.sh installs it)"
    jobs = ["--name=direct", "--direct=1", "--rw=randwrite", "--verify=crc32c",
            "--verify_fatal=1", "--bsrange=4k-64k", "--ioengine=libaio",
            "--iodepth=8", "--numjobs=2",
            "--name=buffered", "--direct=0", "--rw=randrw", "--bs=16k",
            "--ioengine=psync", "--numjobs=2"]
    cmd = [FIO, "--directory=" + directory, "--size=4m", "--verify_state_save=0",
           "--output-format=json", *jobs, *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       cwd=directory)
    return p.returncode, p.stdout, p.stderr


# --- io_threads: the one place for passthrough's own I/O threads ---------
# passthrough `io_threads: N` serves READ and WRITE on N plugin threads
# through host->req_read_fd / req_write_fd (plugins/passthrough/io.c).
IO_THREADS = 4


def io_threads_mount(spawn, tmpdirs, transport):
    src, mp = tmpdirs("src"), tmpdirs("mnt")
    f = spawn(["mount", "passthrough", mp, "-o", "source=" + src,
               "-o", "io_threads=%d" % IO_THREADS, "-t", transport], [mp])
    ready = f.wait_ready(1, timeout=30)
    assert ready[0].endswith("transport %s)" % transport), ready
    return src, mp, f


def test_io_threads_fio(spawn, tmpdirs, transport, monkeypatch):
    """fio through passthrough with io_threads: the data checks out, fring
    stops cleanly, and over io_uring the ring statistics count the I/O
    handed over by threads that are not queue threads."""
    monkeypatch.setenv("FRING_LOG", "debug")  # the ring statistics at stop
    src, mp, f = io_threads_mount(spawn, tmpdirs, transport)
    rc, out, err = fio(mp)
    assert rc == 0, "fio: %s\n%s\nfring:\n%s" % (err, out[-2000:], f.log()[-4000:])
    result = json.loads(out)
    assert all(j["error"] == 0 for j in result["jobs"]), out
    rc = f.stop(signal.SIGTERM, timeout=30)
    log = f.log()
    assert rc == 0, log[-4000:]
    assert not is_mounted(mp)
    assert re.search(r"passthrough: %d I/O threads" % IO_THREADS, log), log[-4000:]
    if transport == "uring":
        m = STATS_RE.search(log)
        assert m, log[-4000:]
        assert int(m.group(1)) > 0, "no I/O handed over by other threads: " + m.group(0)


def test_io_threads_stop_under_load(spawn, tmpdirs, transport):
    """SIGTERM while fio keeps every I/O thread busy: the workers, the
    queue threads and the stop path meet; fring exits 0 and unmounts."""
    src, mp, f = io_threads_mount(spawn, tmpdirs, transport)
    p = subprocess.Popen([FIO, "--directory=" + mp, "--size=4m", "--name=load",
                          "--direct=1", "--rw=randrw", "--bs=4k",
                          "--ioengine=libaio", "--iodepth=16", "--numjobs=3",
                          "--time_based", "--runtime=60"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=src)
    try:
        time.sleep(2)
        assert p.poll() is None, "fio ended early"
        rc = f.stop(signal.SIGTERM, timeout=30)
        log = f.log()
        assert rc == 0, log[-4000:]
        assert not is_mounted(mp)
        p.wait(30)  # its I/O failed with ENOTCONN once the mount was gone
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
