# SPDX-License-Identifier: MIT
"""rename(2) and renameat2(2): replacing files and directories, the
type-mismatch errors, renames that are no-ops, loops into a subtree, and
what open descriptors and other hard links see afterwards."""

import errno
import os
import stat

from cfutil import (RENAME_EXCHANGE, RENAME_NOREPLACE, expect, read_file,
                    renameat2, write_file)

ENOTEMPTY_OR_EEXIST = (errno.ENOTEMPTY, errno.EEXIST)   # POSIX allows both


def test_rename_file_to_new_name(d):
    write_file(d / "a", b"A")
    ino = os.stat(d / "a").st_ino
    os.rename(d / "a", d / "b")
    assert os.listdir(d) == ["b"]
    assert os.stat(d / "b").st_ino == ino
    assert read_file(d / "b") == b"A"
    expect(errno.ENOENT, os.stat, d / "a")


def test_rename_over_file_replaces_it(d):
    write_file(d / "a", b"A")
    write_file(d / "b", b"B")
    ino_a = os.stat(d / "a").st_ino
    fd = os.open(d / "b", os.O_RDONLY)
    try:
        os.rename(d / "a", d / "b")
        assert sorted(os.listdir(d)) == ["b"]
        st = os.stat(d / "b")
        assert st.st_ino == ino_a and st.st_nlink == 1
        assert read_file(d / "b") == b"A"
        # the replaced file lives on through its open descriptor
        assert os.pread(fd, 10, 0) == b"B"
        assert os.fstat(fd).st_nlink == 0
    finally:
        os.close(fd)


def test_rename_over_file_with_other_links(d):
    write_file(d / "victim", b"V")
    os.link(d / "victim", d / "other")
    write_file(d / "a", b"A")
    os.rename(d / "a", d / "victim")
    assert os.stat(d / "other").st_nlink == 1
    assert read_file(d / "other") == b"V"
    assert read_file(d / "victim") == b"A"


def test_rename_across_directories(d):
    os.mkdir(d / "x")
    os.mkdir(d / "y")
    write_file(d / "x" / "f", b"F")
    os.rename(d / "x" / "f", d / "y" / "g")
    assert os.listdir(d / "x") == []
    assert os.listdir(d / "y") == ["g"]
    assert read_file(d / "y" / "g") == b"F"


def test_rename_directory_updates_dotdot(d):
    os.mkdir(d / "x")
    os.mkdir(d / "y")
    os.mkdir(d / "x" / "sub")
    write_file(d / "x" / "sub" / "f", b"F")
    os.rename(d / "x" / "sub", d / "y" / "moved")
    assert os.stat(d / "y" / "moved" / "..").st_ino == os.stat(d / "y").st_ino
    assert read_file(d / "y" / "moved" / "f") == b"F"
    assert os.listdir(d / "x") == []
    os.rmdir(d / "x")       # empty for real


def test_rename_dir_over_empty_dir(d):
    os.mkdir(d / "a")
    write_file(d / "a" / "f", b"F")
    os.mkdir(d / "b")
    ino = os.stat(d / "a").st_ino
    os.rename(d / "a", d / "b")
    assert os.listdir(d) == ["b"]
    assert os.stat(d / "b").st_ino == ino
    assert os.listdir(d / "b") == ["f"]


def test_rename_dir_over_nonempty_dir(d):
    os.mkdir(d / "a")
    os.mkdir(d / "b")
    write_file(d / "b" / "keep", b"K")
    code = None
    try:
        os.rename(d / "a", d / "b")
    except OSError as e:
        code = e.errno
    assert code in ENOTEMPTY_OR_EEXIST
    assert os.listdir(d / "b") == ["keep"]
    assert os.path.isdir(d / "a")


def test_rename_type_mismatch(d):
    os.mkdir(d / "dir")
    write_file(d / "file", b"F")
    expect(errno.ENOTDIR, os.rename, d / "dir", d / "file")
    expect(errno.EISDIR, os.rename, d / "file", d / "dir")
    # a trailing slash on a non-directory source
    expect(errno.ENOTDIR, os.rename, str(d / "file") + "/", d / "other")
    assert read_file(d / "file") == b"F" and os.path.isdir(d / "dir")


def test_rename_onto_symlinks(d):
    os.mkdir(d / "dir")
    write_file(d / "file", b"F")
    os.mkdir(d / "linked_dir")
    os.symlink("linked_dir", d / "sym")
    # the last component is not followed: a directory cannot replace a
    # symlink (not a directory), a file replaces the symlink itself
    expect(errno.ENOTDIR, os.rename, d / "dir", d / "sym")
    os.rename(d / "file", d / "sym")
    assert stat.S_ISREG(os.lstat(d / "sym").st_mode)
    assert read_file(d / "sym") == b"F"
    assert os.listdir(d / "linked_dir") == []


def test_rename_onto_itself_is_a_noop(d):
    write_file(d / "f", b"F")
    os.mkdir(d / "dir")
    before = os.stat(d / "f")
    os.rename(d / "f", d / "f")
    os.rename(d / "dir", d / "dir")
    after = os.stat(d / "f")
    assert sorted(os.listdir(d)) == ["dir", "f"]
    assert (after.st_ino, after.st_nlink, after.st_size) == \
        (before.st_ino, before.st_nlink, before.st_size)


def test_rename_between_hard_links_does_nothing(d):
    # POSIX: if old and new are links to the same file, rename does nothing
    write_file(d / "a", b"A")
    os.link(d / "a", d / "b")
    os.rename(d / "a", d / "b")
    assert sorted(os.listdir(d)) == ["a", "b"]
    assert os.stat(d / "a").st_nlink == 2
    assert os.stat(d / "a").st_ino == os.stat(d / "b").st_ino


def test_rename_into_own_subtree(d):
    os.makedirs(d / "a" / "b" / "c")
    expect(errno.EINVAL, os.rename, d / "a", d / "a" / "x")
    expect(errno.EINVAL, os.rename, d / "a", d / "a" / "b" / "c" / "x")
    # onto an existing (empty) descendant: still the loop rule
    code = None
    try:
        os.rename(d / "a", d / "a" / "b" / "c")
    except OSError as e:
        code = e.errno
    assert code in (errno.EINVAL,) + ENOTEMPTY_OR_EEXIST
    assert os.path.isdir(d / "a" / "b" / "c")


def test_rename_dot_and_dotdot(d):
    os.mkdir(d / "a")
    # Linux refuses "." and ".." as either end with EBUSY
    expect(errno.EBUSY, os.rename, str(d / "a") + "/.", d / "b")
    expect(errno.EBUSY, os.rename, d / "a", str(d / "a") + "/..")


def test_rename_missing_source_or_parent(d):
    write_file(d / "f")
    expect(errno.ENOENT, os.rename, d / "missing", d / "x")
    expect(errno.ENOENT, os.rename, d / "f", d / "nodir" / "x")
    expect(errno.ENOTDIR, os.rename, d / "f", d / "f" / "x")
    assert os.listdir(d) == ["f"]


def test_rename_symlink_moves_the_link(d):
    write_file(d / "target", b"T")
    os.symlink("target", d / "link")
    os.rename(d / "link", d / "link2")
    assert stat.S_ISLNK(os.lstat(d / "link2").st_mode)
    assert os.readlink(d / "link2") == "target"
    assert read_file(d / "target") == b"T"


def test_open_descriptor_follows_renamed_file(d):
    write_file(d / "f", b"start")
    fd = os.open(d / "f", os.O_RDWR)
    try:
        os.mkdir(d / "sub")
        os.rename(d / "f", d / "sub" / "g")
        os.pwrite(fd, b"END", 5)
    finally:
        os.close(fd)
    assert read_file(d / "sub" / "g") == b"startEND"


def test_renameat2_noreplace(d):
    write_file(d / "a", b"A")
    write_file(d / "b", b"B")
    expect(errno.EEXIST, renameat2, d / "a", d / "b", RENAME_NOREPLACE)
    assert read_file(d / "b") == b"B"
    renameat2(d / "a", d / "c", RENAME_NOREPLACE)
    assert sorted(os.listdir(d)) == ["b", "c"]


def test_renameat2_exchange(d):
    write_file(d / "file", b"F")
    os.mkdir(d / "dir")
    write_file(d / "dir" / "inner", b"I")
    ino_f, ino_d = os.stat(d / "file").st_ino, os.stat(d / "dir").st_ino
    renameat2(d / "file", d / "dir", RENAME_EXCHANGE)
    assert os.stat(d / "dir").st_ino == ino_f
    assert os.stat(d / "file").st_ino == ino_d
    assert read_file(d / "dir") == b"F"
    assert read_file(d / "file" / "inner") == b"I"
    expect(errno.ENOENT, renameat2, d / "file", d / "missing", RENAME_EXCHANGE)
    expect(errno.EINVAL, renameat2, d / "file", d / "dir",
           RENAME_EXCHANGE | RENAME_NOREPLACE)


def test_many_renames_keep_directory_consistent(d):
    for i in range(50):
        write_file(d / ("n%d" % i), b"%d" % i)
    for i in range(50):
        os.rename(d / ("n%d" % i), d / ("m%d" % ((i + 1) % 50 + 100)))
    names = os.listdir(d)
    assert sorted(names) == sorted("m%d" % (i + 100) for i in range(50))
    for i in range(50):
        assert read_file(d / ("m%d" % ((i + 1) % 50 + 100))) == b"%d" % i
