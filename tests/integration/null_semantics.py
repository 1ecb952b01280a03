# SPDX-License-Identifier: MIT
"""What a mount of plugins/null or one of its ports (sdk-examples/rust-null,
sdk-examples/python-null) must do: `files` files f0... of `size` bytes that
read as zeros and swallow writes. Shared by their tests."""
import errno
import os

import pytest


def check_null(mnt, files, size, truncate=True, statfs=True):
    names = ["f%d" % n for n in range(files)]
    assert sorted(os.listdir(mnt)) == sorted(names)
    path = os.path.join(mnt, names[-1])
    st = os.stat(path)
    assert st.st_size == size and oct(st.st_mode & 0o777) == "0o666", st
    fd = os.open(path, os.O_RDWR)
    try:
        assert os.pread(fd, 1 << 20, 0) == bytes(min(size, 1 << 20))
        assert os.pread(fd, 4096, size - 100) == bytes(100)          # to EOF
        assert os.pread(fd, 4096, size) == b""
        assert os.pwrite(fd, b"x" * 4096, 0) == 4096                 # swallowed
    finally:
        os.close(fd)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        assert os.pread(fd, 1 << 20, 0) == bytes(min(size, 1 << 20))
    finally:
        os.close(fd)
    with open(path, "rb") as f:                                      # nothing stored
        assert f.read(4096) == bytes(4096)
    if truncate:
        with open(os.path.join(mnt, "f0"), "w") as f:  # O_TRUNC: accepted, dropped
            f.write("gone")
        assert os.stat(os.path.join(mnt, "f0")).st_size == size
    for name in ("f%d" % files, "f01", "g0", "f"):
        with pytest.raises(OSError) as e:
            os.stat(os.path.join(mnt, name))
        assert e.value.errno == errno.ENOENT, name
    with pytest.raises(OSError):
        os.close(os.open(os.path.join(mnt, "new"), os.O_CREAT | os.O_WRONLY))
    if statfs:
        st = os.statvfs(mnt)
        assert st.f_bsize == 4096 and st.f_blocks == files * (size // 4096), st
