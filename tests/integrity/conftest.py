# SPDX-License-Identifier: MIT
"""Mount fixtures for the integrity tests: those of tests/integration,
loaded from there rather than copied (`mount` checks at teardown that
SIGTERM ends fring with status 0 and leaves nothing mounted), plus `serve`,
which skips a transport that this build or kernel does not offer."""

import importlib.util
import pathlib
import re

import pytest

_shared = pathlib.Path(__file__).resolve().parent.parent / "integration" / "conftest.py"
_spec = importlib.util.spec_from_file_location("fring_mount_fixtures", _shared)
fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixtures)

spawn = fixtures.spawn
pytest_make_collect_report = fixtures.pytest_make_collect_report
pytest_runtest_makereport = fixtures.pytest_runtest_makereport
pytest_sessionfinish = fixtures.pytest_sessionfinish
tmpdirs = fixtures.tmpdirs
mount = fixtures.mount

# What fring says when a transport is missing from the build or the kernel:
# the only reason to skip a transport instead of failing.
UNAVAILABLE = re.compile(r".*(not available in this build|io_uring unavailable).*")


@pytest.fixture
def serve(mount, tmpdirs):
    """serve(plugin, transport) -> Mounted; passthrough mirrors a fresh
    directory (Mounted.source)."""

    def do_serve(plugin, transport):
        source = tmpdirs("src") if plugin == "passthrough" else None
        try:
            mp = mount(plugin, {"source": source} if source else (), transport=transport)
        except AssertionError as e:
            why = UNAVAILABLE.search(str(e))
            if transport != "devfuse" and why:
                pytest.skip("transport %s: %s" % (transport, why.group(0).strip()))
            raise
        return fixtures.Mounted(plugin, str(mp), source)

    return do_serve
