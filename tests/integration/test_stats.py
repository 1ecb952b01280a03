# SPDX-License-Identifier: MIT
"""Live statistics (core/runtime/stats_*.c, core/cli/cmd_stats.c): memfs
mounted over each transport the host offers, known work done through the
mount, then `fring stats --json`, the text table, the control socket
refused for another uid, and the Prometheus endpoint scraped."""

import json
import os
import pwd
import re
import socket
import subprocess
import urllib.request

import pytest

from conftest import FRING, fring_env, run_fring, uring_usable

N_WRITES = 20
M_READS = 30


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def rundir(tmpdirs, monkeypatch):
    d = os.path.join(tmpdirs("stats-run"), "run")
    monkeypatch.setenv("FRING_RUNTIME_DIR", d)
    return d


def write_config(tmpdirs, mp, mode, extra=""):
    cfg = os.path.join(tmpdirs("stats-cfg"), "m.yaml")
    with open(cfg, "w") as f:
        f.write("mounts:\n  - mountpoint: %s\n    plugin: memfs\n"
                "    transport: { mode: %s }\n%s" % (mp, mode, extra))
    return cfg


def stats_json(mp=None):
    args = [FRING, "stats", "--json"] + ([mp] if mp else [])
    r = subprocess.run(args, capture_output=True, text=True, env=fring_env(),
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def do_work(mp):
    path = os.path.join(mp, "f")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    for i in range(N_WRITES):
        # O_DIRECT-free but each pwrite reaches the server: memfs mounts
        # without writeback cache.
        os.pwrite(fd, b"x" * 4096, i * 4096)
    os.close(fd)
    fd = os.open(path, os.O_RDONLY)
    for i in range(M_READS):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.pread(fd, 4096, (i % N_WRITES) * 4096)
    os.close(fd)
    with pytest.raises(FileNotFoundError):
        os.stat(os.path.join(mp, "no-such-file"))


@pytest.mark.parametrize("mode", ["uring", "devfuse"])
def test_counts_latency_text_and_prometheus(spawn, tmpdirs, rundir, mode):
    if mode == "uring" and not uring_usable():
        pytest.skip("FUSE io_uring is off (enable_uring is not Y) or io_uring is disabled")
    mp = tmpdirs("stats-mnt")
    port = free_port()
    cfg = write_config(tmpdirs, mp, mode,
                       '    stats: { prometheus: "127.0.0.1:%d" }\n' % port)
    f = spawn(["run", cfg], [mp])
    f.wait_ready(1)
    do_work(mp)

    st = stats_json(mp)
    assert st["mountpoint"] == os.path.realpath(mp)
    assert st["transport"] == mode
    assert st["latency"] is True
    ops = st["ops"]
    assert ops["WRITE"]["requests"] >= N_WRITES, ops
    assert ops["WRITE"]["errors"] == 0
    assert ops["READ"]["requests"] >= 1, ops
    assert ops["LOOKUP"]["errors"] >= 1, ops  # no-such-file
    assert st["errors"] >= ops["LOOKUP"]["errors"]
    assert st["bytes_written"] >= N_WRITES * 4096
    assert st["bytes_read"] >= 4096
    for name in ("WRITE", "READ", "LOOKUP"):
        o = ops[name]
        assert o["timed"] >= 1
        assert 0 < o["p50_us"] <= o["p99_us"] <= o["p999_us"], o
    assert sum(q["requests"] for q in st["queues"]) == st["requests"]
    assert st["in_flight"] == 0

    # Without MOUNTPOINT: every answering mount, this one among them.
    assert os.path.realpath(mp) in [m["mountpoint"] for m in stats_json()]

    r = run_fring("stats", mp)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^  WRITE +\d+ +0 ", r.stdout, re.M), r.stdout
    assert "p99.9" in r.stdout

    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                timeout=10) as resp:
        assert resp.status == 200
        body = resp.read().decode()
    samples = {}
    for line in body.splitlines():
        if line.startswith("#") or not line:
            continue
        m = re.fullmatch(r'([a-z_]+)\{([^}]*)\} (\S+)', line)
        assert m, line
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        samples.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    writes = [v for l, v in samples["fring_requests_total"] if l["op"] == "WRITE"]
    assert writes and writes[0] >= N_WRITES
    counts = {l["op"]: v for l, v in samples["fring_request_duration_seconds_count"]}
    assert counts["WRITE"] >= N_WRITES
    inf = [v for l, v in samples["fring_request_duration_seconds_bucket"]
           if l["op"] == "WRITE" and l["le"] == "+Inf"]
    assert inf == [counts["WRITE"]]
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen("http://127.0.0.1:%d/other" % port, timeout=10)
    assert e.value.code == 404

    assert f.stop() == 0, f.log()
    # the socket went with the mount (and the supervisor's with it)
    assert os.listdir(rundir) == []


def test_socket_refused_for_another_uid(spawn, tmpdirs, rundir):
    nobody = pwd.getpwnam("nobody")
    mp = tmpdirs("stats-mnt")
    f = spawn(["run", write_config(tmpdirs, mp, "auto")], [mp])
    f.wait_ready(1)
    # the supervisor keeps its own socket there too (fring restart)
    [sock] = [n for n in os.listdir(rundir) if n.startswith("stats-")]
    path = os.path.join(rundir, sock)
    assert os.stat(rundir).st_mode & 0o777 == 0o700
    assert os.stat(path).st_mode & 0o777 == 0o600
    as_nobody = ["setpriv", "--reuid=%d" % nobody.pw_uid,
                 "--regid=%d" % nobody.pw_gid, "--clear-groups"]
    r = subprocess.run(as_nobody + [FRING, "stats", mp], capture_output=True,
                       text=True, env=fring_env(), timeout=30)
    assert r.returncode == 1 and "Permission denied" in r.stderr, r
    # With the file modes opened, the peer credentials still refuse it.
    os.chmod(os.path.dirname(rundir), 0o755)
    os.chmod(rundir, 0o755)
    os.chmod(path, 0o666)
    r = subprocess.run(as_nobody + [FRING, "stats", mp], capture_output=True,
                       text=True, env=fring_env(), timeout=30)
    assert r.returncode == 1 and "refused" in r.stderr, r
    assert f.stop() == 0
    assert re.search(r"refused a connection from pid \d+ uid %d" % nobody.pw_uid,
                     f.log()), f.log()


def test_stats_off_serves_no_socket(spawn, tmpdirs, rundir):
    mp = tmpdirs("stats-mnt")
    f = spawn(["run", write_config(tmpdirs, mp, "auto",
                                   "    stats: { enabled: false }\n")], [mp])
    f.wait_ready(1)
    os.listdir(mp)
    r = run_fring("stats", mp)
    assert r.returncode == 1, r
    assert not os.path.exists(rundir) or not [
        n for n in os.listdir(rundir) if n.startswith("stats-")]
    assert f.stop() == 0


@pytest.mark.parametrize("value,msg", [
    ('{ prometheus: "localhost:9464" }',
     "stats.prometheus must be an address HOST:PORT"),
    ('{ prometheus: "127.0.0.1:0" }',
     "stats.prometheus must be an address HOST:PORT"),
    ('{ enabled: maybe }', "stats.enabled must be"),
    ('{ bogus: 1 }',
     "unknown key 'bogus' in stats (expected one of: enabled, prometheus)"),
    ('on', "expected a mapping for stats"),
])
def test_config_errors(tmpdirs, value, msg):
    mp = tmpdirs("stats-mnt")
    cfg = write_config(tmpdirs, mp, "auto", "    stats: %s\n" % value)
    r = run_fring("check", cfg)
    assert r.returncode == 1, r
    assert re.search(r"m\.yaml:5:\d+: " + re.escape(msg), r.stderr), r.stderr
