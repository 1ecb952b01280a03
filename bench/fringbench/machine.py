# SPDX-License-Identifier: MIT
"""The machine and the fring build a run measured: kernel, CPU, cores,
memory (GiB), the fuse module's parameters, fio, and fring's commit."""

import os
import platform

from . import REPO
from .util import read_text, run

FUSE_PARAMS = "/sys/module/fuse/parameters"


def git(*argv):
    """git's output in the repository, None where it fails."""
    r = run(["git", "--no-optional-locks", "-C", REPO, *argv])
    return r.stdout.strip() if r.returncode == 0 else None


def fring_commit():
    """The checkout's short commit, flagged when the work tree differs."""
    commit = git("rev-parse", "--short", "HEAD") or "?"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += " (working tree has uncommitted changes)"
    return commit


def cpu_model():
    for line in (read_text("/proc/cpuinfo", "") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "?"


def machine_description(fring_build):
    """bench/run's machine table; fring_build is the build directory."""
    mem_kb = 0
    for line in (read_text("/proc/meminfo", "") or "").splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    params = {}
    if os.path.isdir(FUSE_PARAMS):
        for p in sorted(os.listdir(FUSE_PARAMS)):
            params[p] = read_text(os.path.join(FUSE_PARAMS, p), "?")
    fio_version = run(["fio", "--version"]).stdout.strip()
    try:
        import matplotlib
        mpl = matplotlib.__version__
    except ImportError:
        mpl = "not installed"
    return {
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)),
        "memory_gib": round(mem_kb / (1 << 20), 1),
        "fuse_params": params,
        "enable_uring": params.get("enable_uring", "not present"),
        "max_pages_limit": params.get("max_pages_limit", "not present in this kernel"),
        "fio": fio_version,
        "python": platform.python_version(),
        "matplotlib": mpl,
        "fring_commit": fring_commit(),
        "fring_build": fring_build,
    }
