# SPDX-License-Identifier: MIT
"""Directories: opendir, readdir, readdirplus, releasedir, fsyncdir.

readdir (readdirplus) is called once per pass over an open directory: a
Dir holds the iterable it answered, pulled as the kernel reads. Entry i
(. and .. are 0 and 1) has next_off i + 1; a kernel read at the offset
where the last reply stopped continues the same iterator, one elsewhere
(a seek) starts a new pass and skips to it. An entry the host refuses
(an invalid name: it logs it) is skipped, the rest still listed."""
import errno
import inspect
import os
import stat

from . import answers as A
from . import serve as S
from .serve import call
from .types import Entry

# dir_add's errors that end the listing (the request is gone, no memory);
# any other one refuses that entry only.
_FATAL = (-errno.EALREADY, -errno.ENOTCONN, -errno.ENOMEM)


def takes_fh(fn):
    """Whether readdir / readdirplus takes (ino, fh) rather than (ino)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    pos = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(pos) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


class _Dot(tuple):
    """. or .. (name, ino): listed with dir_add, not counted as a lookup."""


class Dir:
    """An open directory: the class's fh (opendir's answer) and the pass
    in progress: its iterator, pos (offset of the next entry), held (the
    entry a full reply could not take)."""

    def __init__(self, fh=0):
        self.fh = fh
        self.it = self.ait = None
        self.op = None
        self.pos = 0
        self.held = None
        self.dots = []

    async def drop_held(self, mnt):
        """A readdirplus entry pulled but never delivered counts as no
        lookup: the class gets forget(ino, 1) for it."""
        e, self.held = self.held, None
        if self.op == "readdirplus" and e is not None:
            await unlookup(mnt, e)

    async def start(self, mnt, op, ino):
        await self.drop_held(mnt)
        args = (ino, self.fh) if takes_fh(getattr(mnt.fs, op, None)) else (ino,)
        res = await call(mnt, op, *args)
        self.it = self.ait = None
        if hasattr(res, "__anext__"):
            self.ait = res
        else:
            self.it = iter(res)
        self.op = op
        self.dots = [_Dot((".", ino)), _Dot(("..", ino))]
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


async def opendir(mnt, r, a):
    res = await call(mnt, "opendir", a.nodeid, a.flags) if "opendir" in mnt.has else None
    o = A.open_out(res)              # checks the answer; its flags are kept
    mnt.next_dir += 1
    mnt.dirs[mnt.next_dir] = Dir(o.fh)
    o.fh = mnt.next_dir
    return lambda: S.host.reply_open(r, o)


def _plain(e):
    try:
        name, ino, mode = e
    except (TypeError, ValueError):
        raise TypeError("readdir entries are (name, ino, mode), not %r"
                        % (e,)) from None
    return A.name_bytes(name, "a readdir name"), ino, stat.S_IFMT(mode)


async def unlookup(mnt, e):
    """forget(ino, 1) for the readdirplus entry e the kernel did not get."""
    if isinstance(e, _Dot) or "forget" not in mnt.has:
        return
    try:
        ans = e[1]
        ino = (ans.attr if isinstance(ans, Entry) else ans).ino
        if ino:
            await call(mnt, "forget", ino, 1)
    except Exception as err:
        S.fail(mnt, None, "forget", err)


def _add(mnt, r, e, plus, next_off, src_plus):
    """dir_add / dir_add_plus of one entry: 1 added, 0 full, < 0 refused.
    src_plus: e is a readdirplus entry (name, Attr or Entry)."""
    if isinstance(e, _Dot):
        name = os.fsencode(e[0])
        return S.host.dir_add(r, name, len(name), e[1], stat.S_IFDIR, next_off)
    if not plus and src_plus:        # a READDIR served from readdirplus
        name, ans = e
        attr = ans.attr if isinstance(ans, Entry) else ans
        name = A.name_bytes(name, "a readdirplus name")
        return S.host.dir_add(r, name, len(name), attr.ino,
                              stat.S_IFMT(attr.mode), next_off)
    if not plus:
        name, ino, kind = _plain(e)
        return S.host.dir_add(r, name, len(name), ino, kind, next_off)
    try:
        name, ans = e
    except (TypeError, ValueError):
        raise TypeError("readdirplus entries are (name, Attr or Entry), not %r"
                        % (e,)) from None
    name = A.name_bytes(name, "a readdirplus name")
    return S.host.dir_add_plus(r, name, len(name), A.entry(mnt, ans), next_off)


async def _list(mnt, r, a, op, plus):
    d = mnt.dirs.get(a.fh)
    if d is None:                    # not opened through us: a pass of its own
        d = Dir()
    if d.it is None and d.ait is None or d.op != op or a.offset < d.pos:
        await d.start(mnt, op, a.nodeid)   # opendir, rewinddir, a seek back
    while d.pos < a.offset:          # a seek forward: skip to it
        e = await d.next()
        if e is None:
            break
        d.held = e
        await d.drop_held(mnt)
        d.pos += 1
    while not mnt.closed:
        e = await d.next()
        if e is None:
            break
        rc = _add(mnt, r, e, plus, d.pos + 1, op == "readdirplus")
        if rc == 0:
            d.held = e               # the reply is full: first in the next
            break
        if rc in _FATAL:
            break
        if op == "readdirplus" and (rc < 0 or not plus):
            await unlookup(mnt, e)   # refused (logged), or no entry: no lookup
        d.held = None                # added, or refused: skipped
        d.pos += 1
    return lambda: S.host.reply_dir(r)


async def readdir(mnt, r, a):
    # a class with readdirplus only lists plain READDIRs from it too
    op = "readdirplus" if {"readdirplus"} == mnt.has & {"readdir", "readdirplus"} \
        else "readdir"
    return await _list(mnt, r, a, op, False)


async def readdirplus(mnt, r, a):
    return await _list(mnt, r, a, "readdirplus", True)


async def releasedir(mnt, r, a):
    d = mnt.dirs.pop(a.fh, None)
    if d is not None:
        await d.drop_held(mnt)
    if "releasedir" in mnt.has:
        await call(mnt, "releasedir", a.nodeid, d.fh if d else a.fh)
    return lambda: S.host.reply_err(r, 0)


async def fsyncdir(mnt, r, a):
    d = mnt.dirs.get(a.fh)
    if "fsyncdir" in mnt.has:
        await call(mnt, "fsyncdir", a.nodeid, d.fh if d else a.fh, bool(a.datasync))
    return lambda: S.host.reply_err(r, 0)
