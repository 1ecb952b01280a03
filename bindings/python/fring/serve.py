# SPDX-License-Identifier: MIT
"""Running requests: per-mount state, answering errors, the request
context, and the event loop an async filesystem is served on.

Each request is a handler coroutine (ops.py, dirs.py) that calls the
method, awaits its result if it is awaitable, and returns the reply to
send (a function, or None: none). A sync fs drives it to its end at once
on the runtime's thread (it never suspends); an async one runs it as a
task on the plugin's loop. Replies are sent only while the mount is not
closed, and, for an async fs, only from the loop thread, where destroy
closes it."""
import asyncio
import contextvars
import errno
import inspect
import threading
import traceback

from .optable import METHODS
from .types import Context

ffi = lib = host = None      # set by bind.bind()

# errnos the kernel accepts in a reply: 1..511 (its FUSE_ERRNO_LIMIT).
ERRNO_LIMIT = 512


class Mount:
    def __init__(self, m):
        self.m = m
        self.options = {}
        self.fs = None
        self.has = frozenset()   # the methods fs defines
        self.loop = None     # the event loop serving it (an async fs)
        self.tasks = set()   # its requests in progress there
        self.closed = False  # destroyed: nothing may use a handle any more
        self.dirs = {}       # open directory fh -> dirs.Dir
        self.next_dir = 0
        self.warned = set()  # what warn_once logged already

    def attach(self, fs):
        self.fs = fs
        self.has = frozenset(n for n in METHODS
                             if callable(getattr(fs, n, None)))


class BadAnswer(Exception):
    """A method answered something the kernel cannot be given: (kind, what)."""


def log(m, level, text):
    if host is not None:
        host.log(m, level, text.encode(errors="replace"))


def warn_once(mnt, key, text):
    """Log once per mount and key: a time-based rate limit would swallow a
    different problem (another errno) that follows within its window."""
    if key not in mnt.warned:
        mnt.warned.add(key)
        log(mnt.m, lib.FRING_LOG_ERROR, text)


def fail(mnt, r, opname, e):
    """Answer r (None: forget, no answer) for the exception e."""
    if isinstance(e, OSError):
        code = e.errno
        if not isinstance(code, int) or not 0 < code < ERRNO_LIMIT:
            warn_once(mnt, ("errno", repr(code)),
                      "python: %s raised OSError with errno %r, not an errno "
                      "(1..%d); answered EIO" % (opname, code, ERRNO_LIMIT - 1))
            code = errno.EIO
    elif isinstance(e, BadAnswer):
        warn_once(mnt, (opname, e.args[0]),
                  "python: %s %s; answered EIO" % (opname, e.args[1]))
        code = errno.EIO
    else:
        # SystemExit and KeyboardInterrupt too: an unanswered request would
        # leave its caller waiting in the kernel.
        log(mnt.m, lib.FRING_LOG_ERROR, "python: %s raised:\n%s" % (
            opname, "".join(traceback.format_exception(type(e), e,
                                                       e.__traceback__))))
        code = errno.EIO
    if r is not None:
        host.reply_err(r, -code)


# ---- the request context (fring.plugin.context()) -------------------------

class Req:
    """The request being answered: its handle and, for the make ops, the
    caller's umask."""
    __slots__ = ("r", "umask", "ctx")

    def __init__(self, r):
        self.r, self.umask, self.ctx = r, None, None


_current = contextvars.ContextVar("fring_request", default=None)


def current():
    return _current.get()


def context():
    """The caller of the request being answered, a Context(uid, gid, pid,
    umask, ...). Valid during a method's call (an async method's too, until
    it returns); outside one, or in forget, raises LookupError."""
    req = _current.get()
    if req is None or req.r is None:
        raise LookupError("fring.plugin.context() outside a request")
    if req.ctx is None:
        c = ffi.new("struct fring_req_ctx *")
        c.size = ffi.sizeof("struct fring_req_ctx")
        rc = host.req_ctx(req.r, c)
        if rc < 0:
            raise OSError(-rc, "req_ctx")
        req.ctx = (c.uid, c.gid, c.pid, c.opcode, c.unique)
    uid, gid, pid, opcode, unique = req.ctx
    return Context(uid, gid, pid, req.umask, opcode, unique)


# ---- running a handler ---------------------------------------------------

def _drive(coro):
    """Run a handler of a sync fs to its end; it must not suspend."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise TypeError("a method returned an awaitable, but the filesystem has "
                    "no async def method, so no event loop serves it")


def serve(mnt, r, opname, handler, *args):
    """Answer r (None: no answer, forget) with handler(mnt, r, *args)."""
    if mnt.loop is not None:
        mnt.loop.call_soon_threadsafe(_start, mnt, r, opname, handler, args)
        return
    token = _current.set(Req(r))
    try:
        send = _drive(handler(mnt, r, *args))
        if send is not None:
            send()
    except BaseException as e:
        fail(mnt, r, opname, e)
    finally:
        _current.reset(token)


def _start(mnt, r, opname, handler, args):
    """On the loop thread: the request as a task of its mount."""
    if not mnt.closed:
        task = mnt.loop.create_task(_run(mnt, r, opname, handler, args))
        mnt.tasks.add(task)
        task.add_done_callback(mnt.tasks.discard)


async def _run(mnt, r, opname, handler, args):
    _current.set(Req(r))          # the task's own context
    try:
        send = await handler(mnt, r, *args)
        if send is not None and not mnt.closed:
            send()
    except BaseException as e:   # CancelledError: closed, no answer
        if not mnt.closed:
            fail(mnt, r, opname, e)


async def call(mnt, name, *args):
    """fs.name(*args), awaited if it answers an awaitable; a method left
    out answers ENOSYS."""
    if name not in mnt.has:
        raise OSError(errno.ENOSYS, name)
    res = getattr(mnt.fs, name)(*args)
    if inspect.isawaitable(res):
        res = await res
    return res


def run_now(mnt, fn, *args):
    """fn(*args) outside a request (init): on the loop for an async fs,
    awaited there if it answers an awaitable."""
    async def go():
        res = fn(*args)
        if inspect.isawaitable(res):
            res = await res
        return res
    if mnt.loop is None:
        return _drive(go())
    return asyncio.run_coroutine_threadsafe(go(), mnt.loop).result()


_loop = None
_loop_lock = threading.Lock()


def event_loop():
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


def is_async(fs):
    return any(inspect.iscoroutinefunction(getattr(fs, n, None))
               or inspect.isasyncgenfunction(getattr(fs, n, None))
               for n in METHODS)


def close(mnt):
    """destroy: no reply from now on; an async fs's pending requests are
    cancelled (on the loop, so none is mid-reply) before this returns."""
    if mnt.loop is None:
        mnt.closed = True
        return
    done = threading.Event()

    def shut():
        mnt.closed = True
        for task in list(mnt.tasks):
            task.cancel()
        done.set()
    mnt.loop.call_soon_threadsafe(shut)
    done.wait()
