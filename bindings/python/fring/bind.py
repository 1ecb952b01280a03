# SPDX-License-Identifier: MIT
"""fring_python.so's plugin descriptor and callbacks (cffi extern
"Python"): the lifecycle (create, config, config_complete, init,
destroy), the takeover's state hooks (state.py) and one callback per operation of optable.OPS, which hands the
request to its handler (ops.py, dirs.py) through serve.serve."""
import difflib
import errno
import importlib.util
import inspect

from . import dirs, ops, state
from . import serve as S
from .optable import METHODS, OPS
from .types import Conn

_mounts = {}     # handle -> Mount (keeps handles and objects alive)
_keep = []       # C memory the host keeps pointers to

# op -> handler (the names ops.py cannot use as such get a trailing _)
HANDLERS = {op: getattr(ops, op, None) or getattr(ops, op + "_", None)
            or getattr(dirs, op) for op, _ in OPS}


def unknown_methods(fs):
    """The public methods of fs's class that are no operation."""
    names = set()
    for klass in type(fs).__mro__:
        if klass is object:
            continue
        for name, value in vars(klass).items():
            if (not name.startswith("_") and name not in METHODS
                    and (callable(value) or isinstance(value, (staticmethod,
                                                               classmethod)))
                    and not inspect.isclass(value)):
                names.add(name)
    return sorted(names)


def _warn_unknown(mnt):
    for name in unknown_methods(mnt.fs):
        near = difflib.get_close_matches(name, METHODS, 1)
        S.log(mnt.m, S.lib.FRING_LOG_WARN,
              "python: %s.%s is not an operation fring.plugin knows%s; it is "
              "never called (helpers: name them with a leading _)" % (
                  type(mnt.fs).__name__, name,
                  " (did you mean %s?)" % near[0] if near else ""))


def _negotiate(mnt, conn):
    """What the class lacks or says, into conn.want (FUSE_INIT)."""
    lib, has, fs = S.lib, mnt.has, mnt.fs
    want = conn.want
    if getattr(fs, "atomic_o_trunc", False):
        want |= lib.FRING_CAP_ATOMIC_O_TRUNC
    else:
        want &= ~lib.FRING_CAP_ATOMIC_O_TRUNC
    if "readdirplus" not in has:
        want &= ~(lib.FRING_CAP_READDIRPLUS | lib.FRING_CAP_READDIRPLUS_AUTO)
    if not {"getlk", "setlk"} <= has:
        want &= ~lib.FRING_CAP_POSIX_LOCKS
    if "flock" not in has:
        want &= ~lib.FRING_CAP_FLOCK_LOCKS
    # The kernel clears setuid/setgid on write, truncate and chown itself
    # (a SETATTR of the mode), rather than leaving it to every class.
    want &= ~(lib.FRING_CAP_HANDLE_KILLPRIV | lib.FRING_CAP_HANDLE_KILLPRIV_V2)
    conn.want = want
    if "init" not in has:
        return 0
    c = Conn()
    for k in ("capable", "want", "max_write", "max_readahead", "time_gran",
              "proto_major", "proto_minor", "nr_queues"):
        setattr(c, k, getattr(conn, k))
    c.transport = "uring" if conn.transport == lib.FRING_TRANSPORT_URING else "devfuse"
    S.run_now(mnt, fs.init, c)
    conn.want = c.want
    conn.max_write, conn.max_readahead = c.max_write, c.max_readahead
    conn.time_gran = c.time_gran
    return 0


def _descriptor(ffi, lib):
    table = ffi.new("struct fring_fs_ops *")
    table.size = ffi.sizeof("struct fring_fs_ops")
    for op, _ in OPS:
        setattr(table, op, getattr(lib, "fring_py_op_" + op))
    p = ffi.new("struct fring_plugin *")
    strings = [ffi.new("char[]", s) for s in (
        b"python", b"1.0", b"a filesystem written in Python (module: PATH)",
        b"module: path: the Python file defining Filesystem (required)\n"
        b"other keys: handed to Filesystem(options)\n")]
    p.size = ffi.sizeof("struct fring_plugin")
    p.magic = lib.FRING_PLUGIN_MAGIC
    p.abi_major, p.abi_minor = lib.FRING_ABI_MAJOR, lib.FRING_ABI_MINOR
    p.thread_model = lib.FRING_THREAD_SERIALIZE
    p.name, p.version, p.description, p.config_help = strings
    p.create = lib.fring_py_create
    p.config = lib.fring_py_config
    p.config_complete = lib.fring_py_config_complete
    p.init = lib.fring_py_init
    p.destroy = lib.fring_py_destroy
    # Every Python mount offers a takeover; a class without the methods
    # refuses it at state_save (state.py), naming them.
    p.state_save = lib.fring_py_state_save
    p.state_load = lib.fring_py_state_load
    p.ops = table
    _keep.extend([table, p, strings])
    return p


def _load(mnt, path):
    spec = importlib.util.spec_from_file_location("fring_fs_%d" % len(_mounts), path)
    if spec is None:
        raise ImportError("not a Python file")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mnt.attach(mod.Filesystem(dict(mnt.options)))


def _op_callback(ffi, op, handler):
    @ffi.def_extern(name="fring_py_op_" + op)
    def callback(inst, r, a):
        S.serve(ffi.from_handle(inst), r, op, handler, a)


def bind(ffi, lib):
    """Called once by fring_python.so's init code with its ffi and lib."""
    S.ffi, S.lib = ffi, lib

    @ffi.def_extern()
    def fring_py_entry(h):
        S.host = h
        return _descriptor(ffi, lib)

    @ffi.def_extern(error=-errno.EIO)
    def fring_py_create(m, inst):
        mnt = S.Mount(m)
        h = ffi.new_handle(mnt)
        _mounts[h] = mnt
        inst[0] = h
        return 0

    @ffi.def_extern(error=-errno.EIO)
    def fring_py_config(inst, key, value):
        ffi.from_handle(inst).options[ffi.string(key).decode()] = \
            ffi.string(value).decode()
        return 0

    @ffi.def_extern(error=-errno.EIO)
    def fring_py_config_complete(inst):
        mnt = ffi.from_handle(inst)
        path = mnt.options.pop("module", None)
        if not path:
            S.log(mnt.m, lib.FRING_LOG_ERROR,
                  "python: option 'module' (a Python file) is required")
            return -errno.EINVAL
        try:
            _load(mnt, path)
        except Exception as e:
            S.log(mnt.m, lib.FRING_LOG_ERROR, "python: module %s: %s: %s" % (
                path, type(e).__name__, e))
            return -errno.EINVAL
        if S.is_async(mnt.fs):
            mnt.loop = S.event_loop()
        _warn_unknown(mnt)
        return 0

    @ffi.def_extern(error=-errno.EIO)
    def fring_py_init(inst, conn):
        mnt = ffi.from_handle(inst)
        try:
            return _negotiate(mnt, conn)
        except OSError as e:
            S.fail(mnt, None, "init", e)
            code = e.errno if isinstance(e.errno, int) else errno.EIO
            return -code if 0 < code < S.ERRNO_LIMIT else -errno.EIO
        except BaseException as e:
            S.fail(mnt, None, "init", e)
            return -errno.EIO

    @ffi.def_extern()
    def fring_py_destroy(inst):
        mnt = ffi.from_handle(inst)
        S.close(mnt)
        for h, other in list(_mounts.items()):
            if other is mnt:
                del _mounts[h]

    @ffi.def_extern(error=-errno.EIO)
    def fring_py_state_save(inst, fd, version):
        return state.save(ffi.from_handle(inst), fd, version)

    @ffi.def_extern(error=-errno.EIO)
    def fring_py_state_load(inst, fd, version):
        return state.load(ffi.from_handle(inst), fd, version)

    @ffi.def_extern()
    def fring_py_op_forget(inst, items, count):
        S.serve(ffi.from_handle(inst), None, "forget", ops.forget,
                [(items[i].nodeid, items[i].nlookup) for i in range(count)])

    for op, args in OPS:
        if args:
            _op_callback(ffi, op, HANDLERS[op])
