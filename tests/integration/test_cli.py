# SPDX-License-Identifier: MIT
"""The fring command line: run, mount, check, plugins, errors, signals and
dead mountpoints."""

import errno
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import conftest
from conftest import force_unmount, is_mounted, mount_entries, run_fring, serving_pid

READY = re.compile(r"^fring: (\S+) ready \(plugin (\S+), transport (uring|devfuse)\)$")
FRING_PATH = shutil.which(conftest.FRING) or conftest.FRING
FIXTURE_DIR = os.environ.get("FRING_FIXTURE_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(FRING_PATH))), "tests", "fixtures")


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
                                  ["mount", "memfs", "/tmp", "-O", "ro,fsname="],
                                  ["--version", "extra"], ["version", "x"],
                                  ["help", "run", "extra"], ["help", "frobnicate"],
                                  ["run", "-x", "cfg"], ["check", "--frob", "cfg"],
                                  ["plugins", "extra"], ["plugins", "-x"],
                                  ["mount", "memfs", "/tmp", "-o"]])
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
    # one line: the entry, then the plugin's own reason
    assert r.stderr == (f"fring: {path}:2:5: plugin 'passthrough': configuration "
                        "incomplete or invalid: passthrough: option 'source' "
                        "(a directory) is required\n")


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
    assert r.stderr == (f"fring: {path}:4:17: {missing}: cannot use as mountpoint: "
                        "No such file or directory\n")
    assert r.stdout == "" and not is_mounted(m1)


def test_check_reports_a_missing_mountpoint(tmpdirs):
    """`check` catches what `run` would: a mountpoint that does not
    exist, with its place in the file."""
    missing = os.path.join(tmpdirs("gone"), "not-there")
    path = yaml_file(tmpdirs("cfg"), f"mounts:\n  - mountpoint: {missing}\n    plugin: memfs\n")
    r = run_fring("check", path)
    assert r.returncode == 1, r
    assert r.stderr == (f"fring: {path}:2:17: {missing}: cannot use as mountpoint: "
                        "No such file or directory\n")
    assert r.stdout == ""


def test_run_unmounts_everything_when_a_later_mount_fails(tmpdirs):
    m1 = tmpdirs("mnt")
    # m1/sub exists when everything is checked, but not once m1 serves an
    # empty memfs: only the second mount itself can fail.
    nested = os.path.join(m1, "sub")
    os.mkdir(nested)
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint: {nested}
    plugin: memfs
""")
    r = run_fring("run", path, timeout=30)
    assert r.returncode == 1
    assert READY.match(r.stdout.splitlines()[0]).group(1) == m1
    # (after m1's info lines)
    assert r.stderr.splitlines()[-1] == (f"fring: {path}:4:5: {nested}: cannot use "
                                         "as mountpoint: No such file or directory")
    assert not is_mounted(m1) and not is_mounted(nested)


@pytest.mark.parametrize("cmd", ["check", "run"])
def test_regular_file_as_mountpoint_is_invalid(tmpdirs, cmd):
    """A file is refused with the others, where the YAML names it, before
    anything is mounted."""
    m1 = tmpdirs("mnt")
    not_a_dir = os.path.join(tmpdirs("file"), "plain")
    open(not_a_dir, "w").close()
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint: {not_a_dir}
    plugin: memfs
""")
    r = run_fring(cmd, path, timeout=30)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"fring: {path}:4:17: {not_a_dir}: cannot use as "
                        "mountpoint: Not a directory\n")
    assert not is_mounted(m1) and not is_mounted(not_a_dir)


def test_mount_on_a_regular_file_is_refused(tmpdirs):
    not_a_dir = os.path.join(tmpdirs("file"), "plain")
    open(not_a_dir, "w").close()
    r = run_fring("mount", "memfs", not_a_dir)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"fring: {not_a_dir}: cannot use as mountpoint: Not a directory\n"


@pytest.mark.parametrize("cmd", ["check", "run"])
def test_served_mountpoint_is_invalid_at_its_place(spawn, tmpdirs, cmd):
    busy, m1 = tmpdirs("mnt"), tmpdirs("mnt")
    f = spawn(["mount", "memfs", busy], [busy])
    f.wait_ready(1)
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint:   {busy}
    plugin: memfs
""")
    r = run_fring(cmd, path, timeout=30)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith(f"fring: {path}:4:19: {busy} is already a FUSE "
                               "mountpoint that serves"), r.stderr
    assert r.stderr.count("\n") == 1
    assert not is_mounted(m1)
    assert len(mount_entries(busy)) == 1
    assert f.stop() == 0, f.log()


@pytest.mark.parametrize("cmd", ["check", "run"])
def test_passthrough_inside_its_source_is_invalid_before_mounting(tmpdirs, cmd):
    m1, src = tmpdirs("mnt"), tmpdirs("src")
    inside = os.path.join(src, "in")
    os.mkdir(inside)
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint: {inside}
    plugin: passthrough
    options: {{ source: {src} }}
""")
    r = run_fring(cmd, path, timeout=30)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"fring: {path}:4:5: plugin 'passthrough': configuration "
                        f"incomplete or invalid: passthrough: the mountpoint {inside} "
                        f"lies inside source {src}: the mount would contain itself "
                        "and its server would wait on its own requests; mount it "
                        "outside the source\n")
    assert not is_mounted(m1) and not is_mounted(inside)


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


# ---- plugin names: what `fring plugins` shows is what PLUGIN takes ----

@pytest.fixture
def plugin_path(monkeypatch, tmpdirs):
    """plugin_path(*files) -> a directory put first on FRING_PLUGIN_PATH,
    holding copies of fixture plugins: {"file.so": "fixture.so"}."""
    def make(files):
        d = tmpdirs("plugins")
        for name, fixture in files.items():
            shutil.copy(os.path.join(FIXTURE_DIR, fixture), os.path.join(d, name))
        monkeypatch.setattr(conftest, "PLUGIN_DIR", d + ":" + conftest.PLUGIN_DIR)
        return d
    return make


def test_plugin_answers_to_its_listed_name(plugin_path, spawn, tmpdirs):
    d = plugin_path({"libother.so": "good.so"})
    r = run_fring("plugins")
    assert r.returncode == 0, r.stderr
    rows = {l.split()[0]: l.split() for l in r.stdout.splitlines()[1:]}
    # the descriptor's name, and the file because it differs
    assert rows["good"][3] == "libother.so", r.stdout
    assert rows["memfs"][3] == "-", r.stdout
    for name in ("good", "libother"):
        mp = tmpdirs("mnt")
        path = yaml_file(tmpdirs("cfg"), f"mounts:\n  - mountpoint: {mp}\n    plugin: {name}\n")
        r = run_fring("check", path)
        assert (r.returncode, r.stdout) == (0, f"{path}: OK (1 mount)\n"), r.stderr
        f = spawn(["mount", name, mp], [mp])
        assert READY.match(f.wait_ready(1)[0]).group(2) == "good"
        assert f.stop() == 0, f.log()
        assert not is_mounted(mp)


@pytest.mark.parametrize("files", [
    {"a.so": "good.so", "b.so": "good.so"},        # one descriptor name twice
    {"a.so": "good.so", "good.so": "good_older.so"},  # a descriptor and a file
])
def test_two_plugins_with_one_name_is_an_error_naming_both(plugin_path, tmpdirs, files):
    d = plugin_path(files)
    a, b = sorted(os.path.join(d, f) for f in files)
    mp = tmpdirs("mnt")
    r = run_fring("mount", "good", mp)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"fring: plugin 'good': ambiguous: {a} and {b} both answer "
                        "to that name (rename one, or give the path of the one you "
                        "mean)\n")
    assert not is_mounted(mp)
    path = yaml_file(tmpdirs("cfg"), f"mounts:\n  - mountpoint: {mp}\n    plugin: good\n")
    r = run_fring("check", path)
    assert r.returncode == 1
    assert r.stderr.startswith(f"fring: {path}:3:13: plugin 'good': ambiguous: {a} and {b}")
    r = run_fring("plugins")
    assert r.returncode == 0
    assert (f"fring: plugins {a} and {b} both answer to the name 'good'; "
            "looking it up fails (rename one, or use a path)\n") in r.stderr


# ---- a plugin that kills whoever loads it ----

def crash_env(monkeypatch, which="crash"):
    monkeypatch.setattr(conftest, "PLUGIN_DIR",
                        os.path.join(FIXTURE_DIR, which) + ":" + conftest.PLUGIN_DIR)
    return os.path.join(FIXTURE_DIR, which, which + "_ctor.so")


@pytest.mark.parametrize("which, why", [
    ("crash", "loading it killed the process (SIGSEGV)"),
    ("exit", "loading it ended the process (exit status 3)"),
])
def test_plugins_lists_the_others_and_names_the_broken_one(monkeypatch, which, why):
    bad = crash_env(monkeypatch, which)
    r = run_fring("plugins")
    assert r.returncode == 0, r
    assert {"memfs", "passthrough"} <= {l.split()[0] for l in r.stdout.splitlines()[1:]}
    assert r.stderr == f"fring: plugin '{bad}': {why}\n"


def test_check_and_run_survive_a_crashing_plugin(monkeypatch, tmpdirs):
    crash_env(monkeypatch)
    mp = tmpdirs("mnt")
    for plugin, col in (("crash_ctor", 13), ("memfs", 0)):
        path = yaml_file(tmpdirs("cfg"), f"mounts:\n  - mountpoint: {mp}\n    plugin: {plugin}\n")
        r = run_fring("check", path)
        if plugin == "memfs":  # looked up beside the broken one
            assert (r.returncode, r.stdout) == (0, f"{path}: OK (1 mount)\n"), r.stderr
            continue
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr == (f"fring: {path}:3:{col}: plugin 'crash_ctor': loading it "
                            "killed the process (SIGSEGV)\n")
        r = run_fring("run", path)
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr == (f"fring: {path}:3:{col}: plugin 'crash_ctor': loading it "
                            "killed the process (SIGSEGV)\n")
    assert not is_mounted(mp)


# ---- usage ----

@pytest.mark.parametrize("args, first", [
    (["run", "--help"], "usage: fring run CONFIG"),
    (["run", "-h"], "usage: fring run CONFIG"),
    (["check", "--help"], "usage: fring check CONFIG"),
    (["mount", "--help"], "usage: fring mount PLUGIN MOUNTPOINT"),
    (["mount", "memfs", "-h"], "usage: fring mount PLUGIN MOUNTPOINT"),
    (["plugins", "--help"], "usage: fring plugins [-v]"),
    (["help", "run"], "usage: fring run CONFIG"),
    (["help", "plugins"], "usage: fring plugins [-v]"),
])
def test_command_help(args, first):
    r = run_fring(*args)
    assert (r.returncode, r.stderr) == (0, ""), r
    assert r.stdout.startswith(first), r.stdout


def test_mount_help_lists_every_mount_option():
    """Every name -O takes (core/config/config_mount.c's mount_opts) is in the help."""
    r = run_fring("mount", "--help")
    assert r.returncode == 0, r
    for opt in ("default_permissions", "allow_other", "ro", "fsname=NAME",
                "subtype=NAME", "trust_plugin_permissions"):
        assert opt in r.stdout, (opt, r.stdout)
    assert "trust_plugin_permissions" in run_fring("help").stdout


@pytest.mark.parametrize("args, message", [
    (["-o", "allow_other"], "-o expects KEY=VALUE (a plugin option); 'allow_other' is "
                            "a mount option: use -O allow_other"),
    (["-o", "nokey"], "-o expects KEY=VALUE (a plugin option), got 'nokey'; mount "
                      "options such as ro or allow_other go with -O"),
    (["-o", "size=1G", "-o", "mode=0700", "-o", "size=2G"],
     "-o size given twice; each plugin option takes one value (first '1G')"),
    (["-O", ""], "-O '': empty mount option (a stray comma?)"),
    (["-O", "ro,,"], "-O 'ro,,': empty mount option (a stray comma?)"),
    (["-O", ",ro"], "-O ',ro': empty mount option (a stray comma?)"),
    (["-O", "fsname=a", "-O", "ro,fsname=b"], "mount option 'fsname' given twice"),
    (["--frob"], "mount: unknown option '--frob'"),
])
def test_mount_usage_errors_say_what_to_do(tmpdirs, args, message):
    mp = tmpdirs("mnt")
    r = run_fring("mount", "memfs", mp, *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.startswith(f"fring: {message}\nusage: fring mount PLUGIN"), r.stderr
    assert not is_mounted(mp)


def test_unknown_log_level_is_a_warning(monkeypatch):
    monkeypatch.setenv("FRING_LOG", "verbose")
    for args in (["--version"], ["plugins"]):  # even where nothing logs
        r = run_fring(*args)
        assert r.returncode == 0, r
        assert r.stderr == ("fring: warning: FRING_LOG=verbose is not a log level "
                            "(expected error, warn, info or debug); using info\n")
    monkeypatch.setenv("FRING_LOG", "debug")
    assert run_fring("--version").stderr == ""


@pytest.mark.parametrize("plugin, options, reason", [
    ("memfs", ["-o", "colour=blue"],
     "plugin 'memfs' rejected option 'colour': memfs: unknown option 'colour' "
     "(known: uid, gid, mode, size, inodes, entry_timeout, attr_timeout, "
     "negative_timeout, check_permissions)"),
    ("memfs", ["-o", "colour=blue", "-o", "size=lots"],
     "plugin 'memfs' rejected option 'colour'; also 'size': memfs: unknown option "
     "'colour' (known: uid, gid, mode, size, inodes, entry_timeout, attr_timeout, "
     "negative_timeout, check_permissions); memfs: bad value 'lots' for option 'size'"),
    ("passthrough", ["-o", "writeback=maybe"],
     "plugin 'passthrough' rejected option 'writeback': passthrough: writeback: "
     "expected a boolean, got 'maybe'"),
])
def test_plugin_option_errors_are_one_line(tmpdirs, plugin, options, reason):
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    r = run_fring("mount", plugin, mp, "-o", "source=" + src, *options) \
        if plugin == "passthrough" else run_fring("mount", plugin, mp, *options)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"fring: {reason}\n"
    # the same from a file, at the first rejected option's place
    opts = ", ".join(o.replace("=", ": ") for o in options[1::2])
    if plugin == "passthrough":
        opts = f"source: {src}, " + opts
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {mp}
    plugin: {plugin}
    options: {{ {opts} }}
""")
    r = run_fring("check", path)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"fring: {path}:4:"), r.stderr
    assert reason.split(": ", 1)[1] in r.stderr


def plugin_options():
    """{plugin: [option keys]} from `fring plugins -v`."""
    r = run_fring("plugins", "-v")
    assert r.returncode == 0, r.stderr
    opts, current = {}, None
    for line in r.stdout.split("\n\n", 1)[1].splitlines():
        if line and not line.startswith(" "):
            current = opts.setdefault(line.split()[0], [])
        elif line.startswith("  ") and ":" in line:
            current.append(line.split(":")[0].strip())
    return opts


def test_plugins_verbose_shows_every_plugins_options():
    opts = plugin_options()
    assert {"memfs", "null", "passthrough"} <= set(opts), opts
    assert opts["null"] == ["size", "files"]
    assert "source" in opts["passthrough"] and "check_permissions" in opts["memfs"]


@pytest.mark.parametrize("plugin", ["memfs", "passthrough"])
def test_unknown_option_error_lists_the_documented_ones(tmpdirs, plugin):
    r = run_fring("mount", plugin, tmpdirs("mnt"), "-o", "colour=blue")
    known = re.search(r"\(known: ([^)]*)\)", r.stderr)
    assert known, r.stderr
    assert known.group(1).split(", ") == plugin_options()[plugin]


# ---- signals ----

@pytest.mark.parametrize("target", ["supervisor", "serving process"])
@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2,
                                 signal.SIGPIPE])
def test_other_signals_leave_the_mount_serving(spawn, tmpdirs, target, sig):
    """SIGINT/SIGTERM stop fring; SIGHUP (reserved), SIGUSR1 and SIGUSR2 are
    logged and ignored, SIGPIPE ignored, by either process."""
    mp = tmpdirs("mnt")
    f = spawn(["mount", "memfs", mp], [mp])
    f.wait_ready(1)
    child = serving_pid(f.proc.pid)
    assert child != f.proc.pid
    pid = f.proc.pid if target == "supervisor" else child
    os.kill(pid, sig)
    want = "fring: info: SIG%s to the %s (pid %d) ignored" % (
        signal.Signals(sig).name[3:], target, pid)
    deadline = time.monotonic() + 5
    while sig != signal.SIGPIPE and want not in f.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    assert f.proc.poll() is None and os.path.exists("/proc/%d" % child), f.log()
    if sig != signal.SIGPIPE:
        assert want in f.log(), f.log()
    with open(os.path.join(mp, "still"), "w") as fh:
        fh.write("serving")
    with open(os.path.join(mp, "still")) as fh:
        assert fh.read() == "serving"
    assert f.stop() == 0, f.log()
    assert not is_mounted(mp)


def test_uring_only_keys_over_devfuse_are_named(spawn, tmpdirs):
    """A mount served over /dev/fuse says which io_uring-only transport
    keys its config gave (they do nothing there); keys it shares with
    /dev/fuse (queues: its worker threads) are not named."""
    mp = tmpdirs("mnt")
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {mp}
    plugin: memfs
    transport: {{ mode: devfuse, queues: 2, placement: local, cpus: "0", poll_us: 5 }}
""")
    f = spawn(["run", path], [mp])
    assert f.wait_ready(1)[0].endswith("transport devfuse)"), f.log()
    # queues: 2 gives exactly 2 /dev/fuse workers (not the default count)
    pid = serving_pid(f.proc.pid)
    workers = sorted(n for n in (open("/proc/%d/task/%s/comm" % (pid, t)).read().strip()
                                 for t in os.listdir("/proc/%d/task" % pid))
                     if n.startswith("fring-dev-"))
    assert workers == ["fring-dev-0", "fring-dev-1"], workers
    assert f.stop() == 0, f.log()
    want = (f"fring: info: {mp}: transport.poll_us, transport.placement, "
            "transport.cpus: for io_uring queues only, unused over /dev/fuse\n")
    assert want in f.log(), f.log()
    assert "transport.queues" not in f.log()


def kernel_has_bufpools():
    """Linux 7.3 offers FUSE_HAS_IO_URING_BUFPOOL; 6.18 does not."""
    major, minor = (int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    return (major, minor) >= (7, 3)


def possible_cpus():
    with open("/sys/devices/system/cpu/possible") as f:
        n = 0
        for part in f.read().strip().split(","):
            lo, _, hi = part.partition("-")
            n += int(hi or lo) - int(lo) + 1
        return n


@pytest.mark.skipif(kernel_has_bufpools(), reason="the kernel has buffer pools")
@pytest.mark.parametrize("transport, column, message", [
    ("{ bufpool: on }", 27, "transport.bufpool on: the kernel has no io_uring "
                            "buffer pools (they need FUSE 7.46, Linux 7.3)"),
    ("{ bufpool: { mode: on } }", 35, "transport.bufpool on: the kernel has no "
                                      "io_uring buffer pools (they need FUSE "
                                      "7.46, Linux 7.3)"),
    ("{ zero_copy: on }", 29, "transport.zero_copy on: the kernel has no "
                              "io_uring zero-copy (FUSE 7.46, Linux 7.3)"),
])
def test_what_the_kernel_cannot_serve_is_refused_before_any_mount(
        tmpdirs, transport, column, message):
    """check knows the kernel (a probe mount's INIT, core/transport/
    kernel_probe.c) and says what run would refuse, at the value; run
    refuses it before its first mount."""
    m1, m2 = tmpdirs("mnt"), tmpdirs("mnt")
    path = yaml_file(tmpdirs("cfg"), f"""\
mounts:
  - mountpoint: {m1}
    plugin: memfs
  - mountpoint: {m2}
    plugin: memfs
    transport: {transport}
""")
    line = f"fring: {path}:6:{column}: {m2}: {message}\n"
    r = run_fring("check", path)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", line), r
    r = run_fring("run", path)
    assert r.returncode == 1, r
    assert "ready" not in r.stdout, r.stdout
    assert r.stderr.endswith(line), r.stderr
    assert not is_mounted(m1) and not is_mounted(m2)


@pytest.mark.skipif(kernel_has_bufpools(), reason="the kernel has buffer pools")
def test_pinned_memory_is_warned_about(tmpdirs):
    mp, m2 = tmpdirs("mnt"), tmpdirs("mnt")
    cfg = tmpdirs("cfg")
    plain = yaml_file(cfg, f"mounts:\n  - mountpoint: {mp}\n    plugin: memfs\n")
    r = run_fring("check", plain)
    assert (r.returncode, r.stderr) == (0, ""), r
    path = yaml_file(cfg, f"""\
mounts:
  - mountpoint: {mp}
    plugin: memfs
    transport:
      queue_depth: 4096
""")
    q = possible_cpus()
    gib = q * 4096 * 1028 / (1 << 20)
    warning = (f"fring: warning: {path}:5:20: {mp}: the ring buffers will pin "
               f"{gib:.1f} GiB of memory ({q} queues x 4096 entries x 1028 KiB) "
               f"while it is mounted, more than ")
    r = run_fring("check", path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{path}: OK (1 mount)\n"
    assert r.stderr.startswith(warning), r.stderr
    assert "lower transport.queue_depth" in r.stderr, r.stderr
    # run says it too, before mounting (here a later mount is refused,
    # so nothing is pinned by the test)
    with open(path, "a") as f:
        f.write(f"  - mountpoint: {m2}\n    plugin: memfs\n"
                f"    transport: {{ bufpool: on }}\n")
    r = run_fring("run", path)
    assert r.returncode == 1, r
    assert warning in r.stderr, r.stderr
    assert "transport.bufpool on: the kernel has no io_uring buffer pools" in r.stderr
    assert not is_mounted(mp) and not is_mounted(m2)
