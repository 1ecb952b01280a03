# SPDX-License-Identifier: MIT
"""systemd readiness and watchdog (core/cli/notify.c): a Python AF_UNIX
datagram socket plays systemd's NOTIFY_SOCKET for a real `fring run`."""

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import FRING, is_mounted

FRING_PATH = shutil.which(FRING) or FRING
FIXTURE_DIR = os.environ.get("FRING_FIXTURE_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(FRING_PATH))), "tests", "fixtures")
STALL = os.path.join(FIXTURE_DIR, "stall.so")


class NotifySocket:
    """Collects every datagram sent to it, with the time it came."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.1)
        self.msgs = []
        self.lock = threading.Lock()
        self.done = False
        self.thread = threading.Thread(target=self._recv, daemon=True)
        self.thread.start()

    def _recv(self):
        while not self.done:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            with self.lock:
                self.msgs.append((time.monotonic(), data.decode()))

    def lines(self):
        with self.lock:
            return [(t, l) for t, m in self.msgs for l in m.split("\n") if l]

    def wait_for(self, line, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(l == line for _, l in self.lines()):
                return True
            time.sleep(0.02)
        return False

    def close(self):
        self.done = True
        self.thread.join()
        self.sock.close()


@pytest.fixture
def notify(tmp_path):
    n = NotifySocket(str(tmp_path / "notify"))
    yield n
    n.close()


@pytest.fixture
def serving(tmp_path, tmpdirs):
    """serving(plugin, nr_mounts, env) -> (Popen, [mountpoints]) of `fring
    run` on a YAML file; stopped and unmounted at teardown."""
    started = []

    def start(plugin, nr=1, env=None, transport="devfuse"):
        mps = [tmpdirs("mnt") for _ in range(nr)]
        cfg = tmp_path / "fring.yaml"
        cfg.write_text("mounts:\n" + "".join(
            "  - mountpoint: %s\n    plugin: %s\n    transport: { mode: %s }\n"
            % (mp, plugin, transport) for mp in mps))
        e = dict(os.environ)
        if os.environ.get("FRING_PLUGIN_DIR"):
            e["FRING_PLUGIN_PATH"] = os.environ["FRING_PLUGIN_DIR"]
        e.update(env or {})
        p = subprocess.Popen([FRING, "run", str(cfg)], env=e,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started.append((p, mps))
        return p, mps

    yield start
    for p, mps in started:
        if p.poll() is None:
            p.kill()
        p.wait(10)
        p.stdout.close()
        p.stderr.close()
        for mp in mps:
            if is_mounted(mp):
                subprocess.run(["umount", "-l", mp], check=False)


def wait_ready_lines(p, count, timeout=10):
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        line = p.stdout.readline().decode()
        if not line:
            break
        if " ready (" in line:
            got.append(line)
    return got


def test_ready_status_stopping(notify, serving):
    p, mps = serving("memfs", 2, {"NOTIFY_SOCKET": notify.path})
    assert notify.wait_for("READY=1"), notify.lines()
    t_ready = next(t for t, l in notify.lines() if l == "READY=1")
    # READY=1 means every mount answers: stat each at once.
    for mp in mps:
        assert os.stat(mp).st_dev != os.stat(os.path.dirname(mp)).st_dev
    # One STATUS before READY for the first mount; READY's names both.
    status = [l for _, l in notify.lines() if l.startswith("STATUS=")]
    assert status[0].startswith("STATUS=mounting: 1 of 2 serve: %s (memfs, "
                                % mps[0]), status
    final = [l for t, l in notify.lines() if l.startswith("STATUS=") and
             t == t_ready]
    assert final == ["STATUS=serving 2 mounts: %s (memfs, devfuse); "
                     "%s (memfs, devfuse)" % (mps[0], mps[1])], final
    assert "STOPPING=1" not in [l for _, l in notify.lines()]
    p.send_signal(signal.SIGTERM)
    assert p.wait(10) == 0
    assert notify.wait_for("STOPPING=1"), notify.lines()
    assert [l for _, l in notify.lines()].count("STOPPING=1") == 1
    # Nothing is mounted after STOPPING's shutdown.
    assert not any(is_mounted(mp) for mp in mps)


def test_ready_only_after_mount_serves(notify, serving):
    """READY comes after the ready line the serving process prints, i.e.
    after the mount answered its INIT; a stat right at READY works."""
    p, mps = serving("memfs", 1, {"NOTIFY_SOCKET": notify.path})
    assert wait_ready_lines(p, 1)
    assert notify.wait_for("READY=1")
    assert is_mounted(mps[0])
    assert os.stat(mps[0]).st_ino == 1


def test_nothing_without_notify_socket(notify, serving):
    p, mps = serving("memfs", 1, {"WATCHDOG_USEC": "200000"})
    assert wait_ready_lines(p, 1)
    time.sleep(0.6)
    p.send_signal(signal.SIGTERM)
    assert p.wait(10) == 0
    assert notify.lines() == []


def watchdog_times(notify):
    return [t for t, l in notify.lines() if l == "WATCHDOG=1"]


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_watchdog_keeps_coming_then_stops(notify, serving, transport):
    # 1 s interval: WATCHDOG=1 every 0.5 s while healthy.
    p, mps = serving(STALL, 1, {"NOTIFY_SOCKET": notify.path,
                                "WATCHDOG_USEC": "1000000"}, transport)
    assert notify.wait_for("READY=1"), notify.lines()
    time.sleep(2.2)
    before = watchdog_times(notify)
    assert len(before) >= 4, before
    # A LOOKUP that sleeps 4 s in the plugin: its worker is stuck.
    stuck = subprocess.Popen(["stat", os.path.join(mps[0], "stall")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    try:
        time.sleep(3)
        after = [t for t in watchdog_times(notify) if t > t0 + 1.1]
        assert after == [], "WATCHDOG=1 while a worker is stuck"
    finally:
        stuck.wait(10)
    # Once stopped it stays stopped (systemd restarts the service).
    time.sleep(1.5)
    assert [t for t in watchdog_times(notify) if t > t0 + 1.1] == []
    p.send_signal(signal.SIGTERM)
    assert p.wait(10) == 0
    assert re.search(rb"watchdog: 1 of \d+ queue threads busy for over 1000 ms",
                     p.stderr.read())


def test_no_watchdog_without_watchdog_usec(notify, serving):
    p, mps = serving("memfs", 1, {"NOTIFY_SOCKET": notify.path})
    assert notify.wait_for("READY=1")
    time.sleep(1)
    assert watchdog_times(notify) == []
