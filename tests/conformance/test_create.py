# SPDX-License-Identifier: MIT
"""Creating names: open(O_CREAT/O_EXCL/O_TRUNC/O_APPEND), mkdir, mkfifo,
mknod, and the path errors every name-taking call shares (ENOENT, ENOTDIR,
EISDIR, EEXIST, ENAMETOOLONG)."""

import errno
import os
import select
import stat

import pytest

from cfutil import expect, open_close, read_file, write_file

NAME_MAX = 255
PATH_MAX = 4096
CREAT = os.O_CREAT | os.O_WRONLY
EXCL = os.O_CREAT | os.O_EXCL | os.O_WRONLY


# --- open(O_CREAT) ---------------------------------------------------------

def test_creat_makes_empty_regular_file_owned_by_caller(d):
    open_close(d / "f", CREAT, 0o666)
    st = os.stat(d / "f")
    assert stat.S_ISREG(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o644        # umask 022 applied
    assert (st.st_size, st.st_nlink, st.st_uid, st.st_gid) == (0, 1, 0, 0)
    assert os.listdir(d) == ["f"]


def test_creat_mode_follows_umask(d):
    os.umask(0o077)
    open_close(d / "a", CREAT, 0o777)
    os.mkdir(d / "dir", 0o777)
    os.umask(0)
    open_close(d / "b", CREAT, 0o4755 & 0o777)
    assert stat.S_IMODE(os.stat(d / "a").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(d / "dir").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(d / "b").st_mode) == 0o755


def test_mkdir_mode_bits(d):
    os.umask(0)
    # Linux keeps the sticky bit asked for by mkdir, and drops setgid (it
    # comes only from a setgid parent)
    os.mkdir(d / "sticky", 0o1777)
    os.mkdir(d / "sgid", 0o2755)
    assert stat.S_IMODE(os.stat(d / "sticky").st_mode) == 0o1777
    assert stat.S_IMODE(os.stat(d / "sgid").st_mode) == 0o755


def test_creat_existing_keeps_content_and_mode(d):
    write_file(d / "f", b"keep", 0o600)
    fd = os.open(d / "f", os.O_CREAT | os.O_RDWR, 0o777)
    try:
        assert os.read(fd, 10) == b"keep"
    finally:
        os.close(fd)
    assert stat.S_IMODE(os.stat(d / "f").st_mode) == 0o600


def test_excl_on_existing_names(d):
    write_file(d / "f", b"x")
    os.mkdir(d / "dir")
    os.symlink("f", d / "link")
    os.symlink("nowhere", d / "dangling")
    for n in ("f", "dir", "link", "dangling"):
        expect(errno.EEXIST, os.open, d / n, EXCL, 0o644)
    # O_EXCL does not follow a dangling symlink: nothing was created
    assert not os.path.lexists(d / "nowhere")
    assert read_file(d / "f") == b"x"


def test_excl_creates_once(d):
    fd = os.open(d / "f", EXCL, 0o600)
    os.write(fd, b"first")
    os.close(fd)
    expect(errno.EEXIST, os.open, d / "f", EXCL, 0o600)
    assert read_file(d / "f") == b"first"


def test_creat_through_dangling_symlink_creates_target(d):
    os.symlink("target", d / "link")
    open_close(d / "link", CREAT, 0o644)
    assert stat.S_ISREG(os.lstat(d / "target").st_mode)
    assert stat.S_ISLNK(os.lstat(d / "link").st_mode)


def test_creat_on_directory_is_eisdir(d):
    os.mkdir(d / "dir")
    expect(errno.EISDIR, os.open, d / "dir", CREAT, 0o644)
    expect(errno.EISDIR, os.open, d / "dir", os.O_WRONLY)
    expect(errno.EISDIR, os.open, d / "dir", os.O_RDWR)
    # read-only opens of a directory are fine
    open_close(d / "dir", os.O_RDONLY)


def test_o_directory_on_file_is_enotdir(d):
    write_file(d / "f")
    expect(errno.ENOTDIR, os.open, d / "f", os.O_RDONLY | os.O_DIRECTORY)


def test_access_mode_of_descriptor(d):
    write_file(d / "f", b"abc")
    fd = os.open(d / "f", os.O_RDONLY)
    try:
        expect(errno.EBADF, os.write, fd, b"x")
    finally:
        os.close(fd)
    fd = os.open(d / "f", os.O_WRONLY)
    try:
        expect(errno.EBADF, os.read, fd, 1)
    finally:
        os.close(fd)
    assert read_file(d / "f") == b"abc"


# --- O_TRUNC / O_APPEND ------------------------------------------------------

def test_o_trunc_empties_existing_file(d):
    write_file(d / "f", b"x" * 100000)
    ino = os.stat(d / "f").st_ino
    fd = os.open(d / "f", os.O_WRONLY | os.O_TRUNC)
    try:
        assert os.fstat(fd).st_size == 0
        os.write(fd, b"new")
    finally:
        os.close(fd)
    st = os.stat(d / "f")
    assert (st.st_size, st.st_ino) == (3, ino)
    assert read_file(d / "f") == b"new"


def test_o_append_always_writes_at_end(d):
    write_file(d / "f", b"0123")
    fd = os.open(d / "f", os.O_RDWR | os.O_APPEND)
    other = os.open(d / "f", os.O_WRONLY)
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        assert os.write(fd, b"ab") == 2
        assert os.lseek(fd, 0, os.SEEK_CUR) == 6
        # another descriptor grows the file; the next append goes after it
        os.pwrite(other, b"XYZ", 6)
        os.lseek(fd, 1, os.SEEK_SET)
        os.write(fd, b"cd")
        # reads still honour the position
        os.lseek(fd, 0, os.SEEK_SET)
        assert os.read(fd, 4) == b"0123"
    finally:
        os.close(fd)
        os.close(other)
    assert read_file(d / "f") == b"0123abXYZcd"


def test_pwrite_with_o_append_appends_on_linux(d):
    # Linux (pwrite(2) BUGS): with O_APPEND, pwrite appends whatever offset
    write_file(d / "f", b"0123")
    fd = os.open(d / "f", os.O_WRONLY | os.O_APPEND)
    try:
        os.pwrite(fd, b"zz", 0)
    finally:
        os.close(fd)
    assert read_file(d / "f") == b"0123zz"


def test_two_appenders_do_not_overwrite(d):
    write_file(d / "f")
    fds = [os.open(d / "f", os.O_WRONLY | os.O_APPEND) for _ in range(2)]
    try:
        for i in range(50):
            os.write(fds[i % 2], b"%02d," % i)
    finally:
        for fd in fds:
            os.close(fd)
    assert read_file(d / "f") == b"".join(b"%02d," % i for i in range(50))


# --- mkdir -------------------------------------------------------------------

def test_mkdir(d):
    os.mkdir(d / "sub", 0o750)
    st = os.stat(d / "sub")
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o750
    assert os.listdir(d / "sub") == []
    assert os.stat(d / "sub" / "..").st_ino == os.stat(d).st_ino
    assert os.stat(str(d / "sub") + "/.").st_ino == st.st_ino
    expect(errno.EEXIST, os.mkdir, d / "sub")
    write_file(d / "f")
    expect(errno.EEXIST, os.mkdir, d / "f")
    os.symlink("nowhere", d / "dangling")
    expect(errno.EEXIST, os.mkdir, d / "dangling")


def test_rmdir_and_unlink_errors(d):
    os.mkdir(d / "sub")
    write_file(d / "sub" / "f")
    expect(errno.ENOTEMPTY, os.rmdir, d / "sub")
    expect(errno.EISDIR, os.unlink, d / "sub")       # Linux (POSIX: EPERM)
    expect(errno.ENOTDIR, os.rmdir, d / "sub" / "f")
    # (plain strings: pathlib would drop the "." component)
    expect(errno.EINVAL, os.rmdir, str(d / "sub") + "/.")
    expect(errno.ENOTEMPTY, os.rmdir, str(d / "sub") + "/../sub")
    os.unlink(d / "sub" / "f")
    os.rmdir(d / "sub")
    expect(errno.ENOENT, os.rmdir, d / "sub")
    expect(errno.ENOENT, os.unlink, d / "sub")
    assert os.listdir(d) == []


# --- FIFOs and device nodes ----------------------------------------------------

def test_mkfifo_and_data_through_it(d):
    os.mkfifo(d / "fifo", 0o640)
    st = os.stat(d / "fifo")
    assert stat.S_ISFIFO(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o640
    assert st.st_size == 0
    expect(errno.EEXIST, os.mkfifo, d / "fifo")
    # no reader: a non-blocking writer gets ENXIO
    expect(errno.ENXIO, os.open, d / "fifo", os.O_WRONLY | os.O_NONBLOCK)
    r = os.open(d / "fifo", os.O_RDONLY | os.O_NONBLOCK)
    w = os.open(d / "fifo", os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(w, b"through the pipe")
        select.select([r], [], [], 5)
        assert os.read(r, 100) == b"through the pipe"
    finally:
        os.close(w)
        os.close(r)
    # O_TRUNC on a FIFO is ignored, the node stays a FIFO
    assert stat.S_ISFIFO(os.stat(d / "fifo").st_mode)


@pytest.mark.parametrize("kind,rdev", [
    (stat.S_IFCHR, (1, 3)),
    (stat.S_IFBLK, (7, 0)),
    (stat.S_IFCHR, (4095, 1048575)),   # the largest major/minor Linux keeps
])
def test_mknod_device_as_root(d, kind, rdev):
    os.mknod(d / "dev", kind | 0o600, os.makedev(*rdev))
    st = os.lstat(d / "dev")
    assert stat.S_IFMT(st.st_mode) == kind
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == rdev
    assert st.st_size == 0


def test_mknod_regular_fifo_socket(d):
    os.mknod(d / "reg", stat.S_IFREG | 0o640)
    os.mknod(d / "fifo", stat.S_IFIFO | 0o640)
    os.mknod(d / "sock", stat.S_IFSOCK | 0o640)
    assert stat.S_ISREG(os.stat(d / "reg").st_mode)
    assert os.stat(d / "reg").st_size == 0
    assert stat.S_ISFIFO(os.stat(d / "fifo").st_mode)
    assert stat.S_ISSOCK(os.stat(d / "sock").st_mode)
    expect(errno.EEXIST, os.mknod, d / "reg", stat.S_IFREG | 0o640)
    # mknod cannot make directories (Linux: EPERM)
    expect(errno.EPERM, os.mknod, d / "dir", stat.S_IFDIR | 0o755)
    assert sorted(os.listdir(d)) == ["fifo", "reg", "sock"]


# --- path errors -------------------------------------------------------------

def test_enoent(d):
    expect(errno.ENOENT, os.open, d / "missing", os.O_RDONLY)
    expect(errno.ENOENT, os.stat, d / "missing")
    expect(errno.ENOENT, os.open, d / "nodir" / "f", CREAT, 0o644)
    expect(errno.ENOENT, os.mkdir, d / "nodir" / "sub")
    expect(errno.ENOENT, os.open, "", os.O_RDONLY)
    expect(errno.ENOENT, os.unlink, d / "missing")


def test_enotdir(d):
    write_file(d / "f")
    expect(errno.ENOTDIR, os.stat, d / "f" / "x")
    expect(errno.ENOTDIR, os.open, d / "f" / "x", CREAT, 0o644)
    expect(errno.ENOTDIR, os.mkdir, d / "f" / "sub")
    expect(errno.ENOTDIR, os.stat, str(d / "f") + "/")
    expect(errno.ENOTDIR, os.listdir, d / "f")
    expect(errno.ENOTDIR, os.unlink, str(d / "f") + "/")


def test_name_max(d):
    ok, long = "n" * NAME_MAX, "n" * (NAME_MAX + 1)
    open_close(d / ok, CREAT)
    assert os.listdir(d) == [ok]
    assert os.stat(d / ok).st_size == 0
    os.unlink(d / ok)
    os.mkdir(d / ok)
    os.rmdir(d / ok)
    write_file(d / "f")
    for call, args in ((os.open, (d / long, CREAT, 0o644)),
                       (os.stat, (d / long,)),
                       (os.mkdir, (d / long,)),
                       (os.mkfifo, (d / long,)),
                       (os.symlink, ("f", d / long)),
                       (os.link, (d / "f", d / long)),
                       (os.rename, (d / "f", d / long)),
                       (os.unlink, (d / long,))):
        expect(errno.ENAMETOOLONG, call, *args)
    assert os.listdir(d) == ["f"]


def test_pathconf_reports_name_max(d):
    assert os.pathconf(d, "PC_NAME_MAX") == NAME_MAX


def test_fsync_of_files_and_directories(d):
    write_file(d / "f", b"data")
    for path, flags in ((d / "f", os.O_WRONLY), (d / "f", os.O_RDONLY),
                        (d, os.O_RDONLY | os.O_DIRECTORY)):
        fd = os.open(path, flags)
        try:
            os.fsync(fd)
            os.fdatasync(fd)
        finally:
            os.close(fd)


def test_path_max(d):
    # a path of PATH_MAX bytes or more (with its NUL) is refused up front
    long = str(d) + "/" + "/".join(["x" * 200] * (PATH_MAX // 201 + 1))
    assert len(long) >= PATH_MAX
    expect(errno.ENAMETOOLONG, os.stat, long)
    expect(errno.ENAMETOOLONG, os.open, long, CREAT, 0o644)
    # deep paths below PATH_MAX work, one component at a time
    p = str(d)
    while len(p) + 201 < PATH_MAX - 1:
        p += "/" + "y" * 200
        os.mkdir(p)
    open_close(p + "/f", CREAT)
    assert os.stat(p + "/f").st_size == 0


def test_readdir_lists_every_name_once(d):
    names = {"f%03d" % i for i in range(300)}
    for n in names:
        open_close(d / n, CREAT)
    for n in list(names)[:100]:
        os.unlink(d / n)
        names.discard(n)
    listed = os.listdir(d)
    assert len(listed) == len(set(listed))
    assert set(listed) == names
    with os.scandir(d) as it:
        for e in it:
            assert e.is_file(follow_symlinks=False)
            assert e.inode() == os.lstat(d / e.name).st_ino


def test_readdir_types_and_inodes(d):
    write_file(d / "reg")
    os.mkdir(d / "dir")
    os.symlink("reg", d / "sym")
    os.mkfifo(d / "fifo")
    os.mknod(d / "chr", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    os.mknod(d / "sock", stat.S_IFSOCK | 0o600)
    kinds = {}
    with os.scandir(d) as it:
        for e in it:
            st = e.stat(follow_symlinks=False)
            assert e.inode() == os.lstat(d / e.name).st_ino
            kinds[e.name] = (e.is_dir(follow_symlinks=False),
                             e.is_symlink(), stat.S_IFMT(st.st_mode))
    assert kinds == {
        "reg": (False, False, stat.S_IFREG),
        "dir": (True, False, stat.S_IFDIR),
        "sym": (False, True, stat.S_IFLNK),
        "fifo": (False, False, stat.S_IFIFO),
        "chr": (False, False, stat.S_IFCHR),
        "sock": (False, False, stat.S_IFSOCK),
    }
