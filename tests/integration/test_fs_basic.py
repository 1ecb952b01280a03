# SPDX-License-Identifier: MIT
"""POSIX behaviour through a real mount, for memfs and passthrough alike
(the `fs` fixture is parametrized over both)."""

import errno
import os
import stat
import threading

import pytest

from fsops import RENAME_EXCHANGE, RENAME_NOREPLACE, getxattr_raw, renameat2


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data, mode="wb"):
    with open(path, mode) as f:
        f.write(data)


def test_create_read_write(fs):
    p = fs / "file"
    write(p, b"hello world")
    assert read(p) == b"hello world"
    assert os.stat(p).st_size == 11
    assert stat.S_ISREG(os.stat(p).st_mode)
    fd = os.open(p, os.O_RDWR)
    try:
        assert os.pwrite(fd, b"WORLD", 6) == 5
        assert os.pread(fd, 5, 6) == b"WORLD"
        # a write past EOF leaves a hole that reads back as zeros
        os.pwrite(fd, b"!", 20)
    finally:
        os.close(fd)
    assert read(p) == b"hello WORLD" + bytes(9) + b"!"
    if fs.source:
        assert read(os.path.join(fs.source, "file")) == read(p)


def test_create_exclusive(fs):
    p = fs / "excl"
    os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o640))
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    with pytest.raises(FileExistsError):
        os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    with pytest.raises(FileNotFoundError):
        os.stat(fs / "missing")


def test_append(fs):
    p = fs / "log"
    write(p, b"one\n")
    write(p, b"two\n", "ab")
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    try:
        os.lseek(fd, 0, os.SEEK_SET)  # O_APPEND ignores the position
        os.write(fd, b"three\n")
    finally:
        os.close(fd)
    assert read(p) == b"one\ntwo\nthree\n"


def test_truncate(fs):
    p = fs / "trunc"
    write(p, b"0123456789")
    os.truncate(p, 4)
    assert read(p) == b"0123"
    os.truncate(p, 8)
    assert read(p) == b"0123" + bytes(4)
    with open(p, "r+b") as f:
        f.truncate(2)
    assert os.stat(p).st_size == 2
    write(p, b"xy")  # O_TRUNC on open
    assert read(p) == b"xy"


def test_mkdir_rmdir(fs):
    d = fs / "dir"
    os.mkdir(d, 0o750)
    assert stat.S_ISDIR(os.stat(d).st_mode)
    write(os.path.join(d, "inner"), b"x")
    with pytest.raises(OSError) as e:
        os.rmdir(d)
    assert e.value.errno == errno.ENOTEMPTY
    os.unlink(os.path.join(d, "inner"))
    os.rmdir(d)
    assert not os.path.exists(d)


def test_rename(fs):
    write(fs / "a", b"A")
    os.mkdir(fs / "sub")
    os.rename(fs / "a", fs / "sub" / "b")
    assert not os.path.exists(fs / "a")
    assert read(fs / "sub" / "b") == b"A"
    write(fs / "c", b"C")
    os.rename(fs / "c", fs / "sub" / "b")  # replaces
    assert read(fs / "sub" / "b") == b"C"
    assert sorted(os.listdir(fs.path)) == ["sub"]


def test_rename_noreplace(fs):
    write(fs / "src", b"S")
    write(fs / "dst", b"D")
    with pytest.raises(OSError) as e:
        renameat2(fs / "src", fs / "dst", RENAME_NOREPLACE)
    assert e.value.errno == errno.EEXIST
    assert read(fs / "src") == b"S" and read(fs / "dst") == b"D"
    renameat2(fs / "src", fs / "new", RENAME_NOREPLACE)
    assert read(fs / "new") == b"S"
    assert not os.path.exists(fs / "src")


def test_rename_exchange(fs):
    write(fs / "x", b"X")
    os.mkdir(fs / "y")
    write(fs / "y" / "inside", b"I")
    ino_x, ino_y = os.stat(fs / "x").st_ino, os.stat(fs / "y").st_ino
    renameat2(fs / "x", fs / "y", RENAME_EXCHANGE)
    assert os.path.isdir(fs / "x") and os.path.isfile(fs / "y")
    assert read(fs / "y") == b"X"
    assert read(fs / "x" / "inside") == b"I"
    assert os.stat(fs / "x").st_ino == ino_y
    assert os.stat(fs / "y").st_ino == ino_x
    with pytest.raises(FileNotFoundError):
        renameat2(fs / "x", fs / "nothing", RENAME_EXCHANGE)


def test_hard_links(fs):
    write(fs / "orig", b"shared")
    os.link(fs / "orig", fs / "alias")
    a, b = os.stat(fs / "orig"), os.stat(fs / "alias")
    assert a.st_ino == b.st_ino
    assert a.st_nlink == 2 and b.st_nlink == 2
    write(fs / "alias", b"changed", "r+b")
    assert read(fs / "orig") == b"changed"
    os.unlink(fs / "orig")
    assert os.stat(fs / "alias").st_nlink == 1
    assert read(fs / "alias") == b"changed"


def test_symlinks(fs):
    write(fs / "target", b"T")
    os.symlink("target", fs / "link")
    assert os.readlink(fs / "link") == "target"
    assert stat.S_ISLNK(os.lstat(fs / "link").st_mode)
    assert os.lstat(fs / "link").st_size == len("target")
    assert read(fs / "link") == b"T"
    os.symlink("/nonexistent/elsewhere", fs / "dangling")
    assert os.readlink(fs / "dangling") == "/nonexistent/elsewhere"
    assert not os.path.exists(fs / "dangling")
    assert os.path.lexists(fs / "dangling")


def test_xattrs(fs):
    p = fs / "xf"
    write(p, b"")
    value = b"v" * 100
    os.setxattr(p, "user.test", value)
    assert os.getxattr(p, "user.test") == value
    assert "user.test" in os.listxattr(p)
    # size probe: size 0 returns the length without data
    assert getxattr_raw(p, "user.test", 0) == (100, b"")
    assert getxattr_raw(p, "user.test", 100) == (100, value)
    with pytest.raises(OSError) as e:
        getxattr_raw(p, "user.test", 10)
    assert e.value.errno == errno.ERANGE
    with pytest.raises(OSError) as e:
        os.setxattr(p, "user.test", b"w", os.XATTR_CREATE)
    assert e.value.errno == errno.EEXIST
    os.setxattr(p, "user.test", b"w", os.XATTR_REPLACE)
    assert os.getxattr(p, "user.test") == b"w"
    os.removexattr(p, "user.test")
    with pytest.raises(OSError) as e:
        os.getxattr(p, "user.test")
    assert e.value.errno == errno.ENODATA
    assert "user.test" not in os.listxattr(p)


def test_statfs(fs):
    st = os.statvfs(fs.path)
    assert st.f_bsize > 0 and st.f_frsize > 0
    assert st.f_blocks > 0
    assert 0 <= st.f_bavail <= st.f_bfree <= st.f_blocks
    assert st.f_ffree <= st.f_files
    assert st.f_namemax >= 255
    if fs.source:
        src = os.statvfs(fs.source)
        assert st.f_blocks * st.f_frsize == src.f_blocks * src.f_frsize


def test_unlink_open_file(fs):
    p = fs / "ghost"
    write(p, b"still here")
    fd = os.open(p, os.O_RDWR)
    try:
        os.unlink(p)
        assert "ghost" not in os.listdir(fs.path)
        assert os.pread(fd, 100, 0) == b"still here"
        os.pwrite(fd, b"STILL", 0)
        assert os.pread(fd, 100, 0) == b"STILL here"
        assert os.fstat(fd).st_nlink == 0
    finally:
        os.close(fd)
    assert not os.path.exists(p)


def test_concurrent_writers(fs):
    nr, size, chunk = 8, 4 << 20, 64 << 10
    errors = []

    def writer(i):
        try:
            pattern = bytes([i + 1]) * chunk
            with open(fs / ("w%d" % i), "wb", buffering=0) as f:
                for _ in range(size // chunk):
                    f.write(pattern)
        except Exception as e:  # reported below, threads cannot assert
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(nr)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(nr):
        assert read(fs / ("w%d" % i)) == bytes([i + 1]) * size
