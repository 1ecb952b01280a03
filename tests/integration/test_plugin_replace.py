# SPDX-License-Identifier: MIT
"""A plugin file replaced or rewritten in place while it serves: the server
runs from a private copy (core/loader/snapshot.c), so the mount keeps
working and stops cleanly; messages still name the file."""

import os
import shutil
import subprocess

import pytest

import conftest
from conftest import is_mounted, run_fring

PLUGINS = conftest.PLUGIN_DIR.split(":")[0]


def plugin(name):
    return os.path.join(PLUGINS, name + ".so")


def serving_maps(pid):
    with open("/proc/%d/maps" % pid) as f:
        return f.read()


def use(mp, tag):
    """Write a file, read back every earlier one, list them."""
    with open(os.path.join(mp, tag), "w") as f:
        f.write("data of %s\n" % tag)
    names = sorted(os.listdir(mp))
    for name in names:
        if name == "big":
            continue
        with open(os.path.join(mp, name)) as f:
            assert f.read() == "data of %s\n" % name
    return names


@pytest.mark.parametrize("by", ["path", "name"])
def test_plugin_overwritten_in_place_keeps_serving(spawn, tmpdirs, monkeypatch, by):
    d = tmpdirs("plugins")
    so = os.path.join(d, "memfs.so")
    shutil.copy(plugin("memfs"), so)
    inode = os.stat(so).st_ino
    if by == "name":  # found on the search path: the file shadows the built-in
        monkeypatch.setattr(conftest, "PLUGIN_DIR", d + ":" + conftest.PLUGIN_DIR)
    mp = tmpdirs("mnt")
    f = spawn(["mount", so if by == "path" else "memfs", mp], [mp])
    f.wait_ready(1)
    pid = conftest.serving_pid(f.proc.pid)
    maps = serving_maps(pid)
    # served from the private copy, not from the file
    assert "memfd:fring-plugin:memfs.so" in maps, maps
    assert so not in maps, maps
    assert use(mp, "a") == ["a"]
    big = os.urandom(3 << 20)
    with open(os.path.join(mp, "big"), "wb") as g:
        g.write(big)

    # cp writes into the same inode (what killed the server before)
    subprocess.run(["cp", plugin("null"), so], check=True)
    assert os.stat(so).st_ino == inode
    assert use(mp, "b") == ["a", "b", "big"]
    # truncate, then write something else (not even an ELF file)
    os.truncate(so, 0)
    assert use(mp, "c") == ["a", "b", "big", "c"]
    with open(so, "r+b") as g:
        g.write(os.urandom(200000))
    assert os.stat(so).st_ino == inode
    assert use(mp, "d") == ["a", "b", "big", "c", "d"]
    with open(os.path.join(mp, "big"), "rb") as g:
        assert g.read() == big
    # and removed altogether
    os.unlink(so)
    assert use(mp, "e") == ["a", "b", "big", "c", "d", "e"]

    assert f.stop() == 0, f.log()
    assert not is_mounted(mp)
    assert "died" not in f.log(), f.log()


def test_errors_name_the_file_not_the_copy(tmpdirs):
    d = tmpdirs("plugins")
    so = os.path.join(d, "broken.so")
    with open(so, "wb") as g:
        g.write(b"\x7fELF" + os.urandom(100))
    mp = tmpdirs("mnt")
    cfg = os.path.join(tmpdirs("cfg"), "fring.yaml")
    with open(cfg, "w") as g:
        g.write("mounts:\n  - mountpoint: %s\n    plugin: %s\n" % (mp, so))
    r = run_fring("check", cfg)
    assert r.returncode == 1, r.stdout
    assert "/proc/self/fd" not in r.stderr, r.stderr
    assert r.stderr.startswith("fring: %s:3:13: plugin '%s': " % (cfg, so)), r.stderr
    r = run_fring("mount", so, mp)
    assert r.returncode == 1
    assert "/proc/self/fd" not in r.stderr, r.stderr
    assert ("plugin '%s': " % so) in r.stderr, r.stderr
    assert not is_mounted(mp)


def test_restarted_mount_uses_the_new_file(spawn, tmpdirs):
    """How a new version is taken into use: replace the file (any way),
    restart the mount."""
    d = tmpdirs("plugins")
    so = os.path.join(d, "fs.so")
    shutil.copy(plugin("memfs"), so)
    mp = tmpdirs("mnt")
    f = spawn(["mount", so, mp], [mp])
    assert "(plugin memfs," in f.wait_ready(1)[0]
    subprocess.run(["cp", plugin("null"), so], check=True)
    assert use(mp, "x") == ["x"]
    assert f.stop() == 0, f.log()
    g = spawn(["mount", so, mp], [mp])
    assert "(plugin null," in g.wait_ready(1)[0]
    assert g.stop() == 0, g.log()
    assert not is_mounted(mp)
