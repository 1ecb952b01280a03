#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The longest stall a client sees during `fring restart` (issue 25).

Mounts memfs (`fring mount memfs MP -t TRANSPORT`, devfuse or uring), writes a
file of --size MiB, and runs a qd1 4k reader (random O_DIRECT preads, so
every read reaches the server) while `fring restart MP` takes the mount
over --takeovers times, --gap seconds apart. --plugin passthrough mirrors
a temporary source holding --inodes files (1,000 a directory), each looked
up through the mount first, so the state handed over carries their node
ids. Per takeover: the reader's
worst read latency and the longest gap between two completions, in the
window from the restart's start to 0.2 s after it returned; then their
medians and maxima. Needs root and /dev/fuse; leaves nothing mounted.
"""

import json
import mmap
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from common import make_tree, parser


def parse():
    ap = parser(__doc__)
    ap.add_argument("--size", type=int, default=16, help="MiB of data (default 16)")
    ap.add_argument("--transport", choices=("devfuse", "uring"), default="devfuse",
                    help="the mount's transport (default devfuse)")
    ap.add_argument("--transport-map",
                    help="serve with `fring run` and this YAML transport map instead, "
                         "e.g. '{ mode: uring, zero_copy: off }' (zero-copy mounts are "
                         "not taken over); --transport is then ignored")
    ap.add_argument("--plugin", choices=("memfs", "passthrough"), default="memfs",
                    help="the plugin served (default memfs)")
    ap.add_argument("--inodes", type=int, default=100_000,
                    help="passthrough: files in the source, looked up (default 100000)")
    ap.add_argument("--takeovers", type=int, default=10, help="default 10")
    ap.add_argument("--gap", type=float, default=0.5,
                    help="seconds between takeovers (default 0.5)")
    ap.add_argument("--json", help="also write the figures to this file")
    return ap.parse_args()


class Reader(threading.Thread):
    def __init__(self, path, size):
        super().__init__(daemon=True)
        self.path, self.blocks = path, size // 4096
        self.done = []  # (completion ns, latency ns)
        self.errors = []
        self.stop = threading.Event()
        self.start()

    def run(self):
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECT)
        buf = mmap.mmap(-1, 4096)
        rnd = random.Random(1)
        try:
            while not self.stop.is_set():
                off = rnd.randrange(self.blocks) * 4096
                t0 = time.monotonic_ns()
                if os.preadv(fd, [buf], off) != 4096:
                    self.errors.append("short read at %d" % off)
                t1 = time.monotonic_ns()
                self.done.append((t1, t1 - t0))
        except OSError as e:
            self.errors.append(repr(e))
        finally:
            os.close(fd)


def window(done, start, end):
    lat = [l for t, l in done if start <= t <= end]
    times = [t for t, _ in done if start <= t <= end]
    gaps = [b - a for a, b in zip(times, times[1:])]
    return max(lat, default=0) / 1e6, max(gaps, default=0) / 1e6, len(lat)


def problems(rows, reader_errors):
    """What went wrong, in one phrase: failed restarts and reader errors."""
    bad = [r for r in rows if r["rc"] != 0]
    said = ["%d of %d restarts failed (first: %s)" % (len(bad), len(rows), bad[0]["line"])
            ] if bad else []
    return "ERRORS: " + "; ".join(said + ["reader: %s" % e for e in reader_errors[:3]])


def main():
    a = parse()
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        sys.exit("stall.py: needs root and /dev/fuse")
    tmp = tempfile.mkdtemp(prefix="fring-stall-")
    mp, rundir = os.path.join(tmp, "mnt"), os.path.join(tmp, "run")
    os.mkdir(mp)
    env = dict(os.environ, FRING_PLUGIN_PATH=a.plugin_dir, FRING_RUNTIME_DIR=rundir)
    names, opts = [], {}
    if a.plugin == "passthrough":
        src = os.path.join(tmp, "src")
        os.mkdir(src)
        names = make_tree(src, a.inodes)
        opts = {"source": src, "entry_timeout": "3600", "attr_timeout": "3600"}
    args = [a.fring, "mount", a.plugin, mp, "-t", a.transport]
    for kv in opts.items():
        args += ["-o", "%s=%s" % kv]
    target = mp  # what `fring restart` is given
    if a.transport_map:
        target = os.path.join(tmp, "stall.yaml")
        with open(target, "w") as y:  # JSON strings are YAML scalars
            y.write("mounts:\n  - mountpoint: %s\n    plugin: %s\n"
                    "    options: %s\n    transport: %s\n"
                    % (json.dumps(mp), a.plugin, json.dumps(opts), a.transport_map))
        args = [a.fring, "run", target]
    proc = subprocess.Popen(args,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    rows, reader = [], None
    try:
        line = proc.stdout.readline()
        if "ready" not in line:
            sys.exit("stall.py: fring did not serve: %s%s" % (line, proc.stderr.read()))
        for n in names:
            os.stat(os.path.join(mp, n))
        path = os.path.join(mp, "data")
        with open(path, "wb") as f:
            for _ in range(a.size):
                f.write(os.urandom(1 << 20))
        reader = Reader(path, a.size << 20)
        time.sleep(1)
        base = window(reader.done, time.monotonic_ns() - 900_000_000,
                      time.monotonic_ns())
        for i in range(a.takeovers):
            t0 = time.monotonic_ns()
            r = subprocess.run([a.fring, "restart", target], capture_output=True,
                               text=True, env=env, timeout=120)
            t1 = time.monotonic_ns()
            time.sleep(0.2)
            lat, gap, n = window(reader.done, t0, t1 + 200_000_000)
            out = (r.stdout + r.stderr).strip()
            rows.append({"takeover": i + 1, "rc": r.returncode,
                         "restart_ms": (t1 - t0) / 1e6, "worst_read_ms": lat,
                         "longest_gap_ms": gap, "reads": n, "line": out})
            print("takeover %2d: rc %d, restart %.1f ms, worst read %.2f ms, "
                  "longest gap %.2f ms, %d reads (%s)"
                  % (i + 1, r.returncode, (t1 - t0) / 1e6, lat, gap, n, out))
            time.sleep(max(0.0, a.gap - 0.2))
    finally:
        if reader:
            reader.stop.set()
            reader.join(10)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if os.path.ismount(mp):
            subprocess.run(["umount", "-l", mp])
        shutil.rmtree(tmp, ignore_errors=True)
    ok = all(r["rc"] == 0 for r in rows) and not reader.errors
    summary = {
        "plugin": a.plugin, "inodes": len(names),
        "size_mib": a.size, "takeovers": len(rows), "all_ok": ok,
        "reader_errors": reader.errors,
        "idle_worst_read_ms": base[0], "idle_longest_gap_ms": base[1],
        "median_worst_read_ms": statistics.median(r["worst_read_ms"] for r in rows),
        "max_worst_read_ms": max(r["worst_read_ms"] for r in rows),
        "median_longest_gap_ms": statistics.median(r["longest_gap_ms"] for r in rows),
        "max_longest_gap_ms": max(r["longest_gap_ms"] for r in rows),
        "median_restart_ms": statistics.median(r["restart_ms"] for r in rows),
        "rows": rows,
    }
    print("%s%d MiB, %d takeovers, %s: worst read median %.2f ms (max %.2f), "
          "longest gap median %.2f ms (max %.2f), restart median %.1f ms; "
          "without takeover: worst read %.2f ms, gap %.2f ms"
          % ("passthrough, %d inodes, " % a.inodes if names else "",
             a.size, len(rows), "no error" if ok else problems(rows, reader.errors),
             summary["median_worst_read_ms"], summary["max_worst_read_ms"],
             summary["median_longest_gap_ms"], summary["max_longest_gap_ms"],
             summary["median_restart_ms"], base[0], base[1]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
