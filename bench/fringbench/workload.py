# SPDX-License-Identifier: MIT
"""J11, a real workload: untar a large source tree (tarball.py) into a
fresh directory, then `find` over it, `du -s`, `grep -r` of a fixed
string and `rm -rf`, each phase a command timed from outside, in seconds
(lower is better: the ratio to raw is raw / target). Before every phase
after the untar the kernel's dentries and inodes are dropped and fring's
timeouts waited out (tree.drop_dentries, as J10 does), so that each one
reaches the server: LOOKUPs, READDIRs, GETATTRs and, the inodes' page
cache going with them, READs for grep. A phase that fails (its command's
status, or no end within PHASE_TIMEOUT) records its error and the phases
after it are not run; the tree is removed through the backing directory,
which always can."""

import os
import shutil
import subprocess
import time

from . import tree
from .procs import proc_cpu_seconds
from .util import run as run_cmd

GREP_STRING = "EXPORT_SYMBOL_GPL"
PHASE_TIMEOUT = 1800  # seconds
PHASES = (("untar", "untar (tar -xf) of the source tree"),
          ("find", "find over the tree"),
          ("du", "du -s of the tree"),
          ("grep", "grep -r -F -c %s over the tree" % GREP_STRING),
          ("rm", "rm -rf of the tree"))
METRICS = [("J11-" + p, "real workload: " + what + ", caches dropped first"
            if p != "untar" else "real workload: " + what, "s", "run") for p, what in PHASES]
LOWER_IS_BETTER = {m[0] for m in METRICS}


def commands(tar, root):
    """Each phase's command line for the tarball tar and the tree root."""
    return {"untar": ["tar", "-xf", tar, "-C", root],
            "find": ["find", root],
            "du": ["du", "-s", root],
            "grep": ["grep", "-r", "-F", "-c", GREP_STRING, root],
            "rm": ["rm", "-rf", root]}


def check(phase, r):
    """What a finished phase gave besides its time ({name: figure}), or
    raises RuntimeError with its error. grep's status 1 is "no match"."""
    if r.returncode != 0 and not (phase == "grep" and r.returncode == 1):
        lines = (r.stderr or "").strip().splitlines() or ["no message"]
        raise RuntimeError("%s rc %d: %s (%d lines on stderr)" % (
            phase, r.returncode, lines[0][:300], len(lines)))
    if phase == "find":
        return {"entries": len(r.stdout.splitlines())}
    if phase == "du":
        return {"du_kib": int(r.stdout.split()[0])}
    if phase == "grep":
        # "path:count" per file; a path may hold ':'
        return {"matches": sum(int(l.rsplit(":", 1)[1]) for l in r.stdout.splitlines()),
                "files": len(r.stdout.splitlines())}
    return {}


def entries(root):
    """Files and directories below root (how far an untar got)."""
    return sum(len(ds) + len(fs) for _, ds, fs in os.walk(root))


def run(directory, backing, tar, tag, pid, drop=tree.drop_dentries,
        timeout=PHASE_TIMEOUT):
    """J11 under directory (the mount) for a tree named by tag; backing is
    the same directory seen without FUSE (for the cleanup), tar the
    tarball's path. Returns {metric: sample}."""
    name = "workload-" + tag
    root = os.path.join(directory, name)
    os.mkdir(root)
    cmds = commands(tar, root)
    res = {}
    try:
        for i, (phase, _) in enumerate(PHASES):
            mid = "J11-" + phase
            if phase != "untar":
                drop()
            cpu0 = proc_cpu_seconds(pid)
            t0 = time.perf_counter()
            try:
                r = run_cmd(cmds[phase], timeout=timeout)
                figures = check(phase, r)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                res[mid] = {"error": str(e) if not isinstance(e, subprocess.TimeoutExpired)
                            else "%s timed out after %d s" % (phase, timeout)}
                if phase == "untar":
                    res[mid]["entries_done"] = entries(os.path.join(backing, name))
                    res[mid]["error"] = "after %d entries: %s" % (res[mid]["entries_done"],
                                                                res[mid]["error"])
                for later, _ in PHASES[i + 1:]:
                    res["J11-" + later] = {"error": "not run: %s failed" % phase}
                break
            dt = time.perf_counter() - t0
            cpu1 = proc_cpu_seconds(pid)
            res[mid] = dict(figures, value=dt, seconds=dt)
            if cpu0 is not None and cpu1 is not None:
                res[mid]["server_cpu_s"] = res[mid]["cpu"] = cpu1 - cpu0
    finally:
        shutil.rmtree(os.path.join(backing, name), ignore_errors=True)
    return res


def table(targets, summary, fmt):
    """Markdown lines: each phase's median seconds (server CPU seconds in
    brackets) per target, and the fastest FUSE target of each phase; none
    without J11."""
    mids = [m[0] for m in METRICS]
    if mids[0] not in summary:
        return []
    L = ["## J11 a real workload (seconds per phase, lower is better)", "",
         "Median seconds over the rounds, server CPU seconds in brackets.", "",
         "| target | %s |" % " | ".join(p for p, _ in PHASES),
         "|---|" + "---:|" * len(PHASES)]
    for t in targets:
        cells = []
        for mid in mids:
            e = summary[mid].get(t.name, {})
            if "median" in e:
                cells.append("%s (%s)" % (fmt(e["median"]), fmt(e.get("cpu"))))
            else:
                cells.append("failed: %s" % (e.get("errors") or ["no data"])[0][:80]
                             .replace("|", "\\|") if e.get("errors") else "–")
        L.append("| %s | %s |" % (t.name, " | ".join(cells)))
    best = []
    for mid in mids:
        fuse = [(summary[mid][t.name]["median"], t.name) for t in targets
                if t.kind != "raw" and "median" in summary[mid].get(t.name, {})]
        best.append(min(fuse)[1] if fuse else "–")
    L += ["| fastest FUSE target | %s |" % " | ".join(best), ""]
    return L
