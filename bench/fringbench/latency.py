# SPDX-License-Identifier: MIT
"""J8, the latency of one request: 4k random reads and 4k random writes
with psync at depth 1 from one client, reported as fio's completion
latency percentiles (clat p50, p99, p99.9, in microseconds), one metric
per direction and percentile. Lower is better: their ratio to raw is
raw / target, so that higher stays better in the tables and the chart."""

from .jobs import CLAT_PERCENTILES, run_fio

LAT_JOBS = [
    dict(id="J8-read", title="4k random read, psync, 1 job, depth 1, direct",
         rw="randread", bs="4k", ioengine="psync", iodepth=1, numjobs=1,
         files="read", unit="IOPS", cpu="kio"),
    dict(id="J8-write", title="4k random write, psync, 1 job, depth 1, direct",
         rw="randwrite", bs="4k", ioengine="psync", iodepth=1, numjobs=1,
         files="write", unit="IOPS", cpu="kio"),
]
METRICS = [("%s-%s" % (j["id"], p), "latency: %s, clat %s" % (j["title"], p), "µs", "kio")
           for j in LAT_JOBS for p, _ in CLAT_PERCENTILES]
LOWER_IS_BETTER = {m[0] for m in METRICS}


def run(directory, size, runtime, workdir, pid):
    """Both J8 jobs: {metric: sample}, one sample per percentile whose
    value is that percentile (µs) and whose cpu is the job's server CPU
    per 1000 I/Os; a failed job gives its error to each of its metrics."""
    out = {}
    for job in LAT_JOBS:
        res = run_fio(job, directory, size, runtime, workdir, pid)
        for p, _ in CLAT_PERCENTILES:
            mid = "%s-%s" % (job["id"], p)
            if "error" in res:
                out[mid] = {"error": res["error"]}
            elif p not in res["clat_us"]:
                out[mid] = {"error": "fio gave no clat %s" % p}
            else:
                out[mid] = dict(res, value=res["clat_us"][p])
    return out
