# SPDX-License-Identifier: MIT
"""null.py: plugins/null in Python (fring.plugin), so that a benchmark of
the two measures the cost of the binding. The root holds `files` regular
files f0, f1... of `size` bytes (inodes 2...), mode 0666: a read is answered
with zeros up to the file size, a write with its full count (the data
dropped). Names and attributes never change, so the kernel caches them for
an hour. The binding has no setattr: truncation answers ENOSYS."""
import errno
import re
import stat

from fring.plugin import Attr

ROOT = 1
MAX_FILES = 1000000
UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text):
    """'1GiB', '16M', '4096' -> bytes (powers of 1024), below 8 EiB."""
    m = re.fullmatch(r"(\d+)\s*([kmgt]?)(i?b)?", text.strip().lower())
    value = int(m.group(1)) * UNITS[m.group(2)] if m else -1
    if not 0 <= value < 1 << 63:
        raise ValueError("null.py: size: expected a size like 1GiB, got %r" % text)
    return value


class Filesystem:
    attr_timeout = entry_timeout = 3600.0

    def __init__(self, options):
        unknown = set(options) - {"size", "files"}
        if unknown:
            raise ValueError("null.py: unknown option(s) %s" % ", ".join(sorted(unknown)))
        self.size = parse_size(options.get("size", "1GiB"))
        self.files = int(options.get("files", "4"))
        if not 1 <= self.files <= MAX_FILES:
            raise ValueError("null.py: files: expected a count 1..%d" % MAX_FILES)
        self.zeros = {}        # length -> bytes, made once per length

    def _attr(self, ino):
        if ino == ROOT:
            return Attr(ROOT, stat.S_IFDIR | 0o755, nlink=2)
        if 2 <= ino < 2 + self.files:
            return Attr(ino, stat.S_IFREG | 0o666, size=self.size)
        raise OSError(errno.ENOENT, "no such inode")

    def lookup(self, parent, name):
        if parent != ROOT:
            raise OSError(errno.ENOTDIR, name)
        digits = name[1:]
        if name[:1] != "f" or not digits.isdigit() or not digits.isascii() \
                or (digits[0] == "0" and digits != "0") or int(digits) >= self.files:
            raise OSError(errno.ENOENT, name)
        return self._attr(2 + int(digits))

    def getattr(self, ino):
        return self._attr(ino)

    def read(self, ino, fh, offset, size):
        n = max(0, min(size, self.size - offset))
        data = self.zeros.get(n)
        if data is None:
            data = self.zeros[n] = bytes(n)
        return data

    def write(self, ino, fh, offset, data):
        return len(data)

    def readdir(self, ino):
        return (("f%d" % n, 2 + n, stat.S_IFREG) for n in range(self.files))
