# SPDX-License-Identifier: MIT
"""bench/run's command line: options, the targets they name, and one run
from the tmpfs mount to the report, the chart, the JSON and RUN.txt."""

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile

from . import REPO
from .jobs import ALL_JOB_IDS
from .plots import write_png
from .procs import mounts_under, unmount
from .report import write_markdown
from .results import run_dir, write_run_file
from .rounds import measure
from .stats import metric_list, summarize
from . import ceiling, scaling, tarball, tree
from . import summary as results_summary
from .targets import ExtraTarget, FringTarget, RawTarget
from .util import die, log, parse_size, run


def ensure_deps(args, script):
    """fio and matplotlib from Debian; install them when missing (root).
    script is the entry point, re-executed under /usr/bin/python3 where
    apt's matplotlib lives."""
    need = []
    if not shutil.which("fio"):
        need.append("fio")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        # apt's matplotlib lives in the system interpreter
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3") and \
                run(["/usr/bin/python3", "-c", "import matplotlib"]).returncode == 0:
            os.execv("/usr/bin/python3", ["/usr/bin/python3", script] + sys.argv[1:])
        need.append("python3-matplotlib")
    if not need:
        return
    if args.no_install:
        die("missing: %s (apt-get install %s)" % (", ".join(need), " ".join(need)))
    log("installing %s with apt-get" % " ".join(need))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["apt-get", "update", "-qq"], env=env)
    r = run(["apt-get", "install", "-y", "-qq", *need], env=env)
    if r.returncode != 0:
        die("apt-get install %s failed: %s" % (" ".join(need), r.stderr[-1000:]))
    if "python3-matplotlib" in need and sys.executable != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3", script] + sys.argv[1:])


def parser():
    p = argparse.ArgumentParser(
        description="Benchmark fring passthrough (io_uring and /dev/fuse) and other "
                    "FUSE servers against the raw tmpfs directory.")
    p.add_argument("--fring", default=os.path.join(REPO, "build"), metavar="BUILD_DIR",
                   help="fring build directory with bin/fring (default: %(default)s)")
    p.add_argument("--extra", action="append", default=[], metavar="NAME=CMD",
                   help="another FUSE server: a command template with {src} and {mnt} "
                        "that mounts src on mnt (repeatable)")
    p.add_argument("--fring-transport", action="append", default=[], metavar="KEY=VALUE",
                   help="extra key for both fring targets' transport map, e.g. "
                        "queue_depth=8 (repeatable)")
    p.add_argument("--fring-option", action="append", default=[], metavar="KEY=VALUE",
                   help="extra passthrough plugin option for both fring targets, e.g. "
                        "entry_timeout=86400 to match another server's caching (repeatable)")
    p.add_argument("--fring-kernel-passthrough", action="store_true",
                   help="also measure fring-uring-kp: fring over io_uring with the "
                        "passthrough option kernel_passthrough=true (the kernel serves "
                        "read/write from the backing file; compare with a server in "
                        "its own kernel-passthrough mode)")
    p.add_argument("--fring-stats-off", action="store_true",
                   help="also measure fring-uring-nostats and fring-devfuse-nostats: "
                        "the same mounts with stats: { enabled: false } (no latency "
                        "histograms), to price the statistics")
    p.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3)")
    p.add_argument("--runtime", type=int, default=None,
                   help="seconds per fio job (default 10)")
    p.add_argument("--size", default=None, help="fio file size per job process (default 1G)")
    p.add_argument("--meta-files", type=int, default=None,
                   help="files in the metadata job (default 20000)")
    p.add_argument("--tree-files", type=int, default=None,
                   help="files in the large-tree job J10, in %d directories "
                        "(default 200000)" % tree.DIRS)
    p.add_argument("--tarball", dest="tarball_path", default=None, metavar="TAR",
                   help="the tarball J11 untars (default: Debian's %s source tree, "
                        "fetched once with apt-get download into --tarball-cache; with "
                        "--quick a git archive of this repository)" % tarball.PACKAGE)
    p.add_argument("--tarball-cache", default=tarball.CACHE, metavar="DIR",
                   help="where J11's default tarball is downloaded and kept "
                        "(default: %(default)s)")
    p.add_argument("--ceiling", action="append", default=[], metavar="NAME=CMD",
                   help="J12's server for the --extra target NAME: a command template "
                        "with {mnt} (a directory) or {file} (a regular file to mount on), "
                        "e.g. libfuse's example/null (repeatable)")
    p.add_argument("--jobs", default=",".join(ALL_JOB_IDS),
                   help="comma-separated subset of %s" % ",".join(ALL_JOB_IDS))
    p.add_argument("--targets", default=None,
                   help="comma-separated subset of target names (raw, fring-uring, "
                        "fring-uring-local, fring-uring-q1, fring-uring-kp, fring-devfuse, "
                        "extra names); default all")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: 1 s jobs, 16M files, 1000 metadata files, 2 rounds; "
                        "output goes to a new temp dir unless --out is given")
    p.add_argument("--out", default=None,
                   help="markdown report (default RESULTS.md in a new folder "
                        "bench/results/MACHINE-DATE/)")
    p.add_argument("--png", default=None,
                   help="bar chart (default: results.png next to --out)")
    p.add_argument("--json", default=None,
                   help="all samples as JSON (default: next to --out, results.json)")
    p.add_argument("--keep", action="store_true", help="keep the temp work dir (logs)")
    p.add_argument("--no-install", action="store_true",
                   help="do not apt-get install missing fio/matplotlib")
    return p


def parse_args(argv=None):
    """The options of argv (default sys.argv[1:]), checked, defaults filled."""
    p = parser()
    a = p.parse_args(argv)
    q = a.quick
    a.rounds = a.rounds or (2 if q else 3)
    a.runtime = a.runtime or (1 if q else 10)
    a.size = a.size or ("16M" if q else "1G")
    a.meta_files = a.meta_files or (1000 if q else 20000)
    a.tree_files = a.tree_files or (2000 if q else 200000)
    a.size_bytes = parse_size(a.size)
    a.fring = os.path.abspath(a.fring)
    a.job_ids = [j.strip() for j in a.jobs.split(",") if j.strip()]
    bad = [j for j in a.job_ids if j not in ALL_JOB_IDS]
    if bad:
        p.error("unknown jobs: %s" % ", ".join(bad))
    for e in a.extra:
        name, sep, cmd = e.partition("=")
        if not sep or not name or not cmd.strip():
            p.error("--extra expects NAME=CMD, got %r" % e)
        if "{src}" not in cmd or "{mnt}" not in cmd:
            p.error("--extra %s: the command needs {src} and {mnt}" % name)
    ceiling = {}
    extras = [e.partition("=")[0].strip() for e in a.extra]
    for e in a.ceiling:
        name, sep, cmd = e.partition("=")
        if not sep or name.strip() not in extras:
            p.error("--ceiling expects NAME=CMD, NAME an --extra target, got %r" % e)
        if "{mnt}" not in cmd and "{file}" not in cmd:
            p.error("--ceiling %s: the command needs {mnt} or {file}" % name)
        ceiling[name.strip()] = cmd.strip()
    a.ceiling = ceiling
    pairs = []
    for kv in a.fring_transport:
        k, sep, v = kv.partition("=")
        if not sep or not k.strip() or k.strip() == "mode":
            p.error("--fring-transport expects KEY=VALUE (not mode), got %r" % kv)
        pairs.append((k.strip(), v.strip()))
    a.fring_transport = pairs
    opts = []
    for kv in a.fring_option:
        k, sep, v = kv.partition("=")
        if not sep or not k.strip() or k.strip() == "source":
            p.error("--fring-option expects KEY=VALUE (not source), got %r" % kv)
        opts.append((k.strip(), v.strip()))
    a.fring_option = opts
    if a.rounds < 1 or a.runtime < 1 or a.meta_files < 1 or a.tree_files < 1:
        p.error("rounds, runtime, meta-files and tree-files must be positive")
    return a


def make_targets(args):
    """The targets the options name, in run order."""
    tr, op = args.fring_transport, args.fring_option
    targets = [RawTarget("raw"),
               FringTarget("fring-uring", args.fring, "uring", tr, op),
               # The fixed placements the default (placement auto) must
               # match: one thread per CPU on its own CPU (the default
               # before placement auto), and one thread for every qid.
               FringTarget("fring-uring-local", args.fring, "uring",
                           tr + [("placement", "local")], op),
               FringTarget("fring-uring-q1", args.fring, "uring", tr + [("queues", "1")], op),
               FringTarget("fring-devfuse", args.fring, "devfuse", tr, op)]
    if args.fring_kernel_passthrough:
        targets.append(FringTarget("fring-uring-kp", args.fring, "uring", tr,
                                   op + [("kernel_passthrough", "true")]))
    if args.fring_stats_off:
        targets.append(FringTarget("fring-uring-nostats", args.fring, "uring", tr, op,
                                   stats_off=True))
        targets.append(FringTarget("fring-devfuse-nostats", args.fring, "devfuse", tr,
                                   op, stats_off=True))
    for e in args.extra:
        name, _, cmd = e.partition("=")
        targets.append(ExtraTarget(name.strip(), cmd.strip()))
    names = [t.name for t in targets]
    if len(set(names)) != len(names):
        die("duplicate target names: %s" % names)
    if args.targets:
        want = [n.strip() for n in args.targets.split(",") if n.strip()]
        unknown = [n for n in want if n not in names]
        if unknown:
            die("unknown targets %s (have %s)" % (unknown, names))
        targets = [t for t in targets if t.name in want]
    return targets


def write_outputs(args, targets, samples, machine, timing):
    """The report, chart, JSON and RUN.txt; without --out they go to a new
    bench/results/MACHINE-DATE/ folder."""
    if not args.out:
        args.out = os.path.join(run_dir(machine["cpu_model"], timing["start"]), "RESULTS.md")
    args.out = os.path.abspath(args.out)
    outdir = os.path.dirname(args.out)
    args.png = os.path.abspath(args.png or os.path.join(outdir, "results.png"))
    args.json = os.path.abspath(args.json or os.path.join(outdir, "results.json"))
    scaling_png = os.path.join(os.path.dirname(args.png), scaling.PNG)
    metrics = metric_list(args.job_ids)
    summary = summarize(samples, targets, metrics)
    for path in (args.out, args.png, args.json):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    run_is = "%d round%s x %d s%s" % (args.rounds, "s" if args.rounds > 1 else "",
                                      args.runtime,
                                      " (SMOKE RUN, meaningless)" if args.quick else "")
    title = "fring bench: median ratio to raw tmpfs, " + run_is
    png = args.png
    try:
        write_png(args.png, summary, targets, metrics, title)
        scaling.write_png(scaling_png, summary, targets, "fring bench J9: IOPS against clients, " + run_is)
    except ImportError as e:
        log("no PNG: %s" % e)
        png = None
    write_markdown(args.out, png, args, sys.argv, machine, targets, metrics, summary, timing)
    with open(args.json, "w") as f:
        json.dump({"machine": machine, "timing": timing, "argv": sys.argv,
                   "quick": args.quick, "rounds": args.rounds,
                   "options": {"runtime": args.runtime, "size": args.size,
                               "meta_files": args.meta_files,
                               "tree_files": args.tree_files, "jobs": args.job_ids,
                               "tarball": getattr(args, "tarball", None),
                               "ceiling": args.ceiling,
                               "ceiling_servers": ceiling.SERVERS},
                   "targets": [t.record() for t in targets],
                   "samples": samples, "summary": summary}, f, indent=1)
    write_run_file(outdir, sys.argv, machine["fring_commit"])
    log("wrote %s, %s, %s" % (args.out, png or "(no png)", args.json))
    if results_summary.update(outdir):
        log("updated %s" % results_summary.SUMMARY)


def main(script):
    """bench/run; script is its path (re-executed for matplotlib)."""
    args = parse_args()
    if os.geteuid() != 0:
        die("run as root: the driver mounts a tmpfs and FUSE file systems")
    ensure_deps(args, script)
    targets = make_targets(args)
    if args.quick and not args.out:
        # a smoke run never lands in bench/ unless asked to
        args.out = os.path.join(tempfile.mkdtemp(prefix="fring-bench-smoke-"), "RESULTS.md")
    workdir = tempfile.mkdtemp(prefix="fring-bench-")
    backing = os.path.join(workdir, "tmpfs")
    os.mkdir(backing)
    for t in targets:
        t.workdir = workdir

    # Cleanup on any exit path, including SIGTERM/SIGHUP.
    def on_signal(sig, frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    try:
        samples, machine, timing = measure(targets, args, workdir, backing)
        write_outputs(args, targets, samples, machine, timing)
    finally:
        for t in targets:
            t.stop()
        if not unmount(backing, fuse=False):
            log("WARNING: could not unmount tmpfs %s" % backing)
        left = mounts_under(workdir)
        if left:
            log("WARNING: still mounted, work dir %s kept: %s" % (workdir, left))
        elif args.keep:
            log("work dir kept: %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
