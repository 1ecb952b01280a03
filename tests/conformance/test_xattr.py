# SPDX-License-Identifier: MIT
"""Extended attributes (Linux xattr(7)): the user, trusted and security
namespaces, unknown namespaces, flags, size probes, limits (names up to 255
bytes, values up to 64 KiB), listing, and who may touch which namespace."""

import errno
import os
import stat

import pytest

from cfutil import (ALICE, expect, expect_as, getxattr_raw, listxattr_raw,
                    run_as, write_file)

XATTR_NAME_MAX = 255
XATTR_SIZE_MAX = 65536


def user_names(path):
    return sorted(n for n in os.listxattr(path) if n.startswith("user."))


@pytest.fixture
def f(d):
    write_file(d / "f", b"content")
    return d / "f"


def test_user_set_get_list_remove(d, f):
    assert user_names(f) == []
    expect(errno.ENODATA, os.getxattr, f, "user.k")
    os.setxattr(f, "user.k", b"value")
    os.setxattr(f, "user.other", b"2")
    assert os.getxattr(f, "user.k") == b"value"
    assert user_names(f) == ["user.k", "user.other"]
    os.setxattr(f, "user.k", b"replaced, longer value")
    assert os.getxattr(f, "user.k") == b"replaced, longer value"
    os.setxattr(f, "user.k", b"v")
    assert os.getxattr(f, "user.k") == b"v"
    os.removexattr(f, "user.k")
    expect(errno.ENODATA, os.getxattr, f, "user.k")
    expect(errno.ENODATA, os.removexattr, f, "user.k")
    assert user_names(f) == ["user.other"]


def test_user_xattr_on_directory(d):
    os.setxattr(d, "user.dir", b"yes")
    assert os.getxattr(d, "user.dir") == b"yes"
    assert "user.dir" in os.listxattr(d)


def test_values_are_binary_and_may_be_empty(d, f):
    blob = bytes(range(256)) + b"\0\0end"
    os.setxattr(f, "user.bin", blob)
    os.setxattr(f, "user.empty", b"")
    assert os.getxattr(f, "user.bin") == blob
    assert os.getxattr(f, "user.empty") == b""
    assert getxattr_raw(f, "user.empty", 0) == (0, b"")
    assert "user.empty" in os.listxattr(f)


def test_create_and_replace_flags(d, f):
    expect(errno.ENODATA, os.setxattr, f, "user.k", b"x", os.XATTR_REPLACE)
    os.setxattr(f, "user.k", b"one", os.XATTR_CREATE)
    expect(errno.EEXIST, os.setxattr, f, "user.k", b"two", os.XATTR_CREATE)
    assert os.getxattr(f, "user.k") == b"one"
    os.setxattr(f, "user.k", b"three", os.XATTR_REPLACE)
    assert os.getxattr(f, "user.k") == b"three"


def test_size_probe_and_erange(d, f):
    os.setxattr(f, "user.k", b"0123456789")
    assert getxattr_raw(f, "user.k", 0) == (10, b"")
    assert getxattr_raw(f, "user.k", 10) == (10, b"0123456789")
    assert getxattr_raw(f, "user.k", 64) == (10, b"0123456789")
    expect(errno.ERANGE, getxattr_raw, f, "user.k", 9)
    expect(errno.ENODATA, getxattr_raw, f, "user.missing", 0)


def test_list_size_probe_and_erange(d, f):
    os.setxattr(f, "user.a", b"1")
    os.setxattr(f, "user.bb", b"2")
    size, _ = listxattr_raw(f, 0)
    n, raw = listxattr_raw(f, size)
    assert n == size
    names = raw.split(b"\0")
    assert names[-1] == b"" and b"user.a" in names and b"user.bb" in names
    expect(errno.ERANGE, listxattr_raw, f, size - 1)


def test_value_size_limit(d, f):
    big = os.urandom(XATTR_SIZE_MAX)
    try:
        os.setxattr(f, "user.big", big)
    except OSError as e:
        # a filesystem may have less room (ENOSPC), but not refuse a legal
        # size as too big
        assert e.errno == errno.ENOSPC, e
    else:
        assert os.getxattr(f, "user.big") == big
        assert getxattr_raw(f, "user.big", 0)[0] == XATTR_SIZE_MAX
    expect(errno.E2BIG, os.setxattr, f, "user.huge", big + b"!")
    expect(errno.ENODATA, os.getxattr, f, "user.huge")


def test_name_length_limit(d, f):
    longest = "user." + "n" * (XATTR_NAME_MAX - len("user."))
    os.setxattr(f, longest, b"v")
    assert os.getxattr(f, longest) == b"v"
    assert longest in os.listxattr(f)
    expect(errno.ERANGE, os.setxattr, f, longest + "n", b"v")
    expect(errno.ERANGE, os.getxattr, f, longest + "n")
    expect(errno.ERANGE, os.removexattr, f, longest + "n")
    expect(errno.ERANGE, os.setxattr, f, "", b"v")


def test_unknown_namespace(d, f):
    for attr in ("foo.bar", "noprefix", "User.k"):
        expect(errno.EOPNOTSUPP, os.setxattr, f, attr, b"v")
        expect(errno.EOPNOTSUPP, os.getxattr, f, attr)
    assert all(n.split(".")[0] in ("user", "trusted", "security", "system")
               for n in os.listxattr(f))


def test_trusted_as_root(d, f):
    os.setxattr(f, "trusted.k", b"root only")
    assert os.getxattr(f, "trusted.k") == b"root only"
    assert "trusted.k" in os.listxattr(f)
    os.removexattr(f, "trusted.k")
    expect(errno.ENODATA, os.getxattr, f, "trusted.k")


def test_trusted_needs_cap_sys_admin(d, f):
    os.setxattr(f, "trusted.k", b"secret")
    os.chmod(f, 0o666)
    expect_as(ALICE, errno.EPERM, os.setxattr, f, "trusted.j", b"v")
    # reads behave as if the attribute did not exist
    expect_as(ALICE, errno.ENODATA, os.getxattr, f, "trusted.k")
    expect_as(ALICE, errno.EPERM, os.removexattr, f, "trusted.k")
    assert os.getxattr(f, "trusted.k") == b"secret"


def test_trusted_hidden_from_unprivileged_list(d, f):
    os.setxattr(f, "trusted.k", b"secret")
    os.setxattr(f, "user.k", b"public")
    names = run_as(ALICE, os.listxattr, f)
    assert "user.k" in names
    assert "trusted.k" not in names


def test_security_namespace(d, f):
    os.setxattr(f, "security.fring", b"label")
    assert os.getxattr(f, "security.fring") == b"label"
    assert "security.fring" in os.listxattr(f)
    # anyone may read a security label; only CAP_SYS_ADMIN may set one
    os.chmod(f, 0o666)
    assert run_as(ALICE, os.getxattr, f, "security.fring") == b"label"
    expect_as(ALICE, errno.EPERM, os.setxattr, f, "security.other", b"x")
    os.removexattr(f, "security.fring")
    expect(errno.ENODATA, os.getxattr, f, "security.fring")


def test_user_xattr_follows_file_permissions(d, f):
    os.setxattr(f, "user.k", b"v")
    os.chmod(f, 0o640)
    expect_as(ALICE, errno.EACCES, os.getxattr, f, "user.k")
    expect_as(ALICE, errno.EACCES, os.setxattr, f, "user.k", b"w")
    os.chmod(f, 0o644)
    assert run_as(ALICE, os.getxattr, f, "user.k") == b"v"
    expect_as(ALICE, errno.EACCES, os.setxattr, f, "user.k", b"w")
    os.chmod(f, 0o666)
    expect_as(ALICE, 0, os.setxattr, f, "user.k", b"w")
    assert os.getxattr(f, "user.k") == b"w"


def test_user_xattr_write_needs_write_permission_even_for_owner(d, f):
    os.chown(f, ALICE.uid, ALICE.gid)
    os.chmod(f, 0o444)
    expect_as(ALICE, errno.EACCES, os.setxattr, f, "user.k", b"v")
    os.chmod(f, 0o644)
    expect_as(ALICE, 0, os.setxattr, f, "user.k", b"v")
    expect_as(ALICE, 0, os.removexattr, f, "user.k")


def test_user_xattr_on_sticky_dir_needs_owner(d):
    os.mkdir(d / "t")
    os.chmod(d / "t", 0o1777)
    expect_as(ALICE, errno.EPERM, os.setxattr, d / "t", "user.k", b"v")


def test_user_xattr_only_on_files_and_dirs(d, f):
    os.symlink("f", d / "sym")
    os.mkfifo(d / "fifo")
    os.mknod(d / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    for n in ("sym", "fifo", "null"):
        expect(errno.EPERM, os.setxattr, d / n, "user.k", b"v",
               follow_symlinks=False)
        expect(errno.ENODATA, os.getxattr, d / n, "user.k",
               follow_symlinks=False)
    # trusted.* is allowed on them (as root)
    os.setxattr(d / "sym", "trusted.k", b"link", follow_symlinks=False)
    assert os.getxattr(d / "sym", "trusted.k", follow_symlinks=False) == b"link"
    expect(errno.ENODATA, os.getxattr, f, "trusted.k")


def test_xattrs_belong_to_the_inode(d, f):
    os.setxattr(f, "user.k", b"v")
    os.link(f, d / "hard")
    assert os.getxattr(d / "hard", "user.k") == b"v"
    os.rename(f, d / "renamed")
    assert os.getxattr(d / "renamed", "user.k") == b"v"
    os.symlink("renamed", d / "sym")
    assert os.getxattr(d / "sym", "user.k") == b"v"       # follows
    # a replaced file's attributes go with it
    write_file(d / "new", b"n")
    os.rename(d / "new", d / "renamed")
    expect(errno.ENODATA, os.getxattr, d / "renamed", "user.k")
    assert os.getxattr(d / "hard", "user.k") == b"v"


def test_many_attributes(d, f):
    for i in range(100):
        os.setxattr(f, "user.attr%03d" % i, b"%d" % i)
    assert user_names(f) == ["user.attr%03d" % i for i in range(100)]
    for i in range(0, 100, 3):
        os.removexattr(f, "user.attr%03d" % i)
    assert len(user_names(f)) == 66
    assert os.getxattr(f, "user.attr050") == b"50"


def test_fd_based_calls(d, f):
    fd = os.open(f, os.O_RDONLY)
    try:
        os.setxattr(fd, "user.fd", b"via fd")
        assert os.getxattr(fd, "user.fd") == b"via fd"
        assert "user.fd" in os.listxattr(fd)
        os.unlink(f)
        # still works on an unlinked, open file
        assert os.getxattr(fd, "user.fd") == b"via fd"
        os.removexattr(fd, "user.fd")
    finally:
        os.close(fd)
