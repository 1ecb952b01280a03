"""fring.embed: the embedding API (abi/include/fring/fring.h),
through cffi in ABI mode: declarations generated from the headers at
import (fring._abi), libfring.so opened with dlopen.

    import fring
    rt = fring.Runtime()
    rt.add_mount("/mnt/x", "memfs", {"size": "64MiB"}, transport="uring")
    rt.run()          # serves until rt.stop() (any thread) or an unmount

Errors raise fring.Error (its .errno is the positive errno, its message
the runtime's one-line reason). run() releases the GIL while it serves.

libfring.so: FRING_LIBRARY, else this repository's build/lib, else the
system's library path.
"""
import ctypes.util
import errno as _errno
import os

import cffi

from . import _abi

__all__ = ["Error", "Runtime", "version", "ffi", "lib", "consts"]

ffi = cffi.FFI()
_cdef, consts = _abi.declarations(_abi.include_dir())
ffi.cdef(_cdef)
ffi.cdef("void free(void *);")
globals().update(consts)          # FRING_ABI_MAJOR, FRING_CAP_*, ...
__all__ += list(consts)


def _open_lib():
    cands = [os.environ.get("FRING_LIBRARY"),
             os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "..", "..", "build", "lib", "libfring.so"),
             ctypes.util.find_library("fring")]
    for c in cands:
        if c and (os.path.exists(c) or not os.path.isabs(c)):
            try:
                return ffi.dlopen(c)
            except OSError:
                continue
    raise OSError("libfring.so not found: set FRING_LIBRARY to its path")


lib = _open_lib()
_libc = ffi.dlopen(None)


class Error(OSError):
    """A fring call failed: errno and the runtime's message."""


def _check(ret, errp, what):
    msg = None
    if errp[0] != ffi.NULL:
        msg = ffi.string(errp[0]).decode(errors="replace")
        _libc.free(errp[0])
    if ret < 0:
        code = -ret
        raise Error(code, msg or "%s: %s" % (what, os.strerror(code)))
    return ret


def version():
    """fring's product version, e.g. "0.1.0"."""
    return ffi.string(lib.fring_version()).decode()


class Runtime:
    """One fring runtime (fring_runtime_new): add mounts, then run()."""

    def __init__(self):
        errp = ffi.new("char **")
        rt = lib.fring_runtime_new(errp)
        if rt == ffi.NULL:
            _check(-_errno.ENOMEM, errp, "fring_runtime_new")
        self._rt = ffi.gc(rt, lib.fring_runtime_free)

    def add_yaml(self, path):
        """Validate a YAML file and add each of its mounts."""
        errp = ffi.new("char **")
        _check(lib.fring_runtime_add_yaml(self._rt, os.fsencode(path), errp),
               errp, "add_yaml")

    def add_mount(self, mountpoint, plugin, options=None, mount_options=(),
                  transport=None):
        """Add one mount: plugin by name or path, options a dict of plugin
        options, mount_options e.g. ["default_permissions"], transport
        "auto" (None), "uring" or "devfuse"."""
        keep = []

        def c(s):
            b = ffi.new("char[]", s.encode() if isinstance(s, str) else s)
            keep.append(b)
            return b
        opts = list((options or {}).items())
        kv = ffi.new("struct fring_kv[]", max(len(opts), 1))
        for i, (k, v) in enumerate(opts):
            kv[i].key, kv[i].value = c(k), c(str(v))
        mo = ffi.new("struct fring_kv[]", max(len(mount_options), 1))
        for i, k in enumerate(mount_options):
            mo[i].key, mo[i].value = c(k), ffi.NULL
        spec = ffi.new("struct fring_mount_spec *")
        spec.size = ffi.sizeof("struct fring_mount_spec")
        spec.mountpoint, spec.plugin = c(mountpoint), c(plugin)
        spec.nr_options, spec.options = len(opts), kv
        spec.nr_mount_options, spec.mount_options = len(mount_options), mo
        spec.transport_mode = c(transport) if transport else ffi.NULL
        errp = ffi.new("char **")
        _check(lib.fring_runtime_add_mount(self._rt, spec, errp), errp, "add_mount")

    def run(self):
        """Mount everything added and serve until stop() or an unmount;
        unmounts what it mounted before returning. Python runs its signal
        handlers only between bytecodes of the main thread, so while run()
        blocks there Ctrl-C cannot reach it: call run() in a thread and
        stop() from the main thread (or a signal handler there)."""
        errp = ffi.new("char **")
        _check(lib.fring_runtime_run(self._rt, errp), errp, "run")

    def stop(self):
        """Ask run() to return (thread- and signal-safe)."""
        lib.fring_runtime_stop(self._rt)
