# SPDX-License-Identifier: MIT
"""bench/run's measurement: lay out the fio files on a fresh tmpfs, then
rounds of every target (mount, every job, unmount), each round starting
one target later. Sizes are bytes, times seconds."""

import datetime
import os
import shutil
import time

from . import ceiling, latency, scaling, tarball, tree, workload
from .jobs import (CPU_UNITS, FIO_JOBS, META_METRICS, WARMUP_S, layout_files, run_fio,
                   run_meta, warm_up)
from .machine import machine_description
from .report import fmt
from .targets import Unavailable
from .util import MiB, die, log, read_text, run

FIO_IDS = ("J1", "J2", "J3", "J4", "J5", "J7", "J8", "J9", "J12")  # J12's raw reads read.0
TARBALL = "workload.tar"  # J11's tarball, copied onto the tmpfs beside the data


def tmpfs_bytes(opts):
    """The backing tmpfs: 4 fio files, the metadata files, J10's
    directories, J11's tarball and tree (a page more per entry) and 256
    MiB."""
    fio_files = 4 * opts.size_bytes if any(j in opts.job_ids for j in FIO_IDS) else 0
    tb = opts.tarball if "J11" in opts.job_ids else {"bytes": 0, "entries": 0}
    return fio_files, fio_files + 256 * MiB + opts.meta_files * 4096 + \
        opts.tree_files * 64 + 2 * tb["bytes"] + tb["entries"] * 4096


def record(mine, rnd, name, jid, res, units):
    """Samples res ({metric: sample}) of job jid into mine, and one log line."""
    for mid, r in res.items():
        mine.setdefault(mid, []).append(r)
    log("round %d %-14s %s %s" % (rnd, name, jid, ", ".join(
        "%s %s" % (m.split("-", 1)[1], r.get("error") or fmt(r["value"], units))
        for m, r in res.items())))


def one_target(t, rnd, opts, datadir, workdir, samples):
    """Mount t, run every job of opts.job_ids into samples, unmount."""
    mnt = os.path.join(workdir, "mnt-" + t.name)
    if t.kind != "raw":
        os.makedirs(mnt, exist_ok=True)
    logpath = os.path.join(workdir, "server-%s.log" % t.name)
    try:
        where = t.start(datadir, mnt, logpath)
    except Unavailable as e:
        t.status = "unavailable: %s" % e
        log("round %d: %s %s" % (rnd, t.name, t.status))
        return
    try:
        mine = samples.setdefault(t.name, {})
        for job in FIO_JOBS:
            if job["id"] not in opts.job_ids:
                continue
            res = run_fio(job, where, opts.size_bytes, opts.runtime, workdir, t.pid)
            mine.setdefault(job["id"], []).append(res)
            log("round %d %-14s %s %s" % (
                rnd, t.name, job["id"],
                res.get("error") or "%s %s, server cpu %s %s" % (
                    fmt(res["value"]), job["unit"], fmt(res.get("cpu")),
                    CPU_UNITS[job["cpu"]])))
        if "J6" in opts.job_ids:
            try:
                res = run_meta(where, opts.meta_files, "%s-%d" % (t.name, rnd), t.pid)
                for mid, r6 in res.items():
                    mine.setdefault(mid, []).append(r6)
                log("round %d %-14s J6 %s" % (rnd, t.name, ", ".join(
                    "%s %s/s" % (m[3:], fmt(v["value"])) for m, v in res.items())))
            except OSError as e:
                for mid, _, _ in META_METRICS:
                    mine.setdefault(mid, []).append({"error": str(e)})
                log("round %d %-14s J6 failed: %s" % (rnd, t.name, e))
        if "J8" in opts.job_ids:
            record(mine, rnd, t.name, "J8", latency.run(
                where, opts.size_bytes, opts.runtime, workdir, t.pid), "µs")
        if "J9" in opts.job_ids:
            record(mine, rnd, t.name, "J9", scaling.run(
                where, opts.size_bytes, opts.runtime, workdir, t.pid), "IOPS")
        if "J10" in opts.job_ids:
            record(mine, rnd, t.name, "J10", tree.run(
                where, datadir, opts.tree_files, "%s-%d" % (t.name, rnd), t.pid), "/s")
        if "J11" in opts.job_ids:
            record(mine, rnd, t.name, "J11", workload.run(
                where, datadir, os.path.join(os.path.dirname(datadir), TARBALL),
                "%s-%d" % (t.name, rnd), t.pid), "s")
    finally:
        t.stop()
    if "J12" in opts.job_ids:
        # its own server (null, or the --ceiling command), after t's unmount
        record(mine, rnd, t.name, "J12", ceiling.run(t, opts, datadir, workdir), "/s")


def measure(targets, opts, workdir, backing):
    """Every round over targets on a tmpfs mounted on backing (the caller
    unmounts it: backing is mounted once this returns or raises).
    Returns (samples, machine, timing); samples[target][metric] is a list
    of one sample per round."""
    samples = {}
    if "J11" in opts.job_ids:
        opts.tarball = tarball.prepare(opts.tarball_path, opts.tarball_cache, opts.quick,
                                       workdir)
    load_before = read_text("/proc/loadavg", "?").split()[:3]
    start = datetime.datetime.now().astimezone()
    t_start = time.monotonic()
    fio_files, size = tmpfs_bytes(opts)
    r = run(["mount", "-t", "tmpfs", "-o", "size=%d,mode=0755" % size,
             "fring-bench", backing])
    if r.returncode != 0:
        die("mount -t tmpfs failed: %s" % r.stderr.strip())
    datadir = os.path.join(backing, "data")
    os.mkdir(datadir)
    if "J11" in opts.job_ids:
        log("copying %s onto the tmpfs" % opts.tarball["path"])
        shutil.copyfile(opts.tarball["path"], os.path.join(backing, TARBALL))
    if fio_files:
        log("laying out fio files (4 x %s) on the tmpfs" % opts.size)
        layout_files(datadir, opts.size_bytes, workdir)
        if not opts.quick:
            log("warm-up: each fio job %d s on the tmpfs itself (not recorded)" % WARMUP_S)
            warm_up(datadir, opts.size_bytes, workdir, opts.job_ids)

    machine = machine_description(opts.fring)
    log("kernel %s, %s cores, fuse enable_uring=%s; targets: %s; jobs: %s; "
        "%d rounds x %d s" % (machine["kernel"], machine["cores"],
                              machine["enable_uring"], ", ".join(t.name for t in targets),
                              ",".join(opts.job_ids), opts.rounds, opts.runtime))
    for rnd in range(1, opts.rounds + 1):
        # Each round starts one target later: what runs right after a
        # tmpfs layout or another server's unmount differs by position
        # (J6 stat, which never reaches a server, measured 0.82x-0.93x
        # for whichever target always ran first), so no target keeps it.
        k = (rnd - 1) % len(targets)
        for t in targets[k:] + targets[:k]:
            if t.status == "ok":
                one_target(t, rnd, opts, datadir, workdir, samples)
    timing = {"start": start.strftime("%Y-%m-%d %H:%M:%S %Z"),
              "elapsed": time.monotonic() - t_start,
              "load_before": " ".join(load_before),
              "load_after": " ".join(read_text("/proc/loadavg", "?").split()[:3])}
    return samples, machine, timing
