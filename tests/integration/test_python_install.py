# SPDX-License-Identifier: MIT
"""`pip install bindings/python` into a fresh virtual environment gives a
fring package that works from there alone: its fring_python.so (built
into site-packages by the install) serves sdk-examples/python-hello
copied outside the checkout, importing fring and cffi from the venv;
the venv's fring.Runtime finds libfring.so through the installed prefix
(the `fring` on PATH) and mounts that plugin; `python3 -m
fring.build_plugin` works from the installed package; and a missing
libfring.so is an error naming every place tried."""
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

from conftest import FRING, PLUGIN_DIR, force_unmount, is_mounted

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.dirname(os.path.dirname(FRING))
pytest.importorskip("cffi", reason="cffi not installed (pip install cffi)")

# where.py: a file telling where its fring package and interpreter are
WHERE = '''
import errno, stat, sys
import fring.plugin
from fring.plugin import Attr

class Filesystem:
    def __init__(self, options):
        self.text = ("%s\\n%s\\n" % (fring.plugin.__file__, sys.prefix)).encode()

    def getattr(self, ino):
        if ino == 1:
            return Attr(1, stat.S_IFDIR | 0o755, nlink=2)
        return Attr(2, stat.S_IFREG | 0o444, size=len(self.text))

    def lookup(self, parent, name):
        if name != "where":
            raise OSError(errno.ENOENT, name)
        return self.getattr(2)

    def read(self, ino, fh, offset, size):
        return self.text[offset:offset + size]
'''


def clean_env(**extra):
    """The environment without any pointer into the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "FRING_PYTHONPATH", "FRING_PYTHON",
                        "FRING_LIBRARY", "FRING_INCLUDE_DIR", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if PLUGIN_DIR:
        env["FRING_PLUGIN_PATH"] = PLUGIN_DIR
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A venv (seeing the system's site-packages, for cffi) with
    bindings/python pip-installed from a copy of the checkout's tree."""
    top = tmp_path_factory.mktemp("pyinstall")
    src = top / "src"
    shutil.copytree(os.path.join(ROOT, "bindings/python"), src / "bindings/python",
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info",
                                                  "fring_python.so", "include"))
    shutil.copytree(os.path.join(ROOT, "abi/include"), src / "abi/include")
    v = top / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                        str(v)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    py = str(v / "bin" / "python")
    env = clean_env()
    # Offline when the venv has setuptools and wheel; else pip fetches the
    # build requirements from the index, as tests/setup.sh's pip does.
    offline = subprocess.run([py, "-c", "import setuptools, wheel"],
                             capture_output=True, env=env).returncode == 0
    r = subprocess.run([py, "-m", "pip", "install", "-q"]
                       + (["--no-build-isolation"] if offline else [])
                       + [str(src / "bindings/python")],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    shutil.rmtree(src)                  # nothing of the tree is needed now
    return v


def site_packages(v):
    r = subprocess.run([str(v / "bin/python"), "-c",
                        "import sysconfig; print(sysconfig.get_path('purelib'))"],
                       capture_output=True, text=True, env=clean_env())
    return r.stdout.strip()


def installed_plugin(v):
    r = subprocess.run([str(v / "bin/python"), "-m", "fring", "plugin"],
                       capture_output=True, text=True, env=clean_env(),
                       cwd=str(v))
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_installed_plugin_serves_the_example_from_outside_the_checkout(
        venv, spawn, tmpdirs, monkeypatch, transport):
    so = installed_plugin(venv)
    site = site_packages(venv)
    assert so == os.path.join(site, "fring", "fring_python.so")
    example = tmpdirs("example")
    shutil.copy(os.path.join(ROOT, "sdk-examples/python-hello/hello.py"), example)
    with open(os.path.join(example, "where.py"), "w") as f:
        f.write(WHERE)
    for k in ("PYTHONPATH", "FRING_PYTHONPATH", "FRING_PYTHON"):
        monkeypatch.delenv(k, raising=False)
    for module, check in (("hello.py", "hello"), ("where.py", "where")):
        mp = tmpdirs("mnt")
        f = spawn(["mount", so, mp, "-t", transport, "-o",
                   "module=" + os.path.join(example, module)], [mp])
        assert f.wait_ready(1)[0].endswith("transport %s)" % transport)
        with open(os.path.join(mp, check)) as fh:
            text = fh.read()
        if check == "hello":
            assert text == "hello from Python\n"
            assert sorted(os.listdir(mp)) == ["hello"]
        else:                  # the venv's package, the venv's interpreter
            plugin_py, prefix = text.split("\n")[:2]
            assert plugin_py == os.path.join(site, "fring", "plugin.py"), text
            assert prefix == str(venv), text
        assert f.stop(signal.SIGTERM) == 0, f.log()
        assert not is_mounted(mp)


def test_installed_runtime_finds_libfring_by_prefix_and_mounts(venv, tmpdirs):
    so = installed_plugin(venv)
    example = tmpdirs("example")
    shutil.copy(os.path.join(ROOT, "sdk-examples/python-hello/hello.py"), example)
    mp = tmpdirs("mnt")
    prog = """
        import fring, os, threading, time
        lib = fring.lib       # libfring.so: the prefix of the fring on PATH
        rt = fring.Runtime()
        rt.add_mount(%r, %r, {"module": %r})
        t = threading.Thread(target=rt.run)
        t.start()
        for _ in range(1000):
            if os.path.ismount(%r):
                break
            time.sleep(0.01)
        try:
            print(open(os.path.join(%r, "hello")).read(), end="")
        finally:
            rt.stop()
            t.join(20)
        print("stopped" if not t.is_alive() else "alive")
    """ % (mp, so, os.path.join(example, "hello.py"), mp, mp)
    env = clean_env(PATH=os.path.join(BUILD, "bin") + os.pathsep
                    + os.environ.get("PATH", ""))
    try:
        r = subprocess.run([str(venv / "bin/python"), "-c", textwrap.dedent(prog)],
                           capture_output=True, text=True, timeout=60, env=env,
                           cwd=str(venv))
        assert r.returncode == 0, r.stderr
        assert r.stdout == "hello from Python\nstopped\n", r.stdout + r.stderr
        assert not is_mounted(mp)
    finally:
        force_unmount(mp)


def test_build_plugin_works_from_the_installed_package(venv, tmp_path, spawn,
                                                       tmpdirs):
    out = tmp_path / "out"
    r = subprocess.run([str(venv / "bin/python"), "-m", "fring.build_plugin",
                        str(out)], capture_output=True, text=True, timeout=300,
                       env=clean_env(), cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    mp = tmpdirs("mnt")
    f = spawn(["mount", str(out / "fring_python.so"), mp, "-o", "module="
               + os.path.join(ROOT, "sdk-examples/python-hello/hello.py")], [mp])
    f.wait_ready(1)
    with open(os.path.join(mp, "hello"), "rb") as fh:
        assert fh.read() == b"hello from Python\n"
    assert f.stop(signal.SIGTERM) == 0, f.log()


def test_missing_libfring_names_what_was_tried(venv):
    py = str(venv / "bin/python")
    code = "import fring; fring.version()"
    r = subprocess.run([py, "-c", code], capture_output=True, text=True,
                       env=clean_env(PATH="/usr/bin:/bin"), cwd=str(venv))
    assert r.returncode != 0
    err = r.stderr.strip().splitlines()[-1]
    assert "libfring.so not found; tried: " in err, r.stderr
    assert "(Python's prefix): no such file" in err, err
    assert "(the system's library path)" in err, err
    assert "Set FRING_LIBRARY to its path" in err, err
    r = subprocess.run([py, "-c", code], capture_output=True, text=True,
                       env=clean_env(FRING_LIBRARY="/nonexistent/libfring.so"),
                       cwd=str(venv))
    assert r.returncode != 0
    assert "tried: /nonexistent/libfring.so (FRING_LIBRARY): no such file" \
        in r.stderr, r.stderr
    r = subprocess.run([py, "-c", "import fring; print(fring.version())"],
                       capture_output=True, text=True, cwd=str(venv),
                       env=clean_env(FRING_LIBRARY=os.path.join(
                           BUILD, "lib/libfring.so")))
    assert r.returncode == 0 and r.stdout.strip()[0].isdigit(), r.stderr
