# SPDX-License-Identifier: MIT
"""Passthrough-specific: a real tree copied through the mount, and a tree of
100,000 files that must not cost fring one fd per inode."""

import os
import subprocess

import pytest

from conftest import is_mounted, run_fring


@pytest.fixture
def pt(mount, tmpdirs):
    source = tmpdirs("src")
    return mount("passthrough", {"source": source}), source


def test_cp_a_usr_share_doc(pt):
    mp, source = pt
    subprocess.run(["cp", "-a", "/usr/share/doc", os.path.join(mp, "doc")],
                   check=True, timeout=300)
    # --no-dereference: the tree has relative symlinks pointing outside it
    for copy in (os.path.join(mp, "doc"), os.path.join(source, "doc")):
        r = subprocess.run(["diff", "-r", "--no-dereference", "/usr/share/doc",
                            copy], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    # cp -a preserved times and modes through the mount
    for name in ("copyright", "changelog.Debian.gz"):
        orig = os.path.join("/usr/share/doc/bash", name)
        if os.path.exists(orig):
            a, b = os.lstat(orig), os.lstat(os.path.join(mp, "doc/bash", name))
            assert (a.st_mode, a.st_size, a.st_mtime_ns) == \
                (b.st_mode, b.st_size, b.st_mtime_ns)


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def test_100k_files_without_fd_per_inode(pt):
    mp, source = pt
    dirs, per_dir = 100, 1000
    peak = fd_count(mp.pid)

    def sample():
        nonlocal peak
        peak = max(peak, fd_count(mp.pid))

    for d in range(dirs):
        dpath = os.path.join(mp, "d%03d" % d)
        os.mkdir(dpath)
        for f in range(per_dir):
            os.close(os.open(os.path.join(dpath, "f%04d" % f),
                             os.O_CREAT | os.O_WRONLY, 0o644))
        if d % 10 == 9:
            sample()

    total = 0
    for root, _, files in os.walk(mp):
        total += len(files)
        for name in files:
            assert os.stat(os.path.join(root, name)).st_size == 0
        sample()
    assert total == dirs * per_dir
    assert sum(len(f) for _, _, f in os.walk(source)) == dirs * per_dir

    for d in range(dirs):
        dpath = os.path.join(mp, "d%03d" % d)
        for f in range(per_dir):
            os.unlink(os.path.join(dpath, "f%04d" % f))
        os.rmdir(dpath)
        if d % 10 == 9:
            sample()
    assert os.listdir(mp) == [] and os.listdir(source) == []
    # 100,000 inodes were looked up and cached by the kernel; an fd per
    # inode would show here.
    assert peak < 20000, "fring held %d fds" % peak


def test_mountpoint_inside_the_source_is_refused(tmpdirs):
    """Mirroring a tree at a mountpoint inside it would show the mount
    inside itself, and a lookup there makes the server wait on its own
    requests (over io_uring a deadlock): the plugin refuses it at start,
    symlinks resolved, and nothing is mounted."""
    source = tmpdirs("src")
    mp = os.path.join(source, "sub", "mnt")
    os.makedirs(mp)
    link = os.path.join(tmpdirs("lnk"), "to-src")
    os.symlink(source, link)
    for src in (source, link, "/"):
        r = run_fring("mount", "passthrough", mp, "-o", "source=" + src)
        assert r.returncode == 1, (src, r)
        assert "passthrough: the mountpoint %s lies inside source %s" % (
            mp, os.path.realpath(src)) in r.stderr, r.stderr
        assert not is_mounted(mp)


def test_mountpoint_on_its_own_source(spawn, tmpdirs):
    """Mounting over the source itself works: the plugin opened the
    source before the mount covered it, so it serves the tree beneath."""
    source = tmpdirs("src")
    with open(os.path.join(source, "old"), "w") as fh:
        fh.write("under the mount\n")
    f = spawn(["mount", "passthrough", source, "-o", "source=" + source],
              [source])
    f.wait_ready(1)
    with open(os.path.join(source, "old")) as fh:
        assert fh.read() == "under the mount\n"
    with open(os.path.join(source, "new"), "w") as fh:
        fh.write("through the mount\n")
    assert sorted(os.listdir(source)) == ["new", "old"]
    assert f.stop() == 0, f.log()
    assert not is_mounted(source)
    with open(os.path.join(source, "new")) as fh:
        assert fh.read() == "through the mount\n"
