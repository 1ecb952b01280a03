# SPDX-License-Identifier: MIT
"""The s3 suite's fixtures: one Ceph gateway per pytest session
(ceph_gateway.py), stopped at the session's end even on failure, and
`mounted`, fring's mounts of it. When the gateway cannot start, every
test skips with its one-line reason; FRING_STRICT=1 makes that skip a
failure (tests/lib/pytest_strict.py)."""
import contextlib
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
from pytest_strict import (  # noqa: E402,F401  (hooks: skips, FRING_STRICT)
    pytest_make_collect_report, pytest_runtest_makereport,
    pytest_sessionfinish)
import ceph_gateway  # noqa: E402
from s3_mount import S3Mount  # noqa: E402


@contextlib.contextmanager
def running_gateway(**kwargs):
    """A started ceph_gateway.Gateway(**kwargs), stopped at the end (the
    test skips when it cannot start)."""
    gw = ceph_gateway.Gateway(**kwargs)
    try:
        gw.start()
    except ceph_gateway.GatewayError as e:
        pytest.skip("no Ceph gateway: %s" % e)
    try:
        yield gw
    finally:
        gw.stop()


@pytest.fixture(scope="session")
def gateway():
    with running_gateway() as gw:
        yield gw


@pytest.fixture(scope="session")
def start_gateway():
    """running_gateway, for a file that needs a gateway of its own."""
    return running_gateway


@pytest.fixture
def mounted(gateway):
    """start(options, transport, env) -> a ready S3Mount on `gateway`;
    each is stopped at the end and must exit 0 after SIGTERM."""
    made = []

    def start(options=(), transport=None, env=None):
        m = S3Mount(gateway, options, transport, env)
        made.append(m)
        return m.wait_ready()

    yield start
    bad = []
    for m in made:
        rc = m.stop()
        if rc != 0:
            bad.append("exit %s after SIGTERM:\n%s" % (rc, m.log()))
        m.cleanup()
    assert not bad, "\n".join(bad)
