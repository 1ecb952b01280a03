# SPDX-License-Identifier: MIT
"""Symbolic links: contents, lstat vs stat, resolution (ELOOP, trailing
slashes, O_NOFOLLOW), readlink, and length limits."""

import errno
import os
import stat

import pytest

from cfutil import expect, read_file, readlink_raw, write_file

PATH_MAX = 4096
MAXSYMLINKS = 40    # Linux: at most 40 links followed in one resolution


def test_symlink_lstat_and_stat(d):
    write_file(d / "target", b"0123456789")
    os.symlink("target", d / "sym")
    lst, st = os.lstat(d / "sym"), os.stat(d / "sym")
    assert stat.S_ISLNK(lst.st_mode)
    # POSIX: st_size of a symlink is the length of its contents
    assert lst.st_size == len("target")
    # Linux: symlink permission bits are always 0777
    assert stat.S_IMODE(lst.st_mode) == 0o777
    assert stat.S_ISREG(st.st_mode) and st.st_size == 10
    assert st.st_ino == os.stat(d / "target").st_ino != lst.st_ino
    assert lst.st_nlink == 1
    assert (lst.st_uid, lst.st_gid) == (0, 0)
    assert read_file(d / "sym") == b"0123456789"


@pytest.mark.parametrize("contents", [
    "plain", "../up/and/over", "/absolute/path", "dir/", "with space",
    "x" * 1000, "\u00e9t\u00e9", "a//b/./c", ".",
])
def test_readlink_returns_contents_verbatim(d, contents):
    os.symlink(contents, d / "sym")
    assert os.readlink(d / "sym") == contents
    assert os.lstat(d / "sym").st_size == len(os.fsencode(contents))


def test_readlink_short_buffer_truncates(d):
    os.symlink("abcdefgh", d / "sym")
    assert readlink_raw(d / "sym", 3) == b"abc"
    assert readlink_raw(d / "sym", 100) == b"abcdefgh"


def test_readlink_errors(d):
    write_file(d / "f")
    os.mkdir(d / "dir")
    expect(errno.EINVAL, os.readlink, d / "f")
    expect(errno.EINVAL, os.readlink, d / "dir")
    expect(errno.ENOENT, os.readlink, d / "missing")


def test_dangling_symlink(d):
    os.symlink("nowhere", d / "sym")
    expect(errno.ENOENT, os.stat, d / "sym")
    expect(errno.ENOENT, os.open, d / "sym", os.O_RDONLY)
    assert stat.S_ISLNK(os.lstat(d / "sym").st_mode)
    assert os.listdir(d) == ["sym"]


def test_symlink_loops(d):
    os.symlink("self", d / "self")
    os.symlink("b", d / "a")
    os.symlink("a", d / "b")
    for n in ("self", "a", "b"):
        expect(errno.ELOOP, os.stat, d / n)
        expect(errno.ELOOP, os.open, d / n, os.O_RDONLY)
        expect(errno.ELOOP, os.open, d / n, os.O_CREAT | os.O_WRONLY, 0o644)
        assert stat.S_ISLNK(os.lstat(d / n).st_mode)
    expect(errno.ELOOP, os.stat, d / "a" / "x")
    expect(errno.ELOOP, os.mkdir, d / "a" / "x")


def test_symlink_chain_limit(d):
    write_file(d / "end", b"end")
    # l0 -> l1 -> ... -> l{n-1} -> end: opening l0 follows n links
    n = MAXSYMLINKS + 1
    os.symlink("end", d / ("l%d" % (n - 1)))
    for i in range(n - 2, -1, -1):
        os.symlink("l%d" % (i + 1), d / ("l%d" % i))
    assert read_file(d / "l1") == b"end"          # 40 links: allowed
    expect(errno.ELOOP, os.stat, d / "l0")         # 41 links: ELOOP


def test_o_nofollow(d):
    write_file(d / "f", b"data")
    os.symlink("f", d / "sym")
    expect(errno.ELOOP, os.open, d / "sym", os.O_RDONLY | os.O_NOFOLLOW)
    # O_NOFOLLOW only concerns the last component
    os.mkdir(d / "dir")
    write_file(d / "dir" / "g", b"g")
    os.symlink("dir", d / "dirsym")
    fd = os.open(d / "dirsym" / "g", os.O_RDONLY | os.O_NOFOLLOW)
    os.close(fd)
    # O_PATH|O_NOFOLLOW opens the link itself
    fd = os.open(d / "sym", os.O_PATH | os.O_NOFOLLOW)
    try:
        assert stat.S_ISLNK(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def test_symlinks_in_the_middle_of_paths(d):
    os.makedirs(d / "real" / "deep")
    write_file(d / "real" / "deep" / "f", b"found")
    os.symlink("real", d / "rel")
    os.symlink(str(d / "real" / "deep"), d / "abs")
    os.symlink("../../real", d / "real" / "deep" / "up")
    assert read_file(d / "rel" / "deep" / "f") == b"found"
    assert read_file(d / "abs" / "f") == b"found"
    assert read_file(d / "real" / "deep" / "up" / "deep" / "f") == b"found"
    assert os.stat(str(d / "rel") + "/").st_ino == os.stat(d / "real").st_ino


def test_trailing_slash_on_symlink_to_file(d):
    write_file(d / "f")
    os.symlink("f", d / "sym")
    expect(errno.ENOTDIR, os.stat, str(d / "sym") + "/")


def test_symlink_errors(d):
    write_file(d / "f")
    os.symlink("nowhere", d / "dangling")
    expect(errno.EEXIST, os.symlink, "x", d / "f")
    expect(errno.EEXIST, os.symlink, "x", d / "dangling")
    expect(errno.ENOENT, os.symlink, "", d / "empty")       # Linux
    expect(errno.ENOENT, os.symlink, "x", d / "nodir" / "sym")
    expect(errno.ENAMETOOLONG, os.symlink, "x", d / ("n" * 256))
    assert sorted(os.listdir(d)) == ["dangling", "f"]


def test_symlink_target_length_limit(d):
    longest = "t/" * ((PATH_MAX - 1) // 2) + "t" * ((PATH_MAX - 1) % 2)
    assert len(longest) == PATH_MAX - 1
    os.symlink(longest, d / "long")
    assert os.readlink(d / "long") == longest
    assert os.lstat(d / "long").st_size == PATH_MAX - 1
    expect(errno.ENAMETOOLONG, os.symlink, longest + "t", d / "toolong")
    assert not os.path.lexists(d / "toolong")


def test_lchown_changes_the_link_not_the_target(d):
    write_file(d / "f")
    os.symlink("f", d / "sym")
    os.lchown(d / "sym", 2001, 2002)
    lst = os.lstat(d / "sym")
    assert (lst.st_uid, lst.st_gid) == (2001, 2002)
    st = os.stat(d / "f")
    assert (st.st_uid, st.st_gid) == (0, 0)
    os.chown(d / "sym", 2003, 2004)          # follows
    st = os.stat(d / "f")
    assert (st.st_uid, st.st_gid) == (2003, 2004)
    assert os.lstat(d / "sym").st_uid == 2001


def test_chmod_follows_symlink(d):
    write_file(d / "f", mode=0o644)
    os.symlink("f", d / "sym")
    os.chmod(d / "sym", 0o600)
    assert stat.S_IMODE(os.stat(d / "f").st_mode) == 0o600
    assert stat.S_IMODE(os.lstat(d / "sym").st_mode) == 0o777


def test_symlink_to_directory_and_rmdir(d):
    os.mkdir(d / "dir")
    os.symlink("dir", d / "sym")
    expect(errno.ENOTDIR, os.rmdir, d / "sym")
    assert sorted(os.listdir(d / "sym")) == []
    os.unlink(d / "sym")
    assert os.path.isdir(d / "dir")
