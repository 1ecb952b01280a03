# SPDX-License-Identifier: MIT
"""A third-party plugin builds against the *installed* headers (CMake package
and pkg-config) and mounts: sdk-examples/c-hello, end to end."""
import os
import shutil
import subprocess

import pytest

from conftest import FRING

BUILD = os.path.dirname(os.path.dirname(FRING))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    p = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--install", BUILD, "--prefix", str(p)],
                   check=True, capture_output=True)
    return p


def libdir(prefix):
    for d in ("lib", "lib64", "lib/x86_64-linux-gnu"):
        if (prefix / d / "pkgconfig" / "fring.pc").exists():
            return prefix / d
    raise AssertionError("fring.pc not installed")


def test_install_layout(prefix):
    assert (prefix / "include/fring/plugin.h").exists()
    assert (prefix / "include/fring/fring.h").exists()
    assert (prefix / "bin/fring").exists()
    lib = libdir(prefix)
    assert (lib / "libfring.so").exists()
    assert (lib / "fring/plugins/memfs.so").exists()
    assert (lib / "cmake/fring/fringConfig.cmake").exists()


def hello_works(mount, so):
    mnt = mount(str(so))
    with open(os.path.join(mnt, "hello")) as f:
        assert f.read() == "hello from fring\n"
    assert sorted(os.listdir(mnt)) == ["hello"]


def test_cmake_package(prefix, tmp_path, mount):
    src = os.path.join(ROOT, "sdk-examples/c-hello")
    b = tmp_path / "b"
    subprocess.run(["cmake", "-S", src, "-B", str(b), f"-DCMAKE_PREFIX_PATH={prefix}"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(b)], check=True, capture_output=True)
    hello_works(mount, b / "hello.so")


def test_pkg_config(prefix, tmp_path, mount):
    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "sdk-examples/c-hello"), src)
    env = dict(os.environ, PKG_CONFIG_PATH=str(libdir(prefix) / "pkgconfig"))
    subprocess.run(["make", "-C", str(src)], check=True, capture_output=True, env=env)
    hello_works(mount, src / "hello.so")


def test_installed_fring_finds_its_plugins(prefix):
    env = {k: v for k, v in os.environ.items() if k != "FRING_PLUGIN_PATH"}
    out = subprocess.run([str(prefix / "bin/fring"), "plugins"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert "memfs" in out and "passthrough" in out
