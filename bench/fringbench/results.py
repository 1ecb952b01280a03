# SPDX-License-Identifier: MIT
"""Where a run's files go: one folder per run, bench/results/MACHINE-DATE/
(MACHINE-DATE-SCRIPT/ for bench/bufpool, bench/zerocopy, bench/bindings;
"-2", "-3" for a later run of the same day), holding its markdown, JSON,
PNG and RUN.txt: the exact command and the fring commit it measured."""

import os
import re
import shlex

from . import BENCH

RESULTS = os.path.join(BENCH, "results")
RUN_FILE = "RUN.txt"


def machine_kind(cpu_model):
    """'Intel(R) Xeon(R) Processor' -> 'intel-xeon', 'AMD EPYC 7763 64-Core
    Processor' -> 'amd-epyc': vendor and family, the part runs compare by;
    an emulated (QEMU TCG) guest is 'qemu-tcg'."""
    if "TCG" in cpu_model:
        return "qemu-tcg"
    words = re.sub(r"\((r|tm)\)", " ", cpu_model.lower()).split()
    words = [re.sub(r"[^a-z0-9]+", "", w) for w in words[:2]]
    return "-".join(w for w in words if w) or "unknown"


def run_dir(cpu_model, start, script="run", root=RESULTS):
    """A new folder name for a run of script begun at start ("YYYY-MM-DD
    ..."): the first of MACHINE-DATE[-SCRIPT], then -2, -3... that does not
    exist yet under root."""
    base = "%s-%s" % (machine_kind(cpu_model), start[:10])
    if script != "run":
        base += "-" + script
    path, n = os.path.join(root, base), 1
    while os.path.exists(path):
        n += 1
        path = os.path.join(root, "%s-%d" % (base, n))
    return path


def run_text(argv, commit, guest_argv=None):
    """RUN.txt's text: the command (shell-quoted) and fring's commit."""
    L = ["command: " + " ".join(shlex.quote(a) for a in argv)]
    if guest_argv:
        L.append("command in the guest: " + " ".join(shlex.quote(a) for a in guest_argv))
    L.append("fring commit: " + commit)
    return "\n".join(L) + "\n"


def write_run_file(folder, argv, commit, guest_argv=None):
    with open(os.path.join(folder, RUN_FILE), "w") as f:
        f.write(run_text(argv, commit, guest_argv))
