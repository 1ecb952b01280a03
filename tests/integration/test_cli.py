"""The fring command line: run, mount, check, plugins, errors, signals and
dead mountpoints."""

import errno
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import force_unmount, is_mounted, mount_entries, run_fring, serving_pid

READY = re.compile(r"^fring: (\S+) ready \(plugin (\S+), transport (uring|devfuse)\)$")


def yaml_file(directory, text):
    path = os.path.join(directory, "fring.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def two_mounts(tmpdirs):
    """A config with a memfs and a passthrough mount; returns
    (path, memfs mountpoint, passthrough mountpoint, passthrough source)."""
    m1, m2, src = tmpdirs("mnt"), tmpdirs("mnt"), tmpdirs("src")
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint: {m2}
    plugin: passthrough
    options: {{ source: {src} }}
    mount_options: [default_permissions]
""")
    return path, m1, m2, src


def host_abi():
    """The plugin ABI version the fring binary speaks, e.g. "1.0"."""
    r = run_fring("--version")
    return re.search(r"plugin ABI (\d+\.\d+)", r.stdout).group(1)


def test_version():
    r = run_fring("--version")
    assert r.returncode == 0
    assert re.fullmatch(r"fring \d+\.\d+\.\d+ \(plugin ABI 1\.\d+\)\n", r.stdout)


@pytest.mark.parametrize("args", [[], ["frobnicate"], ["mount", "memfs"],
                                  ["run"], ["check", "a", "b"],
                                  ["mount", "memfs", "/tmp", "-o", "novalue"],
                                  ["mount", "memfs", "/tmp", "-t", "fast"],
                                  ["mount", "memfs", "/tmp", "-O", "bad"],
                                  ["mount", "memfs", "/tmp", "-O", "ro,fsname="]])
def test_bad_usage_exits_2(args):
    r = run_fring(*args)
    assert r.returncode == 2
    assert r.stderr.startswith("fring: ")
    assert "usage: fring" in r.stderr
    assert r.stdout == ""


def test_help():
    r = run_fring("help")
    assert r.returncode == 0
    assert r.stdout.startswith("usage: fring")
    for cmd in ("run CONFIG", "mount PLUGIN MOUNTPOINT", "check CONFIG", "plugins"):
        assert cmd in r.stdout


def test_plugins_lists_shipped_plugins():
    r = run_fring("plugins")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["NAME", "VERSION", "ABI"]
    rows = {l.split()[0]: l.split() for l in lines[1:]}
    for name in ("memfs", "passthrough"):
        assert name in rows, r.stdout
        # built in this tree: the ABI major 1 and minor of these headers
        assert rows[name][2] == host_abi()
        assert rows[name][2].startswith("1.")


def test_check_valid(tmpdirs):
    path, m1, m2, _ = two_mounts(tmpdirs)
    r = run_fring("check", path)
    assert (r.returncode, r.stdout) == (0, f"{path}: OK (2 mounts)\n"), r.stderr
    assert not is_mounted(m1) and not is_mounted(m2)


def test_check_invalid_names_file_line_column(tmpdirs):
    path = yaml_file(tmpdirs("cfg"), """\
mounts:
  - mountpoint: /tmp/x
    plugin: memfs
    transport:
      mode: fast
""")
    r = run_fring("check", path)
    assert r.returncode == 1
    assert r.stderr == (f"fring: {path}:5:13: transport.mode must be one of "
                        "auto, uring, devfuse, got 'fast'\n")
    assert r.stdout == ""


def test_check_missing_plugin(tmpdirs):
    path = yaml_file(tmpdirs("cfg"), """\
mounts:
  - mountpoint: /tmp/x
    plugin: no-such-plugin
""")
    r = run_fring("check", path)
    assert r.returncode == 1
    assert r.stderr.startswith(f"fring: {path}:3:13: plugin 'no-such-plugin': not found")
    assert r.stderr.count("\n") == 1


def test_check_plugin_rejects_its_options(tmpdirs):
    path = yaml_file(tmpdirs("cfg"), """\
mounts:
  - mountpoint: /tmp
    plugin: passthrough
""")
    r = run_fring("check", path)
    assert r.returncode == 1
    # the plugin explains (logged), the last line points at the entry
    assert r.stderr.splitlines()[-1].startswith(f"fring: {path}:2:5: ")
    assert "source" in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_run_two_mounts_until_signal(spawn, tmpdirs, sig):
    path, m1, m2, src = two_mounts(tmpdirs)
    f = spawn(["run", path], [m1, m2])
    ready = [READY.match(l) for l in f.wait_ready(2)]
    assert all(ready), f.ready
    assert {(m.group(1), m.group(2)) for m in ready} == \
        {(m1, "memfs"), (m2, "passthrough")}
    assert is_mounted(m1) and is_mounted(m2)

    with open(os.path.join(m1, "a"), "w") as fh:
        fh.write("in memory")
    with open(os.path.join(m2, "b"), "w") as fh:
        fh.write("on disk")
    with open(os.path.join(src, "b")) as fh:
        assert fh.read() == "on disk"
    assert any("default_permissions" in l for l in open("/proc/self/mountinfo")
               if f" {m2} " in l)

    assert f.stop(sig) == 0, f.log()
    assert not is_mounted(m1) and not is_mounted(m2)
    assert os.listdir(m1) == []  # memfs content went away with the mount


def test_run_exits_when_unmounted_from_outside(spawn, tmpdirs):
    path, m1, m2, _ = two_mounts(tmpdirs)
    f = spawn(["run", path], [m1, m2])
    f.wait_ready(2)
    subprocess.run(["umount", m1], check=True)
    time.sleep(0.5)
    assert f.proc.poll() is None, "exited while a mount was still served"
    assert is_mounted(m2)
    subprocess.run(["umount", m2], check=True)
    assert f.proc.wait(10) == 0, f.log()


def test_run_with_a_bad_mount_mounts_nothing(tmpdirs):
    m1 = tmpdirs("mnt")
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint: /tmp/elsewhere
    plugin: /etc/hostname
""")
    r = run_fring("run", path, timeout=20)
    assert r.returncode == 1
    assert r.stderr.startswith(f"fring: {path}:5:13: plugin '/etc/hostname': ")
    assert r.stderr.count("\n") == 1
    assert r.stdout == ""
    assert not is_mounted(m1)


def test_run_with_missing_mountpoint_mounts_nothing(tmpdirs):
    m1 = tmpdirs("mnt")
    missing = os.path.join(tmpdirs("gone"), "not-there")
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint: {missing}
    plugin: memfs
""")
    r = run_fring("run", path, timeout=20)
    assert r.returncode == 1
    assert r.stderr == (f"fring: {path}:4:5: {missing}: cannot use as mountpoint: "
                        "No such file or directory\n")
    assert r.stdout == "" and not is_mounted(m1)


def test_check_reports_a_missing_mountpoint(tmpdirs):
    """`check` catches what `run` would: a mountpoint that does not
    exist, with its place in the file."""
    missing = os.path.join(tmpdirs("gone"), "not-there")
    path = yaml_file(tmpdirs("cfg"), f"mounts:\n  - mountpoint: {missing}\n    plugin: memfs\n")
    r = run_fring("check", path)
    assert r.returncode == 1, r
    assert r.stderr == (f"fring: {path}:2:5: {missing}: cannot use as mountpoint: "
                        "No such file or directory\n")
    assert r.stdout == ""


def test_run_unmounts_everything_when_a_later_mount_fails(tmpdirs):
    m1 = tmpdirs("mnt")
    # A regular file passes every check before mounting; mount(2) then
    # refuses a directory root on it.
    not_a_dir = os.path.join(tmpdirs("file"), "plain")
    open(not_a_dir, "w").close()
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint: {not_a_dir}
    plugin: memfs
""")
    r = run_fring("run", path, timeout=30)
    assert r.returncode == 1
    assert READY.match(r.stdout.splitlines()[0]).group(1) == m1
    assert r.stderr.startswith("fring: ") and not_a_dir in r.stderr
    assert not is_mounted(m1) and not is_mounted(not_a_dir)


def test_run_invalid_yaml_mounts_nothing(tmpdirs):
    m1 = tmpdirs("mnt")
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint: /tmp/y
    plugin: memfs
    colour: blue
""")
    r = run_fring("run", path, timeout=20)
    assert r.returncode == 1
    assert r.stderr.startswith(f"fring: {path}:6:5: unknown key 'colour'")
    assert not is_mounted(m1)


def test_run_missing_config_file():
    r = run_fring("run", "/nonexistent/fring.yaml")
    assert r.returncode == 1
    assert r.stderr.startswith("fring: /nonexistent/fring.yaml")
    assert r.stderr.count("\n") == 1


def test_mount_unknown_plugin(tmpdirs):
    mp = tmpdirs("mnt")
    r = run_fring("mount", "no-such-plugin", mp)
    assert r.returncode == 1
    assert r.stderr.startswith("fring: plugin 'no-such-plugin': not found")
    assert not is_mounted(mp)


def test_mount_options_reach_the_kernel(spawn, tmpdirs):
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    f = spawn(["mount", "passthrough", mp, "-o", f"source={src}",
               "-O", "default_permissions,fsname=fringtest", "--mount-option", "ro"],
              [mp])
    f.wait_ready(1)
    line = next(l for l in open("/proc/self/mountinfo") if f" {mp} " in l)
    assert " fringtest " in line
    assert "default_permissions" in line
    assert " ro," in line or " ro " in line
    with pytest.raises(OSError) as e:
        open(os.path.join(mp, "nope"), "w")
    assert e.value.errno == errno.EROFS
    assert f.stop() == 0, f.log()
    assert not is_mounted(mp)


def test_dead_mountpoint_is_reported(spawn, tmpdirs):
    mp = tmpdirs("mnt")
    f = spawn(["mount", "memfs", mp], [mp])
    f.wait_ready(1)
    # Kill the serving process; its supervisor aborts the connection.
    os.kill(serving_pid(f.proc.pid), signal.SIGKILL)
    assert f.proc.wait(10) == 1
    try:
        with pytest.raises(OSError) as e:
            os.stat(mp)
        assert e.value.errno == errno.ENOTCONN
        entries_before = len(mount_entries(mp))

        r = run_fring("mount", "memfs", mp)
        assert r.returncode == 1
        assert r.stderr == (
            f"fring: {mp} is a dead FUSE mount left by a server that died "
            "(Transport endpoint is not connected); clear it with: "
            f"fusermount3 -u {mp}  (or as root: umount -l {mp})\n")
        assert len(mount_entries(mp)) == entries_before  # nothing stacked
    finally:
        force_unmount(mp)
    assert not is_mounted(mp)
    assert os.path.isdir(mp)
