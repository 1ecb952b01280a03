# SPDX-License-Identifier: MIT
"""Small helpers every module uses: log lines, subprocesses, file reads,
sizes. Sizes are bytes, powers of 1024."""

import subprocess
import sys

MiB = 1 << 20
GiB = 1 << 30


def log(msg, prog="bench"):
    print("%s: %s" % (prog, msg), flush=True)


def die(msg, prog="bench"):
    print("%s: error: %s" % (prog, msg), file=sys.stderr, flush=True)
    sys.exit(1)


def run(cmd, **kw):
    """subprocess.run, capturing text output unless told otherwise."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    return subprocess.run(cmd, **kw)


def read_text(path, default=None):
    """A file's text, stripped; default where it cannot be read."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def parse_size(text):
    """'16M', '1G', '512k', '1048576' -> bytes (powers of 1024)."""
    t = text.strip().upper().rstrip("B").rstrip("I")
    mult = 1
    for suffix, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)):
        if t.endswith(suffix):
            t, mult = t[:-1], m
            break
    return int(float(t) * mult)


def tail(path, n=15):
    """The last n lines of a (log) file, "" if it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-n:])
