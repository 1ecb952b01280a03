# SPDX-License-Identifier: MIT
"""memfs.py: a read-write in-memory filesystem in Python (fring.plugin):
directories, regular files (sparse, in 64 KiB chunks), symbolic and hard
links, FIFOs, sockets and devices, renames (RENAME_NOREPLACE,
RENAME_EXCHANGE), extended attributes, owners, modes and nanosecond
times. It passes fring's POSIX conformance suite (tests/conformance).

Permissions: the mount is meant for default_permissions (fring adds it
with allow_other), so the kernel checks mode bits, sticky directories,
chown/chmod/utime rules and xattr namespaces; this class keeps what only
a filesystem can: new files owned by the caller (fring.plugin.context()),
setgid directories passing their group on, trusted.* hidden from
unprivileged listings, unknown xattr namespaces refused.

Truncation: atomic_o_trunc is left False, so an open with O_TRUNC
reaches the class as open() without the flag followed by setattr(size=0),
which truncates (and updates mtime/ctime) like any truncate(2).

Inodes live while they have a name, a kernel lookup reference or an
open file; the last of the three to go frees the node. Its methods never
call each other (helpers start with _), so a subclass may make any of
them async."""
import errno
import os
import pickle
import stat
import time

from fring.plugin import Attr, Entry, NOW, StatFs, context

ROOT = 1
CHUNK = 64 * 1024
NAME_MAX = 255
XATTR_NS = ("user.", "trusted.", "security.")
XATTR_CREATE, XATTR_REPLACE = 1, 2
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 1, 2
SEEK_DATA, SEEK_HOLE = 3, 4


class Node:
    __slots__ = ("ino", "mode", "uid", "gid", "nlink", "rdev", "size",
                 "atime", "mtime", "ctime", "chunks", "children", "target",
                 "xattrs", "lookups", "opens", "parent")

    def __init__(self, ino, mode, uid, gid, rdev=0):
        now = time.time_ns()
        self.ino, self.mode, self.uid, self.gid, self.rdev = ino, mode, uid, gid, rdev
        self.nlink = 2 if stat.S_ISDIR(mode) else 1
        self.size = 0
        self.atime = self.mtime = self.ctime = now
        self.chunks = {} if stat.S_ISREG(mode) else None
        self.children = {} if stat.S_ISDIR(mode) else None
        self.target = None
        self.xattrs = {}
        self.lookups = self.opens = 0
        self.parent = None      # directories: the one holding it

    def attr(self):
        blocks = len(self.chunks) * (CHUNK // 512) if self.chunks else 0
        return Attr(self.ino, self.mode, self.size, self.nlink, self.uid,
                    self.gid, blksize=4096, rdev=self.rdev, blocks=blocks,
                    atime_ns=self.atime, mtime_ns=self.mtime, ctime_ns=self.ctime)

    def touch(self, mtime=True):
        now = time.time_ns()
        self.ctime = now
        if mtime:
            self.mtime = now


def _err(code, what=""):
    return OSError(code, os.strerror(code) + (": " + what if what else ""))


class Filesystem:
    attr_timeout = entry_timeout = 1.0
    atomic_o_trunc = False      # O_TRUNC arrives as setattr(size=0)

    def __init__(self, options):
        unknown = set(options) - {"size", "entry_timeout", "attr_timeout"}
        if unknown:
            raise ValueError("memfs.py: unknown option(s) %s" % ", ".join(sorted(unknown)))
        self.capacity = int(options.get("size", str(1 << 30)))
        for name in ("entry_timeout", "attr_timeout"):
            if name in options:
                setattr(self, name, float(options[name]))
        self.nodes = {}
        self.next_ino = ROOT
        root = self._new(stat.S_IFDIR | 0o755, 0, 0)
        root.parent = root
        root.lookups = 1            # never forgotten

    # ---- takeover (`fring restart`) -------------------------------------

    STATE_VERSION = 1

    def state_save(self):
        """The whole tree for the next instance: inode numbers, lookup and
        open counts stay what the kernel knows. Plain values only (this
        module is loaded under a name pickle cannot import again); a
        directory's parent goes as its inode number."""
        nodes = [[getattr(n, k) if k != "parent" else
                  (n.parent.ino if n.parent else None) for k in Node.__slots__]
                 for n in self.nodes.values()]
        return self.STATE_VERSION, pickle.dumps(
            (nodes, self.next_ino), protocol=pickle.HIGHEST_PROTOCOL)

    def state_load(self, version, data):
        if version != self.STATE_VERSION:
            raise ValueError("memfs.py: takeover state version %d, this "
                             "memfs.py reads version %d only"
                             % (version, self.STATE_VERSION))
        rows, self.next_ino = pickle.loads(data)
        self.nodes = {}
        for row in rows:
            n = Node.__new__(Node)
            for k, v in zip(Node.__slots__, row):
                setattr(n, k, v)
            self.nodes[n.ino] = n
        for n in self.nodes.values():
            if n.parent is not None:
                n.parent = self.nodes[n.parent]

    # ---- inodes ----------------------------------------------------------

    def _new(self, mode, uid, gid, rdev=0):
        ino, self.next_ino = self.next_ino, self.next_ino + 1
        node = self.nodes[ino] = Node(ino, mode, uid, gid, rdev)
        return node

    def _node(self, ino):
        try:
            return self.nodes[ino]
        except KeyError:
            raise _err(errno.ESTALE) from None

    def _dir(self, ino):
        node = self._node(ino)
        if node.children is None:
            raise _err(errno.ENOTDIR)
        return node

    def _maybe_free(self, node):
        if node.nlink == 0 and node.lookups <= 0 and node.opens <= 0 \
                and node.ino != ROOT:
            self.nodes.pop(node.ino, None)

    def _entry(self, node):
        node.lookups += 1
        return Entry(node.attr())

    def _child(self, parent, name):
        d = self._dir(parent)
        if len(os.fsencode(name)) > NAME_MAX:
            raise _err(errno.ENAMETOOLONG, name)
        ino = d.children.get(name)
        return d, (self.nodes[ino] if ino is not None else None)

    def _make(self, parent, name, mode, rdev=0):
        d, old = self._child(parent, name)
        if old is not None:
            raise _err(errno.EEXIST, name)
        if d.nlink == 0:
            raise _err(errno.ENOENT, "directory removed")
        ctx = context()
        gid = ctx.gid
        if d.mode & stat.S_ISGID:       # a setgid directory's group
            gid = d.gid
            if stat.S_ISDIR(mode):
                mode |= stat.S_ISGID
        node = self._new(mode, ctx.uid, gid, rdev)
        d.children[name] = node.ino
        if stat.S_ISDIR(mode):
            node.parent = d
            d.nlink += 1
        d.touch()
        return node

    # ---- names -------------------------------------------------------------

    def lookup(self, parent, name):
        _, node = self._child(parent, name)
        if node is None:
            raise _err(errno.ENOENT, name)
        return self._entry(node)

    def forget(self, ino, nlookup):
        node = self.nodes.get(ino)
        if node is not None and ino != ROOT:
            node.lookups -= nlookup
            self._maybe_free(node)

    def mknod(self, parent, name, mode, rdev):
        return self._entry(self._make(parent, name, mode, rdev))

    def mkdir(self, parent, name, mode):
        return self._entry(self._make(parent, name, stat.S_IFDIR | (mode & 0o7777)))

    def symlink(self, parent, name, target):
        node = self._make(parent, name, stat.S_IFLNK | 0o777)
        node.target = os.fsencode(target)
        node.size = len(node.target)
        return self._entry(node)

    def readlink(self, ino):
        node = self._node(ino)
        if node.target is None:
            raise _err(errno.EINVAL)
        return node.target

    def create(self, parent, name, mode, flags):
        node = self._make(parent, name, stat.S_IFREG | (mode & 0o7777))
        node.opens += 1
        return self._entry(node), 0

    def link(self, ino, newparent, newname):
        node = self._node(ino)
        if node.children is not None:
            raise _err(errno.EPERM)
        d, old = self._child(newparent, newname)
        if old is not None:
            raise _err(errno.EEXIST, newname)
        if d.nlink == 0:
            raise _err(errno.ENOENT, "directory removed")
        d.children[newname] = ino
        node.nlink += 1
        node.touch(mtime=False)
        d.touch()
        return self._entry(node)

    def _drop(self, d, name, node):
        """Take name out of d; node loses that link."""
        del d.children[name]
        if node.children is not None:
            node.nlink = 0
            d.nlink -= 1
        else:
            node.nlink -= 1
        node.touch(mtime=False)
        self._maybe_free(node)

    def unlink(self, parent, name):
        d, node = self._child(parent, name)
        if node is None:
            raise _err(errno.ENOENT, name)
        if node.children is not None:
            raise _err(errno.EISDIR, name)
        self._drop(d, name, node)
        d.touch()

    def rmdir(self, parent, name):
        d, node = self._child(parent, name)
        if node is None:
            raise _err(errno.ENOENT, name)
        if node.children is None:
            raise _err(errno.ENOTDIR, name)
        if node.children:
            raise _err(errno.ENOTEMPTY, name)
        self._drop(d, name, node)
        d.touch()

    def _inside(self, node, d):
        """Whether directory d is node or below it."""
        while True:
            if d is node:
                return True
            if d.ino == ROOT:
                return False
            d = d.parent

    def rename(self, parent, name, newparent, newname, flags):
        if flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE) or \
                flags == RENAME_NOREPLACE | RENAME_EXCHANGE:
            raise _err(errno.EINVAL)
        od, src = self._child(parent, name)
        nd, dst = self._child(newparent, newname)
        if src is None:
            raise _err(errno.ENOENT, name)
        if src is dst:
            return                       # two names of one file: nothing
        if src.children is not None and self._inside(src, nd):
            raise _err(errno.EINVAL)
        if flags & RENAME_EXCHANGE:
            if dst is None:
                raise _err(errno.ENOENT, newname)
            if dst.children is not None and self._inside(dst, od):
                raise _err(errno.EINVAL)
            od.children[name], nd.children[newname] = dst.ino, src.ino
            for node, frm, to in ((src, od, nd), (dst, nd, od)):
                if node.children is not None and frm is not to:
                    node.parent = to
                    frm.nlink -= 1
                    to.nlink += 1
                node.touch(mtime=False)
            od.touch()
            nd.touch()
            return
        if dst is not None:
            if flags & RENAME_NOREPLACE:
                raise _err(errno.EEXIST, newname)
            if src.children is not None and dst.children is None:
                raise _err(errno.ENOTDIR, newname)
            if src.children is None and dst.children is not None:
                raise _err(errno.EISDIR, newname)
            if dst.children:
                raise _err(errno.ENOTEMPTY, newname)
            self._drop(nd, newname, dst)
        del od.children[name]
        nd.children[newname] = src.ino
        if src.children is not None and od is not nd:
            src.parent = nd
            od.nlink -= 1
            nd.nlink += 1
        src.touch(mtime=False)
        od.touch()
        nd.touch()

    # ---- attributes --------------------------------------------------------

    def getattr(self, ino):
        return self._node(ino).attr()

    def setattr(self, ino, s):
        node = self._node(ino)
        now = time.time_ns()
        if s.size is not None:
            if node.children is not None:
                raise _err(errno.EISDIR)
            if node.chunks is None:
                raise _err(errno.EINVAL)
            if s.size != node.size:
                self._truncate(node, s.size)
                node.mtime = now
        if s.uid is not None:
            node.uid = s.uid
        if s.gid is not None:
            node.gid = s.gid
        if s.mode is not None:
            node.mode = stat.S_IFMT(node.mode) | s.mode
        for name in ("atime", "mtime"):
            ns = getattr(s, name + "_ns")
            if ns is not None:
                setattr(node, name, now if ns is NOW else ns)
        node.ctime = s.ctime_ns if isinstance(s.ctime_ns, int) else now
        return node.attr()

    def statfs(self, ino):
        used = sum(len(n.chunks) for n in self.nodes.values() if n.chunks)
        blocks = self.capacity // CHUNK
        free = max(blocks - used, 0)
        return StatFs(blocks=blocks, bfree=free, bavail=free,
                      files=1 << 20, ffree=(1 << 20) - len(self.nodes),
                      bsize=CHUNK, namelen=NAME_MAX)

    # ---- file data (sparse: absent chunks read as zeros) ----------------------

    def _truncate(self, node, size):
        if size < node.size:
            last = size // CHUNK
            for i in [i for i in node.chunks if i > last or i * CHUNK >= size]:
                del node.chunks[i]
            c = node.chunks.get(last)
            if c is not None and size % CHUNK:
                c[size % CHUNK:] = bytes(CHUNK - size % CHUNK)
        node.size = size

    def open(self, ino, flags):
        self._node(ino).opens += 1
        return 0

    def release(self, ino, fh):
        node = self.nodes.get(ino)
        if node is not None:
            node.opens -= 1
            self._maybe_free(node)

    def read(self, ino, fh, offset, size):
        return self._read(self._node(ino), offset, size)

    @staticmethod
    def _read(node, offset, size):
        if node.chunks is None:
            raise _err(errno.EISDIR)
        end = min(offset + size, node.size)
        out = bytearray()
        while offset < end:
            i, at = divmod(offset, CHUNK)
            n = min(CHUNK - at, end - offset)
            c = node.chunks.get(i)
            out += c[at:at + n] if c is not None else bytes(n)
            offset += n
        return bytes(out)

    def write(self, ino, fh, offset, data):
        node = self._node(ino)
        self._store(node, offset, data)
        node.touch()
        return len(data)

    def _store(self, node, offset, data):
        pos, view = 0, memoryview(data)
        while pos < len(data):
            i, at = divmod(offset + pos, CHUNK)
            n = min(CHUNK - at, len(data) - pos)
            c = node.chunks.get(i)
            if c is None:
                c = node.chunks[i] = bytearray(CHUNK)
            c[at:at + n] = view[pos:pos + n]
            pos += n
        node.size = max(node.size, offset + len(data))

    def fsync(self, ino, fh, datasync):
        pass

    def fallocate(self, ino, fh, offset, length, mode):
        node = self._node(ino)
        if mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE):
            raise _err(errno.EOPNOTSUPP)
        if mode & FALLOC_FL_PUNCH_HOLE:
            end = min(offset + length, node.size)
            if end > offset:
                self._store(node, offset, bytes(end - offset))
        elif not mode & FALLOC_FL_KEEP_SIZE and offset + length > node.size:
            node.size = offset + length
        node.touch()

    def lseek(self, ino, fh, offset, whence):
        node = self._node(ino)
        if offset >= node.size:
            raise _err(errno.ENXIO)
        return offset if whence == SEEK_DATA else node.size

    def copy_file_range(self, ino_in, fh_in, off_in, ino_out, fh_out, off_out,
                        length, flags):
        src, dst = self._node(ino_in), self._node(ino_out)
        data = self._read(src, off_in, min(length, 1 << 30))
        self._store(dst, off_out, data)
        dst.touch()
        return len(data)

    # ---- directories -------------------------------------------------------

    def readdir(self, ino):
        d = self._dir(ino)
        return [(name, i, self.nodes[i].mode) for name, i in list(d.children.items())]

    # ---- extended attributes -----------------------------------------------

    @staticmethod
    def _ns(name):
        if not name.startswith(XATTR_NS):
            raise _err(errno.EOPNOTSUPP, name)

    def setxattr(self, ino, name, value, flags):
        self._ns(name)
        node = self._node(ino)
        if flags & XATTR_CREATE and name in node.xattrs:
            raise _err(errno.EEXIST, name)
        if flags & XATTR_REPLACE and name not in node.xattrs:
            raise _err(errno.ENODATA, name)
        node.xattrs[name] = value
        node.touch(mtime=False)

    def getxattr(self, ino, name):
        self._ns(name)
        try:
            return self._node(ino).xattrs[name]
        except KeyError:
            raise _err(errno.ENODATA, name) from None

    def listxattr(self, ino):
        privileged = context().uid == 0
        return [n for n in self._node(ino).xattrs
                if privileged or not n.startswith("trusted.")]

    def removexattr(self, ino, name):
        self._ns(name)
        node = self._node(ino)
        if node.xattrs.pop(name, None) is None:
            raise _err(errno.ENODATA, name)
        node.touch(mtime=False)
