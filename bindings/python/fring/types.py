# SPDX-License-Identifier: MIT
"""The values Python filesystems answer with and receive (fring.plugin
re-exports them). Times are seconds (float) or, where exactness matters,
integer nanoseconds (the *_ns fields, which win when both are given)."""

__all__ = ["Attr", "Entry", "Open", "FromFd", "ToFd", "SetAttr", "StatFs",
           "Lock", "Statx", "Conn", "Context", "NOW", "OFFSET_MAX"]

OFFSET_MAX = (1 << 63) - 1   # a lock range's end: to the end of the file


class _Now:
    def __repr__(self):
        return "NOW"


NOW = _Now()   # SetAttr.atime / mtime: "set to the current time"


class Attr:
    """The attributes of an inode (struct fring_attr). mode includes the
    file type (stat.S_IFREG...); rdev the encoded device (os.makedev);
    blocks the 512-byte units used (None: from size)."""

    def __init__(self, ino, mode, size=0, nlink=1, uid=0, gid=0,
                 atime=0.0, mtime=0.0, ctime=0.0, blksize=4096, rdev=0,
                 blocks=None, atime_ns=None, mtime_ns=None, ctime_ns=None):
        self.ino, self.mode, self.size, self.nlink = ino, mode, size, nlink
        self.uid, self.gid, self.blksize = uid, gid, blksize
        self.atime, self.mtime, self.ctime = atime, mtime, ctime
        self.atime_ns, self.mtime_ns, self.ctime_ns = atime_ns, mtime_ns, ctime_ns
        self.rdev, self.blocks = rdev, blocks

    def __repr__(self):
        return "Attr(ino=%r, mode=0o%o, size=%r)" % (self.ino, self.mode, self.size)


class Entry:
    """A directory entry (struct fring_entry): an Attr with its inode's
    generation and, when not None, its own cache timeouts (seconds; else
    the class's entry_timeout / attr_timeout). Any method answering an
    entry (lookup, mknod, mkdir, symlink, link, create, readdirplus) may
    answer a plain Attr instead. Attr(ino=0) from lookup is a negative
    entry: the kernel caches "no such name" for entry_timeout."""

    def __init__(self, attr, generation=0, entry_timeout=None, attr_timeout=None):
        self.attr, self.generation = attr, generation
        self.entry_timeout, self.attr_timeout = entry_timeout, attr_timeout


class Open:
    """open()'s (opendir's, create's) answer with flags: fh, direct_io (no
    page cache: every read and write reaches the filesystem), keep_cache
    (keep the page cache from an earlier open), nonseekable, cache_dir
    (opendir: the kernel may cache the listing), zero_copy (io_uring
    zero-copy on Linux 7.3 when the mount serves it, else ignored: reads
    and writes of this open file must then be answered with FromFd / ToFd)."""

    def __init__(self, fh=0, direct_io=False, keep_cache=False, zero_copy=False,
                 nonseekable=False, cache_dir=False):
        self.fh, self.direct_io = fh, direct_io
        self.keep_cache, self.zero_copy = keep_cache, zero_copy
        self.nonseekable, self.cache_dir = nonseekable, cache_dir


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


class SetAttr:
    """setattr()'s argument: what to change, None for what stays. mode
    (permission bits, 0o7777), uid, gid, size (truncate), atime and mtime
    (seconds as a float, or NOW) with atime_ns / mtime_ns (the same in
    integer nanoseconds, or NOW), ctime / ctime_ns (explicit, rare), fh
    (the open file of an ftruncate / futimens, else None), lock_owner,
    valid (the raw FRING_SET_* mask)."""

    mode = uid = gid = size = fh = lock_owner = None
    atime = mtime = ctime = atime_ns = mtime_ns = ctime_ns = None
    valid = 0

    def __repr__(self):
        return "SetAttr(%s)" % ", ".join(
            "%s=%r" % (k, v) for k, v in sorted(vars(self).items()))


class StatFs:
    """statfs()'s answer (struct fring_statfs): blocks of frsize bytes
    (total, free, free to unprivileged users: bavail, default bfree),
    inodes (files, ffree), bsize (the preferred I/O size), namelen (the
    longest name), frsize (default bsize)."""

    def __init__(self, blocks=0, bfree=0, bavail=None, files=0, ffree=0,
                 bsize=4096, namelen=255, frsize=None):
        self.blocks, self.bfree = blocks, bfree
        self.bavail = bfree if bavail is None else bavail
        self.files, self.ffree = files, ffree
        self.bsize, self.namelen = bsize, namelen
        self.frsize = bsize if frsize is None else frsize


class Lock:
    """A POSIX lock range (struct fring_lock): type fcntl.F_RDLCK, F_WRLCK
    or F_UNLCK; start and end (inclusive, OFFSET_MAX: to EOF) in bytes; pid
    of the holder (getlk's answer)."""

    def __init__(self, type, start=0, end=OFFSET_MAX, pid=0):
        self.type, self.start, self.end, self.pid = type, start, end, pid

    def __repr__(self):
        return "Lock(type=%r, start=%r, end=%r, pid=%r)" % (
            self.type, self.start, self.end, self.pid)


class Statx:
    """statx()'s answer: an Attr plus the birth time (btime seconds, or
    btime_ns) and STATX_ATTR_* attributes / attributes_mask."""

    def __init__(self, attr, btime=None, btime_ns=None, attributes=0,
                 attributes_mask=0):
        self.attr, self.btime, self.btime_ns = attr, btime, btime_ns
        self.attributes, self.attributes_mask = attributes, attributes_mask


class Conn:
    """init()'s argument (struct fring_conn): capable (what the kernel
    offers, FRING_CAP_* bits), want (what will be negotiated: change it),
    max_write, max_readahead, time_gran (ns), proto_major, proto_minor,
    transport ("uring" or "devfuse"), nr_queues."""


class Context:
    """The caller of the request being answered (fring.plugin.context()):
    uid, gid, pid of the calling thread, umask (the caller's, for mknod,
    mkdir, symlink, create and tmpfile; else None), opcode, unique."""

    def __init__(self, uid, gid, pid, umask, opcode, unique):
        self.uid, self.gid, self.pid, self.umask = uid, gid, pid, umask
        self.opcode, self.unique = opcode, unique

    def __repr__(self):
        return "Context(uid=%r, gid=%r, pid=%r, umask=%r)" % (
            self.uid, self.gid, self.pid, self.umask)
