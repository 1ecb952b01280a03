# SPDX-License-Identifier: MIT
"""The bench package without root: every stored bench/run report
rebuilds from its results.json byte for byte (so the split and any change
to the report code keep the format), bench/RESULTS.md is what
bench/results/ gives, the statistics on known samples, run folder names,
every run folder's RUN.txt, the links of the bench's markdown, and every
script's --help (its imports); J8's percentiles read from a real fio run
(fio is a test dependency, tests/setup.sh), J10 on a temp tree, and the
J8-J10 metrics, ratios and J9 table."""

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


@pytest.mark.parametrize("script", ["run", "bufpool", "zerocopy", "bindings", "s3"])
def test_script_help(script):
    r = subprocess.run([sys.executable, os.path.join(BENCH, script), "--help"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: ")


def test_j8_latency_from_real_fio(tmp_path):
    """J8 on a real fio run (1 s per direction on 1 MiB files in tmp_path):
    six metrics, each a clat percentile in µs with the server CPU beside
    it (this process stands in as the server: its CPU is read, not faked)."""
    from fringbench import jobs, latency
    d = str(tmp_path)
    jobs.layout_files(d, 1 << 20, d)
    got = latency.run(d, 1 << 20, 1, d, os.getpid())
    assert sorted(got) == sorted(m[0] for m in latency.METRICS)
    for side in ("J8-read", "J8-write"):
        p = [got["%s-%s" % (side, q)] for q in ("p50", "p99", "p99.9")]
        assert all("error" not in s for s in p), p
        assert 0 < p[0]["value"] <= p[1]["value"] <= p[2]["value"]
        assert p[0]["total_ios"] > 0 and "cpu" in p[0]
        assert p[0]["value"] == p[0]["clat_us"]["p50"]


def test_j10_tree_phases(tmp_path):
    from fringbench import tree
    drops = []
    d = str(tmp_path)
    got = tree.run(d, d, 450, "t", os.getpid(), dirs=7, drop=lambda: drops.append(1))
    assert drops == [1]
    assert [m[0] for m in tree.METRICS] == list(got)
    for mid, r in got.items():
        assert r["count"] == 450 and r["value"] > 0, (mid, r)
    assert os.listdir(d) == []


def test_j10_phase_failure_says_how_far(tmp_path):
    from fringbench import tree
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    with pytest.raises(tree.PhaseFailed, match=r"^after 2: .*File exists"):
        tree.each([a, b, a], os.mkdir)


def test_new_jobs_metrics_and_ratios():
    """J8, J9 and J10 name their metrics, a stored run's samples give
    their job ids back, and a latency's ratio is raw / target."""
    from fringbench import scaling
    from fringbench.report import fmt
    from fringbench.stats import job_ids_of
    mids = [m[0] for m in metric_list(["J8", "J9", "J10"])]
    assert mids[:3] == ["J8-read-p50", "J8-read-p99", "J8-read-p99.9"]
    assert "J9-1" in mids and "J9-32" in mids and mids[-1] == "J10-unlink"
    assert job_ids_of({"t": {m: [] for m in mids + ["J1"]}}) == ["J1", "J8", "J9", "J10"]
    targets = [Recorded(dict(name=n, kind=k, what="", status="ok"))
               for n, k in (("raw", "raw"), ("t", "fring"))]
    samples = {"raw": {"J8-read-p50": [{"value": 1.0}], "J9-1": [{"value": 100.0}],
                       "J9-2": [{"value": 200.0}]},
               "t": {"J8-read-p50": [{"value": 4.0, "cpu": 1.0}],
                     "J9-1": [{"value": 50.0, "cpu": 2.0}],
                     "J9-2": [{"value": 40.0, "cpu": 3.0}]}}
    s = summarize(samples, targets, metric_list(["J8", "J9"]))
    assert s["J8-read-p50"]["t"]["ratio"] == 0.25
    assert s["J9-2"]["t"]["ratio"] == 0.2
    rows = scaling.table(targets, s, fmt)
    assert "| t | 50.0 (2.000) | 40.0 (3.000) | – | – | – | – | 1→2 |" in rows
    assert "| raw | 100 (–) | 200 (–) | – | – | – | – | none |" in rows


def test_j11_workload_phases(tmp_path):
    """J11 on a small tarball: five phases timed, find's and grep's
    figures read, a drop before every phase after the untar, nothing
    left behind."""
    import tarfile
    from fringbench import workload
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.c").write_text("x\n%s(f);\n%s(g);\n" % ((workload.GREP_STRING,) * 2))
    (src / "sub" / "b.txt").write_text("nothing here\n")
    tar = str(tmp_path / "t.tar")
    with tarfile.open(tar, "w") as tf:
        tf.add(str(src), arcname="src")
    d = tmp_path / "mnt"
    d.mkdir()
    drops = []
    got = workload.run(str(d), str(d), tar, "t", os.getpid(), drop=lambda: drops.append(1))
    assert list(got) == [m[0] for m in workload.METRICS] and len(drops) == 4
    assert all("error" not in r and r["value"] > 0 for r in got.values()), got
    assert got["J11-find"]["entries"] == 5  # the root, src, src/sub and two files
    assert got["J11-grep"]["matches"] == 2 and got["J11-grep"]["files"] == 2
    assert got["J11-du"]["du_kib"] > 0
    assert os.listdir(str(d)) == []


def test_j11_failed_phase_stops_the_rest(tmp_path):
    from fringbench import workload
    got = workload.run(str(tmp_path), str(tmp_path), str(tmp_path / "missing.tar"), "t",
                       None, drop=lambda: None)
    assert got["J11-untar"]["error"].startswith("after 0 entries: untar rc 2: ")
    assert got["J11-rm"] == {"error": "not run: untar failed"}
    assert os.listdir(str(tmp_path)) == []


def test_j12_client_path_and_getattr_figures(tmp_path):
    """J12's client file (the mounted file, or a directory's first
    regular file) and getattr_load's JSON line read into a sample, with
    a stand-in client script."""
    from fringbench import ceiling
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f1").write_text("")
    (tmp_path / "d" / "a").mkdir()
    assert ceiling.client_path(str(tmp_path / "d")) == str(tmp_path / "d" / "f1")
    assert ceiling.client_path(str(tmp_path / "d" / "f1")) == str(tmp_path / "d" / "f1")
    fake = tmp_path / "getattr_load"
    fake.write_text('#!/bin/sh\necho \'{"calls": 5000, "seconds": 0.5, "threads": %d, '
                    '"error": null}\'\n' % ceiling.GETATTR_THREADS)
    fake.chmod(0o755)
    got = ceiling.getattr_run(str(fake), "/", 1, os.getpid())
    assert got["value"] == 10000.0 and got["requests"] == 5000
    assert got["cpu"] == got["server_cpu_s"] / 5000 * 1e6
    fake.write_text('#!/bin/sh\necho \'{"calls": 0, "seconds": 0.1, "threads": 8, '
                    '"error": "Permission denied"}\'\nexit 1\n')
    assert ceiling.getattr_run(str(fake), "/", 1, None) == {
        "error": "getattr_load: Permission denied"}


def test_j11_j12_tables_and_ratios():
    """J11's seconds are lower-is-better (raw / target), its table names
    the fastest FUSE target per phase; J12's table gives fring-X's
    requests per server CPU second over libfuse-X's."""
    from fringbench import ceiling, workload
    from fringbench.report import fmt
    targets = [Recorded(dict(name=n, kind=k, what="", status="ok"))
               for n, k in (("raw", "raw"), ("fring-uring", "fring"),
                            ("libfuse-uring", "extra"))]
    samples = {"raw": {"J11-untar": [{"value": 2.0}], "J12-getattr": [{"value": 1e6}]},
               "fring-uring": {"J11-untar": [{"value": 8.0, "cpu": 3.0}],
                               "J12-getattr": [{"value": 2e5, "cpu": 2.0}]},
               "libfuse-uring": {"J11-untar": [{"error": "untar rc 2: EBADF"}],
                                 "J12-getattr": [{"value": 1e5, "cpu": 3.0}]}}
    s = summarize(samples, targets, metric_list(["J11", "J12"]))
    assert s["J11-untar"]["fring-uring"]["ratio"] == 0.25
    rows = workload.table(targets, s, fmt)
    assert "| fring-uring | 8.000 (3.000) | – | – | – | – |" in rows
    assert "| libfuse-uring | failed: untar rc 2: EBADF | – | – | – | – |" in rows
    assert "| fastest FUSE target | fring-uring | – | – | – | – |" in rows
    rows = ceiling.table(targets, s, fmt)
    assert "| fring-uring | 200,000 | 2.000 | 0.40 | 1.50x | – | – | – | – |" in rows
    assert "| libfuse-uring | 100,000 | 3.000 | 0.30 | – | – | – | – | – |" in rows


def test_side_jobs_run_is_a_variant():
    data = {"targets": [{"name": "raw"}], "samples": {"raw": {"J11-du": [], "J12-read4k": []}}}
    assert summary.stats_variant("run", data) == "real workload and runtime ceiling"
    data["targets"].append({"name": "fring-devfuse", "kind": "fring"})
    assert summary.stats_variant("run", data) == \
        "real workload and runtime ceiling, /dev/fuse only"
    data["targets"].append({"name": "fring-uring", "kind": "fring"})
    assert summary.stats_variant("run", data) == "real workload and runtime ceiling"
    data["samples"]["raw"]["J1"] = []
    assert summary.stats_variant("run", data) == ""


def test_ceiling_option_names_an_extra_target():
    from fringbench.cli import parse_args
    a = parse_args(["--extra", "lib=srv {src} {mnt}", "--ceiling", "lib=null -f {file}"])
    assert a.ceiling == {"lib": "null -f {file}"}
    for bad in (["--ceiling", "lib=null {file}"],
                ["--extra", "lib=srv {src} {mnt}", "--ceiling", "lib=null -f"]):
        with pytest.raises(SystemExit):
            parse_args(bad)
