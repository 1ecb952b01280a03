# SPDX-License-Identifier: MIT
"""fring.embed: the embedding API (abi/include/fring/fring.h),
through cffi in ABI mode: declarations generated from the headers at
import (fring._abi), libfring.so opened with dlopen.

    import fring
    rt = fring.Runtime()
    rt.add_mount("/mnt/x", "memfs", {"size": "64MiB"}, transport="uring")
    rt.run()          # serves until rt.stop() (any thread) or an unmount

Errors raise fring.Error (its .errno is the positive errno, its message
the runtime's one-line reason). run() releases the GIL while it serves.

libfring.so: FRING_LIBRARY (a path) if set, and only it; else this
checkout's build/lib; else the installed prefix: that of the `fring` on
PATH (PREFIX/bin/fring -> PREFIX/lib, lib64 or lib/<multiarch>), the
libdir of pkg-config's `fring`, Python's own prefix; else the system's
library path (ld.so.cache, LD_LIBRARY_PATH). The error when none loads
names each place tried and why it failed.
"""
import errno as _errno
import os
import shutil
import subprocess
import sys
import sysconfig

import cffi

from . import _abi

__all__ = ["Error", "Runtime", "version", "ffi", "lib", "consts"]

ffi = cffi.FFI()
_cdef, consts = _abi.declarations(_abi.include_dir())
ffi.cdef(_cdef)
ffi.cdef("void free(void *);")
globals().update(consts)          # FRING_ABI_MAJOR, FRING_CAP_*, ...
__all__ += list(consts)


def library_candidates():
    """Where libfring.so is looked for, in order: (path or name, why).
    FRING_LIBRARY, when set, is the only one."""
    env = os.environ.get("FRING_LIBRARY")
    if env:
        return [(env, "FRING_LIBRARY")]
    cands = []
    if _abi.REPO:                         # a checkout, not an install
        cands.append((os.path.join(_abi.REPO, "build", "lib", "libfring.so"),
                      "this checkout's build"))
    libdirs = []
    fring = shutil.which("fring")       # PREFIX/bin/fring: PREFIX/lib...
    if fring:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(fring)))
        libdirs += [(os.path.join(prefix, d), "the prefix of %s" % fring)
                    for d in _LIBDIRS]
    if shutil.which("pkg-config"):
        r = subprocess.run(["pkg-config", "--variable=libdir", "fring"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip():
            libdirs.append((r.stdout.strip(), "pkg-config fring"))
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        libdirs += [(os.path.join(prefix, d), "Python's prefix") for d in _LIBDIRS]
    cands += [(os.path.join(d, "libfring.so"), why) for d, why in libdirs]
    cands.append(("libfring.so", "the system's library path"))
    return cands


# CMAKE_INSTALL_LIBDIR: lib, lib64, or lib/<multiarch> (Debian, /usr)
_LIBDIRS = ["lib", "lib64"] + (["lib/" + sysconfig.get_config_var("MULTIARCH")]
                               if sysconfig.get_config_var("MULTIARCH") else [])


def _open_lib():
    tried = []
    for path, why in library_candidates():
        if os.path.isabs(path) and not os.path.exists(path):
            tried.append("%s (%s): no such file" % (path, why))
            continue
        try:
            return ffi.dlopen(path)
        except OSError as e:
            tried.append("%s (%s): %s" % (path, why, e))
    raise OSError(_errno.ENOENT, "libfring.so not found; tried: %s. Set "
                  "FRING_LIBRARY to its path (a build's lib/libfring.so, "
                  "or PREFIX/lib/libfring.so of an install)" % "; ".join(tried))


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


def _bad(what, value):
    return Error(_errno.EINVAL, "%s: expected %s, got %r" % (what[0], what[1], value))


def _cstr(keep, value, what):
    """A str, bytes or path as a C string, kept alive in keep."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        value = os.fsencode(value)
    if not isinstance(value, bytes) or b"\0" in value:
        raise _bad((what, "a string without NUL bytes"), value)
    b = ffi.new("char[]", value)
    keep.append(b)
    return b


def _pairs(options):
    """Plugin options as (key, value) pairs: a dict, or pairs already."""
    if options is None:
        return []
    if isinstance(options, dict):
        return list(options.items())
    what = ("options", "a dict or (key, value) pairs")
    if isinstance(options, (str, bytes)):
        raise _bad(what, options)
    try:
        pairs = list(options)
    except TypeError:
        raise _bad(what, options) from None
    if not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in pairs):
        raise _bad(what, options)
    return pairs


def _names(mount_options):
    """Mount options as a list of names: a list, or "a,b" as with -O."""
    if mount_options is None:
        return []
    if isinstance(mount_options, (str, bytes)):
        sep = "," if isinstance(mount_options, str) else b","
        return [o for o in mount_options.split(sep) if o]
    try:
        return list(mount_options)
    except TypeError:
        raise _bad(("mount_options", "a list of strings"), mount_options) from None


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
        keep = []
        errp = ffi.new("char **")
        _check(lib.fring_runtime_add_yaml(self._rt, _cstr(keep, path, "path"),
                                          errp), errp, "add_yaml")

    def add_mount(self, mountpoint, plugin, options=None, mount_options=(),
                  transport=None):
        """Add one mount: plugin by name or path, options a dict (or a list
        of (key, value) pairs, where a key may repeat) of plugin options,
        mount_options a list of strings (or one comma-separated string, as
        `fring mount -O`) e.g. ["default_permissions"], transport "auto"
        (None), "uring" or "devfuse". Arguments of the wrong type raise
        fring.Error (EINVAL) like every other refusal."""
        keep = []
        opts = _pairs(options)
        mopts = _names(mount_options)
        kv = ffi.new("struct fring_kv[]", max(len(opts), 1))
        for i, (k, v) in enumerate(opts):
            kv[i].key = _cstr(keep, k, "option name")
            kv[i].value = _cstr(keep, v if isinstance(v, (str, bytes)) else str(v),
                                "option value")
        mo = ffi.new("struct fring_kv[]", max(len(mopts), 1))
        for i, k in enumerate(mopts):
            mo[i].key, mo[i].value = _cstr(keep, k, "mount option"), ffi.NULL
        spec = ffi.new("struct fring_mount_spec *")
        spec.size = ffi.sizeof("struct fring_mount_spec")
        spec.mountpoint = _cstr(keep, mountpoint, "mountpoint")
        spec.plugin = _cstr(keep, plugin, "plugin")
        spec.nr_options, spec.options = len(opts), kv
        spec.nr_mount_options, spec.mount_options = len(mopts), mo
        spec.transport_mode = (ffi.NULL if transport is None
                               else _cstr(keep, transport, "transport"))
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
