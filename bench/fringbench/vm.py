# SPDX-License-Identifier: MIT
"""What bench/bufpool, bench/zerocopy and bench/bindings share: measuring
on a kernel with FUSE buffer pools (Linux 7.3), which on an older host
means running the script itself in the tests/vm guest and writing the
report from what the guest prints back; the machine description; the
report's header; the scratch tmpfs; and where the files go
(fringbench.results). Times are seconds, sizes bytes unless named MiB.

Stdlib only. See bench/README.md.
"""

import argparse
import contextlib
import datetime
import hashlib
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import REPO
from . import util
from .machine import cpu_model, fring_commit
from .results import RESULTS, run_dir, write_run_file
from . import summary
from .util import GiB, MiB  # noqa: F401 (the scripts' units)
from .procs import FUSECTL  # noqa: F401 (bench/bufpool aborts its own mount)


class Fail(Exception):
    pass


def read_text(path, default=""):
    """A file's text, stripped; default ("") where it cannot be read."""
    return util.read_text(path, default)


def has_pools():
    major, minor = (int(x) for x in platform.release().split("-")[0].split(".")[:2])
    return (major, minor) >= (7, 3)


def mount_devs(path):
    """The "major:minor" of each mount stacked on path (from mountinfo)."""
    with open("/proc/self/mountinfo") as f:
        return [l.split()[2] for l in f if l.split()[4] == path]


def build_dir(option):
    """fring's build tree: --fring, else $FRING_BENCH_BUILD (tests/vm/run.sh
    hands FRING_* variables to the guest), else the repository's build/."""
    return os.path.abspath(option or os.environ.get("FRING_BENCH_BUILD")
                           or os.path.join(REPO, "build"))


def wait_line(path, marker, timeout):
    """The first line of the file at path that contains marker, waiting up
    to timeout seconds for it to be written; None if it never is."""
    deadline = time.monotonic() + timeout
    while True:
        got = [l for l in read_text(path).splitlines() if marker in l]
        if got or time.monotonic() > deadline:
            return got[0] if got else None
        time.sleep(0.1)


def machine(fring):
    """The machine (memory in MiB) and the fring binary at path fring."""
    mem = [int(l.split()[1]) for l in read_text("/proc/meminfo").splitlines()
           if l.startswith("MemTotal:")]
    cache = os.path.join(os.path.dirname(os.path.dirname(fring)), "CMakeCache.txt")
    btype = [l.split("=", 1)[1] for l in read_text(cache).splitlines()
             if l.startswith("CMAKE_BUILD_TYPE:")]
    return {"kernel": platform.release(), "vcpus": os.cpu_count(),
            "possible_cpus": read_text("/sys/devices/system/cpu/possible"),
            "memory_mib": mem[0] // 1024 if mem else None,
            "cpu_model": cpu_model(),
            "enable_uring": read_text("/sys/module/fuse/parameters/enable_uring", "?"),
            "fio": subprocess.run(["fio", "--version"], capture_output=True,
                                  text=True).stdout.strip(),
            "fring_commit": fring_commit(), "fring": fring,
            "fring_build_type": btype[0] if btype else "?",
            "fring_mtime": datetime.datetime.fromtimestamp(os.path.getmtime(fring))
            .astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")}


def now():
    return datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def cpu_count(cpulist):
    """'0-1' or '0-3,6' -> 2, 5"""
    n = 0
    for part in cpulist.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def shown_path(path):
    rel = os.path.relpath(path, REPO)
    return path if rel.startswith("..") else rel


def header(res, title, compared):
    """The report's title, the emulation warning and the lines that say where,
    when and with what it ran; compared names what may be compared."""
    m, host = res["machine"], res.get("host", {})
    cpu = m["cpu_model"]
    L = ["# " + title + (" — SMOKE RUN (not a measurement)" if res["quick"] else ""), "",
         ("> **Emulated, not real hardware.** Measured in a QEMU guest under TCG "
          "emulation (`tests/vm/run.sh`; guest CPU model `%s`) on %s. "
          "Absolute IOPS and MiB/s mean nothing; only the ratios between %s, "
          "measured in the same guest in interleaved rounds, do." % (
              cpu, "a %d-core host" % host["cores"] if host else "the host", compared)
          if "TCG" in cpu else
          "> CPU model `%s`: absolute figures are this machine's; compare %s." % (
              cpu, compared)),
         ""]
    if res["quick"]:
        L += ["> `--quick`: one round of %d s jobs, only to check the script. Do not quote "
              "these numbers." % res["runtime_s"], ""]
    if host:
        L += ["- command (host, from the repository root): `%s`, which ran `%s`" % (
            host["command"], host["vm_command"])]
    L += ["- command in the guest: `%s`" % " ".join(shlex.quote(a) for a in res["argv"]),
          "- fring commit `%s`, binary `%s` (built %s)" % (
              m["fring_commit"], shown_path(m["fring"]), m["fring_mtime"]),
          "- guest: kernel `%s`, %d vCPUs (possible CPUs %s, so %s io_uring queues), "
          "%s MiB memory, fuse `enable_uring=%s`, %s" % (
              m["kernel"], m["vcpus"], m["possible_cpus"], cpu_count(m["possible_cpus"]),
              m["memory_mib"], m["enable_uring"], m["fio"])]
    return L


def footer(res):
    """The host's and the guest's load lines, after the script's own."""
    host, L = res.get("host", {}), []
    if host:
        L += ["- host: kernel `%s`, load average before / after: %s / %s; wall time of "
              "the whole run (VM boot included) %.0f s, of the measurement in the guest "
              "%.0f s" % (host["kernel"], " ".join(host["load_before"]),
                          " ".join(host["load_after"]), host["wall_s"], res["elapsed_s"])]
        if "other_vms_before" in host:
            L += ["- other QEMU processes on the host when the run started / ended: %d / %d"
                  % (host["other_vms_before"], host["other_vms_after"])]
    L += ["- guest load average before / after: %s / %s" % (
        " ".join(res["load_before"]), " ".join(res["load_after"]))]
    return L


def other_vms():
    """QEMU processes on the host (taken before ours starts, after it ends)."""
    return sum(read_text("/proc/%s/comm" % d).startswith("qemu-system")
               for d in os.listdir("/proc") if d.isdigit())


class VMBench:
    """One benchmark script: prog is its name in bench/ (and its log prefix),
    mark the tag of the line that carries the results out of the guest."""

    def __init__(self, prog, mark):
        self.prog, self.mark = prog, mark

    def log(self, msg):
        print("%s: %s" % (self.prog, msg), flush=True)

    def parser(self, doc, timeout, quick_timeout=900):
        """The options every such script has: --quick, --out, --fring,
        --timeout (of the VM run, seconds) and the host's --emit."""
        self.timeouts = (timeout, quick_timeout)
        p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
        p.add_argument("--quick", action="store_true",
                       help="one round of 3 s jobs, output in a new /tmp directory")
        p.add_argument("--out", help="report (default %s.md in a new folder "
                                     "bench/results/MACHINE-DATE-%s/); the JSON goes "
                                     "beside it as %s.json" % (self.prog.upper(), self.prog,
                                                                self.prog))
        p.add_argument("--fring", metavar="BUILD_DIR",
                       help="fring build tree (default $FRING_BENCH_BUILD, else build/)")
        p.add_argument("--timeout", type=int, default=None,
                       help="host side: seconds for the whole VM run (default %d, %d quick)"
                       % self.timeouts)
        p.add_argument("--emit", action="store_true", help=argparse.SUPPRESS)  # host asks
        return p

    def parse(self, p):
        """The options with --timeout and --fring filled in, and the paths of
        the report and of the JSON beside it (None, None: a new run folder,
        named once the results say where and when they were taken)."""
        args = p.parse_args()
        args.timeout = args.timeout or self.timeouts[args.quick]
        args.fring = build_dir(args.fring)
        report = self.prog.upper() + ".md"
        if args.out is None and args.quick and not args.emit:
            args.out = os.path.join(tempfile.mkdtemp(prefix="fring-%s-quick-" % self.prog),
                                    report)
        return (args,) + self.paths(args.out)

    def paths(self, out):
        """The report at out and the JSON beside it; (None, None) for None."""
        if out is None:
            return None, None
        out = os.path.abspath(out)
        return out, os.path.join(os.path.dirname(out), self.prog + ".json")

    def results(self, args, fring, **more):
        """The head of the results, before the rounds; more goes in the middle."""
        res = {"argv": [os.path.relpath(sys.argv[0], REPO)] + sys.argv[1:],
               "quick": args.quick, "rounds": args.rounds, "runtime_s": args.runtime}
        res.update(more)
        res.update(machine=machine(fring), samples=[],
                   load_before=read_text("/proc/loadavg").split()[:3], start=now())
        return res

    @contextlib.contextmanager
    def scratch(self, tmpfs_bytes, res, backing="tmpfs"):
        """A new directory holding src, a fresh tmpfs of tmpfs_bytes, and mnt:
        yields (workdir, src, mnt). backing "ext4": src is instead ext4 on a
        RAM block device (brd) of that size, a disk filesystem whose cached
        reads complete without blocking (RWF_NOWAIT), which tmpfs refuses.
        Afterwards src is unmounted and the directory removed unless
        something is still mounted there; at a normal end the run's wall
        time and load go into res."""
        t0 = time.monotonic()
        workdir = tempfile.mkdtemp(prefix="fring-%s-" % self.prog)
        src, mnt = os.path.join(workdir, "src"), os.path.join(workdir, "mnt")
        os.mkdir(src)
        os.mkdir(mnt)
        brd = backing == "ext4"
        try:
            if brd:
                subprocess.run(["modprobe", "brd", "rd_nr=1",
                                "rd_size=%d" % (tmpfs_bytes // 1024)], check=True)
                subprocess.run(["mkfs.ext4", "-q", "-F", "/dev/ram0"], check=True)
                subprocess.run(["mount", "/dev/ram0", src], check=True)
            else:
                subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % tmpfs_bytes,
                                "fring-" + self.prog, src], check=True)
            yield workdir, src, mnt
        finally:
            if mount_devs(src):
                subprocess.run(["umount", src])
            if brd:
                subprocess.run(["rmmod", "brd"])
            if mount_devs(src) or mount_devs(mnt):
                self.log("WARNING: still mounted, %s kept" % workdir)
            else:
                shutil.rmtree(workdir, ignore_errors=True)
        res["elapsed_s"] = time.monotonic() - t0
        res["load_after"] = read_text("/proc/loadavg").split()[:3]

    def write(self, res, markdown, out, js):
        """The report and the JSON; with out None in a new run folder under
        bench/results/, with its RUN.txt."""
        folder = None
        if out is None:
            folder = run_dir(res["machine"]["cpu_model"], res["start"], self.prog)
            out, js = self.paths(os.path.join(folder, self.prog.upper() + ".md"))
        for path, text in ((out, markdown(res)), (js, json.dumps(res, indent=1) + "\n")):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        if folder is not None:
            host = res.get("host")
            write_run_file(folder, shlex.split(host["command"]) if host else res["argv"],
                           res["machine"]["fring_commit"], res["argv"] if host else None)
        self.log("wrote %s and %s" % (out, js))
        if summary.update(os.path.dirname(out)):
            self.log("updated %s" % summary.SUMMARY)

    def via_vm(self, timeout, guest_args, markdown, out, js):
        """Run this script in the tests/vm guest and write what it prints back."""
        cmd = ["tests/vm/run.sh", "--timeout", str(timeout), "--",
               "bench/" + self.prog, "--emit"] + guest_args
        host = {"kernel": platform.release(), "cores": os.cpu_count(),
                "load_before": read_text("/proc/loadavg").split()[:3],
                "command": " ".join(shlex.quote(a) for a in [
                    os.path.relpath(os.path.abspath(sys.argv[0]), REPO)] + sys.argv[1:]),
                "vm_command": " ".join(shlex.quote(a) for a in cmd),
                "other_vms_before": other_vms()}
        if float(host["load_before"][0]) > 1.5 or host["other_vms_before"]:
            self.log("WARNING: host load %s, %d other QEMU: the emulated guest competes "
                     "for the cores" % (host["load_before"][0], host["other_vms_before"]))
        self.log("running in the guest: %s" % host["vm_command"])
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True)
        res = None
        for line in proc.stdout:
            if line.startswith(self.mark + " "):
                _, digest, text = line.rstrip("\n").split(" ", 2)
                if hashlib.sha256(text.encode()).hexdigest() != digest:
                    sys.exit("%s: error: the guest's results arrived damaged" % self.prog)
                res = json.loads(text)
            else:
                sys.stdout.write(line)
                sys.stdout.flush()
        rc = proc.wait()
        host["wall_s"] = time.monotonic() - t0
        host["load_after"] = read_text("/proc/loadavg").split()[:3]
        host["other_vms_after"] = other_vms()
        if rc == 77:
            sys.exit("%s: error: the VM could not start (tests/vm/run.sh exit 77)"
                     % self.prog)
        if rc != 0 or res is None:
            sys.exit("%s: error: the guest run failed (tests/vm/run.sh exit %d)"
                     % (self.prog, rc))
        res["host"] = host
        self.write(res, markdown, out, js)
        self.log("wall time %.0f s" % host["wall_s"])
        return 0

    def main(self, args, measure, markdown, out, js, guest_args):
        """On a kernel without buffer pools: via_vm. On one with them: measure
        here, print the report and the results line for the host side, and
        write the files where the directory is writable (the guest's /work
        is not)."""
        if not has_pools():
            return self.via_vm(args.timeout, guest_args, markdown, out, js)

        def on_signal(sig, frame):
            raise SystemExit(128 + sig)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGHUP, on_signal)
        try:
            res = measure(args)
        except (Fail, subprocess.SubprocessError, OSError) as e:
            print("%s: error: %s" % (self.prog, e), file=sys.stderr, flush=True)
            return 1
        print(markdown(res))
        text = json.dumps(res, separators=(",", ":"))
        print("%s %s %s" % (self.mark, hashlib.sha256(text.encode()).hexdigest(), text),
              flush=True)
        if args.emit:
            pass
        elif os.access(os.path.dirname(out) if out else RESULTS, os.W_OK):
            self.write(res, markdown, out, js)
        else:
            self.log("%s is read-only here: run `bench/%s` on the host to have the "
                     "report written" % (os.path.dirname(out) if out else RESULTS, self.prog))
        return 0
