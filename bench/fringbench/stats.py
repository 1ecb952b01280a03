# SPDX-License-Identifier: MIT
"""Statistics over rounds: the metrics of a run and, per metric and
target, the median, min, max, the ratio to the raw directory's median and
the median server CPU (in the metric's CPU unit)."""

import statistics

from .jobs import CPU_UNITS, FIO_JOBS, META_METRICS


def metric_list(job_ids):
    """(metric id, title, unit, CPU unit) of each metric the jobs give."""
    out = []
    for job in FIO_JOBS:
        if job["id"] in job_ids:
            out.append((job["id"], job["title"], job["unit"], CPU_UNITS[job["cpu"]]))
    if "J6" in job_ids:
        for mid, title, unit in META_METRICS:
            out.append((mid, "metadata: " + title, unit, CPU_UNITS["kop"]))
    return out


def job_ids_of(samples):
    """The job ids a stored run measured (its samples' metric ids)."""
    mids = {m for by in samples.values() for m in by}
    return [j for j in [job["id"] for job in FIO_JOBS] + ["J6"]
            if j in mids or (j == "J6" and any(m.startswith("J6-") for m in mids))]


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
                if raw_med:
                    e["ratio"] = e["median"] / raw_med
            if cpus:
                e["cpu"] = statistics.median(cpus)
            summary.setdefault(mid, {})[t.name] = e
    return summary
