# SPDX-License-Identifier: MIT
"""allow_other lets every local user into a mount served as root. Without
default_permissions the kernel checks no mode bits, so a plugin that does
not check them itself would let uid 65534 read and overwrite root's mode
0600 files (core/runtime/features.h). fring turns default_permissions on
for such a mount, unless the plugin declares
FRING_FEATURE_CHECKS_PERMISSIONS (tests/fixtures/own_perms.c) or the mount
says trust_plugin_permissions, and one info line says which."""
import errno
import os
import signal

import pytest

from conftest import FRING

FIXTURE_DIR = os.environ.get("FRING_FIXTURE_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(FRING)), "tests", "fixtures")
NOBODY = 65534
TURNED_ON = ("allow_other: default_permissions turned on (the plugin does "
             "not check permissions)")
TRUSTED = ("allow_other: default_permissions left off (mount option "
           "trust_plugin_permissions)")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def as_nobody(path, mode):
    """Open path as uid/gid 65534 (no groups) in a forked child and read or
    write it: its content, "written", or the errno name."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rfd)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            try:
                with open(path, mode) as f:
                    out = f.read() if mode == "r" else "written"
                    if mode == "w":
                        f.write("owned")
            except OSError as e:
                out = errno.errorcode[e.errno]
            os.write(wfd, out.encode())
        finally:
            os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as f:
        out = f.read().decode()
    os.waitpid(pid, 0)
    return out


def super_options(mp):
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        if f[4] == mp:
            return f[f.index("-") + 3].split(",")
    raise AssertionError("%s is not mounted" % mp)


def start(spawn, tmpdirs, plugin, mount_options):
    """Mount plugin with mount_options and write root's 0600 "secret"
    through it (passthrough's source: a 0700 directory of root's)."""
    opts = []
    if plugin == "passthrough":
        src = tmpdirs("src")
        os.chmod(src, 0o700)
        opts = ["-o", "source=" + src]
    mp = tmpdirs("mnt")
    f = spawn(["mount", plugin, mp, *opts, "-O", mount_options], [mp])
    f.wait_ready(1)
    path = os.path.join(mp, "secret")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"secret\n")
    os.close(fd)
    os.chmod(path, 0o600)
    return f, mp, path


@pytest.mark.parametrize("plugin", ["memfs", "passthrough"])
def test_allow_other_turns_default_permissions_on(spawn, tmpdirs, plugin):
    f, mp, path = start(spawn, tmpdirs, plugin, "allow_other")
    assert as_nobody(path, "r") == "EACCES"
    assert as_nobody(path, "w") == "EACCES"
    with open(path) as fh:
        assert fh.read() == "secret\n"
    assert "default_permissions" in super_options(mp)
    assert f.stop(signal.SIGTERM) == 0, f.log()
    assert f.log().count(TURNED_ON) == 1, f.log()


@pytest.mark.parametrize("plugin", ["memfs", "passthrough"])
def test_trust_plugin_permissions_is_the_explicit_risk(spawn, tmpdirs, plugin):
    """The documented opt-out: these plugins do not check, so any user
    reads and overwrites root's 0600 file."""
    f, mp, path = start(spawn, tmpdirs, plugin,
                        "allow_other,trust_plugin_permissions")
    assert as_nobody(path, "r") == "secret\n"
    assert as_nobody(path, "w") == "written"
    with open(path) as fh:
        assert fh.read() == "owned"
    assert "default_permissions" not in super_options(mp)
    assert f.stop(signal.SIGTERM) == 0, f.log()
    log = f.log()
    assert log.count(TRUSTED) == 1 and TURNED_ON not in log, log


def test_trust_plugin_permissions_in_yaml(spawn, tmpdirs, tmp_path):
    mp = tmpdirs("mnt")
    cfg = tmp_path / "m.yaml"
    cfg.write_text("mounts:\n  - mountpoint: %s\n    plugin: memfs\n"
                   "    mount_options: [allow_other, trust_plugin_permissions]\n"
                   % mp)
    f = spawn(["run", str(cfg)], [mp])
    f.wait_ready(1)
    assert "default_permissions" not in super_options(mp)
    assert f.stop(signal.SIGTERM) == 0, f.log()
    # a warning, not an info line: any local user may read what root can
    assert ("fring: warning: %s: %s" % (os.path.realpath(mp), TRUSTED)
            in f.log()), f.log()


def test_a_plugin_that_checks_permissions_itself(spawn, tmpdirs):
    mp = tmpdirs("mnt")
    f = spawn(["mount", os.path.join(FIXTURE_DIR, "own_perms.so"), mp,
               "-O", "allow_other"], [mp])
    f.wait_ready(1)
    assert "default_permissions" not in super_options(mp)
    assert as_nobody(os.path.join(mp, "secret"), "r") == "EACCES"  # its own check
    assert as_nobody(os.path.join(mp, "public"), "r") == "public\n"
    with open(os.path.join(mp, "secret")) as fh:
        assert fh.read() == "secret\n"
    assert f.stop(signal.SIGTERM) == 0, f.log()
    log = f.log()
    assert ("allow_other: default_permissions left off (the plugin checks "
            "permissions itself)") in log and TURNED_ON not in log, log
