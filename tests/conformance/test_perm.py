# SPDX-License-Identifier: MIT
"""Permission checks for callers other than root (POSIX "file access
permissions", Linux capabilities): on fring targets the kernel enforces them
through default_permissions, with the ownership and modes the filesystem
reports, plus the rules the filesystem itself must apply (sticky
directories, chown/chmod ownership, setgid inheritance, kill of the
set-user-ID bit)."""

import errno
import os
import stat

from cfutil import (ALICE, BOB, CAROL, OTHER_GID, SHARED_GID, UTIME_NOW,
                    User, err_as, expect_as, read_file, run_as, utimensat,
                    write_file)

EACCES, EPERM = errno.EACCES, errno.EPERM


def make(path, data=b"data", mode=0o644, uid=0, gid=0):
    write_file(path, data)
    os.chown(path, uid, gid)
    os.chmod(path, mode)
    return path


def make_dir(path, mode=0o755, uid=0, gid=0):
    os.mkdir(path)
    os.chown(path, uid, gid)
    os.chmod(path, mode)
    return path


def read_as(user, path):
    return run_as(user, read_file, path)


def open_as(user, path, flags):
    def do():
        os.close(os.open(path, flags, 0o644))
    return err_as(user, do)


# --- open / read / write -----------------------------------------------------

def test_owner_group_other_classes(d):
    f = make(d / "f", mode=0o640, gid=SHARED_GID)
    # other class: no bits
    assert open_as(ALICE, f, os.O_RDONLY) == EACCES
    # group class through a supplementary group: read only
    alice_in = ALICE.with_groups(SHARED_GID)
    assert read_as(alice_in, f) == b"data"
    assert open_as(alice_in, f, os.O_WRONLY) == EACCES
    # group class through the primary gid
    assert open_as(User(BOB.uid, SHARED_GID), f, os.O_RDONLY) == 0


def test_owner_class_wins_over_group_and_other(d):
    # the owner gets the owner bits only, even if group/other allow more
    f = make(d / "f", mode=0o077, uid=ALICE.uid, gid=SHARED_GID)
    assert open_as(ALICE.with_groups(SHARED_GID), f, os.O_RDONLY) == EACCES
    assert open_as(BOB, f, os.O_RDWR) == 0
    # a group member who is not the owner gets the group bits
    g = make(d / "g", mode=0o607, uid=ALICE.uid, gid=SHARED_GID)
    assert open_as(BOB.with_groups(SHARED_GID), g, os.O_RDONLY) == EACCES
    assert open_as(BOB, g, os.O_RDWR) == 0


def test_read_write_bits(d):
    f = make(d / "f", mode=0o644)
    assert read_as(ALICE, f) == b"data"
    assert open_as(ALICE, f, os.O_WRONLY) == EACCES
    assert open_as(ALICE, f, os.O_RDWR) == EACCES
    assert open_as(ALICE, f, os.O_WRONLY | os.O_TRUNC) == EACCES
    assert os.stat(f).st_size == 4
    os.chmod(f, 0o602)
    assert open_as(ALICE, f, os.O_RDONLY) == EACCES
    assert open_as(ALICE, f, os.O_WRONLY | os.O_APPEND) == 0


def test_root_overrides_rw_but_not_exec(d):
    f = make(d / "f", mode=0o000)
    assert read_file(f) == b"data"               # CAP_DAC_OVERRIDE
    fd = os.open(f, os.O_WRONLY | os.O_APPEND)
    os.close(fd)
    # execute needs at least one x bit, even for root
    os.chmod(f, 0o644)
    write_file(d / "script", b"#!/bin/sh\nexit 0\n", 0o644)
    assert os.access(d / "script", os.X_OK) is False
    os.chmod(d / "script", 0o100)
    assert os.access(d / "script", os.X_OK) is True


def test_exec_needs_x(d):
    f = make(d / "script", b"#!/bin/sh\nexit 0\n", mode=0o744)

    def run():
        os.execv(str(f), [str(f)])
    assert err_as(ALICE, run) == EACCES


def test_noatime_needs_ownership(d):
    f = make(d / "f", mode=0o644)
    assert open_as(ALICE, f, os.O_RDONLY | os.O_NOATIME) == EPERM
    os.chown(f, ALICE.uid, ALICE.gid)
    assert open_as(ALICE, f, os.O_RDONLY | os.O_NOATIME) == 0


def test_truncate_needs_write(d):
    f = make(d / "f", mode=0o644)
    expect_as(ALICE, EACCES, os.truncate, f, 0)
    assert os.stat(f).st_size == 4
    os.chmod(f, 0o646)
    expect_as(ALICE, 0, os.truncate, f, 1)
    assert os.stat(f).st_size == 1


# --- directories: search, create, remove ------------------------------------

def test_search_permission(d):
    sub = make_dir(d / "sub", mode=0o700)
    make(sub / "f", mode=0o644)
    expect_as(ALICE, EACCES, os.stat, sub / "f")
    expect_as(ALICE, EACCES, os.listdir, sub)
    os.chmod(sub, 0o711)          # search but no read
    assert run_as(ALICE, lambda: os.stat(sub / "f").st_size) == 4
    expect_as(ALICE, EACCES, os.listdir, sub)
    os.chmod(sub, 0o744)          # read but no search: names, not inodes
    assert run_as(ALICE, os.listdir, sub) == ["f"]
    expect_as(ALICE, EACCES, os.stat, sub / "f")


def test_create_needs_write_and_search(d):
    ro = make_dir(d / "ro", mode=0o755)
    noexec = make_dir(d / "noexec", mode=0o777 & ~0o111)
    open_ = make_dir(d / "open", mode=0o777)
    for parent, code in ((ro, EACCES), (noexec, EACCES), (open_, 0)):
        expect_as(ALICE, code, os.mkdir, parent / "dir")
        assert open_as(ALICE, parent / "file", os.O_CREAT | os.O_WRONLY) == code
        expect_as(ALICE, code, os.symlink, "x", parent / "link")
        expect_as(ALICE, code, os.mkfifo, parent / "fifo")
    st = os.stat(open_ / "file")
    assert (st.st_uid, st.st_gid) == (ALICE.uid, ALICE.gid)
    st = os.stat(open_ / "dir")
    assert (st.st_uid, st.st_gid) == (ALICE.uid, ALICE.gid)
    st = os.lstat(open_ / "link")
    assert (st.st_uid, st.st_gid) == (ALICE.uid, ALICE.gid)
    st = os.stat(open_ / "fifo")
    assert (st.st_uid, st.st_gid) == (ALICE.uid, ALICE.gid)


def test_new_file_group_from_fsgid(d):
    os.chmod(d, 0o777)
    user = User(ALICE.uid, SHARED_GID, [ALICE.gid])
    run_as(user, write_file, d / "f", b"")
    st = os.stat(d / "f")
    assert (st.st_uid, st.st_gid) == (ALICE.uid, SHARED_GID)


def test_setgid_directory_inheritance(d):
    sg = make_dir(d / "sg", mode=0o2777, gid=SHARED_GID)
    assert os.stat(sg).st_mode & stat.S_ISGID
    run_as(ALICE, write_file, sg / "f", b"")
    run_as(ALICE, os.mkdir, sg / "sub")
    assert os.stat(sg / "f").st_gid == SHARED_GID
    assert os.stat(sg / "f").st_uid == ALICE.uid
    st = os.stat(sg / "sub")
    assert st.st_gid == SHARED_GID
    assert st.st_mode & stat.S_ISGID, "subdirectories inherit setgid"


def test_unlink_needs_write_on_parent(d):
    ro = make_dir(d / "ro", mode=0o755)
    make(ro / "f", mode=0o666)
    expect_as(ALICE, EACCES, os.unlink, ro / "f")
    rw = make_dir(d / "rw", mode=0o777)
    make(rw / "f", mode=0o600)        # the file's own mode does not matter
    make_dir(rw / "sub", mode=0o700)
    expect_as(ALICE, 0, os.unlink, rw / "f")
    expect_as(ALICE, 0, os.rmdir, rw / "sub")
    assert os.listdir(rw) == []
    make_dir(ro / "sub")
    expect_as(ALICE, EACCES, os.rmdir, ro / "sub")


def test_rename_needs_write_on_both_parents(d):
    src = make_dir(d / "src", mode=0o777)
    ro = make_dir(d / "ro", mode=0o755)
    make(src / "f")
    expect_as(ALICE, EACCES, os.rename, src / "f", ro / "f")
    make(ro / "g")
    expect_as(ALICE, EACCES, os.rename, ro / "g", src / "g")
    assert os.path.exists(src / "f") and os.path.exists(ro / "g")


def test_moving_a_directory_needs_write_on_it(d):
    # a directory moving to another parent gets a new "..": Linux requires
    # write permission on the directory itself
    a = make_dir(d / "a", mode=0o777)
    b = make_dir(d / "b", mode=0o777)
    make_dir(a / "sub", mode=0o755)
    expect_as(ALICE, EACCES, os.rename, a / "sub", b / "sub")
    expect_as(ALICE, 0, os.rename, a / "sub", a / "renamed")   # same parent
    os.chmod(a / "renamed", 0o757)
    expect_as(ALICE, 0, os.rename, a / "renamed", b / "sub")
    assert os.stat(b / "sub").st_ino != os.stat(a).st_ino


# --- sticky directories -----------------------------------------------------

def sticky_setup(d, owner=0):
    t = make_dir(d / "tmp", mode=0o1777, uid=owner)
    run_as(ALICE, write_file, t / "alice", b"a")
    run_as(ALICE, os.mkdir, t / "alicedir")
    run_as(BOB, write_file, t / "bob", b"b")
    os.chmod(t / "alice", 0o666)
    return t


def test_sticky_others_cannot_remove(d):
    t = sticky_setup(d)
    assert os.stat(t).st_mode & stat.S_ISVTX
    expect_as(BOB, EPERM, os.unlink, t / "alice")
    expect_as(BOB, EPERM, os.rmdir, t / "alicedir")
    expect_as(BOB, EPERM, os.rename, t / "alice", t / "mine")
    # replacing someone else's file by rename is a removal too
    expect_as(BOB, EPERM, os.rename, t / "bob", t / "alice")
    assert read_file(t / "alice") == b"a"
    assert read_file(t / "bob") == b"b"
    # writing is governed by the file's mode, not the sticky bit
    expect_as(BOB, 0, write_file, t / "alice", b"B")


def test_sticky_owner_dirowner_root_can_remove(d):
    t = sticky_setup(d, owner=CAROL.uid)
    expect_as(ALICE, 0, os.rename, t / "alice", t / "alice2")
    expect_as(CAROL, 0, os.unlink, t / "alice2")       # owns the directory
    expect_as(CAROL, 0, os.rmdir, t / "alicedir")
    os.unlink(t / "bob")                                  # root
    assert os.listdir(t) == []


def test_sticky_bit_set_by_non_root(d):
    # chmod by the owner may set the sticky bit on a directory
    os.chmod(d, 0o777)
    run_as(ALICE, os.mkdir, d / "s")
    run_as(ALICE, os.chmod, d / "s", 0o1777)
    assert stat.S_IMODE(os.stat(d / "s").st_mode) == 0o1777


# --- chmod / chown / utime ---------------------------------------------------

def test_chmod_only_owner_or_root(d):
    f = make(d / "f", mode=0o666, uid=ALICE.uid, gid=ALICE.gid)
    expect_as(BOB, EPERM, os.chmod, f, 0o777)
    expect_as(ALICE, 0, os.chmod, f, 0o600)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o600
    os.chmod(f, 0o640)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o640


def test_chmod_setgid_dropped_outside_group(d):
    # Linux: a non-root owner outside the file's group cannot set S_ISGID;
    # chmod succeeds with the bit cleared
    f = make(d / "f", mode=0o644, uid=ALICE.uid, gid=OTHER_GID)
    expect_as(ALICE, 0, os.chmod, f, 0o2755)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o755
    os.chown(f, ALICE.uid, ALICE.gid)
    expect_as(ALICE, 0, os.chmod, f, 0o2755)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o2755


def test_chown_rules(d):
    f = make(d / "f", mode=0o644, uid=ALICE.uid, gid=ALICE.gid)
    alice = ALICE.with_groups(SHARED_GID)
    # giving a file away needs CAP_CHOWN
    expect_as(alice, EPERM, os.chown, f, BOB.uid, -1)
    # the owner may change the group to one of its groups
    expect_as(alice, 0, os.chown, f, -1, SHARED_GID)
    assert os.stat(f).st_gid == SHARED_GID
    expect_as(alice, EPERM, os.chown, f, -1, OTHER_GID)
    # "changing" the owner to itself is allowed
    expect_as(alice, 0, os.chown, f, ALICE.uid, -1)
    # a non-owner may not even change the group
    expect_as(BOB.with_groups(SHARED_GID), EPERM, os.chown, f, -1, SHARED_GID)
    os.chown(f, BOB.uid, OTHER_GID)
    st = os.stat(f)
    assert (st.st_uid, st.st_gid) == (BOB.uid, OTHER_GID)


def test_chown_clears_setuid_setgid(d):
    f = make(d / "f", mode=0o6755, uid=ALICE.uid, gid=ALICE.gid)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o6755
    expect_as(ALICE.with_groups(SHARED_GID), 0, os.chown, f, -1, SHARED_GID)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o755
    # root is treated the same (Linux since 2.2.13)
    os.chmod(f, 0o6755)
    os.chown(f, BOB.uid, BOB.gid)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o755
    # setgid without group execute (mandatory-locking marker) is kept
    os.chmod(f, 0o2744)
    os.chown(f, ALICE.uid, -1)
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o2744


def test_write_by_non_owner_clears_setuid(d):
    f = make(d / "f", mode=0o6777, uid=BOB.uid, gid=BOB.gid)

    def append():
        fd = os.open(f, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
    run_as(ALICE, append)
    assert read_file(f) == b"datax"
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o777


def test_write_by_owner_clears_setuid_too(d):
    # anyone without CAP_FSETID, the owner included, loses S_ISUID by writing
    f = make(d / "f", mode=0o4755, uid=ALICE.uid, gid=ALICE.gid)
    run_as(ALICE, write_file, f, b"new")
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o755
    # root keeps it
    os.chmod(f, 0o4755)
    write_file(f, b"root")
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o4755


def test_truncate_by_non_owner_clears_setuid(d):
    f = make(d / "f", mode=0o6777, uid=BOB.uid, gid=BOB.gid)
    expect_as(ALICE, 0, os.truncate, f, 1)
    st = os.stat(f)
    assert st.st_size == 1
    assert stat.S_IMODE(st.st_mode) == 0o777


def test_chown_keeps_directory_setgid(d):
    sub = make_dir(d / "sub", mode=0o2755)
    os.chown(sub, ALICE.uid, SHARED_GID)
    assert stat.S_IMODE(os.stat(sub).st_mode) == 0o2755


def test_utime_permissions(d):
    f = make(d / "f", mode=0o666, uid=ALICE.uid, gid=ALICE.gid)
    # explicit times: owner or root only
    expect_as(BOB, EPERM, os.utime, f, (1, 2))
    expect_as(ALICE, 0, os.utime, f, (1, 2))
    assert os.stat(f).st_mtime == 2
    # "now": anyone who may write
    expect_as(BOB, 0, os.utime, f, None)
    expect_as(BOB, 0, utimensat, f, UTIME_NOW, UTIME_NOW)
    assert os.stat(f).st_mtime > 2
    os.chmod(f, 0o644)
    expect_as(BOB, EACCES, os.utime, f, None)
    expect_as(BOB, EPERM, os.utime, f, (3, 4))


def test_mknod_device_needs_cap_mknod(d):
    os.chmod(d, 0o777)
    expect_as(ALICE, EPERM, os.mknod, d / "null",
              stat.S_IFCHR | 0o666, os.makedev(1, 3))
    assert not os.path.lexists(d / "null")
    # a FIFO does not
    expect_as(ALICE, 0, os.mknod, d / "fifo", stat.S_IFIFO | 0o644)
    assert stat.S_ISFIFO(os.stat(d / "fifo").st_mode)


def test_hardlink_check_on_files_one_cannot_write(d):
    # Linux fs.protected_hardlinks=1: linking to a file one does not own
    # and cannot read and write is refused
    try:
        with open("/proc/sys/fs/protected_hardlinks") as fh:
            protected = fh.read().strip() == "1"
    except OSError:
        protected = False
    os.chmod(d, 0o777)
    f = make(d / "f", mode=0o600)
    expect_as(ALICE, EPERM if protected else 0, os.link, f, d / "l")
    g = make(d / "g", mode=0o666)
    expect_as(ALICE, 0, os.link, g, d / "m")
    assert os.stat(g).st_nlink == 2


def test_access_reports_the_callers_rights(d):
    f = make(d / "f", mode=0o640, gid=SHARED_GID)
    alice_in = ALICE.with_groups(SHARED_GID)

    def rights(path):
        return [os.access(path, m) for m in (os.R_OK, os.W_OK, os.X_OK)]
    assert run_as(alice_in, rights, f) == [True, False, False]
    assert run_as(ALICE, rights, f) == [False, False, False]
    os.chmod(f, 0o751)
    assert run_as(ALICE, rights, f) == [False, False, True]
    os.chown(f, ALICE.uid, -1)
    assert run_as(ALICE, rights, f) == [True, True, True]


def test_permissions_are_checked_at_open_only(d):
    os.chmod(d, 0o777)
    f = d / "f"

    def write_after_chmod():
        fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.fchmod(fd, 0o000)
            os.write(fd, b"still writable")
            os.ftruncate(fd, 5)
            return os.pread(fd, 100, 0)
        finally:
            os.close(fd)
    assert run_as(ALICE, write_after_chmod) == b"still"
    assert stat.S_IMODE(os.stat(f).st_mode) == 0
    assert open_as(ALICE, f, os.O_RDONLY) == EACCES


def test_owner_may_set_times_to_now_without_write(d):
    f = make(d / "f", mode=0o444, uid=ALICE.uid, gid=ALICE.gid)
    os.utime(f, (1, 1))
    expect_as(ALICE, 0, os.utime, f, None)
    assert os.stat(f).st_mtime > 1


def test_create_strips_setgid_outside_group(d):
    # Linux: a file created in a setgid directory whose group the creator
    # is not in does not keep S_ISGID from the requested mode
    sg = make_dir(d / "sg", mode=0o2777, gid=SHARED_GID)

    def create():
        os.umask(0)
        os.close(os.open(sg / "f", os.O_CREAT | os.O_WRONLY, 0o2775))
    run_as(ALICE, create)
    st = os.stat(sg / "f")
    assert st.st_gid == SHARED_GID
    assert stat.S_IMODE(st.st_mode) == 0o775
