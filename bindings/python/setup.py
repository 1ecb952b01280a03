# SPDX-License-Identifier: MIT
"""The fring package, with the plugin that serves Python filesystems
built into it: `pip install bindings/python` copies fring's headers into
site-packages/fring/include (from FRING_INCLUDE_DIR, else this
checkout's abi/include, else pkg-config's fring) and builds
site-packages/fring/fring_python.so against the Python it installs for.
Metadata: pyproject.toml."""
import os
import shutil
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithPlugin(build_py):
    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "fring")
        sys.path.insert(0, HERE)
        try:
            from fring import _abi, build_plugin
        finally:
            sys.path.remove(HERE)
        inc = os.path.join(pkg, "include")
        shutil.rmtree(inc, ignore_errors=True)
        shutil.copytree(os.path.join(_abi.include_dir(), "fring"),
                        os.path.join(inc, "fring"))
        os.environ["FRING_INCLUDE_DIR"] = inc   # build against that copy
        print("building %s" % build_plugin.build(pkg, copy_package=False))


class BinaryDistribution(Distribution):
    """fring_python.so makes the wheel platform-specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithPlugin}, distclass=BinaryDistribution)
