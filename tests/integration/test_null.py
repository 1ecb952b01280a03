# SPDX-License-Identifier: MIT
"""The null plugin: files of zeros that swallow writes (plugins/null), over
both transports, and its option errors."""
import errno
import os

import pytest

from conftest import run_fring


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_zeros_in_writes_dropped(mount, transport):
    mnt = mount("null", {"files": "3", "size": "1MiB"}, transport=transport)
    assert sorted(os.listdir(mnt)) == ["f0", "f1", "f2"]
    path = os.path.join(mnt, "f1")
    assert os.stat(path).st_size == 1 << 20
    fd = os.open(path, os.O_RDWR)
    try:
        assert os.pread(fd, 1 << 20, 0) == bytes(1 << 20)
        assert os.pread(fd, 4096, (1 << 20) - 100) == bytes(100)  # to EOF
        assert os.pread(fd, 4096, 1 << 20) == b""
        assert os.pwrite(fd, b"x" * 4096, 0) == 4096
    finally:
        os.close(fd)
    with open(path, "rb") as f:                  # nothing was stored
        assert f.read(4096) == bytes(4096)
    with open(os.path.join(mnt, "f0"), "w") as f:  # O_TRUNC: accepted, dropped
        f.write("gone")
    assert os.stat(os.path.join(mnt, "f0")).st_size == 1 << 20
    for name in ("f3", "f01", "g0"):
        with pytest.raises(OSError) as e:
            os.stat(os.path.join(mnt, name))
        assert e.value.errno == errno.ENOENT
    with pytest.raises(OSError):
        os.close(os.open(os.path.join(mnt, "new"), os.O_CREAT | os.O_WRONLY))
    st = os.statvfs(mnt)
    assert st.f_bsize == 4096 and st.f_blocks == 3 * 256


@pytest.mark.parametrize("option, message", [
    ("files=0", "files: expected a count"),
    ("size=lots", "size: expected a size"),
    ("size=8EiB", "below 8EiB"),
    ("colour=red", "unknown option 'colour'"),
])
def test_bad_options_are_refused(tmpdirs, option, message):
    r = run_fring("mount", "null", tmpdirs("mnt"), "-o", option)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
