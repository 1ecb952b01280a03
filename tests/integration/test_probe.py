# SPDX-License-Identifier: MIT
"""`fring probe [--json]` on this host: the kernel's FUSE version and INIT
flags from a private probe mount (nothing left mounted), the fuse module's
parameters, the process's limits, the CPUs, and what `auto` picks for each
transport key; Linux 7.3's pools and zero-copy only where the kernel is
7.3 (tests/vm/test_probe.py asserts them offered in the guest)."""

import json
import os
import re
import subprocess

import pytest

from conftest import FRING, run_fring

PARAMS = "/sys/module/fuse/parameters/"


def probe_json():
    r = run_fring("probe", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def value(p, group, name):
    return p[group][name]["value"]


def kernel_7_3():
    major, minor = map(int, re.match(r"(\d+)\.(\d+)", os.uname().release).groups())
    return (major, minor) >= (7, 3)


@pytest.fixture
def root():
    if os.geteuid() != 0:
        pytest.skip("needs root (the probe mount)")


def test_text_and_json_say_the_same(root):
    p = probe_json()
    r = run_fring("probe")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    n = sum(len(v) for v in p.values())
    assert len(lines) == n
    for group, items in p.items():
        for name, item in items.items():
            want = f"{group}.{name}: {item['value']}"
            if item["why"]:
                want += f" ({item['why']})"
            assert want in lines


def test_kernel_and_init_flags(root):
    p = probe_json()
    assert value(p, "kernel", "release") == os.uname().release
    assert re.fullmatch(r"7\.\d+", value(p, "kernel", "fuse"))
    with open(PARAMS + "enable_uring") as f:
        uring = f.read().strip() == "Y"
    # The kernel offers io_uring exactly where enable_uring is on.
    assert value(p, "init", "io_uring") == ("offered" if uring else "not offered")
    pools = "offered" if kernel_7_3() else "not offered"
    assert value(p, "init", "bufpool") == pools
    assert value(p, "init", "zero_copy") == pools
    for flag in ("passthrough", "reduced_queues", "request_timeout", "resend",
                 "epoch"):
        assert value(p, "init", flag) in ("offered", "not offered")
    assert value(p, "init", "reduced_queues") == "not offered"
    assert value(p, "init", "request_timeout") == "offered"  # 6.18 and 7.3


def test_auto_choices_on_this_kernel(root):
    p = probe_json()
    a = p["auto"]
    if value(p, "init", "io_uring") == "offered":
        assert a["transport.mode"]["value"] == "uring"
    if kernel_7_3():
        assert a["transport.bufpool"]["value"] == "on"
        assert a["transport.zero_copy"]["value"] == "on"
    else:
        assert a["transport.bufpool"] == {"value": "off", "why":
            "the kernel has no io_uring buffer pools (FUSE 7.46, Linux 7.3)"}
        assert a["transport.zero_copy"] == {"value": "off", "why":
            "the kernel has no io_uring zero-copy (FUSE 7.46, Linux 7.3)"}
    assert a["transport.reduced_queues"] == {"value": "off", "why":
                                             "the kernel does not offer them"}
    assert a["transport.request_timeout"]["value"] == "300 s"


def test_module_process_and_machine(root):
    p = probe_json()
    for name in ("max_user_bgreq", "max_user_congthresh"):
        with open(PARAMS + name) as f:
            assert value(p, "module", name) == f.read().strip()
    assert value(p, "process", "cap_sys_admin") == "yes"
    with open("/sys/devices/system/cpu/possible") as f:
        possible = 0
        for part in f.read().strip().split(","):
            lo, _, hi = part.partition("-")
            possible += int(hi or lo) - int(lo) + 1
    assert value(p, "machine", "cpus") == \
        f"{possible} possible, {len(os.sched_getaffinity(0))} usable"
    assert int(value(p, "machine", "numa_nodes")) >= 1
    assert value(p, "process", "rlimit_memlock")


def test_leaves_nothing_mounted(root):
    with open("/proc/self/mountinfo") as f:
        before = f.read()
    probe_json()
    with open("/proc/self/mountinfo") as f:
        after = f.read()
    assert "fring-probe" not in after
    assert before == after


def test_without_root_nothing_is_probed(root):
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups", "--inh-caps=-all", FRING, "probe",
                        "--json"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    assert p["kernel"]["fuse"] == {"value": "unknown", "why":
                                   "not root (CAP_SYS_ADMIN), no probe mount"}
    assert "init" not in p
    assert value(p, "process", "cap_sys_admin") == "no"


def test_usage():
    r = run_fring("probe", "extra")
    assert r.returncode == 2
    assert "probe takes no arguments" in r.stderr
    r = run_fring("probe", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: fring probe")
