"""The Python binding (bindings/python/fring: cffi, declarations generated
from the headers) matches the C ABI; a Python program embeds the runtime
with it (memfs mounted from Python, used, stopped, unmounted); and
filesystems written in Python (fring.plugin, served by fring_python.so
built with cffi's embedding mode) mount over both transports, with their
errors reported. Needs the cffi module and this Python's headers."""
import errno
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from conftest import FRING, PLUGIN_DIR, force_unmount, is_mounted

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
    assert out[:7] == ["248", "48", "16", "120", "232", "1", "True"], r.stdout
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
    # fring_python.so finds the fring package itself (its path is built in)
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
