# SPDX-License-Identifier: MIT
"""mirror.py: a directory (option `source`) served as it is, in Python
(fring.plugin). Names, attributes and listings come from os; file data never
enters Python: a read is answered with FromFd and a write with ToFd, so the
runtime moves the bytes between the request and the open file (io_uring
READ_FIXED / WRITE_FIXED, zero-copy on Linux 7.3). It mirrors the
existing files: it defines no create, mkdir, unlink or rename (those
answer ENOSYS). Overwriting a file leaves exactly the new bytes: the class
says atomic_o_trunc, and open passes O_TRUNC on to os.open, which
truncates; setattr does truncate, chmod and utimes.

Inode numbers are the mirror's own (the root is 1): a table from node to
path with the kernel's lookup counts, so forget can drop entries."""
import errno
import os
import stat
import time

from fring.plugin import NOW, Attr, FromFd, Open, ToFd

ROOT = 1


class Filesystem:
    attr_timeout = entry_timeout = 1.0
    atomic_o_trunc = True       # open() truncates: os.open gets O_TRUNC

    def __init__(self, options):
        if "source" not in options:
            raise ValueError("mirror.py: missing required option 'source'")
        self.source = os.path.realpath(options["source"])
        if not os.path.isdir(self.source):
            raise ValueError("mirror.py: source %s is not a directory" % self.source)
        self.paths = {ROOT: self.source}    # ino -> path
        self.inos = {self.source: ROOT}     # path -> ino
        self.lookups = {ROOT: 1}
        self.next = ROOT
        self.zero_copy = options.get("zero_copy", "true") in ("true", "yes", "on", "1")

    def _path(self, ino):
        try:
            return self.paths[ino]
        except KeyError:
            raise OSError(errno.ESTALE, "no such node") from None

    @staticmethod
    def _attr(ino, st):
        return Attr(ino, st.st_mode, st.st_size, st.st_nlink, st.st_uid, st.st_gid,
                    st.st_atime, st.st_mtime, st.st_ctime, st.st_blksize)

    def lookup(self, parent, name):
        path = os.path.join(self._path(parent), name)
        st = os.lstat(path)
        ino = self.inos.get(path)
        if ino is None:
            self.next += 1
            ino = self.inos[path] = self.next
            self.paths[ino], self.lookups[ino] = path, 0
        self.lookups[ino] += 1
        return self._attr(ino, st)

    def forget(self, ino, nlookup):
        left = self.lookups.get(ino, 0) - nlookup
        if left > 0 or ino == ROOT:
            self.lookups[ino] = max(left, 1 if ino == ROOT else 0)
            return
        path = self.paths.pop(ino, None)
        self.lookups.pop(ino, None)
        if self.inos.get(path) == ino:
            del self.inos[path]

    def getattr(self, ino):
        return self._attr(ino, os.lstat(self._path(ino)))

    def setattr(self, ino, s):
        path = self._path(ino)
        if s.size is not None:
            if s.fh is not None:
                os.ftruncate(s.fh, s.size)
            else:
                os.truncate(path, s.size)
        if s.mode is not None:
            os.chmod(path, s.mode, follow_symlinks=False)
        if s.atime_ns is not None or s.mtime_ns is not None:
            st = os.lstat(path)
            now = time.time_ns()
            times = [st.st_atime_ns if t is None else now if t is NOW else t
                     for t in (s.atime_ns, s.mtime_ns)]
            os.utime(path, ns=tuple(times), follow_symlinks=False)
        return self._attr(ino, os.lstat(path))

    def open(self, ino, flags):
        # O_APPEND is left out: the kernel sends each write with its offset.
        fd = os.open(self._path(ino), flags & (os.O_ACCMODE | os.O_TRUNC) | os.O_CLOEXEC)
        return Open(fd, zero_copy=self.zero_copy)   # fh = the fd

    def read(self, ino, fh, offset, size):
        return FromFd(fh)            # the runtime reads fh into the reply

    def write_fd(self, ino, fh, offset, size):
        return ToFd(fh)              # and writes the request's bytes to fh

    def release(self, ino, fh):
        os.close(fh)                 # every read and write on it was answered

    def readdir(self, ino):
        with os.scandir(self._path(ino)) as it:
            for e in it:
                yield (e.name, e.inode(), e.stat(follow_symlinks=False).st_mode)
