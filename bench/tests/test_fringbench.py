# SPDX-License-Identifier: MIT
"""The bench package without fio or root: every stored bench/run report
rebuilds from its results.json byte for byte (so the split and any change
to the report code keep the format), bench/RESULTS.md is what
bench/results/ gives, the statistics on known samples, run folder names,
every run folder's RUN.txt, the links of the bench's markdown, and every
script's --help (its imports)."""

import glob
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from fringbench import results, stored, summary  # noqa: E402
from fringbench.stats import metric_list, summarize  # noqa: E402
from fringbench.targets import Recorded  # noqa: E402

RUN_FOLDERS = sorted(os.path.dirname(p)
                     for p in glob.glob(os.path.join(results.RESULTS, "*", "results.json")))
# bench/run before each round started one target later (runs 1-4 and the
# first Intel Xeon run) described its rounds so
OLD_ROUNDS = "each round runs every target, each target every job)"
NEW_ROUNDS = "each round runs every target, each target every job, " \
             "each round starting one target later)"


def test_there_are_stored_runs():
    assert len(RUN_FOLDERS) >= 9


@pytest.mark.parametrize("folder", RUN_FOLDERS, ids=os.path.basename)
def test_stored_report_rebuilds(folder):
    with open(os.path.join(folder, "RESULTS.md")) as f:
        want = f.read()
    got = stored.report(stored.load(folder))
    if OLD_ROUNDS in want:
        got = got.replace(NEW_ROUNDS, OLD_ROUNDS)
    assert got == want


def test_results_md_is_generated():
    with open(summary.SUMMARY) as f:
        assert f.read() == summary.render()


def test_summary_of_known_samples():
    targets = [Recorded(dict(name=n, kind=k, what="", status="ok"))
               for n, k in (("raw", "raw"), ("t", "fring"))]
    samples = {"raw": {"J1": [{"value": 100.0}, {"value": 300.0}, {"value": 200.0}]},
               "t": {"J1": [{"value": 50.0, "cpu": 2.0}, {"error": "fio rc 1"},
                            {"value": 150.0, "cpu": 4.0}, {"value": 100.0, "cpu": 9.0}]}}
    s = summarize(samples, targets, metric_list(["J1"]))["J1"]
    assert s["raw"]["median"] == 200.0 and "cpu" not in s["raw"]
    assert s["t"] == {"n": 3, "errors": ["fio rc 1"], "median": 100.0, "min": 50.0,
                      "max": 150.0, "ratio": 0.5, "cpu": 4.0}


def test_machine_kinds_and_folder_names(tmp_path):
    assert results.machine_kind("Intel(R) Xeon(R) Processor") == "intel-xeon"
    assert results.machine_kind("AMD EPYC 7763 64-Core Processor") == "amd-epyc"
    assert results.machine_kind("QEMU TCG CPU version 2.5+") == "qemu-tcg"
    start = "2026-12-04 10:00:00 UTC"
    first = results.run_dir("AMD EPYC", start, root=str(tmp_path))
    assert os.path.basename(first) == "amd-epyc-2026-12-04"
    os.mkdir(first)
    assert os.path.basename(results.run_dir("AMD EPYC", start, root=str(tmp_path))) == \
        "amd-epyc-2026-12-04-2"
    assert os.path.basename(results.run_dir("AMD EPYC", start, "bufpool",
                                            root=str(tmp_path))) == \
        "amd-epyc-2026-12-04-bufpool"


@pytest.mark.parametrize("folder", sorted(glob.glob(os.path.join(results.RESULTS, "*", ""))),
                         ids=lambda f: os.path.basename(os.path.dirname(f)))
def test_run_folder_names_its_command_and_commit(folder):
    js = [p for p in glob.glob(os.path.join(folder, "*.json"))
          if os.path.basename(p) in summary.SCRIPTS]
    assert len(js) == 1, "one benchmark's JSON per run folder"
    with open(js[0]) as f:
        data = json.load(f)
    host = data.get("host")
    with open(os.path.join(folder, results.RUN_FILE)) as f:
        assert f.read() == results.run_text(
            shlex.split(host["command"]) if host else data["argv"],
            data["machine"]["fring_commit"], data["argv"] if host else None)
    script, report = summary.SCRIPTS[os.path.basename(js[0])]
    assert os.path.exists(os.path.join(folder, report))
    start = data["timing"]["start"] if script == "run" else data["start"]
    kind = results.machine_kind(data["machine"]["cpu_model"])
    assert os.path.basename(os.path.dirname(folder)).startswith(
        "%s-%s" % (kind, start[:10]))


def markdown_files():
    return [os.path.join(BENCH, "README.md"), summary.SUMMARY] + \
        sorted(glob.glob(os.path.join(results.RESULTS, "**", "*.md"), recursive=True))


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: os.path.relpath(p, BENCH))
def test_markdown_links_resolve(path):
    with open(path) as f:
        text = f.read()
    for target in re.findall(r"\]\(([^)#\s]+)\)", text):
        if "://" not in target:
            assert os.path.exists(os.path.join(os.path.dirname(path), target)), target


@pytest.mark.parametrize("script", ["run", "bufpool", "zerocopy", "bindings"])
def test_script_help(script):
    r = subprocess.run([sys.executable, os.path.join(BENCH, script), "--help"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: ")
