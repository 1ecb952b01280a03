# SPDX-License-Identifier: MIT
"""Exactly one reply per request when a plugin answers every READ from two
threads at once (the racer fixture, tests/fixtures/racer.c): the thread that
got the request (over io_uring: its queue thread) and a helper thread both
call req_read_fd on the same handle at the same moment, for 100,000 READs.

Kernel side: every client read succeeds with the right bytes. Plugin side:
per READ exactly one call returned 0 and the other -EALREADY (racer's
tally at destroy). On this host the ring copies (no zero-copy before Linux
7.3), so the claims are compare-and-swaps on both sides; the owner's
zero-copy fast path is raced by tests/vm/test_owner_race.py in the guest.
FRING_OWNER_RACE_N sets the number of reads (default 100000).
"""

import json
import os
import re
import subprocess
import sys

import pytest

from test_faults import FIXTURE_DIR, TRANSPORTS, start, stop_cleanly

RACER = os.path.join(FIXTURE_DIR, "racer.so")
N = int(os.environ.get("FRING_OWNER_RACE_N", "100000"))
SIZE = 1 << 20

# The client, in its own process so that a hang cannot take pytest with
# it: N preads of 4 KiB (and some odd sizes) over the file, each checked
# against racer's pattern.
CLIENT = r"""
import json, os, sys
path, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
want = bytes((i ^ i >> 8 ^ i >> 16) & 0xff for i in range(size))
fd = os.open(path, os.O_RDONLY)
ok = bad = 0
errors = {}
first_bad = None
for k in range(n):
    length = 4096 if k % 8 else 1 + (k * 37) % 12288
    off = (k * 4096 * 7 + (k % 3) * 512) % (size - length)
    try:
        got = os.pread(fd, length, off)
    except OSError as e:
        errors[e.errno] = errors.get(e.errno, 0) + 1
        continue
    if got == want[off:off + length]:
        ok += 1
    else:
        bad += 1
        if first_bad is None:
            first_bad = [k, off, length, len(got)]
os.close(fd)
print(json.dumps({"ok": ok, "bad": bad, "errors": errors, "first_bad": first_bad}))
"""

TALLY = re.compile(r"racer: (\d+) reads: (\d+) successes \((\d+) by the receiving "
                   r"thread, (\d+) by the helper\), (\d+) EALREADY, (\d+) other "
                   r"results \(first (-?\d+)\), (\d+) with two successes, (\d+) "
                   r"with none")


def tally(log):
    m = TALLY.search(log)
    assert m, log
    keys = ("reads", "successes", "queue", "helper", "ealready", "other",
            "first_other", "doubles", "nones")
    return dict(zip(keys, (int(x) for x in m.groups())))


def run_client(path, n, timeout, server):
    out = subprocess.run([sys.executable, "-c", CLIENT, path, str(n), str(SIZE)],
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, (out.stderr, server.log())
    return json.loads(out.stdout)


def check(res, st, n):
    assert res == {"ok": n, "bad": 0, "errors": {}, "first_bad": None}, (res, st)
    assert st["reads"] == n, st
    assert st["successes"] == n, st
    assert st["ealready"] == n, st
    assert st["other"] == 0 and st["doubles"] == 0 and st["nones"] == 0, st


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_two_threads_answer_every_read(spawn, tmpdirs, transport):
    mp = tmpdirs("mnt")
    f = start(spawn, ["mount", RACER, mp, "-t", transport], mp)
    assert ("transport %s)" % transport) in " ".join(f.wait_ready(1)), f.log()
    res = run_client(os.path.join(mp, "data"), N, timeout=max(600, N // 100),
                     server=f)
    stop_cleanly(f, mp)
    st = tally(f.log())
    print("%s: client %s; racer %s" % (transport, res, st))
    check(res, st, N)
    # Both threads won some: the race was run both ways.
    assert st["queue"] > 0 and st["helper"] > 0, st
