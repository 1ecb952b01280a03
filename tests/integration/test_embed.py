# SPDX-License-Identifier: MIT
"""The embedding API (fring.h, libfring.so) through a small C program:
add, run, stop from a signal handler, and errors as return values."""

import os
import signal
import subprocess
import time

from conftest import fring_env, is_mounted

PROG = os.environ.get("FRING_EMBED_PROG", "embed_prog")


def start(*args):
    return subprocess.Popen([PROG, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=fring_env())


def wait_mounted(proc, path, timeout=10):
    deadline = time.monotonic() + timeout
    while not is_mounted(path):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "not mounted after %ds" % timeout
        time.sleep(0.05)


def stop(proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=10)
    return proc.returncode, out, err


def test_add_mount_run_and_stop_from_signal_handler(tmpdirs):
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    p = start("mount", "passthrough", mp, "source=" + src)
    try:
        wait_mounted(p, mp)
        with open(os.path.join(mp, "f"), "w") as f:
            f.write("through the embedding API")
        with open(os.path.join(src, "f")) as f:
            assert f.read() == "through the embedding API"
        rc, out, err = stop(p, signal.SIGINT)
        assert rc == 0, err
        assert out.startswith("fring ") and out.endswith("stopped\n")
        assert not is_mounted(mp)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_add_yaml_and_run_until_unmounted(tmpdirs):
    mp = tmpdirs("mnt")
    cfg = os.path.join(tmpdirs("cfg"), "f.yaml")
    with open(cfg, "w") as f:
        f.write("mounts:\n  - mountpoint: %s\n    plugin: memfs\n" % mp)
    p = start("yaml", cfg)
    try:
        wait_mounted(p, mp)
        subprocess.run(["umount", mp], check=True)
        out, err = p.communicate(timeout=10)
        assert p.returncode == 0, err
        assert out.endswith("stopped\n")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_invalid_yaml_is_an_error_value(tmpdirs):
    cfg = os.path.join(tmpdirs("cfg"), "bad.yaml")
    with open(cfg, "w") as f:
        f.write("mounts:\n  - plugin: memfs\n")
    r = subprocess.run([PROG, "yaml", cfg], capture_output=True, text=True,
                       env=fring_env(), timeout=30)
    assert r.returncode == 1
    assert r.stdout == ("error -22: %s:2:5: mount 1 is missing required key "
                        "'mountpoint'\n" % cfg)


def test_bad_spec_and_unknown_plugin(tmpdirs):
    r = subprocess.run([PROG, "badspec"], capture_output=True, text=True,
                       env=fring_env(), timeout=30)
    assert r.returncode == 1 and r.stdout.startswith("error -22: invalid mount spec")
    mp = tmpdirs("mnt")
    r = subprocess.run([PROG, "mount", "no-such-plugin", mp], capture_output=True,
                       text=True, env=fring_env(), timeout=30)
    assert r.returncode == 1
    assert r.stdout.startswith("error -2: plugin 'no-such-plugin': not found")
    assert not is_mounted(mp)
