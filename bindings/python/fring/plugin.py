"""Filesystems written in Python, served by fring through fring_python.so
(built by `python3 -m fring.build_plugin OUTDIR`).

A module (the mount option `module: PATH`) defines `Filesystem`, a class
whose constructor takes the mount's other options as a dict of strings,
and some of these methods (the FUSE low-level vocabulary, inode based;
inode 1 is the root). Each returns its answer or raises OSError(errno):

    lookup(parent, name)            -> Attr of the child (its ino is the inode)
    getattr(ino)                    -> Attr
    open(ino, flags)                -> fh (int), or None for 0
    read(ino, fh, offset, size)     -> bytes (at most size)
    write(ino, fh, offset, data)    -> bytes written (int, at most len(data))
    release(ino, fh)                -> None
    readdir(ino)                    -> list of (name, ino, mode) without . and ..
    forget(ino, nlookup)            -> None (no reply)

Methods left out answer ENOSYS (the kernel then stops asking, where it
can). Attributes are cached by the kernel for `attr_timeout` seconds (a
class attribute, default 1.0), names for `entry_timeout`. Calls are
serialised (one at a time, under the GIL); any other exception (SystemExit
included) or a wrong return type is logged with its traceback and answers
EIO. An answer the kernel cannot be given (an OSError whose errno is not
1..511, a read longer than size, a write count over len(data)) answers EIO
and is logged once per mount and kind (each distinct errno once). readdir
is called once per pass over an open directory (opendir or rewinddir);
the kernel's later chunks are served from that listing.
"""
import errno
import importlib.util
import os
import stat
import sys
import traceback

__all__ = ["Attr"]


class Attr:
    """The attributes of an inode (struct fring_attr). Times are seconds
    (float); size in bytes; mode includes the file type (stat.S_IFREG...)."""

    def __init__(self, ino, mode, size=0, nlink=1, uid=0, gid=0,
                 atime=0.0, mtime=0.0, ctime=0.0, blksize=4096):
        self.ino, self.mode, self.size, self.nlink = ino, mode, size, nlink
        self.uid, self.gid, self.blksize = uid, gid, blksize
        self.atime, self.mtime, self.ctime = atime, mtime, ctime


ffi = lib = host = None
_mounts = {}     # handle -> _Mount (keeps handles and objects alive)
_keep = []       # C memory the host keeps pointers to


# errnos the kernel accepts in a reply: 1..511 (its FUSE_ERRNO_LIMIT).
ERRNO_LIMIT = 512


class _Mount:
    def __init__(self, m):
        self.m = m
        self.options = {}
        self.fs = None
        self.dirs = {}      # open directory fh -> its listing, None: not read
        self.next_dir = 0
        self.warned = set()  # what _warn_once logged already


class _BadAnswer(Exception):
    """A method answered something the kernel cannot be given: (kind, what)."""


def _log(m, level, text):
    if host is not None:
        host.log(m, level, text.encode(errors="replace"))


def _warn_once(mnt, key, text):
    """Log once per mount and key: a time-based rate limit would swallow a
    different problem (another errno) that follows within its window."""
    if key not in mnt.warned:
        mnt.warned.add(key)
        _log(mnt.m, lib.FRING_LOG_ERROR, text)


def _mount(inst):
    return ffi.from_handle(inst)


def _fill_attr(c, a):
    c.ino, c.mode, c.size, c.nlink = a.ino, a.mode, a.size, a.nlink
    c.uid, c.gid, c.blksize = a.uid, a.gid, a.blksize
    c.blocks = (a.size + 511) // 512
    for name in ("atime", "mtime", "ctime"):
        t = float(getattr(a, name))
        setattr(c, name + "_sec", int(t))
        setattr(c, name + "_nsec", int((t - int(t)) * 1e9))


def _timeout_ns(fs, name):
    return int(float(getattr(fs, name, 1.0)) * 1e9)


def _answer(mnt, r, opname, fn):
    """Run fn (which replies itself) and turn exceptions into errors."""
    try:
        fn()
    except OSError as e:
        code = e.errno
        if not isinstance(code, int) or not 0 < code < ERRNO_LIMIT:
            _warn_once(mnt, ("errno", repr(code)),
                       "python: %s raised OSError with errno %r, not an errno "
                       "(1..%d); answered EIO" % (opname, code, ERRNO_LIMIT - 1))
            code = errno.EIO
        host.reply_err(r, -code)
    except _BadAnswer as e:
        _warn_once(mnt, (opname, e.args[0]),
                   "python: %s %s; answered EIO" % (opname, e.args[1]))
        host.reply_err(r, -errno.EIO)
    except BaseException:
        # SystemExit and KeyboardInterrupt too: an unanswered request would
        # leave its caller waiting in the kernel.
        _log(mnt.m, lib.FRING_LOG_ERROR,
             "python: %s raised:\n%s" % (opname, traceback.format_exc()))
        host.reply_err(r, -errno.EIO)


def _method(mnt, r, name):
    fn = getattr(mnt.fs, name, None)
    if fn is None:
        host.reply_err(r, -errno.ENOSYS)
    return fn


def _bind(ffi_, lib_):
    """Called once by fring_python.so's init code with its ffi and lib."""
    global ffi, lib
    ffi, lib = ffi_, lib_

    @ffi.def_extern()
    def fring_plugin_entry_v1(h):
        global host
        host = h
        ops = ffi.new("struct fring_fs_ops *")
        ops.size = ffi.sizeof("struct fring_fs_ops")
        for op in ("lookup", "forget", "getattr", "open", "read", "write",
                   "release", "opendir", "readdir", "releasedir"):
            setattr(ops, op, getattr(lib, "fring_py_" + op))
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
        p.destroy = lib.fring_py_destroy
        p.ops = ops
        _keep.extend([ops, p, strings])
        return p

    @ffi.def_extern(error=-errno.EIO)
    def fring_py_create(m, inst):
        mnt = _Mount(m)
        h = ffi.new_handle(mnt)
        _mounts[h] = mnt
        inst[0] = h
        return 0

    @ffi.def_extern(error=-errno.EIO)
    def fring_py_config(inst, key, value):
        _mount(inst).options[ffi.string(key).decode()] = ffi.string(value).decode()
        return 0

    @ffi.def_extern(error=-errno.EIO)
    def fring_py_config_complete(inst):
        mnt = _mount(inst)
        path = mnt.options.pop("module", None)
        if not path:
            _log(mnt.m, lib.FRING_LOG_ERROR,
                 "python: option 'module' (a Python file) is required")
            return -errno.EINVAL
        try:
            spec = importlib.util.spec_from_file_location(
                "fring_fs_%d" % len(_mounts), path)
            if spec is None:
                raise ImportError("not a Python file")
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            mnt.fs = mod.Filesystem(dict(mnt.options))
        except Exception as e:
            _log(mnt.m, lib.FRING_LOG_ERROR, "python: module %s: %s: %s" % (
                path, type(e).__name__, e))
            return -errno.EINVAL
        return 0

    @ffi.def_extern()
    def fring_py_destroy(inst):
        for h, mnt in list(_mounts.items()):
            if mnt is _mount(inst):
                del _mounts[h]

    @ffi.def_extern()
    def fring_py_lookup(inst, r, a):
        mnt = _mount(inst)

        def go():
            fn = _method(mnt, r, "lookup")
            if fn:
                name = ffi.unpack(a.name, a.namelen).decode(errors="surrogateescape")
                at = fn(a.parent, name)
                e = ffi.new("struct fring_entry *")
                e.ino = at.ino
                e.entry_timeout_ns = _timeout_ns(mnt.fs, "entry_timeout")
                e.attr_timeout_ns = _timeout_ns(mnt.fs, "attr_timeout")
                _fill_attr(e.attr, at)
                host.reply_entry(r, e)
        _answer(mnt, r, "lookup", go)

    @ffi.def_extern()
    def fring_py_forget(inst, items, count):
        fn = getattr(_mount(inst).fs, "forget", None)
        if fn:
            for i in range(count):
                try:
                    fn(items[i].nodeid, items[i].nlookup)
                except Exception:
                    _log(_mount(inst).m, lib.FRING_LOG_ERROR,
                         "python: forget raised:\n" + traceback.format_exc())

    @ffi.def_extern()
    def fring_py_getattr(inst, r, a):
        mnt = _mount(inst)

        def go():
            fn = _method(mnt, r, "getattr")
            if fn:
                c = ffi.new("struct fring_attr *")
                _fill_attr(c, fn(a.nodeid))
                host.reply_attr(r, c, _timeout_ns(mnt.fs, "attr_timeout"))
        _answer(mnt, r, "getattr", go)

    @ffi.def_extern()
    def fring_py_open(inst, r, a):
        mnt = _mount(inst)

        def go():
            fn = getattr(mnt.fs, "open", None)
            fh = fn(a.nodeid, a.flags) if fn else 0
            o = ffi.new("struct fring_open_out *")
            o.fh = fh or 0
            host.reply_open(r, o)
        _answer(mnt, r, "open", go)

    @ffi.def_extern()
    def fring_py_read(inst, r, a):
        mnt = _mount(inst)

        def go():
            fn = _method(mnt, r, "read")
            if fn:
                data = fn(a.nodeid, a.fh, a.offset, a.len)
                if not isinstance(data, (bytes, bytearray, memoryview)):
                    raise TypeError("read must return bytes, not %s"
                                    % type(data).__name__)
                data = bytes(data)
                if len(data) > a.len:
                    raise _BadAnswer("long", "returned %d bytes, more than the "
                                     "%d asked for" % (len(data), a.len))
                host.reply_data(r, ffi.from_buffer(data), len(data))
        _answer(mnt, r, "read", go)

    @ffi.def_extern()
    def fring_py_write(inst, r, a):
        mnt = _mount(inst)

        def go():
            fn = _method(mnt, r, "write")
            if fn:
                n = fn(a.nodeid, a.fh, a.offset, ffi.buffer(a.data, a.len)[:])
                if not isinstance(n, int) or not 0 <= n <= a.len:
                    raise _BadAnswer("count", "returned %r for %d bytes (an int "
                                     "0..%d)" % (n, a.len, a.len))
                host.reply_write(r, n)
        _answer(mnt, r, "write", go)

    @ffi.def_extern()
    def fring_py_release(inst, r, a):
        mnt = _mount(inst)

        def go():
            fn = getattr(mnt.fs, "release", None)
            if fn:
                fn(a.nodeid, a.fh)
            host.reply_err(r, 0)
        _answer(mnt, r, "release", go)

    @ffi.def_extern()
    def fring_py_opendir(inst, r, a):
        mnt = _mount(inst)

        def go():
            mnt.next_dir += 1
            mnt.dirs[mnt.next_dir] = None
            o = ffi.new("struct fring_open_out *")
            o.fh = mnt.next_dir
            host.reply_open(r, o)
        _answer(mnt, r, "opendir", go)

    @ffi.def_extern()
    def fring_py_readdir(inst, r, a):
        mnt = _mount(inst)

        def go():
            fn = _method(mnt, r, "readdir")
            if not fn:
                return
            # One listing per pass over the open directory (offset 0: opendir
            # or rewinddir), kept for the kernel's later chunks: built per
            # chunk, a listing of n entries cost n * n / chunk.
            ents = mnt.dirs.get(a.fh) if a.offset else None
            if ents is None:
                ents = [(".", a.nodeid, stat.S_IFDIR),
                        ("..", a.nodeid, stat.S_IFDIR)]
                ents += list(fn(a.nodeid))
                if a.fh in mnt.dirs:
                    mnt.dirs[a.fh] = ents
            # offset: the next_off (index + 1) of the last entry the kernel got
            for i in range(a.offset, len(ents)):
                name, ino, mode = ents[i]
                b = os.fsencode(name)
                if host.dir_add(r, b, len(b), ino, stat.S_IFMT(mode), i + 1) != 1:
                    break
            host.reply_dir(r)
        _answer(mnt, r, "readdir", go)

    @ffi.def_extern()
    def fring_py_releasedir(inst, r, a):
        mnt = _mount(inst)

        def go():
            mnt.dirs.pop(a.fh, None)
            host.reply_err(r, 0)
        _answer(mnt, r, "releasedir", go)
