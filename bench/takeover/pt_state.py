#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What passthrough's takeover state costs for many inodes (issue 25).

Makes a source directory of --inodes files (1,000 a directory), mounts
passthrough over it (`fring mount passthrough MP -o source=SRC`), stats
every file through the mount so the kernel holds a lookup on each (node
ids the state must carry), keeps --open files open, then runs `fring
restart MP` --takeovers times. Per takeover it reads the plugin's own
lines: state_save's time (wall and CPU) and the memfd's size in the old
process, state_load's in the new one, and the restart's total. After the
last one it reads the open files back. Needs root and /dev/fuse; leaves
nothing mounted.
"""

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

SAVED = re.compile(r"takeover state saved: (\d+) inodes, (\d+) open files, "
                   r"(\d+) bytes in ([\d.]+) ms \(([\d.]+) ms CPU\)")
LOADED = re.compile(r"passthrough: took over (\d+) inodes and (\d+) open "
                    r"files in ([\d.]+) ms \(([\d.]+) ms CPU\)")
RESTART = re.compile(r"took over \d+ mount\(s\) from pid \d+ in (\d+) ms")

from common import make_tree, parser


def parse():
    ap = parser(__doc__)
    ap.add_argument("--inodes", type=int, default=100_000, help="default 100000")
    ap.add_argument("--open", type=int, default=100,
                    help="files kept open across the takeovers (default 100)")
    ap.add_argument("--takeovers", type=int, default=5, help="default 5")
    ap.add_argument("--transport", choices=("devfuse", "uring"), default="devfuse")
    ap.add_argument("--handles", choices=("true", "false"), default="true",
                    help="passthrough's option: file handles, else paths")
    ap.add_argument("--dir", help="where the source goes (default: a temp dir)")
    ap.add_argument("--json", help="also write the figures to this file")
    return ap.parse_args()


def main():
    a = parse()
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        sys.exit("pt_state.py: needs root and /dev/fuse")
    tmp = tempfile.mkdtemp(prefix="fring-pt-state-", dir=a.dir)
    src, mp = os.path.join(tmp, "src"), os.path.join(tmp, "mnt")
    rundir, log = os.path.join(tmp, "run"), os.path.join(tmp, "log")
    os.mkdir(src)
    os.mkdir(mp)
    names = make_tree(src, a.inodes)
    env = dict(os.environ, FRING_PLUGIN_PATH=a.plugin_dir, FRING_RUNTIME_DIR=rundir)
    err = open(log, "w")
    proc = subprocess.Popen([a.fring, "mount", "passthrough", mp, "-t", a.transport,
                             "-o", "source=" + src, "-o", "handles=" + a.handles,
                             "-o", "entry_timeout=3600", "-o", "attr_timeout=3600"],
                            stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    rows, fds, ok = [], [], True
    try:
        line = proc.stdout.readline()
        if "ready" not in line:
            sys.exit("pt_state.py: fring did not serve: %s" % open(log).read())
        t0 = time.monotonic()
        for n in names:
            os.stat(os.path.join(mp, n))
        stat_s = time.monotonic() - t0
        fds = [os.open(os.path.join(mp, n), os.O_RDWR) for n in names[:a.open]]
        for i in range(a.takeovers):
            seen = len(open(log).read())
            r = subprocess.run([a.fring, "restart", mp], capture_output=True,
                               text=True, env=env, timeout=300)
            out = (r.stdout + r.stderr).strip()
            time.sleep(0.2)
            text = open(log).read()[seen:]
            s, l, t = SAVED.search(text), LOADED.search(text), RESTART.search(out)
            if r.returncode or not (s and l and t):
                ok = False
                print("takeover %d failed: %s\n%s" % (i + 1, out, text))
                break
            rows.append({"inodes": int(s.group(1)), "open": int(s.group(2)),
                         "bytes": int(s.group(3)), "save_ms": float(s.group(4)),
                         "save_cpu_ms": float(s.group(5)), "load_ms": float(l.group(3)),
                         "load_cpu_ms": float(l.group(4)), "restart_ms": int(t.group(1))})
            print("takeover %d: %d inodes, %d open files, state %d bytes, save %.1f ms "
                  "(%.1f CPU), load %.1f ms (%.1f CPU), restart %d ms"
                  % ((i + 1,) + tuple(rows[-1].values())))
        for fd, n in zip(fds, names):
            if os.pread(fd, 64, 0).decode() != n:
                ok = False
                print("open file %s reads wrong after the takeovers" % n)
    finally:
        for fd in fds:
            os.close(fd)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if os.path.ismount(mp):
            subprocess.run(["umount", "-l", mp])
        err.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if not rows:
        sys.exit(1)
    med = {k: statistics.median(r[k] for r in rows)
           for k in ("bytes", "save_ms", "save_cpu_ms", "load_ms", "load_cpu_ms",
                     "restart_ms")}
    summary = {"inodes": a.inodes, "handles": a.handles, "transport": a.transport,
               "stat_all_s": round(stat_s, 2), "takeovers": rows,
               "median": med, "all_ok": ok}
    print("%d inodes (%s): state %.1f MiB, save median %.1f ms (%.1f CPU), load "
          "median %.1f ms (%.1f CPU), restart median %d ms; %s"
          % (rows[0]["inodes"], "file handles" if a.handles == "true" else "paths",
             med["bytes"] / 2**20, med["save_ms"], med["save_cpu_ms"], med["load_ms"],
             med["load_cpu_ms"], med["restart_ms"], "all ok" if ok else "FAILED"))
    if a.json:
        with open(a.json, "w") as j:
            json.dump(summary, j, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
