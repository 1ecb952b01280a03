# SPDX-License-Identifier: MIT
"""The Python ports bench/bindings measures: sdk-examples/python-null (files
of zeros that swallow writes, as plugins/null) and
sdk-examples/python-mirror (a directory served as it is, its file data
moved by the runtime through FromFd/ToFd), over both transports."""
import errno
import hashlib
import os

import pytest

from null_semantics import check_null
from test_python import ROOT, py_plugin  # noqa: F401  (the fixture)

pytest.importorskip("cffi", reason="cffi not installed (pip install cffi)")
TRANSPORTS = ["devfuse", "uring"]
NULL = os.path.join(ROOT, "sdk-examples/python-null/null.py")
MIRROR = os.path.join(ROOT, "sdk-examples/python-mirror/mirror.py")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_python_null_is_plugins_null(py_plugin, mount, transport):
    mnt = mount(py_plugin, {"module": NULL, "files": "3", "size": "3MiB"},
                transport=transport)
    # the binding has neither setattr (O_TRUNC) nor statfs
    check_null(mnt, 3, 3 << 20, truncate=False, statfs=False)
    with pytest.raises(OSError) as e:
        os.truncate(os.path.join(mnt, "f0"), 0)
    assert e.value.errno == errno.ENOSYS
    assert os.stat(os.path.join(mnt, "f0")).st_size == 3 << 20


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_python_mirror_serves_a_directory(py_plugin, mount, tmpdirs, transport):
    src = tmpdirs("src")
    blob = os.urandom(3 * 1024 * 1024 + 123)
    os.mkdir(os.path.join(src, "sub"))
    with open(os.path.join(src, "sub", "big"), "wb") as f:
        f.write(blob)
    os.symlink("sub/big", os.path.join(src, "link"))
    mnt = mount(py_plugin, {"module": MIRROR, "source": src}, transport=transport)
    m = lambda *p: os.path.join(mnt, *p)

    assert sorted(os.listdir(mnt)) == ["link", "sub"]
    assert os.listdir(m("sub")) == ["big"]
    assert os.stat(m("sub", "big")).st_size == len(blob)
    assert os.path.islink(m("link")) and os.path.isdir(m("sub"))
    with open(m("sub", "big"), "rb") as f:                     # FromFd
        assert hashlib.sha256(f.read()).digest() == hashlib.sha256(blob).digest()
    fd = os.open(m("sub", "big"), os.O_RDONLY | os.O_DIRECT)
    try:
        assert os.pread(fd, 1 << 20, 1 << 20) == blob[1 << 20:2 << 20]
    finally:
        os.close(fd)
    patch = os.urandom(200000)
    with open(m("sub", "big"), "r+b") as f:                    # ToFd
        f.seek(4096 * 7 + 5)
        f.write(patch)
    expect = blob[:4096 * 7 + 5] + patch + blob[4096 * 7 + 5 + len(patch):]
    with open(os.path.join(src, "sub", "big"), "rb") as f:
        assert f.read() == expect
    for path, err in ((m("nope"), errno.ENOENT), (m("sub", "nope"), errno.ENOENT)):
        with pytest.raises(OSError) as e:
            os.stat(path)
        assert e.value.errno == err
    with pytest.raises(OSError) as e:                          # not in the binding
        os.mkdir(m("dir"))
    assert e.value.errno == errno.ENOSYS


def test_python_mirror_needs_a_source(py_plugin, tmpdirs):
    from conftest import run_fring
    r = run_fring("mount", py_plugin, tmpdirs("mnt"), "-o", "module=" + MIRROR)
    assert r.returncode != 0
    assert "mirror.py: missing required option 'source'" in r.stderr, r.stderr
