# SPDX-License-Identifier: MIT
"""The owner's zero-copy fast path raced, on the real Linux 7.3 kernel (runs
in the tests/vm guest): the racer fixture opts its file into zero-copy, so
each READ is zero-copied and the queue thread's req_read_fd claims through
fring_req_claim_owner (a plain store and a fence, no atomic read-modify-
write) while a helper thread claims the same handle with a compare-and-swap.
100,000 READs (FRING_OWNER_RACE_N; about 75 s under emulation): every client read gets the right bytes,
per READ exactly one of the two calls returns 0 and the other -EALREADY,
and the zero-copy counters show the owner's fast path was taken.
tests/integration/test_owner_race.py is the host (copy path) version.
"""

import importlib.util
import os
import re

import pytest

from test_bufpool import kernel_has_pools, serve, stop_clean
from test_zero_copy import zc_line, zc_stats

pytestmark = pytest.mark.skipif(not kernel_has_pools(),
                                reason="needs Linux 7.3 (run through tests/vm)")

# The host test's client and checks (same module name as this one, so by path).
_spec = importlib.util.spec_from_file_location(
    "integration_owner_race", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                           "..", "integration", "test_owner_race.py"))
race = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(race)
N = int(os.environ.get("FRING_OWNER_RACE_N", "100000"))


def test_owner_fast_path_against_a_second_thread(spawn, tmpdirs):
    mp, f = serve(spawn, tmpdirs, "{ mode: uring, zero_copy: on }", race.RACER,
                  {"zero_copy": "true"})
    assert zc_line(f) == "on (8 slots per queue)", f.log()
    res = race.run_client(os.path.join(mp, "data"), N,
                          timeout=max(1200, N // 50), server=f)
    log = stop_clean(f, mp)
    st = race.tally(log)
    zc = zc_stats(log)
    print("client %s; racer %s; zero-copy %s" % (res, st, zc))
    race.check(res, st, N)
    assert st["queue"] > 0 and st["helper"] > 0, st
    # Every READ was zero-copied (one fixed read each, whoever won) and the
    # queue thread's wins went through the owner's path: most without an
    # atomic RMW, the rest where the helper was inside (CAS fallback).
    assert zc["reads"] == N and zc["copied"] == 0 and zc["refused"] == 0, zc
    assert zc["owner_plain"] + zc["owner_rmw"] == st["queue"], (zc, st)
    assert zc["owner_plain"] > 0, zc
    assert not re.search(r"second commit|past its commit|state \d+ refused", log), log
