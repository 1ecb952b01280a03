# SPDX-License-Identifier: MIT
"""Methods' answers into the C structs the host's replies take, each
checked: a wrong type is a TypeError (logged with its traceback, EIO)."""
import math
import os

from . import serve as S
from .types import Attr, Entry, Open, NOW


def timeout_ns(fs, name, value=None):
    return int(float(getattr(fs, name, 1.0) if value is None else value) * 1e9)


def _split(seconds, ns):
    """(sec, nsec) of a time given in ns (int) or seconds (float)."""
    if ns is not None:
        return divmod(int(ns), 10 ** 9)
    t = float(seconds)
    sec = math.floor(t)
    return sec, min(int(round((t - sec) * 1e9)), 999999999)


def fill_attr(c, a):
    if not isinstance(a, Attr):
        raise TypeError("expected an Attr, not %s" % type(a).__name__)
    c.ino, c.mode, c.size, c.nlink = a.ino, a.mode, a.size, a.nlink
    c.uid, c.gid, c.blksize = a.uid, a.gid, a.blksize
    c.rdev = getattr(a, "rdev", 0) or 0
    blocks = getattr(a, "blocks", None)
    c.blocks = (a.size + 511) // 512 if blocks is None else blocks
    for name in ("atime", "mtime", "ctime"):
        sec, nsec = _split(getattr(a, name), getattr(a, name + "_ns", None))
        setattr(c, name + "_sec", sec)
        setattr(c, name + "_nsec", nsec)


def entry(mnt, ans):
    """A struct fring_entry * from an Attr or an Entry."""
    e = S.ffi.new("struct fring_entry *")
    if isinstance(ans, Entry):
        attr, e.generation = ans.attr, ans.generation
        et, at = ans.entry_timeout, ans.attr_timeout
    else:
        attr, et, at = ans, None, None
    fill_attr(e.attr, attr)
    e.ino = attr.ino
    e.entry_timeout_ns = timeout_ns(mnt.fs, "entry_timeout", et)
    e.attr_timeout_ns = timeout_ns(mnt.fs, "attr_timeout", at)
    return e


def open_out(res):
    """A struct fring_open_out * from an fh (int), None (0) or an Open."""
    o = S.ffi.new("struct fring_open_out *")
    lib = S.lib
    if isinstance(res, Open):
        o.fh = res.fh or 0
        o.open_flags = (
            (lib.FRING_FOPEN_DIRECT_IO if res.direct_io else 0)
            | (lib.FRING_FOPEN_KEEP_CACHE if res.keep_cache else 0)
            | (lib.FRING_FOPEN_NONSEEKABLE if getattr(res, "nonseekable", 0) else 0)
            | (lib.FRING_FOPEN_CACHE_DIR if getattr(res, "cache_dir", 0) else 0)
            | (lib.FRING_FOPEN_IO_URING_ZERO_COPY if res.zero_copy else 0))
    elif res is None or isinstance(res, int):
        o.fh = res or 0
    else:
        raise TypeError("expected an fh (int), None or Open, not %s"
                        % type(res).__name__)
    return o


def name_bytes(value, what):
    """str (surrogateescape) or bytes -> bytes."""
    if isinstance(value, str):
        return os.fsencode(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError("%s must be str or bytes, not %s" % (what, type(value).__name__))


def decode(ptr, length):
    """A name from the request: str, undecodable bytes kept (surrogateescape)."""
    return S.ffi.unpack(ptr, length).decode(errors="surrogateescape")


def time_arg(valid, bit, now_bit, sec, nsec):
    """(float seconds or NOW or None, int ns or NOW or None) of a SETATTR time."""
    if valid & now_bit:
        return NOW, NOW
    if valid & bit:
        ns = sec * 10 ** 9 + nsec
        return ns / 1e9, ns
    return None, None
