# SPDX-License-Identifier: MIT
"""The mount options a FUSE user expects (fring.yaml(5), MOUNT OPTIONS),
each read back from /proc/self/mountinfo or from what the mount does, over
both transports: nosuid/suid, nodev/dev, noexec/exec, noatime/atime,
ro/rw, max_read, blksize (st_blksize of stat and of a READDIRPLUS
listing), auto_unmount (kill -9 of the serving process: the mount is gone;
without it, it stays and answers ENOTCONN; `fring restart` refused), a
mount by a user through fusermount3 with the same words, and bad words
refused by `fring check` and `fring mount` with nothing mounted."""
import errno
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import FRING, fring_env, force_unmount, is_mounted

TRANSPORTS = ["devfuse", "uring"]


def mountinfo(mp):
    """(per-mount options, superblock options) of the mount on mp."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == mp:
                sep = fields.index("-")
                return set(fields[5].split(",")), set(fields[sep + 3].split(","))
    raise AssertionError("%s is not mounted" % mp)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_defaults_are_libfuses(mount, transport):
    mp = mount("memfs", transport=transport)
    opts, sb = mountinfo(mp)
    assert {"rw", "nosuid", "nodev", "relatime"} <= opts, opts
    assert "noexec" not in opts and "noatime" not in opts, opts
    assert not any(o.startswith("max_read=") for o in sb), sb


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_no_words(mount, transport):
    mp = mount("memfs", transport=transport,
               mount_options=["noexec,noatime,max_read=131072"])
    opts, sb = mountinfo(mp)
    assert {"nosuid", "nodev", "noexec", "noatime"} <= opts, opts
    assert "max_read=131072" in sb, sb
    exe = os.path.join(mp, "true")
    shutil.copy("/bin/true", exe)
    os.chmod(exe, 0o755)
    with pytest.raises(PermissionError):
        subprocess.run([exe], check=True)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_yes_words_and_the_last_word_wins(mount, transport):
    mp = mount("memfs", transport=transport,
               mount_options=["noexec,suid,dev,exec,atime,ro,rw"])
    opts, _ = mountinfo(mp)
    assert not {"nosuid", "nodev", "noexec", "noatime", "ro"} & opts, opts
    assert {"rw", "relatime"} <= opts, opts
    exe = os.path.join(mp, "true")
    shutil.copy("/bin/true", exe)
    os.chmod(exe, 0o755)
    subprocess.run([exe], check=True)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_ro(mount, transport):
    mp = mount("memfs", transport=transport, mount_options=["ro"])
    opts, _ = mountinfo(mp)
    assert "ro" in opts, opts
    with pytest.raises(OSError) as e:
        open(os.path.join(mp, "f"), "w")
    assert e.value.errno == errno.EROFS


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_blksize(mount, tmpdirs, transport):
    src = tmpdirs("src")
    with open(os.path.join(src, "f"), "w") as f:
        f.write("x")
    plain = mount("passthrough", {"source": src}, transport=transport)
    big = mount("passthrough", {"source": src}, transport=transport,
                mount_options=["blksize=65536"])
    small = mount("memfs", transport=transport, mount_options=["blksize=512"])
    os.mkdir(os.path.join(small, "d"))
    assert os.stat(os.path.join(plain, "f")).st_blksize == \
        os.stat(os.path.join(src, "f")).st_blksize
    for path in (big, os.path.join(big, "f")):
        assert os.stat(path).st_blksize == 65536, path
    assert os.stat(os.path.join(small, "d")).st_blksize == 512
    # a READDIRPLUS listing's attributes carry it too: with the entry
    # just listed, the stat that follows is answered from them
    with os.scandir(big) as it:
        assert [e.stat().st_blksize for e in it] == [65536]


def kill_server(f):
    """SIGKILL fring's serving process; its supervisor lives on."""
    with open("/proc/%d/task/%d/children" % (f.proc.pid, f.proc.pid)) as c:
        kids = [int(p) for p in c.read().split()]
    assert len(kids) == 1, kids
    os.kill(kids[0], signal.SIGKILL)
    return f.proc.wait(10)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_auto_unmount_when_the_server_is_killed(spawn, tmpdirs, transport):
    mp = tmpdirs("mnt")
    f = spawn(["mount", "memfs", mp, "-t", transport, "-O", "auto_unmount"], [mp])
    f.wait_ready(1)
    with open(os.path.join(mp, "f"), "w") as w:
        w.write("x")
    assert kill_server(f) == 1
    assert not is_mounted(mp), f.log()
    assert "auto_unmount: unmounted %s" % mp in f.log()


def test_without_auto_unmount_a_killed_server_leaves_its_mount(spawn, tmpdirs):
    # the control: what auto_unmount changes
    mp = tmpdirs("mnt")
    f = spawn(["mount", "memfs", mp, "-t", "devfuse"], [mp])
    f.wait_ready(1)
    assert kill_server(f) == 1
    try:
        assert is_mounted(mp)
        with pytest.raises(OSError) as e:
            os.listdir(mp)
        assert e.value.errno == errno.ENOTCONN
    finally:
        force_unmount(mp)


def test_restart_refused_for_auto_unmount(spawn, tmpdirs, monkeypatch):
    monkeypatch.setenv("FRING_RUNTIME_DIR", tmpdirs("run"))
    mp = tmpdirs("mnt")
    f = spawn(["mount", "memfs", mp, "-t", "devfuse", "-O", "auto_unmount"], [mp])
    f.wait_ready(1)
    with open(os.path.join(mp, "kept"), "w") as w:
        w.write("kept")
    # the supervisor opens its control socket just after the ready line
    deadline = time.monotonic() + 10
    while True:
        r = subprocess.run([FRING, "restart", mp], capture_output=True,
                           text=True, timeout=60, env=fring_env())
        if "no fring serves" not in r.stderr or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert r.returncode == 1, r
    assert "mounted with auto_unmount" in r.stderr + r.stdout, r
    with open(os.path.join(mp, "kept")) as k:
        assert k.read() == "kept"
    assert f.stop() == 0, f.log()
    assert not is_mounted(mp)


def test_user_mount_through_fusermount3(tmpdirs):
    """A user (nobody) mounts through fusermount3 with the same words."""
    mp = tmpdirs("mnt")
    run = tmpdirs("run")
    os.chown(mp, 65534, 65534)
    os.chown(run, 65534, 65534)
    env = dict(fring_env(), FRING_RUNTIME_DIR=run)
    p = subprocess.Popen(["setpriv", "--reuid", "65534", "--regid", "65534",
                          "--clear-groups", FRING, "mount", "memfs", mp,
                          "-t", "devfuse", "-O", "noexec,noatime,max_read=65536"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    try:
        line = p.stdout.readline()
        assert " ready (" in line, p.stderr.read() if p.poll() is not None else line
        opts, sb = mountinfo(mp)
        assert {"nosuid", "nodev", "noexec", "noatime"} <= opts, opts
        assert {"user_id=65534", "max_read=65536"} <= sb, sb
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0, p.stderr.read()
        assert not is_mounted(mp)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        force_unmount(mp)


@pytest.mark.parametrize("word, message", [
    ("max_read=100", "mount option 'max_read': '100' is not a number from 4096 "
                     "to 4294967295"),
    ("blksize=1000", "mount option 'blksize': '1000' is not a power of two "
                     "from 512 to 1048576"),
    ("nosetuid", "unknown mount option 'nosetuid' (expected one of: "),
])
def test_bad_words_refused(tmpdirs, word, message):
    mp = tmpdirs("mnt")
    cfg = os.path.join(tmpdirs("cfg"), "f.yaml")
    with open(cfg, "w") as f:
        f.write("mounts:\n  - mountpoint: %s\n    plugin: memfs\n"
                "    mount_options: [noexec, %s]\n" % (mp, word))
    r = subprocess.run([FRING, "check", cfg], capture_output=True, text=True,
                       timeout=30, env=fring_env())
    assert r.returncode == 1 and "%s:4:29: %s" % (cfg, message) in r.stderr, r
    r = subprocess.run([FRING, "mount", "memfs", mp, "-O", word],
                       capture_output=True, text=True, timeout=30, env=fring_env())
    assert r.returncode == 2 and message in r.stderr, r
    assert not is_mounted(mp)
