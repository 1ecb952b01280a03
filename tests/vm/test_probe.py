# SPDX-License-Identifier: MIT
"""`fring probe` in the Linux 7.3 guest: buffer pools and zero-copy
offered, and `auto` picks both, where the 6.18 host shows neither
(tests/integration/test_probe.py); the probe mount leaves nothing."""

import json

from conftest import run_fring


def test_probe_shows_pools_and_zero_copy_offered():
    with open("/proc/self/mountinfo") as f:
        before = f.read()
    r = run_fring("probe", "--json")
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    assert int(p["kernel"]["fuse"]["value"].split(".")[1]) >= 46
    assert p["init"]["io_uring"]["value"] == "offered"
    assert p["init"]["bufpool"]["value"] == "offered"
    assert p["init"]["zero_copy"]["value"] == "offered"
    assert p["auto"]["transport.bufpool"] == {
        "value": "on", "why": "the kernel offers FUSE_HAS_IO_URING_BUFPOOL"}
    assert p["auto"]["transport.zero_copy"] == {
        "value": "on", "why": "buffer pools and CAP_SYS_ADMIN"}
    with open("/proc/self/mountinfo") as f:
        assert f.read() == before
    text = run_fring("probe").stdout
    assert "init.bufpool: offered (" in text
    assert "auto.transport.zero_copy: on (" in text
