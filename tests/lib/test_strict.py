# SPDX-License-Identifier: MIT
"""The skip rules CI relies on (tests/lib/pytest_strict.py, tests/vm/skip.sh):
a pytest file whose every test skipped exits 77 (ctest: Skipped, not
Passed); under FRING_STRICT=1 a skip fails unless its reason is allowed;
the VM scripts exit 77 when the guest cannot start, 1 under FRING_STRICT=1."""
import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CONFTEST = textwrap.dedent("""
    import sys
    sys.path.insert(0, %r)
    from pytest_strict import (pytest_make_collect_report,
                               pytest_runtest_makereport, pytest_sessionfinish)
""" % HERE)


def run_pytest(tmp_path, body, strict):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_it.py").write_text(textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if k != "FRING_STRICT"}
    if strict:
        env["FRING_STRICT"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-p",
                           "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)


SKIPS = """
    import pytest
    def test_a():
        pytest.skip("needs root")
    @pytest.mark.skipif(True, reason="cargo not found")
    def test_b():
        pass
"""


def test_a_file_whose_tests_all_skipped_reports_skipped(tmp_path):
    r = run_pytest(tmp_path, SKIPS, strict=False)
    assert r.returncode == 77, r.stdout


def test_strict_turns_a_skip_into_a_failure(tmp_path):
    r = run_pytest(tmp_path, SKIPS, strict=True)
    assert r.returncode == 1, r.stdout
    assert "FRING_STRICT=1: this skip is not allowed here" in r.stdout
    assert "needs root" in r.stdout and "cargo not found" in r.stdout
    summary = r.stdout.splitlines()[-1]
    assert "skipped" not in summary and "passed" not in summary, summary


def test_strict_fails_a_module_skipped_at_import(tmp_path):
    r = run_pytest(tmp_path, """
        import pytest
        pytest.importorskip("no_such_module_here", reason="cffi not installed")
        def test_x():
            pass
    """, strict=True)
    assert r.returncode not in (0, 77), r.stdout
    assert "cffi not installed" in r.stdout


def test_strict_keeps_an_allowed_skip_and_a_mixed_file_passes(tmp_path):
    r = run_pytest(tmp_path, """
        import pytest
        def test_ran():
            pass
        def test_guest_only():
            pytest.skip("the kernel has buffer pools")
    """, strict=True)
    assert r.returncode == 0, r.stdout
    assert "1 passed, 1 skipped" in r.stdout


@pytest.mark.parametrize("strict,rc,line", [
    (False, 77, "vm: skipped: no QEMU (/nonexistent/qemu)"),
    (True, 1, "vm: FAILED (FRING_STRICT=1, the VM suite must run): no QEMU"),
])
def test_the_vm_scripts_skip_or_fail_when_the_guest_cannot_start(strict, rc,
                                                                 line):
    env = {k: v for k, v in os.environ.items() if k != "FRING_STRICT"}
    env["FRING_VM_QEMU"] = "/nonexistent/qemu"
    if strict:
        env["FRING_STRICT"] = "1"
    for script in ("run.sh", "accel.sh"):
        args = [os.path.join(ROOT, "tests", "vm", script)]
        if script == "run.sh":
            args += ["--", "true"]
        r = subprocess.run(args, capture_output=True, text=True, env=env,
                           timeout=60)
        assert r.returncode == rc, (script, r.stderr)
        assert line in r.stderr, (script, r.stderr)


def test_ci_runs_strict():
    text = open(os.path.join(ROOT, ".ci", "run")).read()
    assert "\nexport FRING_STRICT=1\n" in text
