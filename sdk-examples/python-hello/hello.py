# SPDX-License-Identifier: MIT
"""hello.py: a root directory holding one read-only file, "hello" (the same
filesystem as sdk-examples/c-hello), written in Python for fring.plugin."""
import errno
import stat

from fring.plugin import Attr

ROOT, HELLO = 1, 2
TEXT = b"hello from Python\n"


class Filesystem:
    attr_timeout = entry_timeout = 1.0

    def __init__(self, options):
        self.text = options.get("text", "").encode() or TEXT

    def _attr(self, ino):
        if ino == ROOT:
            return Attr(ROOT, stat.S_IFDIR | 0o755, nlink=2)
        if ino == HELLO:
            return Attr(HELLO, stat.S_IFREG | 0o444, size=len(self.text))
        raise OSError(errno.ENOENT, "no such inode")

    def lookup(self, parent, name):
        if parent != ROOT or name != "hello":
            raise OSError(errno.ENOENT, name)
        return self._attr(HELLO)

    def getattr(self, ino):
        return self._attr(ino)

    def read(self, ino, fh, offset, size):
        return self.text[offset:offset + size]

    def readdir(self, ino):
        return [("hello", HELLO, stat.S_IFREG)]
