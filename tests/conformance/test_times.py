# SPDX-License-Identifier: MIT
"""Timestamps: which operations must update st_mtime/st_ctime (and st_atime
where set explicitly) of the file and of its parent directory, and which
must leave them alone (POSIX "marks for update", plus the Linux behaviour
tmpfs shows, noted per test).

Each test records the times, sleeps a little (cfutil.TICK), runs one
operation and compares nanosecond timestamps. Read-driven atime updates are
never asserted: they depend on relatime/noatime (memfs is noatime)."""

import os
import time

import pytest

from cfutil import (UTIME_NOW, UTIME_OMIT, read_file, tick, times,
                    utimensat, write_file)


def check(before, after, must, must_not=()):
    """Fields in `must` moved forward, fields in `must_not` did not move."""
    for f in must:
        assert getattr(after, f) > getattr(before, f), \
            "%s did not advance: %r -> %r" % (f, before, after)
    for f in must_not:
        assert getattr(after, f) == getattr(before, f), \
            "%s changed: %r -> %r" % (f, before, after)


@pytest.fixture
def f(d):
    write_file(d / "f", b"content")
    return d / "f"


def snap(*paths):
    ts = [times(p, follow=False) for p in paths]
    tick()
    return ts


# --- operations on a file --------------------------------------------------------

def test_create_sets_times_and_touches_parent(d):
    (pd,) = snap(d)
    t0 = time.time_ns()
    write_file(d / "new", b"")
    new = times(d / "new")
    assert new.mtime == new.ctime
    assert new.mtime >= pd.ctime and new.atime >= pd.ctime
    # generous: clocks of the filesystem and of Python are both realtime
    assert abs(new.mtime - t0) < 5 * 10**9
    check(pd, times(d), must=("mtime", "ctime"))


def test_write_changes_mtime_ctime_only(d, f):
    fb, pb = snap(f, d)
    with open(f, "r+b") as fh:
        fh.write(b"X")
    check(fb, times(f), must=("mtime", "ctime"))
    check(pb, times(d), must=(), must_not=("mtime", "ctime"))


def test_empty_write_changes_nothing_much(d, f):
    # POSIX: write of zero bytes to a regular file may have no effect; it
    # must not change the size or the contents
    fd = os.open(f, os.O_WRONLY)
    try:
        assert os.write(fd, b"") == 0
    finally:
        os.close(fd)
    assert read_file(f) == b"content"


def test_read_changes_neither_mtime_nor_ctime(d, f):
    (fb,) = snap(f)
    assert read_file(f) == b"content"
    check(fb, times(f), must=(), must_not=("mtime", "ctime"))


def test_chmod_changes_ctime_only(d, f):
    fb, pb = snap(f, d)
    os.chmod(f, 0o600)
    check(fb, times(f), must=("ctime",), must_not=("mtime", "atime"))
    check(pb, times(d), must=(), must_not=("mtime", "ctime"))


def test_chown_changes_ctime_only(d, f):
    (fb,) = snap(f)
    os.chown(f, 2001, 2001)
    check(fb, times(f), must=("ctime",), must_not=("mtime", "atime"))


def test_truncate_changing_size(d, f):
    (fb,) = snap(f)
    os.truncate(f, 3)
    t1 = times(f)
    check(fb, t1, must=("mtime", "ctime"))
    tick()
    os.truncate(f, 100)
    check(t1, times(f), must=("mtime", "ctime"))


def test_ftruncate_changing_size(d, f):
    (fb,) = snap(f)
    fd = os.open(f, os.O_WRONLY)
    try:
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)
    check(fb, times(f), must=("mtime", "ctime"))


def test_o_trunc_of_nonempty_file(d, f):
    fb, pb = snap(f, d)
    os.close(os.open(f, os.O_WRONLY | os.O_TRUNC))
    check(fb, times(f), must=("mtime", "ctime"))
    check(pb, times(d), must=(), must_not=("mtime", "ctime"))


def test_open_existing_without_trunc_changes_nothing(d, f):
    (fb,) = snap(f)
    os.close(os.open(f, os.O_WRONLY | os.O_CREAT, 0o644))
    os.close(os.open(f, os.O_RDWR))
    check(fb, times(f), must=(), must_not=("mtime", "ctime"))


def test_link_changes_file_ctime_and_parent(d, f):
    os.mkdir(d / "other")
    fb, pb, ob = snap(f, d, d / "other")
    os.link(f, d / "other" / "g")
    check(fb, times(f), must=("ctime",), must_not=("mtime",))
    check(ob, times(d / "other"), must=("mtime", "ctime"))
    check(pb, times(d), must=(), must_not=("mtime", "ctime"))


def test_unlink_changes_file_ctime_and_parent(d, f):
    os.link(f, d / "g")
    fb, pb = snap(f, d)
    os.unlink(d / "g")
    check(fb, times(f), must=("ctime",), must_not=("mtime",))
    check(pb, times(d), must=("mtime", "ctime"))


def test_rename_within_directory(d, f):
    fb, pb = snap(f, d)
    os.rename(f, d / "g")
    # Linux (tmpfs, ext4, ...): the moved inode's ctime changes; POSIX
    # leaves it open
    check(fb, times(d / "g"), must=("ctime",), must_not=("mtime",))
    check(pb, times(d), must=("mtime", "ctime"))


def test_rename_across_directories(d, f):
    os.mkdir(d / "to")
    fb, pb, tb = snap(f, d, d / "to")
    os.rename(f, d / "to" / "g")
    check(fb, times(d / "to" / "g"), must=("ctime",), must_not=("mtime",))
    check(pb, times(d), must=("mtime", "ctime"))
    check(tb, times(d / "to"), must=("mtime", "ctime"))


def test_rename_over_existing_file(d, f):
    write_file(d / "victim", b"v")
    fb, pb = snap(f, d)
    os.rename(f, d / "victim")
    check(fb, times(d / "victim"), must=("ctime",), must_not=("mtime",))
    check(pb, times(d), must=("mtime", "ctime"))


def test_rename_onto_itself_changes_nothing(d, f):
    os.link(f, d / "g")
    fb, pb = snap(f, d)
    os.rename(f, f)
    os.rename(f, d / "g")       # two links to one file: nothing happens
    check(fb, times(f), must=(), must_not=("mtime", "ctime"))
    check(pb, times(d), must=(), must_not=("mtime", "ctime"))


def test_failed_operations_change_nothing(d, f):
    os.mkdir(d / "sub")
    write_file(d / "sub" / "x")
    fb, pb = snap(f, d)
    for call in (lambda: os.mkdir(f), lambda: os.rmdir(d / "sub"),
                 lambda: os.rename(d / "sub", f),
                 lambda: os.link(f, d / "sub" / "x"),
                 lambda: os.open(f, os.O_CREAT | os.O_EXCL | os.O_WRONLY)):
        with pytest.raises(OSError):
            call()
    check(fb, times(f), must=(), must_not=("mtime", "ctime"))
    check(pb, times(d), must=(), must_not=("mtime", "ctime"))


# --- operations on directories ------------------------------------------------------

@pytest.mark.parametrize("op", ["mkdir", "rmdir", "symlink", "mkfifo",
                                "mknod", "unlink"])
def test_namespace_ops_touch_parent(d, op):
    os.mkdir(d / "victim_dir")
    write_file(d / "victim_file")
    (pb,) = snap(d)
    {"mkdir": lambda: os.mkdir(d / "new"),
     "rmdir": lambda: os.rmdir(d / "victim_dir"),
     "symlink": lambda: os.symlink("x", d / "new"),
     "mkfifo": lambda: os.mkfifo(d / "new"),
     "mknod": lambda: os.mknod(d / "new", 0o600 | 0o100000),
     "unlink": lambda: os.unlink(d / "victim_file")}[op]()
    check(pb, times(d), must=("mtime", "ctime"))


def test_new_entries_get_current_times(d):
    (pb,) = snap(d)
    os.mkdir(d / "dir")
    os.symlink("target", d / "sym")
    os.mkfifo(d / "fifo")
    for n in ("dir", "sym", "fifo"):
        t = times(d / n, follow=False)
        assert t.mtime > pb.mtime and t.ctime > pb.ctime, n


def test_moving_directory_updates_both_parents(d):
    os.mkdir(d / "a")
    os.mkdir(d / "b")
    os.mkdir(d / "a" / "sub")
    ab, bb, sb = snap(d / "a", d / "b", d / "a" / "sub")
    os.rename(d / "a" / "sub", d / "b" / "sub")
    check(ab, times(d / "a"), must=("mtime", "ctime"))
    check(bb, times(d / "b"), must=("mtime", "ctime"))
    check(sb, times(d / "b" / "sub"), must=("ctime",), must_not=("mtime",))


def test_listing_a_directory_changes_neither_mtime_nor_ctime(d):
    write_file(d / "f")
    (pb,) = snap(d)
    os.listdir(d)
    check(pb, times(d), must=(), must_not=("mtime", "ctime"))


def test_changes_inside_subdirectory_do_not_touch_grandparent(d):
    os.mkdir(d / "sub")
    (pb,) = snap(d)
    write_file(d / "sub" / "f")
    os.unlink(d / "sub" / "f")
    check(pb, times(d), must=(), must_not=("mtime", "ctime"))


# --- utimensat -------------------------------------------------------------------

def test_utimensat_explicit_times(d, f):
    (fb,) = snap(f)
    utimensat(f, (1000000000, 123456789), (1500000000, 987654321))
    st = os.stat(f)
    assert (st.st_atime_ns, st.st_mtime_ns) == \
        (1000000000123456789, 1500000000987654321)
    # ctime is always "now", never the given time
    assert st.st_ctime_ns > fb.ctime


def test_utime_before_1970(d, f):
    os.utime(f, ns=(-86400 * 10**9, -1 * 10**9 + 500))
    st = os.stat(f)
    assert (st.st_atime_ns, st.st_mtime_ns) == (-86400 * 10**9, -1 * 10**9 + 500)


def test_utime_far_future(d, f):
    future = (2**33) * 10**9 + 7         # after 2038 and 2106
    os.utime(f, ns=(future, future))
    assert os.stat(f).st_mtime_ns == future


def test_utimensat_now(d, f):
    utimensat(f, (1, 0), (2, 0))
    (fb,) = snap(f)
    utimensat(f, UTIME_NOW, UTIME_NOW)
    t = times(f)
    assert t.atime > 10**18 and t.mtime > 10**18
    check(fb, t, must=("atime", "mtime", "ctime"))


def test_utimensat_null_times_means_now(d, f):
    utimensat(f, (1, 0), (2, 0))
    (fb,) = snap(f)
    utimensat(f, None, None)
    check(fb, times(f), must=("atime", "mtime", "ctime"))


def test_utimensat_omit_atime(d, f):
    utimensat(f, (1000, 5), (2000, 6))
    (fb,) = snap(f)
    utimensat(f, UTIME_OMIT, (3000, 7))
    t = times(f)
    assert (t.atime, t.mtime) == (1000 * 10**9 + 5, 3000 * 10**9 + 7)
    assert t.ctime > fb.ctime


def test_utimensat_omit_mtime_now_atime(d, f):
    utimensat(f, (1000, 5), (2000, 6))
    (fb,) = snap(f)
    utimensat(f, UTIME_NOW, UTIME_OMIT)
    t = times(f)
    assert t.mtime == 2000 * 10**9 + 6
    check(fb, t, must=("atime", "ctime"))


def test_utimensat_omit_both_changes_nothing(d, f):
    (fb,) = snap(f)
    utimensat(f, UTIME_OMIT, UTIME_OMIT)
    check(fb, times(f), must=(), must_not=("atime", "mtime", "ctime"))


def test_utimensat_on_symlink_itself(d, f):
    os.symlink("f", d / "sym")
    target_before = times(f)
    utimensat(d / "sym", (100, 1), (200, 2), follow=False)
    st = os.lstat(d / "sym")
    assert (st.st_atime_ns, st.st_mtime_ns) == (100 * 10**9 + 1, 200 * 10**9 + 2)
    t = times(f)
    assert (t.atime, t.mtime) == (target_before.atime, target_before.mtime)


def test_utimensat_follows_symlink_by_default(d, f):
    os.symlink("f", d / "sym")
    utimensat(d / "sym", (100, 1), (200, 2))
    t = times(f)
    assert (t.atime, t.mtime) == (100 * 10**9 + 1, 200 * 10**9 + 2)


def test_directory_utime(d):
    os.mkdir(d / "sub")
    os.utime(d / "sub", ns=(5 * 10**9, 6 * 10**9))
    t = times(d / "sub")
    assert (t.atime, t.mtime) == (5 * 10**9, 6 * 10**9)


def test_setxattr_changes_ctime(d, f):
    # Linux: changing extended attributes is a status change
    (fb,) = snap(f)
    os.setxattr(f, "user.k", b"v")
    t1 = times(f)
    check(fb, t1, must=("ctime",), must_not=("mtime",))
    tick()
    os.removexattr(f, "user.k")
    check(t1, times(f), must=("ctime",), must_not=("mtime",))


def test_ctime_never_goes_back(d, f):
    last = times(f).ctime
    for i in range(5):
        os.chmod(f, 0o600 + i)
        now = times(f).ctime
        assert now >= last
        last = now
