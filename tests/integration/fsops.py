# SPDX-License-Identifier: MIT
"""Filesystem checks shared by the mount tests: libc calls Python's os
module does not offer (renameat2) or hides (getxattr size probing), through
ctypes, and assert_overwrite_truncates (the O_TRUNC overwrites)."""

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                            ctypes.c_char_p, ctypes.c_uint]
_libc.getxattr.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                           ctypes.c_size_t]
_libc.getxattr.restype = ctypes.c_ssize_t

AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2


def _raise(path):
    e = ctypes.get_errno()
    raise OSError(e, os.strerror(e), path)


def renameat2(old, new, flags):
    if _libc.renameat2(AT_FDCWD, os.fsencode(old), AT_FDCWD,
                       os.fsencode(new), flags) != 0:
        _raise(old)


def getxattr_raw(path, name, size):
    """getxattr(2) with a caller-chosen buffer size: returns (ret, bytes);
    size 0 is the size probe, which returns the value's length."""
    buf = ctypes.create_string_buffer(size) if size else None
    ret = _libc.getxattr(os.fsencode(path), os.fsencode(name), buf, size)
    if ret < 0:
        _raise(path)
    return ret, (buf.raw[:ret] if buf else b"")


def assert_overwrite_truncates(mp, scratch):
    """The O_TRUNC overwrites a user does, on mountpoint mp (scratch: a
    directory off the mount): each must leave exactly the new bytes
    (issue: `echo short > f` kept ` first line`, `cp` of 1,000 bytes over
    50 MB left 52,428,800). Raises AssertionError naming the first miss."""
    import subprocess

    f = os.path.join(mp, "f")
    sh = ["sh", "-c", 'echo "a long first line" > "$1" && echo short > "$1"',
          "sh", f]
    r = subprocess.run(sh, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(f, "rb") as fh:
        assert fh.read() == b"short\n", "echo > f kept old bytes"

    big, small = os.path.join(mp, "big"), os.path.join(scratch, "small")
    with open(big, "wb") as fh:
        for _ in range(50):
            fh.write(b"\xab" * (1 << 20))
    assert os.stat(big).st_size == 50 << 20
    payload = bytes(range(256)) * 3 + b"x" * 232   # 1,000 bytes
    with open(small, "wb") as fh:
        fh.write(payload)
    r = subprocess.run(["cp", small, big], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert os.stat(big).st_size == 1000, "cp over a larger file kept its size"
    with open(big, "rb") as fh:
        assert fh.read() == payload

    # O_TRUNC without a write (and with O_RDWR) empties the file too.
    fd = os.open(f, os.O_WRONLY | os.O_TRUNC)
    os.close(fd)
    assert os.stat(f).st_size == 0
    with open(f, "wb") as fh:
        fh.write(b"0123456789")
    fd = os.open(f, os.O_RDWR | os.O_TRUNC)
    try:
        os.write(fd, b"ab")
    finally:
        os.close(fd)
    with open(f, "rb") as fh:
        assert fh.read() == b"ab"
    os.unlink(big)
    os.unlink(f)
