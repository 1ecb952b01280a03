# SPDX-License-Identifier: MIT
"""truncate(2) and ftruncate(2): size, contents (the part cut off must read
as zeros if the file grows again), errors, and which descriptors may do it."""

import errno
import os

import pytest

from cfutil import expect, read_file, write_file

CHUNK = 64 * 1024     # memfs's chunk size: cut points on both sides of it


def pattern(n):
    return bytes((i * 7 + 3) % 251 for i in range(n))


@pytest.mark.parametrize("size,cut", [(100, 10), (CHUNK + 100, CHUNK - 1),
                                      (3 * CHUNK, CHUNK), (3 * CHUNK, 0),
                                      (5000, 4096)])
def test_truncate_down_then_up_reads_zeros(d, size, cut):
    data = pattern(size)
    write_file(d / "f", data)
    os.truncate(d / "f", cut)
    assert os.stat(d / "f").st_size == cut
    assert read_file(d / "f") == data[:cut]
    os.truncate(d / "f", size)
    assert os.stat(d / "f").st_size == size
    assert read_file(d / "f") == data[:cut] + bytes(size - cut)


def test_truncate_up_is_sparse_zeros(d):
    write_file(d / "f", b"head")
    big = (1 << 30) + 12345
    os.truncate(d / "f", big)
    assert os.stat(d / "f").st_size == big
    fd = os.open(d / "f", os.O_RDONLY)
    try:
        assert os.pread(fd, 8, 0) == b"head" + bytes(4)
        assert os.pread(fd, 100, big - 10) == bytes(10)
        assert os.pread(fd, 100, big) == b""
    finally:
        os.close(fd)


def test_ftruncate_and_write_after_eof(d):
    fd = os.open(d / "f", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"abcdef")
        os.ftruncate(fd, 3)
        assert os.fstat(fd).st_size == 3
        # the file position is not changed by ftruncate
        assert os.lseek(fd, 0, os.SEEK_CUR) == 6
        os.write(fd, b"X")
        assert os.fstat(fd).st_size == 7
        assert os.pread(fd, 10, 0) == b"abc\0\0\0X"
        os.ftruncate(fd, 0)
        assert os.pread(fd, 10, 0) == b""
    finally:
        os.close(fd)
    assert os.stat(d / "f").st_size == 0


def test_truncate_same_size_keeps_data(d):
    write_file(d / "f", b"same")
    os.truncate(d / "f", 4)
    assert read_file(d / "f") == b"same"


def test_truncate_errors(d):
    write_file(d / "f", b"abc")
    os.mkdir(d / "dir")
    expect(errno.EINVAL, os.truncate, d / "f", -1)
    expect(errno.EISDIR, os.truncate, d / "dir", 0)
    expect(errno.ENOENT, os.truncate, d / "missing", 0)
    expect(errno.ENOTDIR, os.truncate, d / "f" / "x", 0)
    fd = os.open(d / "f", os.O_RDONLY)
    try:
        # Linux: a descriptor not open for writing gives EINVAL
        expect(errno.EINVAL, os.ftruncate, fd, 0)
    finally:
        os.close(fd)
    assert read_file(d / "f") == b"abc"


def test_truncate_follows_symlinks(d):
    write_file(d / "f", b"abcdef")
    os.symlink("f", d / "link")
    os.truncate(d / "link", 2)
    assert read_file(d / "f") == b"ab"
    assert os.lstat(d / "link").st_size == 1      # the link is untouched


def test_truncate_seen_by_open_descriptors(d):
    write_file(d / "f", pattern(10000))
    fd = os.open(d / "f", os.O_RDONLY)
    try:
        os.truncate(d / "f", 100)
        assert os.fstat(fd).st_size == 100
        assert os.pread(fd, 200, 50) == pattern(100)[50:]
        os.truncate(d / "f", 200)
        assert os.pread(fd, 200, 50) == pattern(100)[50:] + bytes(100)
    finally:
        os.close(fd)


def test_ftruncate_of_unlinked_file(d):
    fd = os.open(d / "f", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"0123456789")
        os.unlink(d / "f")
        os.ftruncate(fd, 4)
        assert os.fstat(fd).st_size == 4
        assert os.pread(fd, 10, 0) == b"0123"
        os.ftruncate(fd, 6)
        assert os.pread(fd, 10, 0) == b"0123\0\0"
    finally:
        os.close(fd)
    assert os.listdir(d) == []


def test_truncate_applies_to_every_hard_link(d):
    write_file(d / "a", b"shared data")
    os.link(d / "a", d / "b")
    os.truncate(d / "b", 6)
    assert read_file(d / "a") == b"shared"
    assert os.stat(d / "a").st_size == 6


def test_offsets_beyond_4gib(d):
    fd = os.open(d / "f", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        off = 5 * (1 << 30) + 3
        assert os.pwrite(fd, b"far", off) == 3
        assert os.fstat(fd).st_size == off + 3
        assert os.pread(fd, 10, off - 2) == b"\0\0far"
        os.ftruncate(fd, off + 1)
        assert os.pread(fd, 10, off) == b"f"
    finally:
        os.close(fd)


def test_maximum_file_size(d):
    # Linux: files may reach 2^63-1 bytes (MAX_LFS_FILESIZE on 64-bit);
    # the last byte can be written, an I/O range reaching beyond the
    # largest off_t is EINVAL
    top = (1 << 63) - 1
    write_file(d / "f", b"x")
    os.truncate(d / "f", top)
    assert os.stat(d / "f").st_size == top
    fd = os.open(d / "f", os.O_RDWR)
    try:
        assert os.pwrite(fd, b"y", top - 1) == 1
        assert os.fstat(fd).st_size == top
        assert os.pread(fd, 3, top - 3) == b"\0\0y"
        expect(errno.EINVAL, os.pwrite, fd, b"z", top)
        assert os.pread(fd, 1, 0) == b"x"
    finally:
        os.close(fd)
