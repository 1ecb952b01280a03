# SPDX-License-Identifier: MIT
"""Skips that cannot pass for a run, shared by every pytest suite here
(integration, conformance, integrity, vm: each conftest.py imports these
hooks).

- A pytest file in which every test skipped exits 77, which ctest reports
  as "Skipped" (SKIP_RETURN_CODE 77), not "Passed".
- FRING_STRICT=1 (set by .ci/run) turns every skip into a failure, unless
  its reason starts with one of ALLOWED: those depend on what is being
  tested against, not on what the machine lacks (tests/README.md,
  "Skips"). So CI cannot go green on a machine that lacks root, io_uring,
  cargo or cffi, all of which this machine kind has.
"""
import os

import pytest

STRICT = os.environ.get("FRING_STRICT") == "1"
SKIPPED_EXIT = 77

# Reasons a skip stays a skip under FRING_STRICT=1 (prefixes).
ALLOWED = (
    "the kernel has buffer pools",     # a 6.18-only check, in the 7.3 guest
    "the kernel has zero-copy",        # likewise
    "no io_uring buffer pools in this kernel",  # 7.3-only variants, run in the guest
    "prlimit --as cannot run an ASan build",   # sanitizer runs of the suite
    "the demo runs build/bin/fring",   # a suite pointed at another build
)


def _reason(longrepr):
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _refuse(report):
    reason = _reason(report.longrepr)
    if reason.startswith("Skipped: "):
        reason = reason[len("Skipped: "):]
    if any(reason.startswith(a) for a in ALLOWED):
        return
    report.outcome = "failed"
    report.longrepr = ("FRING_STRICT=1: this skip is not allowed here "
                       "(tests/lib/pytest_strict.py ALLOWED lists those that "
                       "are): %s" % reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if STRICT and report.skipped and not hasattr(report, "wasxfail"):
        _refuse(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if STRICT and report.skipped:
        _refuse(report)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter else {}
    ran = any(stats.get(k) for k in ("passed", "failed", "error", "xfailed",
                                     "xpassed"))
    if exitstatus in (0, 5) and stats.get("skipped") and not ran:
        session.exitstatus = SKIPPED_EXIT
