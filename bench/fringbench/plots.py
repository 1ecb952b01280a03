# SPDX-License-Identifier: MIT
"""bench/run's bar chart: each target's median over the raw directory's,
per metric (needs matplotlib)."""


def write_png(path, summary, targets, metrics, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    shown = [t for t in targets if t.kind != "raw" and any(
        "ratio" in summary[m[0]].get(t.name, {}) for m in metrics)]
    mids = [m[0] for m in metrics]
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(mids) + 3), 5.2), dpi=120)
    width = 0.8 / max(1, len(shown))
    for i, t in enumerate(shown):
        xs, ys = [], []
        for k, mid in enumerate(mids):
            r = summary[mid].get(t.name, {}).get("ratio")
            if r is not None:
                xs.append(k - 0.4 + width * (i + 0.5))
                ys.append(r)
        ax.bar(xs, ys, width, label=t.name)
        for x, y in zip(xs, ys):
            ax.text(x, y, "%.2f" % y, ha="center", va="bottom", fontsize=7, rotation=90)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="raw tmpfs = 1.0")
    ax.set_xticks(range(len(mids)))
    ax.set_xticklabels(mids, rotation=0, fontsize=8)
    ax.set_ylabel("median / raw-directory median (higher is better)")
    ax.set_title(title, fontsize=10)
    ratios = [summary[m][t.name]["ratio"] for m in mids for t in shown
              if summary[m].get(t.name, {}).get("ratio")]
    top, low = max([1.0] + ratios), min([1.0] + ratios)
    if low < 0.1:
        # FUSE can be orders of magnitude below tmpfs: a log axis keeps the
        # small bars readable
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
            lambda v, _: "%g" % v))
        ax.set_ylim(low / 2, top * 3)
        ax.set_ylabel("median / raw-directory median (log scale, higher is better)")
    else:
        ax.set_ylim(0, top * 1.25)
    missing = [t.name for t in targets if t.kind != "raw" and t not in shown]
    if missing:
        fig.text(0.01, 0.01, "no data (unavailable): " + ", ".join(missing), fontsize=7)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
