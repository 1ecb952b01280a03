# SPDX-License-Identifier: MIT
"""The jobs: fio jobs J1-J5 and J7 (FIO_JOBS) and the metadata job J6,
done in Python (run_meta), each returning one sample per run; J8
(latency.py), J9 (scaling.py), J10 (tree.py), J11 (workload.py) and J12
(ceiling.py) have modules of their own.

A fio job's rate ("value") is IOPS (4k jobs) or MiB/s (1M jobs); its server
CPU ("cpu") is seconds per 1000 I/Os (cpu "kio"), per GiB moved ("gib"),
seconds per phase ("run") or µs per request ("req").
J6's rates are operations (or entries) per second, its CPU seconds per
1000 operations."""

import json
import os
import shutil
import subprocess
import time

from .procs import proc_cpu_seconds
from .util import GiB, MiB, die, read_text, run

FIO_JOBS = [
    dict(id="J1", title="4k random read, io_uring, iodepth 8, direct",
         rw="randread", bs="4k", ioengine="io_uring", iodepth=8, numjobs=1,
         files="read", unit="IOPS", cpu="kio"),
    dict(id="J2", title="4k random read, psync, 2 jobs, direct",
         rw="randread", bs="4k", ioengine="psync", iodepth=1, numjobs=2,
         files="read", unit="IOPS", cpu="kio"),
    dict(id="J3", title="1M sequential read, psync, 2 jobs, direct",
         rw="read", bs="1M", ioengine="psync", iodepth=1, numjobs=2,
         files="read", unit="MiB/s", cpu="gib"),
    dict(id="J4", title="1M sequential write, psync, 2 jobs, direct",
         rw="write", bs="1M", ioengine="psync", iodepth=1, numjobs=2,
         files="write", unit="MiB/s", cpu="gib"),
    dict(id="J5", title="4k random write, io_uring, iodepth 8, direct",
         rw="randwrite", bs="4k", ioengine="io_uring", iodepth=8, numjobs=1,
         files="write", unit="IOPS", cpu="kio"),
    # 4 client threads share the two read files: more clients than CPUs
    # here, where one queue thread per CPU should win.
    dict(id="J7", title="4k random read, psync, 4 jobs, direct",
         rw="randread", bs="4k", ioengine="psync", iodepth=1, numjobs=4,
         files="read", shared=2, unit="IOPS", cpu="kio"),
]
# J6 is done in Python; it yields four metrics.
META_METRICS = [
    ("J6-create", "create (open O_CREAT|O_EXCL + close)", "ops/s"),
    ("J6-stat", "stat of each file", "ops/s"),
    ("J6-list", "listing (os.scandir) of the whole directory", "entries/s"),
    ("J6-unlink", "unlink of each file", "ops/s"),
]
ALL_JOB_IDS = [j["id"] for j in FIO_JOBS if j["id"] != "J7"] + ["J6", "J7", "J8", "J9",
                                                                   "J10", "J11", "J12"]
# fio's completion latency percentiles kept in every fio sample (clat_us)
CLAT_PERCENTILES = (("p50", "50.000000"), ("p99", "99.000000"), ("p99.9", "99.900000"))
CPU_UNITS = {"kio": "s/1k I/O", "gib": "s/GiB", "kop": "s/1k ops", "run": "s",
             "req": "µs/request"}

# Seconds of each fio job run on the raw directory after the layout, not
# recorded: on the Intel Xeon VM the first J5 after a layout started near
# 55k IOPS and took 4-7 s to reach its usual 240k, for whichever target ran
# it first (local 202k where the next rounds gave 233k-241k).
WARMUP_S = 3
META_READ_S = 1.0  # J6 stat and list: whole passes for at least this long


def fio_cmd(job, directory, size, runtime, out, extra=()):
    """fio's command line for job on files of size bytes in directory,
    runtime seconds, JSON output to out; job["filename"], where given, is
    the one file every job process uses."""
    if job.get("filename"):
        files = "--filename=" + job["filename"]
    elif job.get("shared"):
        files = "--filename=" + ":".join("%s.%d" % (job["files"], n)
                                         for n in range(job["shared"]))
    else:
        files = "--filename_format=%s.$jobnum" % job["files"]
    return ["fio", "--name=" + job["id"], "--directory=" + directory, files,
            "--size=%d" % size, "--rw=" + job["rw"], "--bs=" + job["bs"],
            "--ioengine=" + job["ioengine"], "--iodepth=%d" % job["iodepth"],
            "--numjobs=%d" % job["numjobs"], "--direct=1",
            "--time_based=1", "--runtime=%d" % runtime,
            "--norandommap=1", "--randrepeat=0", "--allow_file_create=0",
            "--group_reporting=1", "--output-format=json", "--output=" + out,
            *extra]


def layout_files(datadir, size, workdir, kinds=("read", "write")):
    """Pre-create the fio data files (kinds: read.N, write.N) of size bytes
    on the tmpfs itself, so that no target pays for (or measures) the
    layout."""
    for files in kinds:
        job = dict(id="layout-" + files, files=files, rw="write", bs="1M",
                   ioengine="psync", iodepth=1, numjobs=2)
        cmd = fio_cmd(job, datadir, size, 1, os.path.join(workdir, "layout.json"))
        cmd = [c for c in cmd if c.split("=")[0] not in (
            "--time_based", "--runtime", "--allow_file_create", "--direct")]
        cmd.append("--create_only=1")
        r = run(cmd)
        for n in range(2):
            p = os.path.join(datadir, "%s.%d" % (files, n))
            if r.returncode != 0 or not os.path.exists(p) or os.path.getsize(p) != size:
                die("fio could not lay out %s: %s" % (p, r.stderr[-2000:]))


def warm_up(datadir, size, workdir, job_ids, seconds=WARMUP_S):
    """Each fio job of job_ids for seconds on datadir, not recorded."""
    for job in FIO_JOBS:
        if job["id"] in job_ids:
            run(fio_cmd(job, datadir, size, seconds,
                        os.path.join(workdir, "warmup-%s.json" % job["id"])),
                timeout=seconds * 4 + 60)


def run_fio(job, directory, size, runtime, workdir, pid):
    """One fio job: its rate ("value"), fio's figures and the server's CPU
    (pid and its children) over the job; {"error": why} if it failed."""
    out = os.path.join(workdir, "fio-%s.json" % job["id"])
    if os.path.exists(out):
        os.unlink(out)
    cmd = fio_cmd(job, directory, size, runtime, out)
    cpu0 = proc_cpu_seconds(pid)
    t0 = time.monotonic()
    try:
        r = run(cmd, timeout=runtime * 4 + 60)
    except subprocess.TimeoutExpired:
        return {"error": "fio timed out"}
    wall = time.monotonic() - t0
    cpu1 = proc_cpu_seconds(pid)
    text = read_text(out, "")
    if r.returncode != 0 or "{" not in text:
        return {"error": "fio rc %d: %s" % (r.returncode,
                                            (r.stderr or text)[-300:].replace("\n", " "))}
    data = json.loads(text[text.index("{"):])
    j = data["jobs"][0]
    side = j["write"] if "write" in job["rw"] else j["read"]
    if j.get("error"):
        return {"error": "fio job error %s" % j["error"]}
    res = {"iops": side["iops"], "bw_bytes": side["bw_bytes"],
           "io_bytes": side["io_bytes"], "total_ios": side["total_ios"],
           "fio_usr_cpu_pct": j.get("usr_cpu"), "fio_sys_cpu_pct": j.get("sys_cpu"),
           "wall_s": wall}
    res["value"] = side["iops"] if job["unit"] == "IOPS" else side["bw_bytes"] / MiB
    pct = side.get("clat_ns", {}).get("percentile") or {}
    res["clat_us"] = {k: pct[v] / 1000.0 for k, v in CLAT_PERCENTILES if v in pct}
    if cpu0 is not None and cpu1 is not None:
        cpu = cpu1 - cpu0
        res["server_cpu_s"] = cpu
        if job["cpu"] == "kio" and side["total_ios"]:
            res["cpu"] = cpu / (side["total_ios"] / 1000.0)
        elif job["cpu"] == "gib" and side["io_bytes"]:
            res["cpu"] = cpu / (side["io_bytes"] / GiB)
        elif job["cpu"] == "req" and side["total_ios"]:
            res["cpu"] = cpu / side["total_ios"] * 1e6
    return res


def run_meta(directory, nfiles, tag, pid, read_s=META_READ_S):
    """J6: create, stat, list, unlink nfiles in a fresh directory; stat and
    list repeat whole passes for at least read_s seconds. Returns one
    sample per J6 metric."""
    d = os.path.join(directory, "meta-" + tag)
    os.mkdir(d)
    names = [os.path.join(d, "f%06d" % i) for i in range(nfiles)]
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC
    res = {}

    def phase(name, fn):
        cpu0 = proc_cpu_seconds(pid)
        t0 = time.perf_counter()
        count = fn()
        dt = time.perf_counter() - t0
        cpu1 = proc_cpu_seconds(pid)
        r = {"value": count / dt, "seconds": dt, "count": count}
        if cpu0 is not None and cpu1 is not None:
            r["server_cpu_s"] = cpu1 - cpu0
            r["cpu"] = (cpu1 - cpu0) / (count / 1000.0)
        res[name] = r

    def create():
        for p in names:
            os.close(os.open(p, flags, 0o644))
        return len(names)

    # stat and list change nothing, so they repeat whole passes for at
    # least read_s: one pass of 20,000 files took 15-60 ms on the AMD
    # EPYC VM, shorter than its noise (raw tmpfs stat varied 310k-490k/s).
    def repeated(one_pass):
        t0, n = time.perf_counter(), 0
        while True:
            n += one_pass()
            if time.perf_counter() - t0 >= read_s:
                return n

    def stat_pass():
        for p in names:
            os.stat(p)
        return len(names)

    def list_pass():
        n = 0
        with os.scandir(d) as it:
            for _ in it:
                n += 1
        if n != len(names):
            raise RuntimeError("listing saw %d entries, expected %d" % (n, len(names)))
        return n

    def unlink():
        for p in names:
            os.unlink(p)
        return len(names)

    try:
        phase("J6-create", create)
        phase("J6-stat", lambda: repeated(stat_pass))
        phase("J6-list", lambda: repeated(list_pass))
        phase("J6-unlink", unlink)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return res
