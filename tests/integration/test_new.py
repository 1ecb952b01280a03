# SPDX-License-Identifier: MIT
"""`fring new c|rust|python NAME [DIR]`: for each language the project is
made, exactly the commands it printed are run (build, then the mount on
its /tmp/NAME mountpoint), the mounted filesystem answers ls and cat, it
unmounts at SIGTERM, and the project's own test.sh passes. The same from
an installed fring (`cmake --install`), whose templates come from
PREFIX/share/fring/sdk. Bad NAME, language and DIR: one error line."""
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import FRING, force_unmount, is_mounted

BUILD = os.path.dirname(os.path.dirname(FRING))
CARGO = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
TEXT = {"c": "from fring\n", "rust": "from Rust\n", "python": "from Python\n"}


def env(lang=None):
    e = {k: v for k, v in os.environ.items() if k != "FRING_PLUGIN_PATH"}
    e["PATH"] = os.path.dirname(CARGO) + ":" + e["PATH"]
    if lang == "python" and "ASAN_OPTIONS" in e:
        # tests/tools/sanitize.sh: an embedded interpreter is never
        # finalized, so its objects "leak" at exit by design; memory errors
        # are still caught, leaks in the C plugins by the other languages.
        e["ASAN_OPTIONS"] += ":detect_leaks=0"
    return e


def commands(out):
    """{section: [command lines]} of what `fring new` printed."""
    sec, cmds = None, {}
    for line in out.splitlines()[1:]:
        if line.startswith("  "):
            cmds[sec].append(line[2:])
        else:
            sec = line.split(" ")[0].rstrip(":")
            cmds[sec] = []
    return cmds


def run_printed(fring, lang, name, where):
    r = subprocess.run([fring, "new", lang, name], cwd=where, env=env(lang),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    cmds = commands(r.stdout)
    assert set(cmds) == {"build", "mount", "test"}, r.stdout
    mnt = "/tmp/" + name
    assert not os.path.exists(mnt)
    for c in cmds["build"]:
        b = subprocess.run(["sh", "-c", c], env=env(lang), capture_output=True,
                           text=True, timeout=1200)
        assert b.returncode == 0, c + "\n" + b.stdout[-2000:] + b.stderr[-3000:]
    assert cmds["mount"][0] == "mkdir -p " + mnt
    subprocess.run(["sh", "-c", cmds["mount"][0]], check=True)
    p = subprocess.Popen(["sh", "-c", cmds["mount"][1]], env=env(lang),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        line = p.stdout.readline()
        assert " ready (" in line, (line, p.stderr.read() if p.poll() else "")
        assert os.listdir(mnt) == [name]
        with open(os.path.join(mnt, name)) as f:
            assert f.read() == name + " " + TEXT[lang]
        # the shell's child is fring (a shell may also exec it): its exit
        # status is the shell's
        with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
            kids = [int(k) for k in f.read().split()]
        os.kill(kids[0] if kids else p.pid, signal.SIGTERM)
        assert p.wait(15) == 0, p.stderr.read()
        assert not is_mounted(mnt)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        force_unmount(mnt)
        os.rmdir(mnt)
    t = subprocess.run(["sh", "-c", cmds["test"][0]], env=env(lang),
                       capture_output=True, text=True, timeout=60)
    assert t.returncode == 0 and "test: ok" in t.stdout, t.stdout + t.stderr
    return os.path.join(where, name)


def unique(lang):
    return "new_%s_%d_%d" % (lang, os.getpid(), time.monotonic_ns() % 100000)


@pytest.mark.parametrize("lang", ["c", "python", "rust"])
def test_new_builds_and_mounts(lang, tmp_path):
    name = unique(lang)
    proj = run_printed(FRING, lang, name, tmp_path)
    files = sorted(os.listdir(proj))
    assert "README.md" in files and "test.sh" in files, files
    assert "hello" not in open(os.path.join(proj, "README.md")).read().replace(
        "-hello template", "")


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    p = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--install", BUILD, "--prefix", str(p)],
                   check=True, capture_output=True)
    return p


def test_templates_install(prefix):
    sdk = prefix / "share/fring/sdk"
    for f in ("sdk-examples/c-hello/hello.c", "sdk-examples/rust-hello/src/lib.rs",
              "sdk-examples/python-hello/hello.py", "abi/include/fring/plugin.h",
              "bindings/rust/fring/Cargo.toml", "bindings/rust/fring-sys/build.rs",
              "bindings/python/fring/plugin.py"):
        assert (sdk / f).exists(), f


@pytest.mark.parametrize("lang", ["c", "python"])
def test_installed_new(lang, prefix, tmp_path):
    name = unique(lang)
    proj = run_printed(str(prefix / "bin/fring"), lang, name, tmp_path)
    readme = open(os.path.join(proj, "README.md")).read()
    assert str(prefix) in readme and BUILD not in readme, readme


def test_installed_rust_points_at_the_installed_crate(prefix, tmp_path):
    r = subprocess.run([str(prefix / "bin/fring"), "new", "rust", "x", str(tmp_path / "x")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    toml = (tmp_path / "x/Cargo.toml").read_text()
    assert 'path = "%s/share/fring/sdk/bindings/rust/fring"' % prefix in toml, toml


@pytest.mark.parametrize("args, code, msg", [
    (["c", "9lives"], 2, "new: bad NAME '9lives': it must start with a letter "
     "or '_' (a C identifier)"),
    (["c", "my-fs"], 2, "new: bad NAME 'my-fs': '-' is not a letter, digit or '_' "
     "(a C identifier)"),
    (["go", "x"], 2, "new: unknown language 'go' (c, rust or python)"),
    (["c"], 2, "new expects LANGUAGE NAME [DIR]"),
])
def test_new_usage_errors(args, code, msg, tmp_path):
    r = subprocess.run([FRING, "new", *args], cwd=tmp_path, capture_output=True,
                       text=True)
    assert r.returncode == code, r.stderr
    assert r.stderr.splitlines()[0] == "fring: " + msg, r.stderr
    assert r.stderr.splitlines()[1] == "usage: fring new c|rust|python NAME [DIR]"
    assert os.listdir(tmp_path) == []


def test_new_refuses_a_non_empty_dir(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d/keep").write_text("x")
    r = subprocess.run([FRING, "new", "c", "x", str(tmp_path / "d")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr == "fring: new: %s: exists and is not empty\n" % (tmp_path / "d")
    assert os.listdir(tmp_path / "d") == ["keep"]
    (tmp_path / "e").mkdir()   # an empty one is used
    r = subprocess.run([FRING, "new", "c", "x", str(tmp_path / "e")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and (tmp_path / "e/x.c").exists(), r.stderr
