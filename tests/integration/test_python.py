# SPDX-License-Identifier: MIT
"""The Python binding (bindings/python/fring: cffi, declarations generated
from the headers) matches the C ABI; a Python program embeds the runtime
with it (memfs mounted from Python, used, stopped, unmounted); and
filesystems written in Python (fring.plugin, served by fring_python.so
built with cffi's embedding mode) mount over both transports, with their
errors reported. Needs the cffi module and this Python's headers."""
import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import FRING, PLUGIN_DIR, force_unmount, fring_env, is_mounted, uring_usable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.dirname(os.path.dirname(FRING))
cffi = pytest.importorskip("cffi", reason="cffi not installed (pip install cffi)")


def py_env():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "bindings/python"),
               FRING_LIBRARY=os.path.join(BUILD, "lib/libfring.so"))
    if PLUGIN_DIR:
        env["FRING_PLUGIN_PATH"] = PLUGIN_DIR
    return env


def py(code, timeout=60):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout,
                          env=py_env())


def test_binding_matches_the_c_abi():
    r = py("""
        import fring
        f = fring.ffi
        print(f.sizeof("struct fring_host_api"), f.sizeof("struct fring_conn"),
              f.sizeof("struct fring_open_out"), f.sizeof("struct fring_plugin"),
              f.offsetof("struct fring_host_api", "backing_open"),
              fring.FRING_ABI_MAJOR, fring.FRING_CAP_PASSTHROUGH == 1 << 37,
              fring.version())
    """)
    assert r.returncode == 0, r.stderr
    # sizes and offsets frozen by tests/unit/test_abi_layout.c
    out = r.stdout.split()
    assert out[:7] == ["248", "48", "16", "152", "232", "1", "True"], r.stdout
    assert out[7][0].isdigit()


def test_errors_carry_errno_and_message(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("mounts: [\n")
    r = py("""
        import fring, sys
        rt = fring.Runtime()
        try:
            rt.add_yaml(%r)
        except fring.Error as e:
            print(e.errno, e.strerror)
            sys.exit(0)
        sys.exit(1)
    """ % str(bad))
    assert r.returncode == 0, r.stderr
    code, _, msg = r.stdout.partition(" ")
    assert int(code) > 0 and "bad.yaml" in msg, r.stdout


def test_python_program_serves_memfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    prog = """
        import fring, os, sys, threading, time
        rt = fring.Runtime()
        rt.add_mount(%r, "memfs", {"size": "16MiB"})
        t = threading.Thread(target=rt.run)
        t.start()
        for _ in range(500):
            if os.path.ismount(%r):
                break
            time.sleep(0.01)
        print("mounted", flush=True)
        sys.stdin.readline()      # the test uses the mount meanwhile
        rt.stop()
        t.join(20)
        print("alive" if t.is_alive() else "stopped", flush=True)
    """ % (str(mnt), str(mnt))
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(prog)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=py_env())
    try:
        assert p.stdout.readline().strip() == "mounted", p.stderr.read()
        assert is_mounted(str(mnt))
        (mnt / "f").write_bytes(b"from python\n")
        assert (mnt / "f").read_bytes() == b"from python\n"
        p.stdin.write("\n")
        p.stdin.flush()
        assert p.stdout.readline().strip() == "stopped"
        assert p.wait(20) == 0, p.stderr.read()
        assert not is_mounted(str(mnt))
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait(10)
        force_unmount(str(mnt))


# ---- filesystems written in Python (fring.plugin via fring_python.so) ----

MEMO = '''
import errno, stat
from fring.plugin import Attr

class Filesystem:
    def __init__(self, options):
        self.data = bytearray(options.get("init", "").encode())

    def _attr(self, ino):
        if ino == 1:
            return Attr(1, stat.S_IFDIR | 0o755, nlink=2)
        if ino == 2:
            return Attr(2, stat.S_IFREG | 0o644, size=len(self.data))
        raise OSError(errno.ENOENT, "")

    def lookup(self, parent, name):
        if name == "boom":
            raise ValueError("a bug in the filesystem")
        if name == "exit":
            raise SystemExit(1)
        if parent != 1 or name != "memo":
            raise OSError(errno.ENOENT, name)
        return self._attr(2)

    def getattr(self, ino):
        return self._attr(ino)

    def read(self, ino, fh, offset, size):
        return bytes(self.data[offset:offset + size])

    def write(self, ino, fh, offset, data):
        self.data[offset:offset + len(data)] = data
        return len(data)

    def readdir(self, ino):
        return [("memo", 2, stat.S_IFREG)]
'''


@pytest.fixture(scope="module")
def py_plugin(tmp_path_factory):
    out = tmp_path_factory.mktemp("pyplugin")
    r = subprocess.run([sys.executable, "-m", "fring.build_plugin", str(out)],
                       capture_output=True, text=True, timeout=300, env=py_env())
    assert r.returncode == 0, r.stderr[-3000:]
    return str(out / "fring_python.so")


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_python_hello(py_plugin, mount, transport):
    # fring_python.so finds the fring package itself (a copy beside it)
    mnt = mount(py_plugin, {"module": os.path.join(
        ROOT, "sdk-examples/python-hello/hello.py")}, transport=transport)
    with open(os.path.join(mnt, "hello"), "rb") as f:
        assert f.read() == b"hello from Python\n"
    assert sorted(os.listdir(mnt)) == ["hello"]
    assert not os.path.exists(os.path.join(mnt, "nope"))


def test_python_filesystem_writes_and_reports_bugs(py_plugin, mount, tmp_path):
    mod = tmp_path / "memo.py"
    mod.write_text(MEMO)
    mnt = mount(py_plugin, {"module": str(mod), "init": "abc"})
    path = os.path.join(mnt, "memo")
    with open(path, "rb") as f:
        assert f.read() == b"abc"            # the option reached __init__
    fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
    try:
        import mmap
        buf = mmap.mmap(-1, 4096)
        buf[:] = b"z" * 4096
        assert os.pwritev(fd, [buf], 0) == 4096
    finally:
        os.close(fd)
    assert os.stat(path).st_size == 4096
    for name in ("boom", "exit"):            # ValueError, SystemExit -> EIO
        with pytest.raises(OSError) as e:
            os.stat(os.path.join(mnt, name))
        assert e.value.errno == errno.EIO


@pytest.mark.parametrize("options, message", [
    ({}, "option 'module' (a Python file) is required"),
    ({"module": "/nonexistent/fs.py"}, "python: module /nonexistent/fs.py"),
])
def test_python_plugin_bad_module(py_plugin, tmp_path, options, message):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    args = [FRING, "mount", py_plugin, str(mnt)]
    for k, v in options.items():
        args += ["-o", "%s=%s" % (k, v)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60,
                       env=py_env())
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert not is_mounted(str(mnt))


def test_add_mount_refuses_bad_arguments_with_fring_error(tmp_path):
    r = py("""
        import fring
        rt = fring.Runtime()
        bad = [dict(mountpoint=None), dict(plugin=None),
               dict(options=["size=1M"]), dict(options=5),
               dict(mount_options=[None]), dict(mount_options=3),
               dict(transport=1), dict(mountpoint="/t\\0mp")]
        for b in bad:
            args = dict(dict(mountpoint=%r, plugin="memfs"), **b)
            try:
                rt.add_mount(**args)
                print("accepted", b)
            except fring.Error as e:
                print(e.errno)
        # a key may repeat: options as pairs; mount options as with -O
        rt.add_mount(%r, "memfs", [("size", "1M"), ("size", "2M")], "ro,fsname=x")
        print("pairs ok")
    """ % (str(tmp_path), str(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:-1] == ["22"] * 8 + ["pairs ok"], r.stdout


def test_plugin_finds_the_fring_package_at_run_time(tmp_path, monkeypatch,
                                                      spawn, tmpdirs):
    """Nothing of the checkout is built into fring_python.so: built from a
    checkout that then moves away, it still serves (the package beside
    it); moved on its own it says how to point it at one, and
    FRING_PYTHONPATH does."""
    checkout = tmp_path / "checkout"
    shutil.copytree(os.path.join(ROOT, "bindings/python/fring"),
                    checkout / "bindings/python/fring",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(ROOT, "abi/include"), checkout / "abi/include")
    env = dict(py_env(), PYTHONPATH=str(checkout / "bindings/python"))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "fring.build_plugin", str(out)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    moved = tmp_path / "moved"
    checkout.rename(moved)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv("FRING_PYTHONPATH", raising=False)
    hello = os.path.join(ROOT, "sdk-examples/python-hello/hello.py")

    def serve(so):
        mp = tmpdirs("mnt")
        f = spawn(["mount", so, mp, "-o", "module=" + hello], [mp])
        f.wait_ready(1)
        with open(os.path.join(mp, "hello"), "rb") as fh:
            assert fh.read() == b"hello from Python\n"
        assert f.stop(signal.SIGTERM) == 0, f.log()

    serve(str(out / "fring_python.so"))
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(out / "fring_python.so", alone)
    r = subprocess.run([FRING, "mount", str(alone / "fring_python.so"),
                        str(tmpdirs("mnt")), "-o", "module=" + hello],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "set FRING_PYTHONPATH to the directory holding fring/" in r.stderr, \
        r.stderr
    monkeypatch.setenv("FRING_PYTHONPATH", str(moved / "bindings/python"))
    serve(str(alone / "fring_python.so"))


BIGDIR = '''
import errno, stat
from fring.plugin import Attr

class Filesystem:
    def __init__(self, options):
        self.n = int(options["n"])
        self.calls = 0

    def getattr(self, ino):
        if ino == 1:
            return Attr(1, stat.S_IFDIR | 0o755, nlink=2)
        if ino == 2:
            return Attr(2, stat.S_IFREG | 0o444, size=len(str(self.calls)))
        raise OSError(errno.ENOENT, "")

    def lookup(self, parent, name):
        if name != "calls":
            raise OSError(errno.ENOENT, name)
        return self.getattr(2)

    def open(self, ino, flags):
        return 0

    def read(self, ino, fh, offset, size):
        return str(self.calls).encode()[offset:offset + size]

    def readdir(self, ino):
        self.calls += 1
        return [("calls", 2, stat.S_IFREG)] + [
            ("entry-%06d" % i, 3 + i, stat.S_IFREG) for i in range(self.n)]
'''


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_readdir_lists_once_per_pass(py_plugin, mount, tmp_path, transport):
    """The kernel reads a directory in page-sized chunks; each used to
    rebuild the whole listing (20,000 entries: 0.24 s, 100,000: 4.6 s).
    Now readdir is called once per opendir, whatever the size."""
    mod = tmp_path / "bigdir.py"
    mod.write_text(BIGDIR)
    mnt = mount(py_plugin, {"module": str(mod), "n": "20000"},
                transport=transport)
    t0 = time.monotonic()
    names = os.listdir(mnt)
    elapsed = time.monotonic() - t0
    assert len(names) == 20001
    with open(os.path.join(mnt, "calls")) as f:
        assert f.read() == "1"
    assert len(os.listdir(mnt)) == 20001   # a new opendir lists afresh
    with open(os.path.join(mnt, "calls")) as f:
        assert f.read() == "2"
    assert elapsed < 5, elapsed


WRONG = '''
import errno, stat
from fring.plugin import Attr

ERRS = {"e0": OSError(0, "zero"), "enone": OSError("no errno"),
        "e99999": OSError(99999, "huge"), "e512": OSError(512, "limit")}

class Filesystem:
    def __init__(self, options):
        pass

    def getattr(self, ino):
        if ino == 1:
            return Attr(1, stat.S_IFDIR | 0o755, nlink=2)
        return Attr(ino, stat.S_IFREG | 0o644, size=100)

    def lookup(self, parent, name):
        if name in ERRS:
            raise ERRS[name]
        if name == "evil":
            return Attr(1, stat.S_IFREG | 0o644)
        if name in ("long", "count"):
            return Attr(2 if name == "long" else 3, stat.S_IFREG | 0o644,
                        size=100)
        raise OSError(errno.ENOENT, name)

    def read(self, ino, fh, offset, size):
        return b"x" * (size + 10)

    def write(self, ino, fh, offset, data):
        return len(data) + 1

    def readdir(self, ino):
        return []
'''


def test_answers_the_kernel_cannot_take_are_eio_and_logged(py_plugin, spawn,
                                                           tmpdirs, tmp_path):
    mod = tmp_path / "wrong.py"
    mod.write_text(WRONG)
    mp = tmpdirs("mnt")
    f = spawn(["mount", py_plugin, mp, "-o", "module=" + str(mod)], [mp])
    f.wait_ready(1)

    def eio(fn, *args):
        with pytest.raises(OSError) as e:
            fn(*args)
        assert e.value.errno == errno.EIO, e.value

    for name in ("e0", "enone", "e99999", "e512", "e99999", "e0"):
        eio(os.stat, os.path.join(mp, name))
    fd = os.open(os.path.join(mp, "long"), os.O_RDONLY | os.O_DIRECT)
    try:
        eio(os.pread, fd, 4096, 0)           # read returns size + 10 bytes
    finally:
        os.close(fd)
    fd = os.open(os.path.join(mp, "count"), os.O_WRONLY | os.O_DIRECT)
    try:
        import mmap
        buf = mmap.mmap(-1, 4096)
        eio(os.pwritev, fd, [buf], 0)        # write claims one byte more
    finally:
        os.close(fd)
    eio(os.stat, os.path.join(mp, "evil"))   # ino 1 for a child: refused
    assert os.path.isdir(mp)                 # and the root is still fine
    assert f.stop(signal.SIGTERM) == 0, f.log()
    assert not is_mounted(mp)
    log = f.log()
    for code in ("0", "None", "99999", "512"):
        lines = [l for l in log.splitlines()
                 if "python: lookup raised OSError with errno %s," % code in l]
        assert len(lines) == 1, (code, log)   # once per distinct errno
    assert "python: read returned 4106 bytes, more than the 4096 asked " \
        "for; answered EIO" in log, log
    assert "python: write returned 4097 for 4096 bytes" in log, log
    assert "with an entry for 'evil' naming nodeid 1" in log, log
    assert "covers ours" not in log, log


# ---- the takeover's state hooks (`fring restart`, bindings/python/fring/state.py)

def _restart(mnt):
    r = subprocess.run([FRING, "restart", mnt], capture_output=True,
                       text=True, timeout=120, env=fring_env())
    return r.returncode, (r.stdout + r.stderr).strip()


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_python_memfs_survives_takeovers(py_plugin, mount, transport,
                                         monkeypatch, tmp_path):
    if transport == "uring" and not uring_usable():
        pytest.skip("FUSE io_uring is off")
    monkeypatch.setenv("FRING_RUNTIME_DIR", str(tmp_path / "run"))
    mnt = mount(py_plugin, {"module": os.path.join(
        ROOT, "sdk-examples/python-memfs/memfs.py")}, transport=transport)
    os.mkdir(os.path.join(mnt, "d"))
    with open(os.path.join(mnt, "d", "f"), "wb") as w:
        w.write(b"x" * 100000)
    held = os.open(os.path.join(mnt, "d", "f"), os.O_RDWR)
    for i in range(3):
        rc, line = _restart(mnt)
        assert rc == 0 and "fring: restart: ok: " in line, line
        os.pwrite(held, b"%d" % i, i)
    assert os.pread(held, 3, 0) == b"012"
    os.close(held)
    with open(os.path.join(mnt, "d", "f"), "rb") as r:
        assert r.read() == b"012" + b"x" * 99997
    assert os.listdir(os.path.join(mnt, "d")) == ["f"]


def test_python_class_without_state_methods_refuses_a_takeover(
        py_plugin, mount, monkeypatch, tmp_path):
    monkeypatch.setenv("FRING_RUNTIME_DIR", str(tmp_path / "run"))
    mnt = mount(py_plugin, {"module": os.path.join(
        ROOT, "sdk-examples/python-hello/hello.py")}, transport="devfuse")
    rc, line = _restart(mnt)
    assert rc == 1 and "state_save failed: Operation not supported" in line, line
    assert "still serves" in line, line
    with open(os.path.join(mnt, "hello"), "rb") as f:  # still served
        assert f.read() == b"hello from Python\n"


def test_python_state_version_it_cannot_read_is_refused(py_plugin, mount,
                                                        monkeypatch, tmp_path):
    # the old server names version 99 for the state memfs.py saved
    monkeypatch.setenv("FRING_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("FRING_TEST_TAKEOVER_VERSION", "99")
    mnt = mount(py_plugin, {"module": os.path.join(
        ROOT, "sdk-examples/python-memfs/memfs.py")}, transport="devfuse")
    monkeypatch.delenv("FRING_TEST_TAKEOVER_VERSION")
    with open(os.path.join(mnt, "kept"), "w") as w:
        w.write("kept")
    rc, line = _restart(mnt)
    assert rc == 1, line
    assert "cannot read the state handed over (version 99): Protocol " \
        "error" in line, line
    with open(os.path.join(mnt, "kept")) as r:
        assert r.read() == "kept"
