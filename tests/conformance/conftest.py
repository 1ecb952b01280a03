# SPDX-License-Identifier: MIT
"""Targets of the POSIX conformance suite.

Every test takes the `target` fixture and runs once per target:

  tmpfs                 the kernel's tmpfs, mounted on a temp dir: the
                        reference; the suite must pass on it completely
  memfs-devfuse         fring memfs over /dev/fuse
  memfs-uring           fring memfs over FUSE-over-io_uring
  passthrough-devfuse   fring passthrough (mirroring a fresh tmpfs) over /dev/fuse
  passthrough-uring     fring passthrough over FUSE-over-io_uring
  kpassthrough-devfuse  fring passthrough with kernel_passthrough (the kernel
  kpassthrough-uring    serves read/write/mmap from the backing file itself)
  rustmemfs-devfuse     sdk-examples/rust-memfs (built by cargo) over /dev/fuse
  rustmemfs-uring       sdk-examples/rust-memfs over FUSE-over-io_uring
  pymemfs-devfuse       sdk-examples/python-memfs (fring_python.so, built from
  pymemfs-uring         bindings/python per session) over each transport

fring mounts get `-O default_permissions,allow_other`, so the kernel checks
permissions and other uids may enter. Each target is mounted once per
session (the parametrization is session-scoped, so pytest runs the tests
target by target and keeps only one mount alive); each test works in a
fresh directory of its own, the `d` fixture.

`--targets=a,b` (or FRING_CONFORMANCE_TARGETS) picks targets by name or by
kind (`memfs` = both memfs targets). FRING_BIN and FRING_PLUGIN_DIR name the
fring binary and the plugin directory, as for tests/integration.
"""

import hashlib
import os
import pathlib
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
from mounts import force_unmount, is_mounted  # noqa: E402

FRING = os.environ.get("FRING_BIN", "fring")
PLUGIN_DIR = os.environ.get("FRING_PLUGIN_DIR", "")
ALL_TARGETS = ["tmpfs", "memfs-devfuse", "memfs-uring",
               "passthrough-devfuse", "passthrough-uring",
               "kpassthrough-devfuse", "kpassthrough-uring"]
# sdk-examples/rust-memfs, built by cargo (the rust_memfs_so fixture)
ALL_TARGETS += ["rustmemfs-devfuse", "rustmemfs-uring"]
# sdk-examples/python-memfs served by fring_python.so (the py_memfs fixture)
ALL_TARGETS += ["pymemfs-devfuse", "pymemfs-uring"]
READY_TIMEOUT = 15
STOP_TIMEOUT = 15


def pytest_addoption(parser):
    parser.addoption("--targets", default=os.environ.get(
        "FRING_CONFORMANCE_TARGETS", ""),
        help="comma-separated targets or kinds (default: all of %s)"
        % ", ".join(ALL_TARGETS))


def selected_targets(config):
    wanted = [w.strip() for w in config.getoption("targets").split(",")
              if w.strip()]
    if not wanted:
        return list(ALL_TARGETS)
    picked = [t for t in ALL_TARGETS
              if t in wanted or t.split("-")[0] in wanted]
    unknown = [w for w in wanted
               if w not in ALL_TARGETS and w not in
               {t.split("-")[0] for t in ALL_TARGETS}]
    if unknown:
        raise pytest.UsageError("unknown conformance target(s): %s"
                                % ", ".join(unknown))
    return picked


def pytest_generate_tests(metafunc):
    if "target" in metafunc.fixturenames:
        metafunc.parametrize("target", selected_targets(metafunc.config),
                             indirect=True, scope="session")


# --- known bugs ----------------------------------------------------------
# (test file::test name, target kind) -> the bug, as reported. These tests
# run as xfail(strict=True): they must keep failing until the bug is fixed,
# and then the entry has to go.
# (test, target kind) -> bug description: run as xfail(strict=True) until
# fixed, so a fix is noticed. Empty: every bug the suite found is fixed.
KNOWN_BUGS = {}


def pytest_collection_modifyitems(config, items):
    for item in items:
        callspec = getattr(item, "callspec", None)
        if not callspec or "target" not in callspec.params:
            continue
        kind = callspec.params["target"].split("-")[0]
        key = (item.nodeid.split("[")[0].split("/")[-1], kind)
        if key in KNOWN_BUGS:
            item.add_marker(pytest.mark.xfail(reason=KNOWN_BUGS[key],
                                              strict=True))


# --- mount plumbing -------------------------------------------------------

def mount_tmpfs(path):
    subprocess.run(["mount", "-t", "tmpfs", "-o",
                    "mode=0755,size=512m,nosuid,nodev", "tmpfs", path],
                   check=True, capture_output=True)


RUST_MEMFS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                          "..", "sdk-examples", "rust-memfs")


@pytest.fixture(scope="session")
def rust_memfs_so():
    """sdk-examples/rust-memfs built with cargo (dev profile, --locked) in
    FRING_CARGO_TARGET_DIR (default: cargo-target in the build tree that
    holds FRING_BIN, the one tests/integration/test_rust.py uses);
    the path of its .so. Skips when cargo is missing."""
    import shutil
    cargo = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
    if not os.access(cargo, os.X_OK):
        pytest.skip("cargo not found (install Rust with rustup)")
    target_dir = os.environ.get("FRING_CARGO_TARGET_DIR") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(FRING))),
        "cargo-target")
    r = subprocess.run([cargo, "build", "--locked", "--manifest-path",
                        os.path.join(RUST_MEMFS, "Cargo.toml")],
                       capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, CARGO_TARGET_DIR=target_dir))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    so = os.path.join(target_dir, "debug", "libmemfs_rust.so")
    assert os.path.exists(so), so
    return so


PY_MEMFS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "sdk-examples", "python-memfs", "memfs.py")


@pytest.fixture(scope="session")
def py_memfs(tmp_path_factory):
    """(fring_python.so built from bindings/python into a temp dir, the
    module sdk-examples/python-memfs/memfs.py). Skips without cffi."""
    import sys
    pytest.importorskip("cffi", reason="cffi not installed (pip install cffi)")
    out = tmp_path_factory.mktemp("pyplugin")
    bindings = os.path.join(os.path.dirname(PY_MEMFS), "..", "..",
                            "bindings", "python")
    r = subprocess.run([sys.executable, "-m", "fring.build_plugin", str(out)],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=bindings))
    assert r.returncode == 0, r.stderr[-3000:]
    return str(out / "fring_python.so"), os.path.realpath(PY_MEMFS)


def zero_copy_kernel():
    """Linux 7.3+ (FUSE 7.46 zero-copy) and CAP_SYS_ADMIN (root here)."""
    rel = os.uname().release.split("-")[0].split(".")
    return (int(rel[0]), int(rel[1])) >= (7, 3) and os.geteuid() == 0


class FringServer:
    """`fring mount` in the foreground, stopped with SIGTERM at the end."""

    def __init__(self, plugin, mountpoint, transport, options):
        args = [FRING, "mount", plugin, mountpoint, "-t", transport,
                "-O", "default_permissions,allow_other"]
        for key, value in options:
            args += ["-o", "%s=%s" % (key, value)]
        env = dict(os.environ)
        if PLUGIN_DIR:
            env["FRING_PLUGIN_PATH"] = PLUGIN_DIR
        self.mountpoint = mountpoint
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env)

    def log(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def wait_ready(self):
        """Returns the ready line; raises with fring's stderr otherwise."""
        fd = self.proc.stdout.fileno()
        os.set_blocking(fd, False)
        buf = b""
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 4096)
            except BlockingIOError:
                chunk = None
            if chunk:
                buf += chunk
                for line in buf.split(b"\n"):
                    if b" ready (" in line:
                        return line.decode()
            elif chunk == b"" or self.proc.poll() is not None:
                self.proc.wait()
                raise RuntimeError("fring exited with %s before ready: %s"
                                   % (self.proc.returncode, self.log()))
            else:
                time.sleep(0.02)
        raise RuntimeError("fring not ready after %ss: %s"
                           % (READY_TIMEOUT, self.log()))

    def stop(self):
        """SIGTERM; returns the exit code (None if it had to be killed)."""
        rc = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(STOP_TIMEOUT)
        self.proc.stdout.close()
        return rc


class Target:
    """A mounted filesystem under test."""

    def __init__(self, name, root):
        self.name = name
        self.kind = name.split("-")[0]  # tmpfs | memfs | [k]passthrough
        self.transport = name.split("-")[1] if "-" in name else None
        self.root = root
        self.fuse = self.kind != "tmpfs"
        self.count = 0

    def fresh_dir(self, label):
        """A new empty directory (root:root 0755) for one test."""
        self.count += 1
        tag = hashlib.sha1(label.encode()).hexdigest()[:8]
        path = pathlib.Path(self.root, "t%04d-%s" % (self.count, tag))
        os.mkdir(path, 0o755)
        os.chmod(path, 0o755)
        return path

    def __repr__(self):
        return "<target %s at %s>" % (self.name, self.root)


@pytest.fixture(scope="session")
def target(request):
    name = request.param
    kind = name.split("-")[0]
    made = []       # temp dirs to remove once nothing is mounted on them
    mounts = []     # paths we mounted on (tmpfs or fuse), in mount order
    mp = None
    server = None
    served = False      # fring reached "ready": its exit code is checked
    try:
        mp = tempfile.mkdtemp(prefix="fring-conf-%s-" % name)
        made.append(mp)
        if kind == "tmpfs":
            mount_tmpfs(mp)
            mounts.append(mp)
        else:
            options = [("size", "512MiB")] if kind == "memfs" else []
            if kind in ("passthrough", "kpassthrough"):
                # the source is a tmpfs of its own, so passthrough can be
                # held to exactly the reference's behaviour
                src = tempfile.mkdtemp(prefix="fring-conf-src-")
                made.insert(0, src)
                mount_tmpfs(src)
                mounts.append(src)
                options = [("source", src)]
                if kind == "kpassthrough":
                    options.append(("kernel_passthrough", "true"))
            if os.environ.get("FRING_CONFORMANCE_NOCACHE"):
                options += [("entry_timeout", "0"), ("attr_timeout", "0")]
            transport = name.split("-")[1]
            plugin = "passthrough" if kind == "kpassthrough" else kind
            if kind == "rustmemfs":
                plugin = request.getfixturevalue("rust_memfs_so")
            if kind == "pymemfs":
                plugin, module = request.getfixturevalue("py_memfs")
                options = [("module", module)] + options
            server = FringServer(plugin, mp, transport, options)
            mounts.append(mp)
            try:
                ready = server.wait_ready()
            except RuntimeError as e:
                why = [l for l in str(e).splitlines() if "not available" in l]
                if why:
                    pytest.skip("%s: %s" % (name, why[0].strip()))
                raise
            served = True
            assert "transport %s" % transport in ready, ready
            if kind == "passthrough" and transport == "uring" and zero_copy_kernel():
                # Linux 7.3 as root: passthrough's files are zero-copied.
                assert "zero-copy: on" in server.log(), server.log()
        os.chmod(mp, 0o755)
        yield Target(name, mp)
    finally:
        problems = []
        if server is not None:
            rc = server.stop()
            if served and rc != 0:
                problems.append("fring exit code %s after SIGTERM; stderr:\n%s"
                                % (rc, server.log()))
        for path in reversed(mounts):
            if is_mounted(path):
                if server is None or path != mp:
                    subprocess.run(["umount", path], capture_output=True)
                else:
                    problems.append("%s still mounted after fring exited"
                                    % path)
                force_unmount(path)
        for path in made:
            if not is_mounted(path):
                try:
                    os.rmdir(path)
                except OSError:
                    pass
        if server is not None:
            server.stderr.close()
        assert not problems, "\n".join(problems)


@pytest.fixture
def d(target, request):
    """A fresh empty directory on the target for this test."""
    return target.fresh_dir(request.node.nodeid)


@pytest.fixture(autouse=True)
def umask022():
    old = os.umask(0o022)
    yield
    os.umask(old)
