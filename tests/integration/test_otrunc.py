# SPDX-License-Identifier: MIT
"""An open with O_TRUNC leaves exactly the new bytes, whatever the plugin's
open does with the flag (ABI 1.6, FRING_FEATURE_ATOMIC_O_TRUNC).

The runtime negotiates FUSE_ATOMIC_O_TRUNC only for plugins that declare
that their open truncates (memfs, passthrough); for every other plugin the
kernel truncates with a SETATTR after the OPEN. tests/fixtures/trunc_open.c
is a plugin whose open ignores O_TRUNC: it used to keep the old bytes
after the new ones. Built without setattr it must fail such an open
(ENOSYS, with a warning at mount), never leave a wrong file. Read-only
and write-swallowing plugins (c-hello, null) keep their own semantics.
The Python and Rust examples are covered in test_python*.py and
test_rust.py; the overwrite helpers live in fsops.py."""
import errno
import os
import subprocess

import pytest

from conftest import FRING
from fsops import assert_overwrite_truncates

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE_DIR = os.environ.get("FRING_FIXTURE_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(FRING)), "tests", "fixtures")
TRANSPORTS = ["devfuse", "uring"]
NO_SETATTR_WARNING = ("plugin 'trunc_open_nosetattr' has no setattr and does "
                      "not declare FRING_FEATURE_ATOMIC_O_TRUNC: an open with "
                      "O_TRUNC of an existing file fails with ENOSYS")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def fixture(name):
    return os.path.join(FIXTURE_DIR, name + ".so")


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("kind", ["memfs", "passthrough", "kpassthrough",
                                  "trunc_open"])
def test_overwrite_leaves_exactly_the_new_content(mount, tmpdirs, kind,
                                                  transport):
    if kind == "memfs":
        mp = mount("memfs", transport=transport)
    elif kind == "trunc_open":
        mp = mount(fixture("trunc_open"), transport=transport)
    else:
        opts = {"source": tmpdirs("src")}
        if kind == "kpassthrough":
            opts["kernel_passthrough"] = "true"
        mp = mount("passthrough", opts, transport=transport)
    assert_overwrite_truncates(mp, tmpdirs("cpsrc"))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_no_setattr_fails_the_open_and_keeps_the_file(spawn, tmpdirs,
                                                      transport):
    mp = tmpdirs("mnt")
    f = spawn(["mount", fixture("trunc_open_nosetattr"), mp, "-t", transport],
              [mp])
    f.wait_ready(1)
    path = os.path.join(mp, "f")
    with open(path, "w") as fh:        # a new file: CREATE, no truncation
        fh.write("a long first line\n")
    r = subprocess.run(["sh", "-c", 'echo short > "$1"', "sh", path],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "Function not implemented" in r.stderr, r.stderr
    with pytest.raises(OSError) as e:
        os.open(path, os.O_WRONLY | os.O_TRUNC)
    assert e.value.errno == errno.ENOSYS
    with open(path) as fh:
        assert fh.read() == "a long first line\n"
    assert f.stop() == 0
    assert NO_SETATTR_WARNING in f.log(), f.log()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_null_swallows_an_overwrite(mount, transport):
    """null's files are fixed-size zeros that accept every write: an
    overwrite succeeds and changes nothing (plugins/null/README.md)."""
    mp = mount("null", {"size": "4096", "files": "1"}, transport=transport)
    path = os.path.join(mp, "f0")
    r = subprocess.run(["sh", "-c", 'echo short > "$1"', "sh", path],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(path, "rb") as fh:
        assert fh.read() == bytes(4096)


@pytest.fixture(scope="module")
def c_hello(tmp_path_factory):
    """sdk-examples/c-hello built against this checkout's headers."""
    out = str(tmp_path_factory.mktemp("c-hello") / "hello.so")
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC",
                    "-fvisibility=hidden", "-I", os.path.join(ROOT, "abi", "include"),
                    os.path.join(ROOT, "sdk-examples", "c-hello", "hello.c"),
                    "-o", out], check=True)
    return out


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_c_hello_refuses_an_overwrite_and_keeps_its_file(c_hello, mount,
                                                         transport):
    mp = mount(c_hello, transport=transport)
    path = os.path.join(mp, "hello")
    r = subprocess.run(["sh", "-c", 'echo short > "$1"', "sh", path],
                       capture_output=True, text=True)
    assert r.returncode != 0
    with open(path) as fh:
        assert fh.read() == "hello from fring\n"
