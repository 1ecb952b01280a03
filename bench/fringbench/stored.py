# SPDX-License-Identifier: MIT
"""A stored bench/run run read back from its results.json: its options,
targets, metrics and summary, and its report rebuilt from them (what the
unit test compares with the stored RESULTS.md)."""

import json
import os
from types import SimpleNamespace

from . import ceiling
from .cli import parse_args
from .report import markdown
from .stats import job_ids_of, metric_list, summarize
from .targets import Recorded


def load(folder):
    """The run in folder (results.json beside RESULTS.md and results.png)."""
    with open(os.path.join(folder, "results.json")) as f:
        data = json.load(f)
    if "options" in data:
        o = data["options"]
        opts = SimpleNamespace(quick=data["quick"], rounds=data["rounds"],
                               runtime=o["runtime"], size=o["size"],
                               meta_files=o["meta_files"],
                               tree_files=o.get("tree_files"), tarball=o.get("tarball"),
                               ceiling=o.get("ceiling"),
                               ceiling_servers=o.get("ceiling_servers",
                                                     ceiling.SERVERS_BEFORE))
    else:
        # runs from before the JSON kept its options: its command line
        opts = parse_args(data["argv"][1:])
    targets = [Recorded(t) for t in data["targets"]]
    metrics = metric_list(job_ids_of(data["samples"]))
    return SimpleNamespace(folder=folder, data=data, opts=opts, targets=targets,
                           metrics=metrics,
                           summary=summarize(data["samples"], targets, metrics))


def report(run):
    """The run's RESULTS.md as bench/run writes it."""
    png = os.path.join(run.folder, "results.png")
    return markdown(os.path.join(run.folder, "RESULTS.md"),
                    png if os.path.exists(png) else None, run.opts, run.data["argv"],
                    run.data["machine"], run.targets, run.metrics, run.summary,
                    run.data["timing"])
