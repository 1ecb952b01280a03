# SPDX-License-Identifier: MIT
"""Real-mount fixtures: start `fring`, wait for its ready lines, and always
leave nothing mounted behind, even when a test or fring itself fails."""

import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time

import pytest
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from pytest_strict import (  # noqa: E402,F401  (hooks: skips, FRING_STRICT)
    pytest_make_collect_report, pytest_runtest_makereport,
    pytest_sessionfinish)
from mounts import (  # noqa: E402,F401  (test files import them from here)
    FUSECTL, force_unmount, is_mounted, mount_entries)

FRING = os.environ.get("FRING_BIN", "fring")
PLUGIN_DIR = os.environ.get("FRING_PLUGIN_DIR", "")
READY_TIMEOUT = 10
STOP_TIMEOUT = 10


def read_text(path, default=""):
    """A sysfs/procfs file's stripped text, or default if unreadable."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def uring_usable():
    """Can a mount be served over FUSE-over-io_uring here: the fuse
    module's enable_uring is Y and io_uring is not disabled by sysctl."""
    return (read_text("/sys/module/fuse/parameters/enable_uring") == "Y"
            and read_text("/proc/sys/kernel/io_uring_disabled", "0") in ("0", "1"))


def fring_env():
    env = dict(os.environ)
    if PLUGIN_DIR:
        env["FRING_PLUGIN_PATH"] = PLUGIN_DIR
    return env


def run_fring(*args, timeout=30):
    """Run a short fring command; returns CompletedProcess (text)."""
    return subprocess.run([FRING, *args], capture_output=True, text=True,
                          timeout=timeout, env=fring_env())


def devfuse_fallback_reason(proc, mp, content):
    """A `fring mount memfs MP` (proc, pipes in text mode) that must fall
    back to /dev/fuse: its ready line says so, content written to a file
    reads back, SIGTERM ends it with exit status 0, and its log says once
    why io_uring was not used. Returns (that line, the whole log)."""
    try:
        line = proc.stdout.readline()
        assert line == "fring: %s ready (plugin memfs, transport devfuse)\n" % mp, \
            (line, proc.stderr.read() if proc.poll() is not None else "")
        with open(os.path.join(mp, "f"), "w") as f:
            f.write(content)
        with open(os.path.join(mp, "f")) as f:
            assert f.read() == content
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    reasons = [l for l in err.splitlines() if "io_uring not used" in l]
    assert len(reasons) == 1, err
    return reasons[0], err


def make_tempdir(prefix):
    return tempfile.mkdtemp(prefix="fring-" + prefix + "-")


def remove_tempdir(path):
    if is_mounted(path):
        force_unmount(path)
    if not is_mounted(path):
        shutil.rmtree(path, ignore_errors=True)


def serving_pid(pid, timeout=5):
    """fring's CLI supervises a forked serving process; that child is the
    server (its fds, its CPU). Returns it, or pid itself when unsupervised."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            return pid
        if kids:
            return kids[0]
        if os.environ.get("FRING_NO_SUPERVISOR") or time.monotonic() > deadline:
            return pid
        time.sleep(0.01)


class Fring:
    """A `fring run`/`fring mount` process serving in the foreground."""

    def __init__(self, args, mountpoints, wrap=()):
        """wrap: a command fring runs under (setpriv ...)."""
        self.mountpoints = list(mountpoints)
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([*wrap, FRING, *args], stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=fring_env())
        self.ready = []

    def log(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def wait_ready(self, count, timeout=READY_TIMEOUT):
        """Read stdout until `count` ready lines; fail with fring's stderr
        if it exits or is too slow."""
        fd = self.proc.stdout.fileno()
        os.set_blocking(fd, False)
        buf = b""
        deadline = time.monotonic() + timeout
        while len(self.ready) < count:
            if time.monotonic() > deadline:
                raise AssertionError("fring not ready after %ds; stderr:\n%s"
                                     % (timeout, self.log()))
            try:
                chunk = os.read(fd, 4096)
            except BlockingIOError:
                chunk = None
            if chunk:
                buf += chunk
                *lines, buf = buf.split(b"\n")
                self.ready += [l.decode() for l in lines if b" ready (" in l]
            elif chunk == b"" or self.proc.poll() is not None:
                raise AssertionError("fring exited (rc %s) before ready; stderr:\n%s"
                                     % (self.proc.wait(), self.log()))
            else:
                time.sleep(0.02)
        return self.ready

    def stop(self, sig=signal.SIGTERM, timeout=STOP_TIMEOUT):
        """Signal fring and return its exit code (None if it did not exit)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def cleanup(self):
        """Unconditional teardown: kill, then unmount whatever is left."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(STOP_TIMEOUT)
        for mp in self.mountpoints:
            force_unmount(mp)
        self.proc.stdout.close()
        self.stderr.close()


@pytest.fixture
def spawn():
    """spawn(args, mountpoints) -> Fring; every process is stopped and its
    mountpoints cleared at teardown, whatever happened."""
    procs = []

    def start(args, mountpoints):
        f = Fring(args, mountpoints)
        procs.append(f)
        return f

    yield start
    for f in procs:
        f.cleanup()


@pytest.fixture
def tmpdirs():
    """tmpdirs(prefix) -> a fresh directory, removed (after any mount on it
    is cleared) at teardown."""
    made = []

    def make(prefix="dir"):
        d = make_tempdir(prefix)
        made.append(d)
        return d

    yield make
    for d in reversed(made):
        remove_tempdir(d)


@pytest.fixture
def mount(spawn, tmpdirs):
    """mount(plugin, options) -> mountpoint of a `fring mount` ready to use.
    At teardown: SIGTERM, the exit code must be 0 and nothing left mounted
    (cleared through fusectl + umount -l otherwise, then reported)."""
    started = []

    def do_mount(plugin, options=(), mount_options=(), transport=None):
        mp = tmpdirs("mnt")
        args = ["mount", plugin, mp]
        if transport:
            args += ["-t", transport]
        pairs = options.items() if isinstance(options, dict) else options
        for key, value in pairs:
            args += ["-o", "%s=%s" % (key, value)]
        for opt in mount_options:
            args += ["-O", opt]
        f = spawn(args, [mp])
        ready = f.wait_ready(1)
        started.append((f, mp))
        if transport and transport != "auto":
            assert ready[0].endswith("transport %s)" % transport), ready
        return MountPath(mp, serving_pid(f.proc.pid))

    yield do_mount
    problems = []
    for f, mp in started:
        rc = f.stop(signal.SIGTERM)
        left = is_mounted(mp)
        log = f.log()
        f.cleanup()
        if rc != 0 or left:
            problems.append("%s: exit code %s after SIGTERM, still mounted: %s; "
                            "stderr:\n%s" % (mp, rc, left, log))
    assert not problems, "\n".join(problems)


@pytest.fixture(params=["memfs-devfuse", "memfs-uring",
                        "passthrough-devfuse", "passthrough-uring"])
def fs(request, mount, tmpdirs):
    """A mounted filesystem of each shipped kind over each transport (the
    ready line must name the transport asked for); passthrough mirrors a
    fresh source directory, exposed as fs.source (None for memfs)."""
    plugin, transport = request.param.split("-")
    source = None
    if plugin == "passthrough":
        source = tmpdirs("src")
        mp = mount("passthrough", {"source": source}, transport=transport)
    else:
        mp = mount("memfs", transport=transport)
    return Mounted(plugin, mp, source)


class MountPath(str):
    """A mountpoint path that also knows the pid of the fring serving it."""

    def __new__(cls, path, pid):
        # pid: the serving process (the supervisor's child), see serving_pid
        self = super().__new__(cls, path)
        self.pid = pid
        return self


class Mounted:
    def __init__(self, plugin, path, source):
        self.plugin, self.path, self.source = plugin, path, source

    def __truediv__(self, name):
        return pathlib.Path(self.path, name)
