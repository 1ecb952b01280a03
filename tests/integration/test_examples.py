# SPDX-License-Identifier: MIT
"""The shipped example configs, run exactly as shipped (their fixed /tmp
paths): memfs serves, passthrough mirrors a real directory both ways."""
import os
import shutil
import signal
import subprocess

import pytest

from conftest import FRING, is_mounted

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def fixed_dirs():
    """Create the example's fixed directories; remove only what we made."""
    made = []

    def make(path):
        if is_mounted(path):
            pytest.skip("%s is in use by a mount we did not make" % path)
        if not os.path.isdir(path):
            os.makedirs(path)
            made.append(path)
        return path

    yield make
    for p in reversed(made):
        if not is_mounted(p):
            shutil.rmtree(p, ignore_errors=True)


def run_example(spawn, name, mountpoint):
    f = spawn(["run", os.path.join(ROOT, "plugins", name, "example.yaml")], [mountpoint])
    ready = f.wait_ready(1)
    assert ready[0].startswith("fring: %s ready (plugin %s, transport " % (mountpoint, name))
    return f


def stop_cleanly(f, mountpoint):
    assert f.stop(signal.SIGTERM) == 0, f.log()
    assert not is_mounted(mountpoint)


def test_passthrough_example_serves_a_real_directory(spawn, fixed_dirs):
    src = fixed_dirs("/tmp/fring-src")
    mnt = fixed_dirs("/tmp/fring-passthrough")
    with open(os.path.join(src, "existing.txt"), "w") as fh:
        fh.write("from the source\n")
    os.makedirs(os.path.join(src, "sub"), exist_ok=True)
    f = run_example(spawn, "passthrough", mnt)
    with open(os.path.join(mnt, "existing.txt")) as fh:
        assert fh.read() == "from the source\n"
    assert {"existing.txt", "sub"} <= set(os.listdir(mnt))
    with open(os.path.join(mnt, "sub", "new.txt"), "w") as fh:
        fh.write("through fring\n")
    with open(os.path.join(src, "sub", "new.txt")) as fh:
        assert fh.read() == "through fring\n"
    os.rename(os.path.join(mnt, "existing.txt"), os.path.join(mnt, "renamed.txt"))
    assert os.path.exists(os.path.join(src, "renamed.txt"))
    stop_cleanly(f, mnt)
    os.unlink(os.path.join(src, "renamed.txt"))
    shutil.rmtree(os.path.join(src, "sub"))


def test_memfs_example_serves(spawn, fixed_dirs):
    mnt = fixed_dirs("/tmp/fring-memfs")
    f = run_example(spawn, "memfs", mnt)
    with open(os.path.join(mnt, "f"), "w") as fh:
        fh.write("x" * 10000)
    assert os.stat(os.path.join(mnt, "f")).st_size == 10000
    stop_cleanly(f, mnt)


def test_demo_shows_each_command_as_written(fixed_dirs):
    """tests/tools/demo-memfs.sh (README set-up step 1) prints every command with
    its redirections before running it, then stops fring cleanly."""
    mnt = fixed_dirs("/tmp/fring-memfs")
    built = os.path.join(ROOT, "build", "bin", "fring")
    if os.path.realpath(shutil.which(FRING) or FRING) != os.path.realpath(built):
        pytest.skip("the demo runs build/bin/fring, not the fring under test")
    r = subprocess.run([os.path.join(ROOT, "tests", "tools", "demo-memfs.sh")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    step = lines.index('$ echo "hello from fring" > "/tmp/fring-memfs/hi"')
    assert lines[step + 1:step + 3] == ['$ cat "/tmp/fring-memfs/hi"', "hello from fring"]
    assert lines[-1] == "fring exited with status 0 and unmounted /tmp/fring-memfs"
    assert not is_mounted(mnt)
