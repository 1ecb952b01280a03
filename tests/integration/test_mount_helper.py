# SPDX-License-Identifier: MIT
"""mount.fring, mount(8)'s helper (core/cli/mount_helper.c): `mount -t
fring` and an fstab line (mount -T) find it in /sbin, which a private
mount namespace overlays with this build's link (the host's /sbin is never
touched); then the helper itself: a YAML file as the source, plugin
options and mount options from -o, the words for mount(8) and systemd
passed over, the daemon left serving and ending at umount, and bad input
refused with one error line and nothing mounted."""
import os
import subprocess
import textwrap
import time

import pytest

from conftest import FRING, fring_env, force_unmount, is_mounted

BUILD = os.path.dirname(os.path.dirname(os.path.abspath(FRING)))
HELPER = os.path.join(BUILD, "sbin", "mount.fring")


def servers_of(mp):
    """pids of fring processes whose command line names mp."""
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"fring") and mp.encode() in argv:
            pids.append(int(p))
    return pids


def gone(mp, timeout=10):
    deadline = time.monotonic() + timeout
    while servers_of(mp):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def helper(tmpdirs):
    """helper(args, env) -> CompletedProcess of build/sbin/mount.fring; what
    it leaves mounted is unmounted (its server then ends) at teardown."""
    mounts = []

    def run(source, mp, *flags, env=None):
        mounts.append(mp)
        e = dict(fring_env(), **(env or {}))
        return subprocess.run([HELPER, source, mp, *flags], capture_output=True,
                              text=True, timeout=60, env=e)

    yield run
    for mp in mounts:
        force_unmount(mp)
        assert gone(mp), "a server of %s still runs after its unmount" % mp


def in_namespace(script, tmpdirs):
    """Run script (sh) as root in a private mount namespace whose /usr/sbin
    (= /sbin) holds this build's mount.fring."""
    lower = tmpdirs("sbin")
    os.symlink(os.path.abspath(FRING), os.path.join(lower, "mount.fring"))
    body = textwrap.dedent(script)
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-euc",
         "mount -t overlay overlay -o lowerdir=%s:/usr/sbin /usr/sbin\n%s"
         % (lower, body)],
        capture_output=True, text=True, timeout=120, env=fring_env())


def test_mount_t_fring_and_umount(tmpdirs):
    mp = tmpdirs("mnt")
    r = in_namespace("""
        trap 'umount -l %(mp)s 2>/dev/null || true' EXIT
        mount -t fring memfs %(mp)s -o noexec,size=1MiB,nofail,_netdev
        grep " %(mp)s " /proc/self/mountinfo
        echo hello > %(mp)s/f
        cat %(mp)s/f
        df -B1 --output=size %(mp)s | tail -1
        umount %(mp)s
    """ % {"mp": mp}, tmpdirs)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "noexec" in lines[0].split()[5].split(","), lines
    assert " - fuse.memfs memfs " in lines[0], lines
    assert lines[1] == "hello"
    assert int(lines[2]) == 1 << 20  # the plugin option reached memfs
    assert not is_mounted(mp)
    assert gone(mp), "fring still runs after umount"


def test_fstab_line(tmpdirs):
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    with open(os.path.join(src, "data"), "w") as f:
        f.write("from the source")
    fstab = os.path.join(tmpdirs("etc"), "fstab")
    with open(fstab, "w") as f:
        f.write("# a test fstab\npassthrough#%s  %s  fring  "
                "ro,noatime,nofail,_netdev,x-systemd.automount,"
                "x-systemd.requires=network.target,xattr=false  0 0\n"
                % (src, mp))
    r = in_namespace("""
        trap 'umount -l %(mp)s 2>/dev/null || true' EXIT
        mount -T %(fstab)s %(mp)s
        grep " %(mp)s " /proc/self/mountinfo
        cat %(mp)s/data; echo
        touch %(mp)s/new 2>&1 || true
        umount %(mp)s
    """ % {"mp": mp, "fstab": fstab}, tmpdirs)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    opts = lines[0].split()[5].split(",")
    assert "ro" in opts and "noatime" in opts, lines
    assert "fuse.passthrough passthrough" in lines[0], lines
    assert lines[1] == "from the source"
    assert "Read-only file system" in lines[2], lines
    assert not os.path.exists(os.path.join(src, "new"))
    assert gone(mp), "fring still runs after umount"


def test_mount_t_fring_yaml_file(tmpdirs):
    """mount(8) puts rw first in every -o it hands a helper: a YAML source
    takes it; an fstab user line's added noexec,nosuid,nodev it refuses."""
    mp = tmpdirs("mnt")
    cfg = os.path.join(tmpdirs("cfg"), "one.yaml")
    with open(cfg, "w") as f:
        f.write("mounts:\n  - mountpoint: %s\n    plugin: memfs\n"
                "    mount_options: [noexec]\n" % mp)
    r = in_namespace("""
        trap 'umount -l %(mp)s 2>/dev/null || true' EXIT
        mount -t fring %(cfg)s %(mp)s
        grep " %(mp)s " /proc/self/mountinfo
        umount %(mp)s
        mount -t fring %(cfg)s %(mp)s -o noatime || echo "refused $?"
    """ % {"mp": mp, "cfg": cfg}, tmpdirs)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "noexec" in lines[0].split()[5].split(","), lines
    assert lines[1] == "refused 1", lines
    assert "'noatime': with a YAML file as the source, options go in the " \
        "file" in r.stderr, r.stderr
    assert not is_mounted(mp)
    assert gone(mp)


def test_bad_source_one_line_nothing_mounted(tmpdirs):
    mp = tmpdirs("mnt")
    r = in_namespace("""
        mount -t fring passthrough#/nonexistent/dir %s
    """ % mp, tmpdirs)
    assert r.returncode != 0, r
    errors = [l for l in r.stderr.splitlines() if "info:" not in l]
    assert len(errors) == 1 and "/nonexistent/dir" in errors[0], r.stderr
    assert not is_mounted(mp)
    assert gone(mp)


def test_helper_leaves_the_server_serving(helper, tmpdirs):
    mp = tmpdirs("mnt")
    r = helper("memfs", mp, "-o", "noatime,defaults,user,x-gvfs-show")
    assert r.returncode == 0, r.stderr
    # the helper has returned; its server serves on, in a session of its own
    pids = servers_of(mp)
    assert pids, "no server"
    assert all(os.getsid(p) != os.getsid(0) for p in pids)
    with open(os.path.join(mp, "f"), "w") as f:
        f.write("x")
    assert "noatime" in [o for l in open("/proc/self/mountinfo")
                         if " %s " % mp in l for o in l.split()[5].split(",")]
    subprocess.run(["umount", mp], check=True)
    assert gone(mp)


def test_yaml_source(helper, tmpdirs):
    mp, other = tmpdirs("mnt"), tmpdirs("mnt")
    cfg = os.path.join(tmpdirs("cfg"), "one.yaml")
    with open(cfg, "w") as f:
        f.write("mounts:\n  - mountpoint: %s\n    plugin: memfs\n"
                "    mount_options: [noexec]\n" % mp)
    r = helper(cfg, mp, "-o", "defaults,nofail")
    assert r.returncode == 0, r.stderr
    with open(os.path.join(mp, "f"), "w") as f:
        f.write("x")
    r = helper(cfg, other)
    assert r.returncode == 1 and r.stderr.strip() == \
        "mount.fring: %s: mounts %s, not %s" % (cfg, mp, other), r.stderr
    r = helper(cfg, mp, "-o", "noatime")
    assert r.returncode == 1 and "'noatime': with a YAML file as the source, " \
        "options go in the file" in r.stderr, r.stderr


def test_install_places_the_link(tmpdirs):
    """/sbin (under DESTDIR) for a system prefix, PREFIX/sbin otherwise;
    the link's target is absolute (/sbin may itself be a link)."""
    prefix, dest = tmpdirs("prefix"), tmpdirs("destdir")
    subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix],
                   check=True, capture_output=True)
    assert os.readlink(os.path.join(prefix, "sbin/mount.fring")) == \
        os.path.join(prefix, "bin/fring")
    subprocess.run(["cmake", "--install", BUILD, "--prefix", "/usr"],
                   check=True, capture_output=True,
                   env=dict(os.environ, DESTDIR=dest))
    assert os.readlink(os.path.join(dest, "sbin/mount.fring")) == "/usr/bin/fring"
    assert os.path.isfile(os.path.join(dest, "usr/bin/fring"))


def test_bad_options(helper, tmpdirs):
    mp = tmpdirs("mnt")
    r = helper("memfs", mp, "-o", "nosetuid")
    assert r.returncode == 1 and r.stderr.splitlines() == [
        "mount.fring: unknown option 'nosetuid' (a mount option of "
        "fring.yaml(5), or KEY=VALUE for the plugin)"], r.stderr
    r = helper("memfs", mp, "-o", "max_read=10")
    assert r.returncode == 2 and "'max_read': '10' is not a number" in r.stderr
    r = helper("memfs", mp, "-o", "bogus=1")
    assert r.returncode == 1 and "bogus" in r.stderr, r.stderr
    r = helper("memfs", mp, "-o", "nosetuid", "-s", "-f")  # sloppy, fake
    assert r.returncode == 0 and r.stderr == "", r.stderr
    r = helper("memfs", mp, "-N", "1234")
    assert r.returncode == 2 and "-N: mounting in another namespace is not " \
        "supported" in r.stderr, r.stderr
    r = helper("memfs", mp, "-f", "-v", "-o",
               "rw,user=alice,X-mount.mkdir,relatime,x-systemd.after=a")
    assert r.returncode == 0 and r.stderr == \
        "mount.fring: fring mount memfs %s -O rw\n" % mp, r.stderr
    r = subprocess.run([HELPER, "memfs"], capture_output=True, text=True,
                       timeout=30, env=fring_env())
    assert r.returncode == 2 and "SOURCE and MOUNTPOINT are required" in r.stderr
    assert not is_mounted(mp)
