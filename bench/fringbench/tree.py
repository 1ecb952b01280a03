# SPDX-License-Identifier: MIT
"""J10, a large tree: N files (--tree-files, default 200,000) in 200
directories, in Python like J6: create each (open O_CREAT|O_EXCL + close),
stat each with the server reached, list each directory (os.scandir),
unlink each. Before the stat phase the kernel's dentries and inodes are
dropped (vm.drop_caches = 2) and the driver waits out fring's 1 s entry
and attribute timeouts, so every stat is a LOOKUP whatever the server's
timeouts (libfuse's passthrough_hp caches for 86400 s). A phase that
fails (passthrough_hp holds an fd per inode and runs out of them) records
its error with how far it got, and the phases after it are not run; the
tree is removed through the backing directory, which always can."""

import os
import shutil
import time

from .procs import proc_cpu_seconds

DIRS = 200
METRICS = [("J10-create", "large tree: create (open O_CREAT|O_EXCL + close)", "ops/s", "kop"),
           ("J10-stat", "large tree: stat of each file, dentries dropped first", "ops/s",
            "kop"),
           ("J10-readdir", "large tree: listing (os.scandir) of each directory",
            "entries/s", "kop"),
           ("J10-unlink", "large tree: unlink of each file", "ops/s", "kop")]
SETTLE_S = 1.5  # past fring's default 1 s entry/attr timeouts after the drop


def drop_dentries():
    """Evict the unused dentries and inodes (FUSE's too: FORGETs)."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2\n")
    time.sleep(SETTLE_S)


class PhaseFailed(Exception):
    def __init__(self, done, err):
        super().__init__("after %d: %s" % (done, err))


def each(items, fn):
    """fn on every item; PhaseFailed with the count done on an OSError."""
    done = 0
    try:
        for x in items:
            fn(x)
            done += 1
    except OSError as e:
        raise PhaseFailed(done, e) from e
    return done


def run(directory, backing, nfiles, tag, pid, dirs=DIRS, drop=drop_dentries):
    """J10 under directory (the mount) for a tree named by tag; backing
    is the same directory seen without FUSE (for the cleanup)."""
    name = "tree-" + tag
    root = os.path.join(directory, name)
    os.mkdir(root)
    subdirs = [os.path.join(root, "d%03d" % d) for d in range(dirs)]
    names = [os.path.join(subdirs[i % dirs], "f%07d" % i) for i in range(nfiles)]
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC
    res = {}

    def listing(d):
        with os.scandir(d) as it:
            n = sum(1 for _ in it)
        return n

    def create():
        each(subdirs, os.mkdir)
        return each(names, lambda p: os.close(os.open(p, flags, 0o644)))

    def readdir():
        n = sum(listing(d) for d in subdirs)
        if n != nfiles:
            raise PhaseFailed(n, "listed %d entries, expected %d" % (n, nfiles))
        return n

    phases = [("J10-create", create), ("J10-stat", lambda: each(names, os.stat)),
              ("J10-readdir", readdir), ("J10-unlink", lambda: each(names, os.unlink))]
    try:
        for i, (mid, fn) in enumerate(phases):
            if mid == "J10-stat":
                drop()
            cpu0 = proc_cpu_seconds(pid)
            t0 = time.perf_counter()
            try:
                count = fn()
            except PhaseFailed as e:
                res[mid] = {"error": "%s failed %s" % (mid[4:], e)}
                for later, _ in phases[i + 1:]:
                    res[later] = {"error": "not run: %s failed" % mid[4:]}
                break
            dt = time.perf_counter() - t0
            cpu1 = proc_cpu_seconds(pid)
            r = {"value": count / dt, "seconds": dt, "count": count}
            if cpu0 is not None and cpu1 is not None:
                r["server_cpu_s"] = cpu1 - cpu0
                r["cpu"] = (cpu1 - cpu0) / (count / 1000.0)
            res[mid] = r
    finally:
        shutil.rmtree(os.path.join(backing, name), ignore_errors=True)
    return res
