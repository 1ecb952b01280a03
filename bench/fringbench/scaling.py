# SPDX-License-Identifier: MIT
"""J9, scaling with clients: 4k random reads with psync from 1, 2, 4, 8,
16 and 32 client threads sharing the two read files, IOPS and server CPU
per 1000 I/Os at each point (one metric per point, J9-N), a table with a
row per target and a curve per target (scaling.png beside the report)."""

from .jobs import run_fio

CLIENTS = (1, 2, 4, 8, 16, 32)
PNG = "scaling.png"  # beside bench/run's results.png


def job(n):
    return dict(id="J9-%d" % n, title="scaling: 4k random read, psync, %d job%s, direct" %
                (n, "" if n == 1 else "s"),
                rw="randread", bs="4k", ioengine="psync", iodepth=1, numjobs=n,
                files="read", shared=2, unit="IOPS", cpu="kio")


SCALE_JOBS = [job(n) for n in CLIENTS]
METRICS = [(j["id"], j["title"], j["unit"], j["cpu"]) for j in SCALE_JOBS]


def run(directory, size, runtime, workdir, pid):
    """Every point, fewest clients first: {metric: sample}."""
    return {j["id"]: run_fio(j, directory, size, runtime, workdir, pid) for j in SCALE_JOBS}


def points(summary, name):
    """(clients, median IOPS, median CPU) of target name's measured points."""
    out = []
    for n in CLIENTS:
        e = summary.get("J9-%d" % n, {}).get(name, {})
        if "median" in e:
            out.append((n, e["median"], e.get("cpu")))
    return out


def table(targets, summary, fmt, png=None):
    """Markdown lines: IOPS (server CPU s/1k I/O) per target and point,
    and whether adding clients ever lowered the total, then png (the
    curves' path relative to the report) if any; none without J9."""
    if "J9-1" not in summary:
        return []
    L = ["## J9 scaling with clients (4k random read, psync)", "",
         "Median IOPS over the rounds, server CPU per 1000 I/Os in brackets; "
         "\"drops\" lists the points where more clients gave a lower total.", "",
         "| target | %s | drops |" % " | ".join("%d" % n for n in CLIENTS),
         "|---|" + "---:|" * len(CLIENTS) + "---|"]
    for t in targets:
        pts = {n: (v, c) for n, v, c in points(summary, t.name)}
        if not pts:
            continue
        cells = ["%s (%s)" % (fmt(pts[n][0]), fmt(pts[n][1])) if n in pts else "–"
                 for n in CLIENTS]
        ns = sorted(pts)
        drops = ["%d→%d" % (a, b) for a, b in zip(ns, ns[1:]) if pts[b][0] < pts[a][0]]
        L.append("| %s | %s | %s |" % (t.name, " | ".join(cells), ", ".join(drops) or "none"))
    L.append("")
    if png:
        L += ["![J9: IOPS against clients, a curve per target](%s)" % png, ""]
    return L


def write_png(path, summary, targets, title):
    """The curve per target (needs matplotlib); False without J9 data."""
    curves = [(t.name, points(summary, t.name)) for t in targets]
    curves = [(n, p) for n, p in curves if p]
    if not curves:
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for name, pts in curves:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xticks(CLIENTS)
    ax.set_xticklabels([str(n) for n in CLIENTS])
    ax.set_xlabel("fio psync client threads")
    # the raw tmpfs is ten times any FUSE server: a log axis keeps both
    ax.set_yscale("log")
    ax.set_ylabel("4k random read IOPS (median over rounds, log scale)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True
