# SPDX-License-Identifier: MIT
"""link(2), unlink(2) and link counts.

Files: st_nlink counts names exactly (POSIX). Directories: POSIX does not
say what st_nlink of a directory is. Linux filesystems either keep the
traditional count (2 + number of subdirectories: the name, ".", and each
child's "..") or report 1 ("not counted", as btrfs-style fs do for huge
directories and find(1) understands). The suite accepts either, but a
filesystem that reports 2 for an empty directory must keep the traditional
count consistent through mkdir, rmdir and rename."""

import errno
import os
import stat

from cfutil import expect, linkat, read_file, write_file


# --- files -------------------------------------------------------------------

def test_link_counts_names(d):
    write_file(d / "a", b"data")
    assert os.stat(d / "a").st_nlink == 1
    os.link(d / "a", d / "b")
    os.mkdir(d / "sub")
    os.link(d / "b", d / "sub" / "c")
    for n in ("a", "b", "sub/c"):
        st = os.stat(d / n)
        assert st.st_nlink == 3
        assert st.st_ino == os.stat(d / "a").st_ino
    os.unlink(d / "a")
    assert os.stat(d / "b").st_nlink == 2
    os.unlink(d / "sub" / "c")
    assert os.stat(d / "b").st_nlink == 1
    assert read_file(d / "b") == b"data"


def test_links_share_data_and_metadata(d):
    write_file(d / "a", b"one")
    os.link(d / "a", d / "b")
    with open(d / "b", "ab") as f:
        f.write(b"two")
    os.chmod(d / "a", 0o600)
    os.chown(d / "b", 2001, 2002)
    assert read_file(d / "a") == b"onetwo"
    sa, sb = os.stat(d / "a"), os.stat(d / "b")
    assert (sa.st_mode, sa.st_uid, sa.st_gid, sa.st_size) == \
        (sb.st_mode, sb.st_uid, sb.st_gid, sb.st_size)


def test_many_links(d):
    write_file(d / "f", b"x")
    for i in range(40):
        os.link(d / "f", d / ("l%d" % i))
    assert os.stat(d / "f").st_nlink == 41
    for i in range(0, 40, 2):
        os.unlink(d / ("l%d" % i))
    assert os.stat(d / "l1").st_nlink == 21


def test_link_errors(d):
    write_file(d / "f")
    os.mkdir(d / "dir")
    expect(errno.EEXIST, os.link, d / "f", d / "f")
    expect(errno.EEXIST, os.link, d / "f", d / "dir")
    expect(errno.EPERM, os.link, d / "dir", d / "dirlink")
    expect(errno.ENOENT, os.link, d / "missing", d / "x")
    expect(errno.ENOENT, os.link, d / "f", d / "nodir" / "x")
    expect(errno.ENOTDIR, os.link, d / "f", d / "f" / "x")
    assert os.stat(d / "f").st_nlink == 1
    assert sorted(os.listdir(d)) == ["dir", "f"]


def test_link_to_symlink_links_the_symlink(d):
    write_file(d / "target", b"T")
    os.symlink("target", d / "sym")
    # link(2) does not follow a trailing symlink on Linux
    linkat(d / "sym", d / "hard", follow=False)
    assert stat.S_ISLNK(os.lstat(d / "hard").st_mode)
    assert os.lstat(d / "hard").st_ino == os.lstat(d / "sym").st_ino
    assert os.lstat(d / "sym").st_nlink == 2
    # linkat(AT_SYMLINK_FOLLOW) links the target
    linkat(d / "sym", d / "hard2", follow=True)
    assert os.lstat(d / "hard2").st_ino == os.stat(d / "target").st_ino
    assert os.stat(d / "target").st_nlink == 2


def test_link_of_fifo_and_device(d):
    os.mkfifo(d / "fifo")
    os.mknod(d / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    os.link(d / "fifo", d / "fifo2")
    os.link(d / "null", d / "null2")
    assert os.stat(d / "fifo2").st_nlink == 2
    assert stat.S_ISFIFO(os.stat(d / "fifo2").st_mode)
    assert os.stat(d / "null2").st_rdev == os.makedev(1, 3)


# --- unlink of open files ------------------------------------------------------

def test_unlink_open_file_keeps_it_alive(d):
    write_file(d / "f", b"before")
    fd = os.open(d / "f", os.O_RDWR)
    try:
        os.unlink(d / "f")
        expect(errno.ENOENT, os.stat, d / "f")
        assert os.listdir(d) == []
        st = os.fstat(fd)
        assert st.st_nlink == 0 and st.st_size == 6
        assert os.pread(fd, 100, 0) == b"before"
        os.pwrite(fd, b"-after", 6)
        assert os.fstat(fd).st_size == 12
        assert os.pread(fd, 100, 0) == b"before-after"
        # a new file of the same name is a different file
        write_file(d / "f", b"new")
        assert os.stat(d / "f").st_ino != st.st_ino
        assert os.pread(fd, 100, 0) == b"before-after"
    finally:
        os.close(fd)
    assert read_file(d / "f") == b"new"


def test_unlinked_open_file_cannot_be_linked_back(d):
    # Linux: an inode whose link count dropped to 0 cannot get a name again
    # (O_TMPFILE files excepted)
    write_file(d / "f", b"x")
    fd = os.open(d / "f", os.O_RDONLY)
    try:
        os.unlink(d / "f")
        expect(errno.ENOENT, linkat, "/proc/self/fd/%d" % fd, d / "back",
               True)
        assert os.listdir(d) == []
    finally:
        os.close(fd)


def test_unlink_open_file_with_other_link(d):
    write_file(d / "f", b"data")
    os.link(d / "f", d / "g")
    fd = os.open(d / "f", os.O_RDONLY)
    try:
        os.unlink(d / "f")
        assert os.fstat(fd).st_nlink == 1
        assert os.stat(d / "g").st_nlink == 1
    finally:
        os.close(fd)
    assert read_file(d / "g") == b"data"


def test_unlink_open_large_file(d):
    data = os.urandom(300 * 1024)
    write_file(d / "f", data)
    fd = os.open(d / "f", os.O_RDONLY)
    try:
        os.unlink(d / "f")
        got = b""
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            got += chunk
        assert got == data
    finally:
        os.close(fd)


def test_unlink_symlink_removes_only_the_link(d):
    write_file(d / "target", b"T")
    os.symlink("target", d / "sym")
    os.unlink(d / "sym")
    assert os.listdir(d) == ["target"]
    assert os.stat(d / "target").st_nlink == 1


def test_removed_directory_stays_usable_as_cwd_but_empty(d):
    os.mkdir(d / "gone")
    fd = os.open(d / "gone", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.rmdir(d / "gone")
        assert os.listdir(d) == []
        # nothing may be created in a removed directory
        expect(errno.ENOENT, os.open, "new", os.O_CREAT | os.O_WRONLY, 0o644,
               dir_fd=fd)
        expect(errno.ENOENT, os.mkdir, "newdir", dir_fd=fd)
    finally:
        os.close(fd)


# --- directories ---------------------------------------------------------------

def counted(path):
    """True if the filesystem keeps traditional directory link counts."""
    n = os.stat(path).st_nlink
    assert n in (1, 2), "empty directory with st_nlink %d" % n
    return n == 2


def test_directory_nlink(d, target):
    os.mkdir(d / "top")
    top = d / "top"
    if not counted(top):
        # not counted: must stay 1 whatever happens below
        os.mkdir(top / "a")
        assert os.stat(top).st_nlink == 1
        return
    parent_before = os.stat(d).st_nlink
    os.mkdir(top / "a")
    os.mkdir(top / "b")
    write_file(top / "file")          # files do not count
    os.symlink("a", top / "sym")
    assert os.stat(top).st_nlink == 4
    assert os.stat(top / "a").st_nlink == 2
    os.rmdir(top / "b")
    assert os.stat(top).st_nlink == 3
    # a directory moving between parents moves its ".." count along
    os.mkdir(d / "other")
    os.rename(top / "a", d / "other" / "a")
    assert os.stat(top).st_nlink == 2
    assert os.stat(d / "other").st_nlink == 3
    # renaming over an empty directory removes that one's count
    os.mkdir(top / "victim")
    assert os.stat(top).st_nlink == 3
    os.rename(d / "other" / "a", top / "victim")
    assert os.stat(top).st_nlink == 3
    assert os.stat(d / "other").st_nlink == 2
    # and the parent of it all counted "top" and "other"
    assert os.stat(d).st_nlink == parent_before + 1


def test_rmdir_open_directory_has_no_links(d):
    os.mkdir(d / "gone")
    fd = os.open(d / "gone", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.rmdir(d / "gone")
        assert os.fstat(fd).st_nlink == 0
    finally:
        os.close(fd)


def test_inode_numbers_unique_and_device_shared(d):
    os.mkdir(d / "sub")
    for i in range(30):
        write_file(d / ("f%d" % i))
        os.mkdir(d / "sub" / ("d%d" % i))
    os.symlink("f0", d / "sym")
    os.mkfifo(d / "fifo")
    paths = [p for p in d.rglob("*")]
    stats = [os.lstat(p) for p in paths]
    assert len({st.st_ino for st in stats}) == len(paths)
    assert {st.st_dev for st in stats} == {os.stat(d).st_dev}
    # an inode number is stable while the file exists
    before = {str(p): os.lstat(p).st_ino for p in paths}
    os.rename(d / "f1", d / "sub" / "f1")
    assert os.stat(d / "sub" / "f1").st_ino == before[str(d / "f1")]
    assert os.stat(d / "f2").st_ino == before[str(d / "f2")]
