"""Filesystems written in Python, served by fring through fring_python.so
(`pip install bindings/python` builds it into the package; or
`python3 -m fring.build_plugin OUTDIR`). bindings/python/README.md is the
guide; this is the reference.

A module (the mount option `module: PATH`) defines `Filesystem`, a class
whose constructor takes the mount's other options as a dict of strings,
and some of these methods (the FUSE low-level vocabulary, inode based;
inode 1 is the root). Each returns its answer or raises OSError(errno):

    lookup(parent, name)            -> Attr of the child (its ino is the inode)
    getattr(ino)                    -> Attr
    open(ino, flags)                -> fh (int), None for 0, or Open(...)
    read(ino, fh, offset, size)     -> bytes (at most size), or FromFd(...)
    write_fd(ino, fh, offset, size) -> ToFd(...), or None: call write()
    write(ino, fh, offset, data)    -> bytes written (int, at most len(data))
    release(ino, fh)                -> None
    readdir(ino)                    -> iterable of (name, ino, mode), without
                                       . and ..: a list, or a generator
                                       (streamed: pulled as the kernel reads)
    forget(ino, nlookup)            -> None (no reply)

Any of them may be `async def` (readdir also an async generator): the
filesystem is then served on one asyncio event loop thread owned by the
plugin, every method of it (plain ones too) runs there, and each request
is answered when its coroutine finishes, so a slow one (awaiting) holds
no other. Without any async method, calls run one at a time on the
runtime's thread, under the GIL, with no event loop.

Data path: FromFd(fd, offset, size) answers a read with the bytes of fd
(the runtime reads them into the reply, io_uring READ_FIXED or Linux 7.3
zero-copy: they never enter Python); ToFd(fd, offset) from write_fd has
the runtime write the request's bytes to fd and reply the count. fd must
stay open until the reply. Open(fh, zero_copy=True) opts an open file in
to io_uring zero-copy, whose reads and writes must then be answered
through FromFd / ToFd.

Methods left out answer ENOSYS (the kernel then stops asking, where it
can). Attributes are cached by the kernel for `attr_timeout` seconds (a
class attribute, default 1.0), names for `entry_timeout`. Any other
exception (SystemExit included) or a wrong return type is logged with its
traceback and answers EIO. An answer the kernel cannot be given (an
OSError whose errno is not 1..511, a read longer than size, a write count
over len(data)) answers EIO and is logged once per mount and kind (each
distinct errno once). readdir is called once per pass over an open
directory (opendir or rewinddir); the kernel's later chunks continue
from the same iterator, at the offset it passes back (a seek elsewhere
starts a new pass and skips to it).
"""
import asyncio
import errno
import importlib.util
import inspect
import os
import stat
import threading
import traceback

__all__ = ["Attr", "Open", "FromFd", "ToFd"]


class Attr:
    """The attributes of an inode (struct fring_attr). Times are seconds
    (float); size in bytes; mode includes the file type (stat.S_IFREG...)."""

    def __init__(self, ino, mode, size=0, nlink=1, uid=0, gid=0,
                 atime=0.0, mtime=0.0, ctime=0.0, blksize=4096):
        self.ino, self.mode, self.size, self.nlink = ino, mode, size, nlink
        self.uid, self.gid, self.blksize = uid, gid, blksize
        self.atime, self.mtime, self.ctime = atime, mtime, ctime


class Open:
    """open()'s answer with flags: fh, direct_io (no page cache: every read
    and write reaches the filesystem), keep_cache (keep the page cache
    from an earlier open), zero_copy (io_uring zero-copy on Linux 7.3 when
    the mount serves it, else ignored: reads and writes of this open file
    must then be answered with FromFd / ToFd)."""

    def __init__(self, fh=0, direct_io=False, keep_cache=False, zero_copy=False):
        self.fh, self.direct_io = fh, direct_io
        self.keep_cache, self.zero_copy = keep_cache, zero_copy


class FromFd:
    """read()'s answer "the bytes of fd": the runtime reads up to size
    bytes (None: the request's size; never more) of fd at offset (None:
    the request's offset) into the reply itself; a short read is a short
    reply, an I/O error that errno."""

    def __init__(self, fd, offset=None, size=None):
        self.fd, self.offset, self.size = fd, offset, size


class ToFd:
    """write_fd()'s answer "write the request's bytes to fd": the runtime
    writes them at offset (None: the request's offset) and replies with
    the count written, or the errno."""

    def __init__(self, fd, offset=None):
        self.fd, self.offset = fd, offset


ffi = lib = host = None
_mounts = {}     # handle -> _Mount (keeps handles and objects alive)
_keep = []       # C memory the host keeps pointers to


# errnos the kernel accepts in a reply: 1..511 (its FUSE_ERRNO_LIMIT).
ERRNO_LIMIT = 512


# The methods a Filesystem may define; any of them async: served on the loop.
_METHODS = ("lookup", "getattr", "open", "read", "write_fd", "write",
            "release", "readdir", "forget")


class _Mount:
    def __init__(self, m):
        self.m = m
        self.options = {}
        self.fs = None
        self.loop = None     # the event loop serving it (an async fs)
        self.tasks = set()   # its requests in progress there
        self.closed = False  # destroyed: nothing may use a handle any more
        self.dirs = {}       # open directory fh -> _Dir
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


# ---- running requests: inline (a sync fs) or on the event loop ----------
#
# Each request is a handler coroutine (below) that calls the method,
# awaits its result if it is awaitable, and returns the reply to send (a
# function, or None: none). A sync fs drives it to its end at once on the
# runtime's thread (it never suspends); an async one runs it as a task on
# the plugin's loop. Replies are sent only while the mount is not closed,
# and, for an async fs, only from the loop thread, where destroy closes it.

def _fail(mnt, r, opname, e):
    """Answer r (None: forget, no answer) for the exception e."""
    if isinstance(e, OSError):
        code = e.errno
        if not isinstance(code, int) or not 0 < code < ERRNO_LIMIT:
            _warn_once(mnt, ("errno", repr(code)),
                       "python: %s raised OSError with errno %r, not an errno "
                       "(1..%d); answered EIO" % (opname, code, ERRNO_LIMIT - 1))
            code = errno.EIO
    elif isinstance(e, _BadAnswer):
        _warn_once(mnt, (opname, e.args[0]),
                   "python: %s %s; answered EIO" % (opname, e.args[1]))
        code = errno.EIO
    else:
        # SystemExit and KeyboardInterrupt too: an unanswered request would
        # leave its caller waiting in the kernel.
        _log(mnt.m, lib.FRING_LOG_ERROR, "python: %s raised:\n%s" % (
            opname, "".join(traceback.format_exception(type(e), e,
                                                       e.__traceback__))))
        code = errno.EIO
    if r is not None:
        host.reply_err(r, -code)


def _drive(coro):
    """Run a handler of a sync fs to its end; it must not suspend."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise TypeError("a method returned an awaitable, but the filesystem has "
                    "no async def method, so no event loop serves it")


def _serve(mnt, r, opname, handler, *args):
    """Answer r (None: no answer, forget) with handler(mnt, r, *args)."""
    if mnt.loop is not None:
        mnt.loop.call_soon_threadsafe(_start, mnt, r, opname, handler, args)
        return
    try:
        send = _drive(handler(mnt, r, *args))
        if send is not None:
            send()
    except BaseException as e:
        _fail(mnt, r, opname, e)


def _start(mnt, r, opname, handler, args):
    """On the loop thread: the request as a task of its mount."""
    if not mnt.closed:
        task = mnt.loop.create_task(_run(mnt, r, opname, handler, args))
        mnt.tasks.add(task)
        task.add_done_callback(mnt.tasks.discard)


async def _run(mnt, r, opname, handler, args):
    try:
        send = await handler(mnt, r, *args)
        if send is not None and not mnt.closed:
            send()
    except BaseException as e:   # CancelledError: closed, no answer
        if not mnt.closed:
            _fail(mnt, r, opname, e)


async def _call(fs, name, *args):
    """fs.name(*args), awaited if it answers an awaitable; a method left
    out answers ENOSYS."""
    fn = getattr(fs, name, None)
    if fn is None:
        raise OSError(errno.ENOSYS, name)
    res = fn(*args)
    if inspect.isawaitable(res):
        res = await res
    return res


_loop = None
_loop_lock = threading.Lock()


def _event_loop():
    """The plugin's one event loop, on its own thread, started on first use."""
    global _loop
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=_run_loop, args=(loop,), daemon=True,
                             name="fring-python-loop").start()
            _loop = loop
    return _loop


def _run_loop(loop):
    asyncio.set_event_loop(loop)
    loop.run_forever()


def _is_async(fs):
    return any(inspect.iscoroutinefunction(getattr(fs, n, None))
               or inspect.isasyncgenfunction(getattr(fs, n, None))
               for n in _METHODS)


def _close(mnt):
    """destroy: no reply from now on; an async fs's pending requests are
    cancelled (on the loop, so none is mid-reply) before this returns."""
    if mnt.loop is None:
        mnt.closed = True
        return
    done = threading.Event()

    def close():
        mnt.closed = True
        for task in list(mnt.tasks):
            task.cancel()
        done.set()
    mnt.loop.call_soon_threadsafe(close)
    done.wait()


# ---- the data path: the runtime moves the bytes (host req_*_fd) ---------

def _has_host(field):
    """FRING_HAS_FIELD(host, struct fring_host_api, field)."""
    return host.size >= (ffi.offsetof("struct fring_host_api", field)
                         + ffi.sizeof("void *"))


def _from_fd(mnt, r, ans, offset, size):
    if not isinstance(ans.fd, int) or ans.fd < 0:
        raise _BadAnswer("fd", "returned FromFd with fd %r" % (ans.fd,))
    off = offset if ans.offset is None else ans.offset
    n = size if ans.size is None else max(0, min(int(ans.size), size))
    if not _has_host("req_read_fd"):      # a host before ABI 1.1
        data = os.pread(ans.fd, n, off)
        host.reply_data(r, ffi.from_buffer(data), len(data))
        return
    rc = host.req_read_fd(r, ans.fd, off, n, 0)
    if rc < 0:                            # not accepted: still ours
        raise OSError(-rc, "req_read_fd")


def _to_fd(mnt, r, ans, offset, a):
    if not isinstance(ans.fd, int) or ans.fd < 0:
        raise _BadAnswer("fd", "returned ToFd with fd %r" % (ans.fd,))
    off = offset if ans.offset is None else ans.offset
    if not _has_host("req_write_fd"):
        host.reply_write(r, os.pwrite(ans.fd, ffi.buffer(a.data, a.len), off))
        return
    rc = host.req_write_fd(r, ans.fd, off, 0)
    if rc < 0:
        raise OSError(-rc, "req_write_fd")


# ---- readdir: one iterator per pass over an open directory --------------

class _Dir:
    """A pass over an open directory: its entries, . and .. first, pulled
    as the kernel reads; pos is the offset of the next one (each entry's
    next_off is its index + 1), held the one a full reply could not take."""

    def __init__(self):
        self.it = self.ait = None
        self.pos = 0
        self.held = None

    async def start(self, mnt, ino):
        res = await _call(mnt.fs, "readdir", ino)
        self.it = self.ait = None
        if hasattr(res, "__anext__"):
            self.ait = res
        else:
            self.it = iter(res)
        self.dots = [(".", ino, stat.S_IFDIR), ("..", ino, stat.S_IFDIR)]
        self.pos, self.held = 0, None

    async def next(self):
        """The entry at pos, or None at the end."""
        if self.held is not None:
            return self.held
        if self.dots:
            return self.dots.pop(0)
        if self.ait is not None:
            try:
                return await self.ait.__anext__()
            except StopAsyncIteration:
                return None
        return next(self.it, None)


def _entry(e):
    try:
        name, ino, mode = e
    except (TypeError, ValueError):
        raise TypeError("readdir entries are (name, ino, mode), not %r"
                        % (e,)) from None
    return os.fsencode(name), ino, stat.S_IFMT(mode)


# ---- the operations ------------------------------------------------------

async def _lookup(mnt, r, parent, name):
    at = await _call(mnt.fs, "lookup", parent, name)
    e = ffi.new("struct fring_entry *")
    e.ino = at.ino
    e.entry_timeout_ns = _timeout_ns(mnt.fs, "entry_timeout")
    e.attr_timeout_ns = _timeout_ns(mnt.fs, "attr_timeout")
    _fill_attr(e.attr, at)
    return lambda: host.reply_entry(r, e)


async def _forget(mnt, r, items):
    if getattr(mnt.fs, "forget", None) is None:
        return
    for nodeid, nlookup in items:
        try:
            await _call(mnt.fs, "forget", nodeid, nlookup)
        except Exception as e:
            _fail(mnt, None, "forget", e)


async def _getattr(mnt, r, ino):
    c = ffi.new("struct fring_attr *")
    _fill_attr(c, await _call(mnt.fs, "getattr", ino))
    return lambda: host.reply_attr(r, c, _timeout_ns(mnt.fs, "attr_timeout"))


async def _open(mnt, r, ino, flags):
    res = (await _call(mnt.fs, "open", ino, flags)
           if getattr(mnt.fs, "open", None) else None)
    o = ffi.new("struct fring_open_out *")
    if isinstance(res, Open):
        o.fh = res.fh or 0
        o.open_flags = ((lib.FRING_FOPEN_DIRECT_IO if res.direct_io else 0)
                        | (lib.FRING_FOPEN_KEEP_CACHE if res.keep_cache else 0)
                        | (lib.FRING_FOPEN_IO_URING_ZERO_COPY
                           if res.zero_copy else 0))
    else:
        o.fh = res or 0
    return lambda: host.reply_open(r, o)


async def _read(mnt, r, ino, fh, offset, size):
    data = await _call(mnt.fs, "read", ino, fh, offset, size)
    if isinstance(data, FromFd):
        return lambda: _from_fd(mnt, r, data, offset, size)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("read must return bytes or FromFd, not %s"
                        % type(data).__name__)
    data = bytes(data)
    if len(data) > size:
        raise _BadAnswer("long", "returned %d bytes, more than the %d asked "
                         "for" % (len(data), size))
    return lambda: host.reply_data(r, ffi.from_buffer(data), len(data))


async def _write(mnt, r, a, ino, fh, offset, size):
    if getattr(mnt.fs, "write_fd", None) is not None:
        to = await _call(mnt.fs, "write_fd", ino, fh, offset, size)
        if isinstance(to, ToFd):
            return lambda: _to_fd(mnt, r, to, offset, a)
        if to is not None:
            raise TypeError("write_fd must return ToFd or None, not %s"
                            % type(to).__name__)
    if a.data == ffi.NULL:
        raise _BadAnswer("zero-copy", "got a zero-copied write, whose bytes "
                         "only write_fd (ToFd) can move")
    n = await _call(mnt.fs, "write", ino, fh, offset, ffi.buffer(a.data, size)[:])
    if not isinstance(n, int) or not 0 <= n <= size:
        raise _BadAnswer("count", "returned %r for %d bytes (an int 0..%d)"
                         % (n, size, size))
    return lambda: host.reply_write(r, n)


async def _release(mnt, r, ino, fh):
    if getattr(mnt.fs, "release", None) is not None:
        await _call(mnt.fs, "release", ino, fh)
    return lambda: host.reply_err(r, 0)


async def _opendir(mnt, r):
    mnt.next_dir += 1
    mnt.dirs[mnt.next_dir] = _Dir()
    o = ffi.new("struct fring_open_out *")
    o.fh = mnt.next_dir
    return lambda: host.reply_open(r, o)


async def _readdir(mnt, r, ino, fh, offset):
    d = mnt.dirs.get(fh)
    if d is None:                    # not opened through us: a pass of its own
        d = _Dir()
    if d.it is None and d.ait is None or offset < d.pos:
        await d.start(mnt, ino)      # opendir, rewinddir, a seek back
    while d.pos < offset:            # a seek forward: skip to it
        if await d.next() is None:
            break
        d.held = None
        d.pos += 1
    while True:
        e = await d.next()
        if e is None or mnt.closed:
            break
        name, eino, kind = _entry(e)
        if host.dir_add(r, name, len(name), eino, kind, d.pos + 1) != 1:
            d.held = e               # the reply is full: first in the next
            break
        d.held = None
        d.pos += 1
    return lambda: host.reply_dir(r)


async def _releasedir(mnt, r, fh):
    mnt.dirs.pop(fh, None)
    return lambda: host.reply_err(r, 0)


def _bind(ffi_, lib_):
    """Called once by fring_python.so's init code with its ffi and lib."""
    global ffi, lib
    ffi, lib = ffi_, lib_

    @ffi.def_extern()
    def fring_py_entry(h):
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
        if _is_async(mnt.fs):
            mnt.loop = _event_loop()
        return 0

    @ffi.def_extern()
    def fring_py_destroy(inst):
        mnt = _mount(inst)
        _close(mnt)
        for h, other in list(_mounts.items()):
            if other is mnt:
                del _mounts[h]

    # The runtime's callbacks: copy the arguments a handler needs (the args
    # struct stays valid until the reply; write's data is read from it).

    @ffi.def_extern()
    def fring_py_lookup(inst, r, a):
        _serve(_mount(inst), r, "lookup", _lookup, a.parent,
               ffi.unpack(a.name, a.namelen).decode(errors="surrogateescape"))

    @ffi.def_extern()
    def fring_py_forget(inst, items, count):
        _serve(_mount(inst), None, "forget", _forget,
               [(items[i].nodeid, items[i].nlookup) for i in range(count)])

    @ffi.def_extern()
    def fring_py_getattr(inst, r, a):
        _serve(_mount(inst), r, "getattr", _getattr, a.nodeid)

    @ffi.def_extern()
    def fring_py_open(inst, r, a):
        _serve(_mount(inst), r, "open", _open, a.nodeid, a.flags)

    @ffi.def_extern()
    def fring_py_read(inst, r, a):
        _serve(_mount(inst), r, "read", _read, a.nodeid, a.fh, a.offset, a.len)

    @ffi.def_extern()
    def fring_py_write(inst, r, a):
        _serve(_mount(inst), r, "write", _write, a, a.nodeid, a.fh, a.offset,
               a.len)

    @ffi.def_extern()
    def fring_py_release(inst, r, a):
        _serve(_mount(inst), r, "release", _release, a.nodeid, a.fh)

    @ffi.def_extern()
    def fring_py_opendir(inst, r, a):
        _serve(_mount(inst), r, "opendir", _opendir)

    @ffi.def_extern()
    def fring_py_readdir(inst, r, a):
        _serve(_mount(inst), r, "readdir", _readdir, a.nodeid, a.fh, a.offset)

    @ffi.def_extern()
    def fring_py_releasedir(inst, r, a):
        _serve(_mount(inst), r, "releasedir", _releasedir, a.fh)
