"""The Python binding (bindings/python/fring: cffi, declarations generated
from the headers at import) matches the C ABI, and a Python program embeds
the runtime with it: memfs mounted from Python, used, stopped, unmounted.
Needs the cffi module."""
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
