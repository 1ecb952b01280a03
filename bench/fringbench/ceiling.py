# SPDX-License-Identifier: MIT
"""J12, the runtime's own ceiling: the request rate a server thread
sustains when the filesystem does nothing, and what each request costs
it in CPU (µs of server utime + stime per request). Two requests:

- J12-getattr, a no-op: getattr_load (bench/ceiling/getattr_load.c,
  built with the tests) runs GETATTR_THREADS threads, each calling
  statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC) on an open file in a
  loop: FORCE_SYNC sends a GETATTR every time whatever the attribute
  timeout, and the open fd needs no LOOKUP;
- J12-read4k, a 4k READ answered from memory: fio, 4k random reads,
  io_uring, READ_JOBS jobs at iodepth READ_DEPTH, direct.

The server is not the target's own: a fring target serves the `null`
plugin (files of zeros, constant attributes) with its transport and
the threads libfuse's example has: over io_uring a queue thread per
CPU (libfuse's io_uring has no option for fewer), over /dev/fuse
`queues: 1`, one worker thread (libfuse's -s); an --extra target the command given
with --ceiling NAME=CMD (`{mnt}` a directory whose first regular file the
clients use, or `{file}` a regular file mounted on, e.g. libfuse's
example/null); raw runs the clients on the tmpfs's read file, no server."""

import json
import os

from .jobs import run_fio
from .procs import proc_cpu_seconds
from .targets import ExtraTarget, FringTarget, Unavailable
from .util import run as run_cmd

# How fring's J12 servers are set up, as the report says it; a stored run
# keeps the words of its day (runs before this key gave `queues: 1`).
SERVERS = ("with a queue thread per CPU over io_uring (as libfuse) and `queues: 1` "
           "over /dev/fuse")
SERVERS_BEFORE = "with `queues: 1`"
GETATTR_THREADS = 8
READ_JOBS, READ_DEPTH = 2, 16
CLIENT = os.path.join("bench", "ceiling", "getattr_load")  # in the build directory
READ_JOB = dict(id="J12-read4k", rw="randread", bs="4k", ioengine="io_uring",
                iodepth=READ_DEPTH, numjobs=READ_JOBS, unit="IOPS", cpu="req")
METRICS = [("J12-getattr", "runtime ceiling: GETATTR (statx with AT_STATX_FORCE_SYNC), "
            "%d client threads" % GETATTR_THREADS, "req/s", "req"),
           ("J12-read4k", "runtime ceiling: 4k READ answered from memory, io_uring, "
            "%d jobs x iodepth %d, direct" % (READ_JOBS, READ_DEPTH),
            "IOPS", "req")]


def server_for(t, ceiling_cmds, size):
    """The server J12 measures for target t (None: raw, no server); a
    fring target's is null with one queue thread, files of size bytes;
    an extra target's the --ceiling command named after it (Unavailable
    without one)."""
    if t.kind == "raw":
        return None
    if t.kind == "fring":
        # the same threads as libfuse's: over io_uring a queue thread per
        # CPU (libfuse has no fewer), over /dev/fuse one worker (its -s)
        one = [("queues", "1")] if t.transport == "devfuse" else []
        return FringTarget(t.name + "-null", t.build_dir, t.transport,
                           [kv for kv in t.transport_extra if kv[0] != "queues"] + one,
                           [("size", str(size)), ("files", "1")], plugin="null")
    if t.name not in ceiling_cmds:
        raise Unavailable("no --ceiling %s=CMD given" % t.name)
    return ExtraTarget(t.name + "-ceiling", ceiling_cmds[t.name].replace("{file}", "{mnt}"))


def client_path(mnt):
    """The file the clients use: mnt if the server mounted a file, else
    its first regular file."""
    if os.path.isfile(mnt):
        return mnt
    for n in sorted(os.listdir(mnt)):
        if os.path.isfile(os.path.join(mnt, n)):
            return os.path.join(mnt, n)
    raise Unavailable("no regular file in %s" % mnt)


def getattr_run(client, path, seconds, pid):
    """getattr_load on path for seconds: a sample (value: requests/s,
    cpu: server µs per request)."""
    if not os.access(client, os.X_OK):
        return {"error": "%s not built" % client}
    cpu0 = proc_cpu_seconds(pid)
    r = run_cmd([client, path, str(GETATTR_THREADS), str(seconds)], timeout=seconds * 4 + 60)
    cpu1 = proc_cpu_seconds(pid)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        return {"error": "getattr_load rc %d: %s" % (r.returncode, (r.stderr or r.stdout)[-300:])}
    if out["error"] or not out["calls"]:
        return {"error": "getattr_load: %s" % (out["error"] or "no call completed")}
    res = {"value": out["calls"] / out["seconds"], "requests": out["calls"],
           "wall_s": out["seconds"]}
    if cpu0 is not None and cpu1 is not None:
        res["server_cpu_s"] = cpu1 - cpu0
        res["cpu"] = (cpu1 - cpu0) / out["calls"] * 1e6
    return res


def measure(path, opts, workdir, pid):
    """Both metrics on path, the server being pid (None: no server)."""
    client = os.path.join(opts.fring, CLIENT)
    res = {"J12-getattr": getattr_run(client, path, opts.runtime, pid),
           "J12-read4k": run_fio(dict(READ_JOB, filename=os.path.basename(path)),
                                 os.path.dirname(path), opts.size_bytes, opts.runtime,
                                 workdir, pid)}
    return res


def run(t, opts, datadir, workdir):
    """J12 for target t: its ceiling server started, both metrics, the
    server stopped. Returns {metric: sample}."""
    try:
        srv = server_for(t, opts.ceiling, opts.size_bytes)
    except Unavailable as e:
        return {m[0]: {"error": str(e)} for m in METRICS}
    if srv is None:
        return measure(os.path.join(datadir, "read.0"), opts, workdir, None)
    srv.workdir = workdir
    mnt = os.path.join(workdir, "mnt-" + srv.name)
    file_mount = isinstance(srv, ExtraTarget) and "{file}" in opts.ceiling[t.name]
    if file_mount:
        open(mnt, "a").close()
    else:
        os.makedirs(mnt, exist_ok=True)
    try:
        where = srv.start(datadir, mnt, os.path.join(workdir, "server-%s.log" % srv.name))
        res = measure(client_path(where), opts, workdir, srv.pid)
    except Unavailable as e:
        return {m[0]: {"error": "server: %s" % e} for m in METRICS}
    finally:
        srv.stop()
    for r in res.values():
        r["server"] = srv.info
    return res


def table(targets, summary, fmt):
    """Markdown lines: per target and request, the rate, the server's CPU
    per request (µs), its busy share (rate x CPU), and a fring target's
    requests per server CPU second over those of the extra target named
    like it (fring-X against libfuse-X); none without J12."""
    mids = [m[0] for m in METRICS]
    if not any(m in summary for m in mids):
        return []
    L = ["## J12 the runtime's ceiling (no backing I/O)", "",
         "Medians over the rounds. µs/req is the server's CPU time per request; busy "
         "is rate x µs/req, the CPUs the server used (near its thread count: "
         "saturated; below: the clients were the limit, and µs/req is the figure). per core is requests per server CPU second, fring-X over libfuse-X "
         "(goal: 1.5x or more).", "",
         "| target | GETATTR req/s | µs/req | busy | per core vs libfuse | "
         "READ 4k IOPS | µs/req | busy | per core vs libfuse |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in targets:
        cells = []
        for mid in mids:
            e = summary.get(mid, {}).get(t.name, {})
            if "median" not in e:
                err = (e.get("errors") or ["–"])[0][:60].replace("|", "\\|")
                cells += [err, "–", "–", "–"]
                continue
            cpu = e.get("cpu")
            other = summary[mid].get("libfuse-" + t.name.split("-", 1)[-1], {}).get("cpu")
            cells += [fmt(e["median"]), fmt(cpu),
                      "%.2f" % (e["median"] * cpu / 1e6) if cpu else "–",
                      "%.2fx" % (other / cpu) if t.kind == "fring" and cpu and other else "–"]
        L.append("| %s | %s |" % (t.name, " | ".join(cells)))
    return L + [""]
