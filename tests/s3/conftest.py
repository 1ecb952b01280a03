# SPDX-License-Identifier: MIT
"""The s3 suite's fixture: one Ceph gateway per pytest session
(ceph_gateway.py), stopped at the session's end even on failure. When it
cannot start, every test skips with its one-line reason; FRING_STRICT=1
makes that skip a failure (tests/lib/pytest_strict.py)."""
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


@pytest.fixture(scope="session")
def gateway():
    gw = ceph_gateway.Gateway()
    try:
        gw.start()
    except ceph_gateway.GatewayError as e:
        pytest.skip("no Ceph gateway: %s" % e)
    try:
        yield gw
    finally:
        gw.stop()
