# SPDX-License-Identifier: MIT
"""bench/RESULTS.md, generated from bench/results/: per machine kind the
latest run of each benchmark with its headline table, every figure linked
to its run folder, then the list of every run. bench/run and the side
scripts regenerate it when they write a run folder there;
`python3 -m fringbench.summary` (in bench/) does it by hand, --check
compares instead."""

import glob
import json
import os
import statistics
import sys

from . import BENCH, ceiling, workload
from .report import fmt, placement_table
from .results import RESULTS, machine_kind
from .stats import job_ids_of, metric_list, summarize
from .targets import Recorded

SUMMARY = os.path.join(BENCH, "RESULTS.md")
# the JSON each benchmark writes -> (benchmark, its report)
SCRIPTS = {"results.json": ("run", "RESULTS.md"), "bufpool.json": ("bufpool", "BUFPOOL.md"),
           "zerocopy.json": ("zerocopy", "ZEROCOPY.md"),
           "bindings.json": ("bindings", "BINDINGS.md"), "s3.json": ("s3", "S3.md")}


def runs(root=RESULTS):
    """Every stored run: a dict with its folder, benchmark, machine kind,
    start ("YYYY-MM-DD HH:MM:SS TZ"), report and JSON data."""
    out = []
    for path in sorted(glob.glob(os.path.join(root, "*", "*.json"))):
        if os.path.basename(path) not in SCRIPTS:
            continue
        script, report = SCRIPTS[os.path.basename(path)]
        with open(path) as f:
            data = json.load(f)
        m = data["machine"]
        out.append(dict(folder=os.path.basename(os.path.dirname(path)), script=script,
                        report=report, data=data, kind=machine_kind(m["cpu_model"]),
                        start=data["timing"]["start"] if script == "run" else data["start"],
                        commit=m["fring_commit"].split()[0],
                        variant=data.get("backing", "") or stats_variant(script, data)))
    return out


# bench/run's jobs that a run of their own may measure, beside the latest
# full run: id -> (the variant's words, its headline table)
SIDE_JOBS = {"J11": ("real workload", workload.table), "J12": ("runtime ceiling", ceiling.table)}


def stats_variant(script, data):
    """A bench/run pricing the live statistics (--fring-stats-off), or
    measuring only SIDE_JOBS: a variant of its own, so it stands beside
    the latest full run."""
    if script == "run" and any(t["name"].endswith("-nostats") for t in data["targets"]):
        return "statistics on/off"
    jobs = job_ids_of(data["samples"]) if script == "run" else []
    if jobs and set(jobs) <= set(SIDE_JOBS):
        # a run of /dev/fuse targets alone stands beside one with io_uring
        fr = [t["name"] for t in data["targets"] if t.get("kind") == "fring"]
        only = ", /dev/fuse only" if fr and not any("uring" in n for n in fr) else ""
        return " and ".join(SIDE_JOBS[j][0] for j in jobs) + only
    return ""


def link(r):
    return "[%s](results/%s/%s)" % (r["folder"], r["folder"], r["report"])


def ratio(a, b):
    return "%.3fx" % (a / b) if a is not None and b else "–"


def median_of(values):
    values = list(values)
    return statistics.median(values) if values else None


def stats_headline(r):
    """Each job's median with statistics on and off, and on / off."""
    d = r["data"]
    L = ["Live statistics on (the default) against `stats: { enabled: false }`, "
         "medians of %d rounds:" % d["rounds"], "",
         "| metric | transport | statistics on | off | on / off |", "|---|---|---:|---:|---:|"]
    for mid, row in d["summary"].items():
        for tr in ("uring", "devfuse"):
            on, off = row.get("fring-" + tr, {}), row.get("fring-%s-nostats" % tr, {})
            if "median" in on and "median" in off:
                L.append("| %s | %s | %s | %s | %s |" % (mid, tr, fmt(on["median"]),
                                                       fmt(off["median"]),
                                                       ratio(on["median"], off["median"])))
    return L


def side_headline(r, targets, jobs, summary):
    """The headline tables of a run of SIDE_JOBS only."""
    L = ["Measured in %d interleaved rounds:" % r["data"]["rounds"], ""]
    for j in jobs:
        L += SIDE_JOBS[j][1](targets, summary, fmt)[2:]
    return L[:-1]


def run_headline(r):
    d = r["data"]
    if r["variant"] == "statistics on/off":
        return stats_headline(r)
    targets = [Recorded(t) for t in d["targets"]]
    jobs = job_ids_of(d["samples"])
    metrics = metric_list(jobs)
    if set(jobs) <= set(SIDE_JOBS):
        return side_headline(r, targets, jobs, summarize(d["samples"], targets, metrics))
    L = placement_table(targets, metrics, summarize(d["samples"], targets, metrics))[4:]
    if not L:
        return ["(no fixed placement in this run: see its report)"]
    return ["The default placement (`fring-uring`, placement auto) against the fixed "
            "ones, fring-devfuse and libfuse-uring, medians of %d rounds:" % d["rounds"],
            ""] + L[:-1]


def zerocopy_headline(r):
    d = r["data"]

    def med(key, job):
        return median_of(s["jobs"][job]["value"] for s in d["samples"]
                         if s["server"] == key and "value" in s["jobs"].get(job, {}))
    L = ["On %s, medians of %d rounds; the copy path is `pool-reg` (a registered "
         "pool), zero-copy `zc`:" % (d.get("backing", "tmpfs"), d["rounds"]), "",
         "| job | copy path | zero-copy | zc / copy | zc / libfuse |",
         "|---|---:|---:|---:|---:|"]
    for job in d["jobs"]:
        copy, zc = med("pool-reg", job["id"]), med("zc", job["id"])
        L.append("| %s %s (%s) | %s | %s | %s | %s |" % (
            job["id"], job["title"], job["unit"], fmt(copy), fmt(zc), ratio(zc, copy),
            ratio(zc, med("libfuse", job["id"]))))
    return L


def bufpool_headline(r):
    d = r["data"]

    def med(config, job):
        return median_of(s["jobs"][job]["value"] for s in d["samples"] if s["config"] == config)
    L = ["A per-entry buffers, B a pool a quarter of that size, medians of %d rounds:"
         % d["rounds"], "", "| job | A | B | B/A |", "|---|---:|---:|---:|"]
    for job in d["jobs"]:
        a, b = med("A", job["id"]), med("B", job["id"])
        L.append("| %s (%s) | %s | %s | %s |" % (job["title"], job["unit"], fmt(a), fmt(b),
                                                 ratio(b, a)))
    return L


def bindings_headline(r):
    d = r["data"]
    jobs = sorted({c["job"] for c in d["comparisons"]})
    by = {}
    for c in d["comparisons"]:
        by.setdefault((c["target"], c["base"]), {})[c["job"]] = c["ratio"]
    L = ["Each binding's median over C's, medians of %d rounds:" % d["rounds"], "",
         "| target / C | %s |" % " | ".join(jobs), "|---|" + "---:|" * len(jobs)]
    for (target, base), rs in by.items():
        L.append("| %s / %s | %s |" % (target, base, " | ".join(
            "%.3fx" % rs[j] if j in rs else "–" for j in jobs)))
    return L


def s3_headline(r):
    d = r["data"]
    names = [t["name"] for t in d["targets"]]
    L = ["plugins/s3 (`fring-s3`) against s3fs and rclone mount on one Ceph gateway, "
         "medians of %d rounds:" % d["rounds"], "",
         "| job | %s | fring / s3fs | fring / rclone |" % " | ".join(names),
         "|---|" + "---:|" * (len(names) + 2)]
    for job in d["jobs"]:
        s = d["summary"][job["id"]]
        med = {t: s.get(t, {}).get("median") for t in names}
        L.append("| %s %s (%s) | %s | %s | %s |" % (
            job["id"], job["title"], job["unit"], " | ".join(fmt(med[t]) for t in names),
            ratio(med.get("fring-s3"), med.get("s3fs")),
            ratio(med.get("fring-s3"), med.get("rclone"))))
    return L


HEADLINES = {"run": ("bench/run", run_headline),
             "zerocopy": ("bench/zerocopy", zerocopy_headline),
             "bufpool": ("bench/bufpool", bufpool_headline),
             "bindings": ("bench/bindings", bindings_headline),
             "s3": ("bench/s3", s3_headline)}


def render(root=RESULTS):
    """RESULTS.md's text."""
    all_runs = runs(root)
    L = ["# fring benchmark results", "",
         "Generated from `bench/results/` (`python3 -m fringbench.summary` in `bench/`; "
         "the benchmarks regenerate it when they write a run folder there). Per machine "
         "kind, the latest run of each benchmark and its headline figures; each run's "
         "folder holds its full report, its JSON (every sample), its chart and `RUN.txt` "
         "(the exact command and the fring commit it measured). What each run showed, "
         "as written when it was taken: [results/HISTORY.md](results/HISTORY.md). "
         "Only full runs (no `--quick`) belong here.", ""]
    for kind in sorted({r["kind"] for r in all_runs}):
        L += ["## %s" % kind, ""]
        if kind == "qemu-tcg":
            L += ["Emulated (QEMU TCG guest, Linux 7.3, `tests/vm/run.sh`): absolute "
                  "figures mean nothing, only the ratios within one run.", ""]
        latest = {}
        for r in all_runs:
            if r["kind"] == kind and not r["data"].get("quick"):
                key = (r["script"], r["variant"])
                if key not in latest or r["start"] > latest[key]["start"]:
                    latest[key] = r
        for key in sorted(latest, key=lambda k: (list(HEADLINES).index(k[0]), k[1])):
            r = latest[key]
            name, headline = HEADLINES[r["script"]]
            L += ["### %s%s: %s" % (name, " (%s)" % r["variant"] if r["variant"] else "",
                                    link(r)), "",
                  "%s, fring %s, `%s`." % (r["start"], r["commit"], machine_line(r)), ""]
            L += headline(r) + [""]
    L += ["## Every run", "", "| run | benchmark | started | fring |", "|---|---|---|---|"]
    for r in sorted(all_runs, key=lambda r: r["start"]):
        L.append("| %s | %s | %s | %s |" % (link(r), HEADLINES[r["script"]][0], r["start"],
                                            r["commit"]))
    return "\n".join(L) + "\n"


def machine_line(r):
    m = r["data"]["machine"]
    cores = m.get("cores") or m.get("vcpus")
    return "%s, %s CPUs, kernel %s" % (m["cpu_model"], cores, m["kernel"])


def update(folder):
    """Regenerate RESULTS.md if folder is a run folder under bench/results/."""
    if os.path.dirname(os.path.abspath(folder)) == RESULTS:
        with open(SUMMARY, "w") as f:
            f.write(render())
        return True
    return False


def main(argv):
    text = render()
    if argv[1:] == ["--check"]:
        with open(SUMMARY) as f:
            same = f.read() == text
        if not same:
            print("bench/RESULTS.md is not what bench/results/ gives: run "
                  "`python3 -m fringbench.summary` in bench/", file=sys.stderr)
        return 0 if same else 1
    with open(SUMMARY, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
