# SPDX-License-Identifier: MIT
"""The systemd units of units/ (as the build configured them): `systemd-
analyze verify` of each, and the service's hardening still lets fring
mount (its capability bounding set and NoNewPrivileges, applied with
setpriv(1) since the test machine need not run systemd)."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import FRING, Fring

FRING_PATH = os.path.abspath(shutil.which(FRING) or FRING)
BUILD = os.path.dirname(os.path.dirname(FRING_PATH))
UNITS = os.path.join(BUILD, "units")


def unit_text(name):
    with open(os.path.join(UNITS, name)) as f:
        return f.read()


def setting(text, key):
    found = re.findall(r"^%s=(.*)$" % key, text, re.M)
    assert len(found) == 1, (key, found)
    return found[0]


@pytest.fixture
def manpath(tmp_path):
    """A MANPATH holding this build's pages, for the units' Documentation=."""
    for page in os.listdir(os.path.join(BUILD, "man")):
        if not re.fullmatch(r"[\w.-]+\.[1-8]", page):
            continue
        sec = page.rsplit(".", 1)[1]
        d = tmp_path / "man" / ("man" + sec)
        d.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.join(BUILD, "man", page), d / page)
    return str(tmp_path / "man")


def verify(path, manpath):
    env = dict(os.environ, MANPATH=manpath)
    return subprocess.run(["systemd-analyze", "verify", path], env=env,
                          capture_output=True, text=True, timeout=60)


def test_service_configured_with_prefix():
    text = unit_text("fring@.service")
    assert "@" not in setting(text, "ExecStart").replace("%i", "")
    exec_start = setting(text, "ExecStart")
    assert re.fullmatch(r"/\S+/bin/fring run /etc/fring/%i\.yaml", exec_start), exec_start
    assert setting(text, "Type") == "notify"
    assert setting(text, "NotifyAccess") == "all"
    assert setting(text, "LimitMEMLOCK") == "infinity"


def test_verify_service(tmp_path, manpath):
    # verify checks ExecStart's binary exists: point it at this build's.
    text = unit_text("fring@.service")
    text = re.sub(r"^ExecStart=\S+/fring ", "ExecStart=%s " % FRING_PATH, text,
                  flags=re.M)
    unit = tmp_path / "fring@test.service"
    unit.write_text(text)
    r = verify(str(unit), manpath)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_verify_mount(tmp_path, manpath):
    unit = tmp_path / "srv-fring.mount"
    unit.write_text(unit_text("srv-fring.mount"))
    r = verify(str(unit), manpath)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    text = unit.read_text()
    assert setting(text, "Type") == "fring"
    assert setting(text, "What") == "passthrough#/srv/data"


def test_verify_refuses_a_broken_unit(tmp_path, manpath):
    """The check can fail: a typo in a setting is reported."""
    unit = tmp_path / "fring@bad.service"
    unit.write_text(unit_text("fring@.service").replace("Type=notify",
                                                        "Type=notfy"))
    r = verify(str(unit), manpath)
    assert "Failed to parse service type" in r.stderr, r.stderr


def test_hardening_still_mounts(tmpdirs):
    text = unit_text("fring@.service")
    caps = setting(text, "CapabilityBoundingSet").split()
    assert setting(text, "NoNewPrivileges") == "yes"
    bset = "-all," + ",".join("+" + c[len("CAP_"):].lower() for c in caps)
    mp = tmpdirs("mnt")
    # The same `fring mount`, under the unit's limits.
    f = Fring(["mount", "memfs", mp], [mp],
              wrap=["setpriv", "--no-new-privs", "--bounding-set", bset])
    try:
        f.wait_ready(1)
        with open(os.path.join(mp, "probe"), "w") as fh:
            fh.write("mounted under the unit's hardening\n")
        with open(os.path.join(mp, "probe")) as fh:
            assert fh.read() == "mounted under the unit's hardening\n"
        assert f.stop() == 0
    finally:
        f.cleanup()
