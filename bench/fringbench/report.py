# SPDX-License-Identifier: MIT
"""bench/run's markdown report: the run's header, machine, targets, the
queue placement table and one table per metric. opts carries the run's
settings: quick, rounds, runtime (s), size (as given, e.g. "1G"),
meta_files."""

import os
import shlex

from . import ceiling, scaling, tree, workload
from .stats import LOWER_IS_BETTER

# What the default io_uring transport (placement auto) is held to, per
# metric: at least 0.97x the best fixed fring placement and at least
# fring-devfuse; J1 and J5 at least 1.5x libfuse-uring.
FIXED_PLACEMENTS = ("fring-uring-local", "fring-uring-q1")
PLACEMENT_VS_LIBFUSE = ("J1", "J5")


def fmt(v, unit=None):
    """A figure with 3 significant digits or more, thousands separated."""
    if v is None:
        return "–"
    if abs(v) >= 100:
        s = "{:,.0f}".format(v)
    elif abs(v) >= 10:
        s = "%.1f" % v
    elif abs(v) >= 0.01:
        s = "%.3f" % v
    else:
        s = "%.2g" % v
    return s + (" " + unit if unit else "")


def placement_table(targets, metrics, summary):
    """The default placement against the fixed ones, as markdown lines
    (none when the run has no fixed placement)."""
    names = {t.name for t in targets}
    if "fring-uring" not in names or not names & set(FIXED_PLACEMENTS):
        return []
    L = ["## Queue placement (the default against fixed placements, same run)", "",
         "fring-uring is the default (transport.placement auto); the fixed placements "
         "are `placement: local` (one thread per CPU, on its CPU) and `queues: 1` (one "
         "thread for every qid). Medians; a ratio is fring-uring / the other.", "",
         "| metric | fring-uring | best fixed | / best fixed (>= 0.97) | / fring-devfuse (>= 1.0) "
         "| / libfuse-uring (J1, J5 >= 1.5) |", "|---|---:|---:|---:|---:|---:|"]

    def med(name, mid):
        return summary[mid].get(name, {}).get("median")

    def ratio(a, b, need):
        if not a or not b:
            return "–"
        r = a / b
        return "%.3fx%s" % (r, "" if need is None else (" met" if r >= need else " **missed**"))

    for mid, _, _, _ in metrics:
        d = med("fring-uring", mid)
        fixed = [(med(n, mid), n) for n in FIXED_PLACEMENTS if med(n, mid)]
        best = max(fixed) if fixed else (None, "")
        lib = ratio(d, med("libfuse-uring", mid),
                    1.5 if mid in PLACEMENT_VS_LIBFUSE else None)
        L.append("| %s | %s | %s (%s) | %s | %s | %s |" % (
            mid, fmt(d), fmt(best[0]), best[1], ratio(d, best[0], 0.97),
            ratio(d, med("fring-devfuse", mid), 1.0), lib))
    return L + [""]


def workload_lines(opts, metrics):
    """The header's lines on J11's tarball and J12's servers (none for a
    run without them)."""
    L = []
    tb = getattr(opts, "tarball", None)
    if tb and any(m[0].startswith("J11-") for m in metrics):
        L.append("- real workload (J11): `%s`, %s MiB, %s entries" % (
            tb["name"], fmt(tb["bytes"] / (1 << 20)), fmt(tb["entries"])))
    if any(m[0].startswith("J12-") for m in metrics):
        L.append("- ceiling (J12): fring targets serve the `null` plugin %s%s" % (
            getattr(opts, "ceiling_servers", None) or ceiling.SERVERS, "".join("; %s: `%s`" % kv for kv in sorted((getattr(opts, "ceiling", None)
                                                        or {}).items()))))
    return L


def markdown(path, png, opts, argv, machine, targets, metrics, summary, timing):
    """The report that goes to path (the PNG's link is relative to it)."""
    L = []
    if opts.quick:
        L += ["# fring benchmark — SMOKE RUN (not a measurement)", "",
              "> **Smoke run (`--quick`)**: tiny sizes and %ds jobs, only to prove the "
              "driver works end to end. These numbers mean nothing; do not quote them." %
              opts.runtime, ""]
    else:
        L += ["# fring benchmark results", ""]
    L += ["- date: %s (%s)" % (timing["start"], "%.0f s" % timing["elapsed"]),
          "- command: `%s`" % " ".join(shlex.quote(a) for a in argv),
          "- rounds: %d, interleaved (each round runs every target, each target every job, "
          "each round starting one target later); "
          "table values are medians over rounds, with min–max" % opts.rounds,
          "- per-job runtime: %d s; fio file size: %s per job (fio jobs with 2 processes "
          "use 2 files); metadata job: %d files%s" % (
              opts.runtime, opts.size, opts.meta_files,
              "; large tree (J10): %d files in %d directories" % (opts.tree_files, tree.DIRS)
              if any(m[0].startswith("J10-") for m in metrics) else ""),
          *workload_lines(opts, metrics),
          "- load average before / after: %s / %s" % (timing["load_before"],
                                                      timing["load_after"]),
          ""]
    L += ["## Machine", "", "| | |", "|---|---|",
          "| kernel | %s (`%s`) |" % (machine["kernel"], machine["kernel_version"]),
          "| CPU | %s |" % machine["cpu_model"],
          "| cores | %s (usable by the driver: %s) |" % (machine["cores"], machine["cores_usable"]),
          "| memory | %s GiB |" % machine["memory_gib"],
          "| fuse `enable_uring` | %s |" % machine["enable_uring"],
          "| fuse `max_pages_limit` | %s |" % machine["max_pages_limit"],
          "| other fuse parameters | %s |" % ", ".join(
              "%s=%s" % kv for kv in machine["fuse_params"].items()
              if kv[0] not in ("enable_uring", "max_pages_limit")),
          "| backing store | tmpfs mounted by the driver (`mount -t tmpfs`) |",
          "| fio | %s |" % machine["fio"],
          "| fring | build `%s`, commit %s |" % (machine["fring_build"], machine["fring_commit"]),
          ""]
    L += ["## Targets", "", "| target | what | status | server |", "|---|---|---|---|"]
    for t in targets:
        srv = ""
        if t.info:
            srv = "threads %s, io_uring fds %s" % (t.info.get("threads", "?"),
                                                  t.info.get("io_uring_fds", "?"))
        L.append("| %s | %s | %s | %s |" % (t.name, t.describe().replace("|", "\\|"),
                                            t.status.replace("|", "\\|"), srv))
    L += ["", "Server CPU is utime+stime of the server process (all its threads, plus "
          "any live child processes) read from /proc/PID/stat before and after each job (10 ms resolution), divided by "
          "the work done: seconds per 1000 I/Os for 4k jobs, per GiB moved for 1M jobs, "
          "per 1000 operations (system calls) for the metadata phases. The raw directory "
          "has no server. Ratios are target median / raw median: higher is better, "
          "1.0 is the raw tmpfs.", ""]
    if png:
        L += ["![ratio to the raw directory per job and target](%s)" %
              os.path.relpath(png, os.path.dirname(os.path.abspath(path))), ""]
    L += placement_table(targets, metrics, summary)
    spng = os.path.join(os.path.dirname(png), scaling.PNG) if png else None
    L += scaling.table(targets, summary, fmt, os.path.relpath(
        spng, os.path.dirname(os.path.abspath(path))) if spng and os.path.exists(spng) else None)
    L += workload.table(targets, summary, fmt)
    L += ceiling.table(targets, summary, fmt)
    L += ["## Results", ""]
    for mid, title, unit, cpu_unit in metrics:
        L += ["### %s — %s" % (mid, title), "",
              "| target | median %s | min – max | %s | server CPU (%s) |" % (
                  unit, "raw / target" if mid in LOWER_IS_BETTER else "ratio to raw",
                  cpu_unit),
              "|---|---:|---:|---:|---:|"]
        for t in targets:
            e = summary[mid].get(t.name, {})
            if t.status != "ok" and not e.get("n"):
                L.append("| %s | unavailable | | | |" % t.name)
                continue
            if not e.get("n"):
                L.append("| %s | failed: %s | | | |" % (
                    t.name, (e.get("errors") or ["no data"])[0].replace("|", "\\|")))
                continue
            note = "" if e["n"] == opts.rounds else " (%d of %d rounds)" % (e["n"], opts.rounds)
            L.append("| %s | %s%s | %s – %s | %s | %s |" % (
                t.name, fmt(e["median"]), note, fmt(e["min"]), fmt(e["max"]),
                "%.2f×" % e["ratio"] if "ratio" in e else "–",
                fmt(e.get("cpu")) if t.kind != "raw" else "–"))
        L.append("")
    return "\n".join(L)


def write_markdown(path, png, opts, argv, machine, targets, metrics, summary, timing):
    with open(path, "w") as f:
        f.write(markdown(path, png, opts, argv, machine, targets, metrics, summary, timing))
