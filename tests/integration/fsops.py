"""libc calls Python's os module does not offer (renameat2) or hides
(getxattr size probing), through ctypes."""

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
