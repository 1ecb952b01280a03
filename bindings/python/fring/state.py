# SPDX-License-Identifier: MIT
"""The takeover's state hooks for a Python filesystem (`fring restart`,
plugin.h ABI 1.7): the old instance's `state_save()` returns
`(version, bytes)`, which fring hands to the new instance's
`state_load(version, data)` before any request. Node ids and file handles
the kernel holds must mean the same after the load.

A class without both methods refuses the takeover (the old server keeps
serving). A version state_load cannot read: raise ValueError (the
takeover is refused with EPROTO, the old server keeps serving); an
OSError's errno is passed on; anything else is EIO."""
import errno
import os

from . import serve as S


def _code(e):
    if isinstance(e, ValueError):
        return errno.EPROTO
    if isinstance(e, OSError) and isinstance(e.errno, int) and \
            0 < e.errno < S.ERRNO_LIMIT:
        return e.errno
    return errno.EIO


def _report(mnt, what, e):
    if isinstance(e, ValueError):  # a version it cannot read: said plainly
        S.log(mnt.m, S.lib.FRING_LOG_ERROR, "python: %s: %s" % (what, e))
    else:
        S.fail(mnt, None, what, e)


def save(mnt, fd, version):
    fs = mnt.fs
    if not (hasattr(fs, "state_save") and hasattr(fs, "state_load")):
        S.log(mnt.m, S.lib.FRING_LOG_ERROR,
              "python: %s has no state_save/state_load methods: it cannot "
              "hand its state over" % type(fs).__name__)
        return -errno.EOPNOTSUPP
    try:
        ver, data = S.run_now(mnt, fs.state_save)
        view = memoryview(bytes(data))
        while view:
            view = view[os.write(fd, view):]
        version[0] = int(ver)
        return 0
    except BaseException as e:
        _report(mnt, "state_save", e)
        return -_code(e)


def load(mnt, fd, version):
    chunks = []
    try:
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        S.run_now(mnt, mnt.fs.state_load, int(version), b"".join(chunks))
        return 0
    except BaseException as e:
        _report(mnt, "state_load", e)
        return -_code(e)
