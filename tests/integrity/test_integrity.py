# SPDX-License-Identifier: MIT
"""Data integrity (tests/integrity/README.md): fsxr, fio write+verify with
crc32c and stress-ng with --verify, first on the raw temp directory (the
reference: it must pass), then on fring's memfs and passthrough over each
transport. Zero mismatches is the only passing result. Counts, sizes and
durations come from the environment so that soak.sh runs the same checks
for longer."""

import json
import os
import re
import shutil
import signal
import subprocess

import pytest

FSXR = os.environ.get("FSXR_BIN", "fsxr")
OPS = int(os.environ.get("FSXR_OPS", "20000"))
DIRECT_OPS = int(os.environ.get("FSXR_DIRECT_OPS", "5000"))
LARGE_OPS = int(os.environ.get("FSXR_LARGE_OPS", "2000"))
SEED = int(os.environ.get("FSXR_SEED", "1"))
FIO_SIZE = os.environ.get("FIO_SIZE", "64m")
STRESS_TIME = int(os.environ.get("STRESS_TIME", "10"))

# The reference first, then every mount. A transport missing from the build
# or the kernel is skipped by `serve`, with the reason.
TARGETS = ["raw"] + ["%s-%s" % (plugin, transport)
                     for transport in ("devfuse", "uring")
                     for plugin in ("memfs", "passthrough")]


@pytest.fixture(params=TARGETS)
def target(request, serve, tmpdirs):
    """The raw temp dir (the reference), then each mount."""
    return make_target(request.param, serve, tmpdirs)


@pytest.fixture(params=TARGETS[1:])
def mounted(request, serve, tmpdirs):
    """The mounts only (stress-ng is too slow to spend on a reference run)."""
    return make_target(request.param, serve, tmpdirs)


def make_target(name, serve, tmpdirs):
    """A directory to test: the raw temp dir, or the root of a mount."""
    if name == "raw":
        return Target("raw", tmpdirs("raw"), None)
    plugin, transport = name.split("-")
    m = serve(plugin, transport)
    return Target(name, m.path, m.source)


class Target:
    def __init__(self, name, path, source):
        self.name, self.path, self.source = name, path, source


def need(tool):
    if not shutil.which(tool):
        pytest.fail("%s is not installed (tests/setup.sh installs it)" % tool)


def run(cmd, timeout, merge=False, **kw):
    """subprocess.run in a session of its own, so that on timeout the whole
    group (fio and stress-ng fork workers) is killed, not just its leader."""
    err = subprocess.STDOUT if merge else subprocess.PIPE
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                          start_new_session=True, **kw) as p:
        try:
            out, errs = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            pytest.fail("%s still running after %d s, killed; output:\n%s"
                        % (" ".join(cmd), timeout, (out or "")[-3000:]))
    return subprocess.CompletedProcess(cmd, p.returncode, out, errs or "")


# ---- fsxr ----

def fsxr(path, ops, *args):
    """Run fsxr; returns (exit status, output). The time limit allows ~5 ms
    an operation, far above what it needs."""
    p = run([FSXR, "-N", str(ops), "-S", str(SEED), *args, path],
            timeout=120 + ops // 200, merge=True)
    print(p.stdout[-2000:])
    return p.returncode, p.stdout


def assert_clean(rc, out, ops):
    assert rc == 0 and out.rstrip().endswith("fsxr: %d ops, 0 mismatches" % ops), \
        "fsxr failed (exit %d):\n%s" % (rc, out)
    # ext4, memfs and passthrough over ext4 support every operation fsxr
    # uses, so none may have been turned off for EOPNOTSUPP.
    assert " disabled: " not in out, out


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def test_fsxr(target):
    rc, out = fsxr(target.path, OPS, "-k")
    assert_clean(rc, out, OPS)
    # passthrough: what the mount showed is what landed in the source dir.
    for name in ("fsxr.dat", "fsxr.dat.src"):
        seen = os.path.join(target.path, name)
        if target.source:
            assert same_bytes(seen, os.path.join(target.source, name)), name
        os.unlink(seen)


def test_fsxr_direct(target):
    rc, out = fsxr(target.path, DIRECT_OPS, "-Z")
    assert_clean(rc, out, DIRECT_OPS)


def test_fsxr_large(target):
    """Files up to 8 MiB and operations up to 2 MiB: larger than a FUSE
    request, so the kernel splits them. The whole file is checked every
    50 ops, the size and touched range after every op."""
    rc, out = fsxr(target.path, LARGE_OPS, "-l", "8m", "-o", "2m", "-c", "50")
    assert_clean(rc, out, LARGE_OPS)


def test_fsxr_catches_corruption(tmpdirs):
    """The checker itself: one byte changed behind fsxr's back must fail the
    run at once, with the offset, the op log and a reproduce line."""
    rc, out = fsxr(tmpdirs("raw"), 2000, "-X", "300")
    assert rc == 1, out
    assert re.search(r"MISMATCH in whole-file check after op #300: first bad "
                     r"offset 0x[0-9a-f]+, last bad 0x[0-9a-f]+, 1 bad bytes", out), out
    assert "fsxr:   #300 " in out and "fsxr: reproduce: " in out, out
    assert out.rstrip().endswith("fsxr: 300 ops, 1 mismatch"), out


# ---- fio ----

def size_bytes(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(text[:-1]) * units[text[-1].lower()] if text[-1].isalpha() else int(text)


def fio(directory, size, *args):
    need("fio")
    cmd = ["fio", "--name=verify", "--directory=" + directory, "--rw=randwrite",
           "--bs=4k", "--size=" + size, "--verify=crc32c", "--verify_fatal=1",
           "--verify_state_save=0", "--output-format=json", *args]
    return run(cmd, timeout=300 + size_bytes(size) // (256 << 10), cwd=directory)


def fio_problems(p, size, written=True):
    """Everything that says a fio run did not write and verify all of
    `size` cleanly; empty when it did."""
    problems = [] if p.returncode == 0 else ["exit status %d" % p.returncode]
    start = p.stdout.find("\n{") + 1 if not p.stdout.startswith("{") else 0
    try:
        jobs = json.loads(p.stdout[start:])["jobs"]
    except ValueError:
        jobs = []
        problems.append("no JSON report")
    for job in jobs:
        if job["error"]:
            problems.append("job error %d" % job["error"])
        if job["read"]["io_bytes"] != size:
            problems.append("verified %d of %d bytes" % (job["read"]["io_bytes"], size))
        if written and job["write"]["io_bytes"] != size:
            problems.append("wrote %d of %d bytes" % (job["write"]["io_bytes"], size))
    text = p.stderr + p.stdout[:start]
    problems += [l for l in text.splitlines()
                 if re.search(r"verif|crc32c|bad magic|io_u error|err=", l, re.I)]
    return problems


@pytest.mark.parametrize("direct", [0, 1])
def test_fio_verify(target, direct):
    p = fio(target.path, FIO_SIZE, "--do_verify=1", "--direct=%d" % direct)
    problems = fio_problems(p, size_bytes(FIO_SIZE))
    assert not problems, "\n".join(problems)


def test_fio_catches_corruption(tmpdirs):
    """The fio check itself: a byte changed between writing and verifying
    must be reported."""
    d, size = tmpdirs("raw"), "4m"
    p = fio(d, size, "--do_verify=0")
    assert p.returncode == 0, p.stderr
    with open(os.path.join(d, "verify.0.0"), "r+b") as f:
        f.seek(5 * 4096 + 100)
        b = f.read(1)
        f.seek(5 * 4096 + 100)
        f.write(bytes([b[0] ^ 0x5a]))
    p = fio(d, size, "--verify_only")
    assert fio_problems(p, size_bytes(size), written=False), p.stdout + p.stderr


# ---- stress-ng ----

# The stressors that stay in --temp-path, with data sizes small enough to
# make progress through FUSE in a short run. Not getdent (it walks /tmp,
# /proc, /sys), nor link and symlink (they link from every mount point in
# /etc/mtab to provoke EXDEV): they reach other mounts, and one whose server
# does not answer hangs them.
STRESSORS = [
    "--hdd", "2", "--hdd-opts", "wr-rnd,rd-rnd", "--hdd-bytes", "16m",
    "--seek", "1", "--seek-size", "16m",
    "--copy-file", "1",
    "--mmap", "1", "--mmap-file", "--mmap-bytes", "16m",
    "--fallocate", "1", "--fallocate-bytes", "16m",
    "--sync-file", "1", "--sync-file-bytes", "16m",
    "--readahead", "1", "--readahead-bytes", "16m",
    "--xattr", "1", "--dir", "1", "--rename", "1", "--filename", "1",
    "--dentry", "1", "--utime", "1", "--chmod", "1",
]


def test_stress_ng(mounted):
    need("stress-ng")
    p = run(["stress-ng", *STRESSORS, "--timeout", "%ds" % STRESS_TIME,
             "--temp-path", mounted.path, "--verify", "--metrics-brief"],
            timeout=STRESS_TIME * 3 + 120, merge=True, cwd=mounted.path)
    print(p.stdout)
    bad = [l for l in p.stdout.splitlines()
           if re.search(r"fail|corrupt|unsuccessful", l, re.I)
           and not re.search(r"failed: 0\b", l)]
    assert p.returncode == 0 and not bad, "exit %d\n%s" % (p.returncode, p.stdout)
    assert "successful run completed" in p.stdout, p.stdout
    # hdd verifies what it reads back; it must have done some work.
    hdd = re.search(r"metrc: \[\d+\] hdd +(\d+) ", p.stdout)
    assert hdd and int(hdd.group(1)) > 0, p.stdout
