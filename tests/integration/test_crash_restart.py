# SPDX-License-Identifier: MIT
"""`restart: on_crash` (issue 25 item 3): when the serving process is
killed (SIGKILL), the supervisor starts a new one on the same connection
from the plugin's live state (passthrough: its node and open-file tables,
plugins/passthrough/live.c), so a verified load goes on and every file
stays right; a crash loop (3 in 10 s) and a mount without the key end in
the abort (ENOTCONN at once). Over io_uring the key only warns: a crash
aborts, since the kernel (6.18) can strand a dead ring's requests for good
(core/transport/README.md, "Restart after a crash")."""

import errno
import json
import os
import signal
import threading
import time

import pytest

from conftest import serving_pid, uring_usable
from test_takeover import fio_verify, sha256

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/fuse"),
    reason="needs root and /dev/fuse")

BOUND = 20  # s: a restart, or an abort, is far quicker


URING = pytest.mark.skipif(
    not uring_usable(),
    reason="FUSE io_uring is off (/sys/module/fuse/parameters/enable_uring)")
WARNING = ("restart: on_crash applies only over /dev/fuse: this mount is "
           "served over io_uring")


@pytest.fixture
def served(spawn, tmpdirs, monkeypatch):
    """served(restart, transport) -> (Fring, mountpoint, source): `fring
    run` of passthrough over a fresh source directory."""
    monkeypatch.setenv("FRING_RUNTIME_DIR", tmpdirs("run"))

    def start(restart=True, transport="devfuse"):
        mp, src = tmpdirs("mnt"), tmpdirs("src")
        cfg = os.path.join(tmpdirs("cfg"), "crash.yaml")
        with open(cfg, "w") as c:
            c.write("mounts:\n  - mountpoint: %s\n    plugin: passthrough\n"
                    "    options: { source: %s }\n"
                    "    transport: { mode: %s, bufpool: off }\n"
                    % (json.dumps(mp), json.dumps(src), transport))
            if restart:
                c.write("    restart: on_crash\n")
        f = spawn(["run", cfg], [mp])
        f.wait_ready(1)
        return f, mp, src

    return start


def wait_log(f, text, count=1, timeout=BOUND):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if f.log().count(text) >= count:
            return True
        time.sleep(0.05)
    return False


def kill_server(f):
    """SIGKILL the serving child of f (by its PID); returns that PID."""
    pid = serving_pid(f.proc.pid)
    assert pid != f.proc.pid, "no serving child"
    os.kill(pid, signal.SIGKILL)
    return pid


def new_server(f, old):
    """The PID of the server started after old died, once the supervisor
    says it serves (a child that is still taking over must not be the
    next one killed); None if none does within BOUND."""
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        pid = serving_pid(f.proc.pid, timeout=0.2)
        if pid not in (old, f.proc.pid) and \
                "restart: on_crash: pid %d serves" % pid in f.log():
            return pid
        time.sleep(0.05)
    return None


def content(name, n):
    return (("%s:%d:" % (name, n)) * 200).encode()[:4096]


def test_on_crash_keeps_serving_under_load(served):
    f, mp, src = served()
    assert WARNING not in f.log()
    held = os.open(os.path.join(mp, "held"), os.O_CREAT | os.O_RDWR, 0o644)
    os.write(held, b"before the crash")
    os.mkdir(os.path.join(mp, "d"))
    want, errors, stop, ops = {}, [], threading.Event(), [0]

    def work(w):
        n = 0
        while not stop.is_set():
            n += 1
            name = "w%d-%d" % (w, n % 16)
            path = os.path.join(mp, "d", name)
            data = content(name, n)
            try:
                with open(path, "wb") as o:
                    o.write(data)
                want[name] = data
                with open(path, "rb") as i:
                    got = i.read()
                if got != data:
                    errors.append("%s: read back %d bytes, not what was "
                                  "written" % (name, len(got)))
                ops[0] += 1
            except OSError as e:
                # Over /dev/fuse what the dead server had read comes again
                # (FUSE_NOTIFY_RESEND): nothing fails.
                errors.append("%s: %s" % (name, e))
                return

    workers = [threading.Thread(target=work, args=(w,)) for w in range(2)]
    for t in workers:
        t.start()
    try:
        time.sleep(0.5)
        for _ in range(2):  # 2 crashes: under the crash-loop limit
            before = ops[0]
            old = kill_server(f)
            assert new_server(f, old), f.log()
            deadline = time.monotonic() + BOUND
            while ops[0] < before + 50 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert ops[0] >= before + 50, "load stalled:\n" + f.log()
    finally:
        stop.set()
        for t in workers:
            t.join(BOUND)
    assert not any(t.is_alive() for t in workers), "a worker hung"
    assert not errors, "\n".join(errors[:5]) + "\n" + f.log()
    assert f.log().count("restart: on_crash: pid ") == 2, f.log()
    # Every file as last written, through the mount and in the source.
    for name, data in want.items():
        with open(os.path.join(mp, "d", name), "rb") as i:
            assert i.read() == data, name
        with open(os.path.join(src, "d", name), "rb") as i:
            assert i.read() == data, name
    # The descriptor opened before the crashes still serves.
    assert os.pread(held, 64, 0) == b"before the crash"
    os.pwrite(held, b"after", 0)
    os.close(held)
    with open(os.path.join(src, "held"), "rb") as i:
        assert i.read().startswith(b"after")
    assert f.stop(signal.SIGTERM) == 0, f.log()


def test_on_crash_under_fio_verify(served):
    # The load: fio writing 4k blocks and verifying them (crc32c),
    # one job O_DIRECT and one buffered, while the server is killed twice.
    f, mp, src = served()
    runtime = 12
    jobs = [fio_verify(os.path.join(mp, "f%d" % d), d, runtime) for d in (0, 1)]
    try:
        time.sleep(2)
        for _ in range(2):  # under the crash-loop limit
            old = kill_server(f)
            assert new_server(f, old), f.log()
            time.sleep(2)
    finally:
        results = [j.communicate(timeout=runtime + 120) for j in jobs]
    for j, (out, _) in zip(jobs, results):
        assert j.returncode == 0, out
        fields = out.strip().splitlines()[-1].split(";")
        assert fields[4] == "0", out      # fio's error code
        assert int(fields[5]) > 0, out    # KiB read back to verify
    assert f.log().count("restart: on_crash: pid ") == 2, f.log()
    for d in (0, 1):
        name = "f%d" % d
        assert sha256(os.path.join(mp, name)) == sha256(os.path.join(src, name)), name
    assert f.stop(signal.SIGTERM) == 0, f.log()


def aborted(mp):
    try:
        os.stat(os.path.join(mp, "x"))
    except OSError as e:
        return e.errno == errno.ENOTCONN
    return False


def test_crash_loop_falls_back_to_abort(served):
    f, mp, _ = served()
    with open(os.path.join(mp, "f"), "w") as o:
        o.write("x")
    pid = kill_server(f)
    for k in range(2):
        pid = new_server(f, pid)
        assert pid, f.log()
        assert wait_log(f, "mount(s) again", k + 1), f.log()
        os.stat(os.path.join(mp, "f"))  # served again
        os.kill(pid, signal.SIGKILL)
    assert f.proc.wait(BOUND) != 0
    assert "3 crashes within 10 s: a crash loop; not restarting" in f.log()
    assert "aborted the connection of %s" % mp in f.log()
    assert aborted(mp)


@pytest.mark.parametrize("transport", ["devfuse",
                                       pytest.param("uring", marks=URING)])
def test_without_the_key_a_crash_aborts(served, transport):
    f, mp, _ = served(restart=False, transport=transport)
    os.stat(mp)
    kill_server(f)
    assert f.proc.wait(BOUND) != 0
    assert "restart: on_crash" not in f.log()
    assert "aborted the connection of %s" % mp in f.log()
    assert aborted(mp)


@URING
def test_on_crash_over_io_uring_aborts(served):
    # Decided at start: a warning, no live state; at the crash one line
    # says why, and the mount is aborted as without the key.
    f, mp, _ = served(transport="uring")
    assert f.log().count(WARNING) == 1, f.log()
    with open(os.path.join(mp, "f"), "w") as o:
        o.write("x")
    kill_server(f)
    assert f.proc.wait(BOUND) != 0
    assert ("restart: on_crash: %s is served over io_uring: aborting, as "
            "without the key" % mp) in f.log(), f.log()
    assert "starting a new serving process" not in f.log()
    assert "aborted the connection of %s" % mp in f.log()
    assert aborted(mp)
