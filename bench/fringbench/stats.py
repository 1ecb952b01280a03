# SPDX-License-Identifier: MIT
"""Statistics over rounds: the metrics of a run and, per metric and
target, the median, min, max, the ratio to the raw directory's median and
the median server CPU (in the metric's CPU unit). A latency's or a
duration's ratio is raw / target, so that a higher ratio is better for
every metric."""

import statistics

from . import ceiling, latency, scaling, tree, workload
from .jobs import CPU_UNITS, FIO_JOBS, META_METRICS

# the jobs of more than one metric, each metric's id starting "JOB-"
MULTI = (("J8", latency.METRICS), ("J9", scaling.METRICS), ("J10", tree.METRICS),
         ("J11", workload.METRICS), ("J12", ceiling.METRICS))
# the metrics where less is better (µs, seconds)
LOWER_IS_BETTER = latency.LOWER_IS_BETTER | workload.LOWER_IS_BETTER


def metric_list(job_ids):
    """(metric id, title, unit, CPU unit) of each metric the jobs give."""
    out = []
    for job in FIO_JOBS:
        if job["id"] in job_ids:
            out.append((job["id"], job["title"], job["unit"], CPU_UNITS[job["cpu"]]))
    if "J6" in job_ids:
        for mid, title, unit in META_METRICS:
            out.append((mid, "metadata: " + title, unit, CPU_UNITS["kop"]))
    for jid, metrics in MULTI:
        if jid in job_ids:
            out += [(mid, title, unit, CPU_UNITS[cpu]) for mid, title, unit, cpu in metrics]
    return out


def job_ids_of(samples):
    """The job ids a stored run measured (its samples' metric ids)."""
    mids = {m for by in samples.values() for m in by}
    return [j for j in [job["id"] for job in FIO_JOBS] + ["J6"] + [m[0] for m in MULTI]
            if j in mids or any(m.startswith(j + "-") for m in mids)]


def summarize(samples, targets, metrics):
    """samples[target][metric] = [per-round dict] -> summary table rows."""
    summary = {}
    for mid, _, _, _ in metrics:
        raw = [s["value"] for s in samples.get("raw", {}).get(mid, []) if "value" in s]
        raw_med = statistics.median(raw) if raw else None
        for t in targets:
            rows = samples.get(t.name, {}).get(mid, [])
            vals = [s["value"] for s in rows if "value" in s]
            cpus = [s["cpu"] for s in rows if "cpu" in s]
            errs = [s["error"] for s in rows if "error" in s]
            e = {"n": len(vals), "errors": errs}
            if vals:
                e["median"] = statistics.median(vals)
                e["min"], e["max"] = min(vals), max(vals)
                if raw_med and mid in LOWER_IS_BETTER:
                    e["ratio"] = raw_med / e["median"]
                elif raw_med:
                    e["ratio"] = e["median"] / raw_med
            if cpus:
                e["cpu"] = statistics.median(cpus)
            summary.setdefault(mid, {})[t.name] = e
    return summary
