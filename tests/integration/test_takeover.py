# SPDX-License-Identifier: MIT
"""`fring restart`: a new serving process takes a live mount over, over
/dev/fuse and over io_uring (issue 25). Open files, directory fds and mmaps survive, a verified
load sees no error, refusals leave the old server serving, a death on
either side mid-way ends served or cleanly aborted (never hung), and the
new server keeps the INIT state the kernel negotiated. The main tests run
with memfs (its whole tree handed over) and passthrough (its node-id and
open-file tables over a temporary source directory)."""

import errno
import hashlib
import json
import mmap
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import zlib

import pytest

from conftest import FRING, fring_env, is_mounted, serving_pid, uring_usable

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/fuse"),
    reason="needs root and /dev/fuse")

RESTART_BOUND = 30  # s: every step of the sequence is bounded well below


def bufpool_offered():
    """Does the kernel offer io_uring buffer pools (Linux 7.3)?"""
    if not uring_usable():
        return False
    r = subprocess.run([FRING, "probe", "--json"], capture_output=True,
                       text=True, timeout=60, env=fring_env())
    try:
        return json.loads(r.stdout)["init"]["bufpool"]["value"] == "offered"
    except (ValueError, KeyError):
        return False


URING_OFF = "FUSE io_uring is off (/sys/module/fuse/parameters/enable_uring)"


URING_PARAMS = [
    pytest.param("uring", marks=pytest.mark.skipif(
        not uring_usable(), reason=URING_OFF)),
    pytest.param("uring-pool", marks=pytest.mark.skipif(
        not bufpool_offered(),
        reason="no io_uring buffer pools in this kernel (Linux 7.3+)"))]


@pytest.fixture(params=["devfuse"] + URING_PARAMS)
def transport(request):
    """Each test runs over /dev/fuse, over io_uring with per-entry buffers
    and, where the kernel has them, with a registered buffer pool (fill,
    exit, adopt: core/transport/uring_handover.c)."""
    return request.param


# The transport map of each io_uring variant (`fring run`'s YAML).
URING_MAPS = {
    "uring": "{ mode: uring, bufpool: off }",
    "uring-pool": "{ mode: uring, bufpool: { mode: on, registered: true }, "
                  "zero_copy: off }",
}


@pytest.fixture(params=["memfs", "passthrough"])
def plugin(request):
    """The plugin whose state is handed over: memfs, or passthrough over
    a fresh source directory (plugins/passthrough/state.c)."""
    return request.param


@pytest.fixture
def served(spawn, tmpdirs, monkeypatch, transport):
    """served(plugin, transport, env) -> (Fring, mountpoint); the runtime
    dir is private; the transport is the test's parameter unless given.
    passthrough mirrors a new temporary directory, kept as Fring.source.
    At teardown SIGTERM must end it with 0 and nothing mounted (so the
    last new server unmounts cleanly), unless the test ended it itself."""
    monkeypatch.setenv("FRING_RUNTIME_DIR", tmpdirs("run"))
    monkeypatch.setenv("FRING_LOG", "debug")
    started = []
    default_transport = transport

    def start(plugin="memfs", transport=default_transport, env=None,
              opts=()):
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        mp = tmpdirs("mnt")
        source, options = None, list(opts)
        if plugin == "passthrough":
            source = tmpdirs("src")
            options.insert(0, "source=" + source)
        if transport in URING_MAPS:
            # `fring run`, so that the YAML can set the buffers
            cfg = os.path.join(tmpdirs("cfg"), "takeover.yaml")
            with open(cfg, "w") as c:
                c.write("mounts:\n  - mountpoint: %s\n    plugin: %s\n"
                        "    transport: %s\n"
                        % (json.dumps(mp), json.dumps(plugin),
                           URING_MAPS[transport]))
                if options:
                    c.write("    options: { %s }\n" % ", ".join(
                        "%s: %s" % (k, json.dumps(v)) for k, v in
                        (o.split("=", 1) for o in options)))
            f = spawn(["run", cfg], [mp])
            RESTART_TARGET[mp] = cfg
        else:
            args = ["mount", plugin, mp, "-t", transport]
            for o in options:
                args += ["-o", o]
            f = spawn(args, [mp])
        f.source = source
        ready = f.wait_ready(1)
        assert ready[0].endswith("transport %s)" % transport.split("-")[0]) \
            or transport == "auto", ready
        for k in (env or {}):
            monkeypatch.delenv(k)
        started.append((f, mp))
        return f, mp

    yield start
    problems = []
    for f, mp in started:
        if f.proc.poll() is not None:
            continue
        rc = f.stop(signal.SIGTERM)
        if rc != 0 or is_mounted(mp):
            problems.append("%s: exit %s, mounted %s; stderr:\n%s"
                            % (mp, rc, is_mounted(mp), f.log()))
    assert not problems, "\n".join(problems)


RESTART_TARGET = {}  # mountpoint -> the config `fring run` serves it from


def restart(mp, env=None):
    """`fring restart MP` (`fring restart CONFIG` for a `fring run`):
    (exit code, its one line, seconds taken)."""
    e = fring_env()
    e.update(env or {})
    t0 = time.monotonic()
    r = subprocess.run([FRING, "restart", RESTART_TARGET.get(mp, mp)],
                       capture_output=True,
                       text=True, timeout=RESTART_BOUND + 30, env=e)
    took = time.monotonic() - t0
    out = (r.stdout + r.stderr).strip()
    assert len(out.splitlines()) == 1, out
    return r.returncode, out, took


def server_of(f):
    return serving_pid(f.proc.pid)


def test_open_file_dir_fd_and_mmap_survive_5_takeovers(served, plugin):
    f, mp = served(plugin)
    path = os.path.join(mp, "held")
    os.mkdir(os.path.join(mp, "d"))
    size = 64 * 1024
    with open(path, "wb") as w:
        w.write(bytes(size))
    fd = os.open(path, os.O_RDWR)
    dfd = os.open(os.path.join(mp, "d"), os.O_RDONLY | os.O_DIRECTORY)
    mm = mmap.mmap(fd, size)
    errors, rounds, stop = [], [0], threading.Event()

    def work():
        n = 0
        while not stop.is_set():
            try:
                n += 1
                block = (n % 16) * 4096
                data = n.to_bytes(8, "little") * 512
                os.pwrite(fd, data, block)
                assert os.pread(fd, 4096, block) == data
                assert mm[block:block + 4096] == data
                mm[size - 8:size] = n.to_bytes(8, "little")
                name = "e%d" % (n % 8)
                fd2 = os.open(name, os.O_CREAT | os.O_WRONLY, 0o644,
                              dir_fd=dfd)
                os.write(fd2, data[:64])
                os.close(fd2)
                assert name in os.listdir(dfd)
                os.fstat(fd)
                rounds[0] = n
            except Exception as e:  # any error is the finding
                errors.append(repr(e))
                return

    t = threading.Thread(target=work)
    t.start()
    try:
        pids = [server_of(f)]
        for _ in range(5):
            before = rounds[0]
            rc, line, _ = restart(mp)
            assert rc == 0 and "fring: restart: ok: " in line, (line, f.log())
            pids.append(server_of(f))
            deadline = time.monotonic() + 10
            while rounds[0] <= before + 10 and not errors:
                assert time.monotonic() < deadline, "no progress after a takeover"
                time.sleep(0.01)
    finally:
        stop.set()
        t.join(30)
    assert not errors, (errors, f.log())
    assert len(set(pids)) == 6, pids  # five new serving processes
    n = rounds[0]
    mm.flush()
    assert int.from_bytes(mm[size - 8:size], "little") == n
    mm.close()
    os.close(fd)
    os.close(dfd)
    with open(path, "rb") as r:
        assert int.from_bytes(r.read()[size - 8:], "little") == n
    assert sorted(os.listdir(os.path.join(mp, "d"))) == \
        sorted("e%d" % i for i in range(8) if i <= n)


def fio_verify(path, direct, runtime):
    return subprocess.Popen(
        ["fio", "--name=v", "--filename=" + path, "--size=4M", "--bs=4k",
         "--rw=randwrite", "--verify=crc32c", "--verify_backlog=16",
         "--verify_fatal=1", "--verify_state_save=0", "--time_based",
         "--runtime=%d" % runtime,
         "--direct=%d" % direct, "--ioengine=psync", "--minimal"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


class PyVerify(threading.Thread):
    """Without fio: write 4k blocks stamped with (round, block, crc32c of
    the rest), read each back and check it, over and over."""

    def __init__(self, path, direct, runtime):
        super().__init__()
        self.path, self.direct, self.runtime = path, direct, runtime
        self.errors, self.ops = [], 0
        self.start()

    def run(self):
        flags = os.O_RDWR | os.O_CREAT | (os.O_DIRECT if self.direct else 0)
        fd = os.open(self.path, flags, 0o644)
        buf, back = mmap.mmap(-1, 4096), mmap.mmap(-1, 4096)  # aligned
        end = time.monotonic() + self.runtime
        r = 0
        try:
            while time.monotonic() < end:
                r += 1
                for b in range(256):
                    body = os.urandom(4088)
                    crc = zlib.crc32(body)
                    buf[:] = crc.to_bytes(4, "little") + \
                        (r * 256 + b).to_bytes(4, "little") + body
                    os.pwritev(fd, [buf], b * 4096)
                    os.preadv(fd, [back], b * 4096)
                    if back[:] != buf[:] or \
                            zlib.crc32(back[8:]) != crc:
                        self.errors.append("block %d round %d differs" % (b, r))
                        return
                    self.ops += 1
        except OSError as e:
            self.errors.append(repr(e))
        finally:
            os.close(fd)

    def result(self):
        self.join(self.runtime + 60)
        return self.errors


def sha256(path):
    with open(path, "rb") as r:
        return hashlib.sha256(r.read()).hexdigest()


def test_20_takeovers_under_verified_load(served, plugin):
    f, mp = served(plugin)
    runtime = 25
    if shutil.which("fio"):
        jobs = [fio_verify(os.path.join(mp, "f%d" % d), d, runtime)
                for d in (0, 1)]
    else:
        jobs = [PyVerify(os.path.join(mp, "f%d" % d), d, runtime)
                for d in (0, 1)]
    time.sleep(1)
    try:
        for i in range(20):
            rc, line, _ = restart(mp)
            assert rc == 0, (i, line, f.log())
            time.sleep(0.2)
    finally:
        results = []
        for j in jobs:
            if isinstance(j, subprocess.Popen):
                out, _ = j.communicate(timeout=runtime + 120)
                results.append((j.returncode, out))
            else:
                results.append((0 if not j.result() else 1, j.errors))
    for rc, out in results:
        assert rc == 0, out
        if isinstance(out, str):
            # terse: field 5 is fio's error code; writes were verified
            fields = out.strip().splitlines()[-1].split(";")
            assert fields[4] == "0", out
            assert int(fields[5]) > 0, out  # KiB read back for verify
    if f.source:  # what the mount shows is what the source holds
        for d in (0, 1):
            name = "f%d" % d
            assert sha256(os.path.join(mp, name)) == \
                sha256(os.path.join(f.source, name)), name


def test_refused_for_a_plugin_without_the_hooks(served):
    f, mp = served("null")
    old = server_of(f)
    rc, line, took = restart(mp)
    assert rc == 1, line
    assert "plugin 'null' has no state_save/state_load hooks" in line, line
    assert "still serves" in line, line
    assert server_of(f) == old
    os.stat(mp)  # served: no ENOTCONN
    assert took < RESTART_BOUND


def test_refused_for_an_unreadable_state_version(served, plugin):
    # the old server names version 99 for the state it saved
    f, mp = served(plugin, env={"FRING_TEST_TAKEOVER_VERSION": "99"})
    with open(os.path.join(mp, "kept"), "w") as w:
        w.write("still here")
    old = server_of(f)
    rc, line, _ = restart(mp)
    assert rc == 1, line
    assert "cannot read the state handed over (version 99)" in line, line
    assert "pid %d still serves" % old in line, line
    assert "%s: takeover state version 99" % plugin in f.log()
    assert server_of(f) == old
    with open(os.path.join(mp, "kept")) as r:
        assert r.read() == "still here"
    with open(os.path.join(mp, "new"), "w") as w:  # and it writes
        w.write("x")


HELD_RE = re.compile(r"uring: thread \d+: adopted (\d+) held request\(s\), "
                     r"registered (\d+) entries anew")


@pytest.mark.parametrize("transport", URING_PARAMS, indirect=True)
def test_io_uring_entries_are_adopted_full(served):
    # A quiet mount: the fill alone makes every entry of the old server
    # hold a request, and the new one adopts them all, registering none.
    others = _fillers()  # not this test's (another run's, stuck or not)
    f, mp = served()
    with open(os.path.join(mp, "kept"), "w") as w:
        w.write("kept")
    rc, line, _ = restart(mp)
    assert rc == 0, (line, f.log())
    log = f.log()
    adopted = [tuple(map(int, g)) for g in HELD_RE.findall(log)]
    assert adopted, log
    assert all(fresh == 0 for _, fresh in adopted), adopted
    depth = int(re.search(r"(\d+) entries each", log).group(1))
    qids = int(re.search(r"io_uring: (\d+) queues on", log).group(1))
    assert sum(h for h, _ in adopted) == qids * depth, (adopted, log)
    with open(os.path.join(mp, "kept")) as r:
        assert r.read() == "kept"
    # no filler of this restart is left waiting: each got its answer
    # (ENOENT)
    deadline = time.monotonic() + 10
    while _fillers() - others:
        assert time.monotonic() < deadline, \
            "a filler still waits: %s" % sorted(_fillers() - others)
        time.sleep(0.05)
    assert not [n for n in os.listdir(mp) if n.startswith(".fring")]


@pytest.mark.parametrize("transport", URING_PARAMS, indirect=True)
def test_io_uring_entries_of_a_dead_new_server_are_registered_anew(served):
    # The first new server serves (it answers the fillers: its commits arm
    # every entry in its own ring) and is killed before it reports; the
    # next finds no request held and registers every entry again.
    f, mp = served(env={"FRING_TEST_TAKEOVER_DIE": "new-served"})
    with open(os.path.join(mp, "kept"), "w") as w:
        w.write("kept")
    rc, line, took = restart(mp)
    assert rc == 0 and "fring: restart: ok: " in line, (line, f.log())
    assert "starting another new server" in f.log()
    assert took < RESTART_BOUND
    log = f.log()
    depth = int(re.search(r"(\d+) entries each", log).group(1))
    qids = int(re.search(r"io_uring: (\d+) queues on", log).group(1))
    last = [tuple(map(int, g)) for g in HELD_RE.findall(log)][-qids:]
    assert sum(fresh for _, fresh in last) == qids * depth, (last, log)
    with open(os.path.join(mp, "kept")) as r:
        assert r.read() == "kept"
    with open(os.path.join(mp, "after"), "w") as w:
        w.write("y")


def _pids():
    return [p for p in os.listdir("/proc") if p.isdigit()]


def _fillers():
    """The fring-fill processes (session_fill.c) now, as (PID, start
    time): a PID reused after a process of another run ended is new."""
    out = set()
    for p in _pids():
        if _comm(p) != "fring-fill":
            continue
        try:
            with open("/proc/%s/stat" % p) as st:
                start = st.read().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError):
            continue  # gone meanwhile
        out.add((int(p), start))
    return out


def _comm(pid):
    try:
        with open("/proc/%s/comm" % pid) as c:
            return c.read().strip()
    except OSError:
        return ""


@pytest.mark.parametrize("step", ["new-start", "new-loaded"])
def test_new_server_killed_before_the_point_of_no_return(served, step):
    f, mp = served(env={"FRING_TEST_TAKEOVER_DIE": step})
    with open(os.path.join(mp, "kept"), "w") as w:
        w.write("kept")
    old = server_of(f)
    rc, line, took = restart(mp)
    assert rc == 1 and "the new server died" in line, line
    assert "pid %d still serves" % old in line, line
    assert took < RESTART_BOUND
    assert server_of(f) == old
    with open(os.path.join(mp, "kept")) as r:
        assert r.read() == "kept"
    with open(os.path.join(mp, "after"), "w") as w:
        w.write("y")


def test_new_server_killed_after_the_point_of_no_return_is_replaced(served):
    f, mp = served(env={"FRING_TEST_TAKEOVER_DIE": "new-go"})
    with open(os.path.join(mp, "kept"), "w") as w:
        w.write("kept")
    rc, line, took = restart(mp)
    assert rc == 0 and "fring: restart: ok: " in line, (line, f.log())
    assert "starting another new server" in f.log()
    assert took < RESTART_BOUND
    with open(os.path.join(mp, "kept")) as r:
        assert r.read() == "kept"


def test_old_server_killed_after_it_handed_its_state_over(served):
    f, mp = served(env={"FRING_TEST_TAKEOVER_DIE": "old-saved"})
    with open(os.path.join(mp, "kept"), "w") as w:
        w.write("kept")
    rc, line, took = restart(mp)
    assert rc == 0, (line, f.log())
    assert took < RESTART_BOUND
    with open(os.path.join(mp, "kept")) as r:
        assert r.read() == "kept"


def test_old_server_killed_before_its_state_is_aborted_cleanly(served):
    f, mp = served(env={"FRING_TEST_TAKEOVER_DIE": "old-paused"})
    fd = os.open(os.path.join(mp, "held"), os.O_CREAT | os.O_RDWR, 0o644)
    rc, line, took = restart(mp)
    assert rc == 1, line
    assert "connections are aborted (ENOTCONN)" in line, line
    assert took < RESTART_BOUND
    for op in (lambda: os.listdir(mp), lambda: os.pwrite(fd, b"x", 0)):
        with pytest.raises(OSError) as e:
            op()
        assert e.value.errno in (errno.ENOTCONN, errno.ECONNABORTED), e.value
    try:
        os.close(fd)
    except OSError as e:  # the FLUSH of an aborted connection
        assert e.errno == errno.ENOTCONN
    assert f.proc.wait(10) == 1  # the supervisor has nothing left to serve
    assert "aborted the connection of %s" % mp in f.log()


INIT_RE = re.compile(r"(?:adopted INIT: )?FUSE 7\.(\d+) \(kernel [\d.]+\), "
                     r"want (0x[0-9a-f]+) of (0x[0-9a-f]+), max_write (\d+)")


def test_new_server_keeps_the_kernels_init_state(served):
    f, mp = served()
    for _ in range(2):
        rc, line, _ = restart(mp)
        assert rc == 0, line
    log = f.log()
    first = [m.groups() for m in INIT_RE.finditer(log)
             if "adopted" not in m.group(0)]
    adopted = [m.groups() for m in INIT_RE.finditer(log)
               if "adopted" in m.group(0)]
    assert len(first) == 1 and len(adopted) == 2, log
    assert adopted == first * 2
    # a write of max_write bytes goes through in one piece as before
    data = os.urandom(int(first[0][3]))
    with open(os.path.join(mp, "big"), "wb") as w:
        w.write(data)
    with open(os.path.join(mp, "big"), "rb") as r:
        assert r.read() == data


def test_passthrough_open_files_unlinked_renamed_and_dirs_survive(served):
    # An open file unlinked, one renamed, a directory fd and a
    # a lookup held by a cwd: the new passthrough reopens the first through
    # the old process's descriptor, the others by file handle, with the same
    # node ids and fh values.
    f, mp = served("passthrough")
    src = f.source
    for i in range(40):
        with open(os.path.join(src, "n%02d" % i), "w") as w:
            w.write("n%d" % i)
    gone = os.open(os.path.join(mp, "gone"), os.O_CREAT | os.O_RDWR, 0o600)
    os.write(gone, b"before")
    os.unlink(os.path.join(mp, "gone"))
    moved = os.open(os.path.join(mp, "n00"), os.O_RDWR | os.O_APPEND)
    os.rename(os.path.join(mp, "n00"), os.path.join(mp, "m00"))
    ino = os.stat(os.path.join(mp, "m00")).st_ino
    dfd = os.open(mp, os.O_RDONLY | os.O_DIRECTORY)
    names_before = sorted(os.listdir(dfd))
    for _ in range(3):
        rc, line, _ = restart(mp)
        assert rc == 0, (line, f.log())
    assert "passthrough: took over" in f.log()
    assert "could not be reopened" not in f.log()
    os.pwrite(gone, b"after!", 0)
    assert os.pread(gone, 6, 0) == b"after!"
    os.write(moved, b"+")
    with open(os.path.join(src, "m00")) as r:
        assert r.read() == "n0+"
    assert os.stat(os.path.join(mp, "m00")).st_ino == ino
    assert sorted(os.listdir(dfd)) == names_before
    os.close(gone)
    os.close(moved)
    os.close(dfd)


def test_passthrough_kernel_passthrough_opens_survive(served):
    # Files the kernel reads and writes itself (FOPEN_PASSTHROUGH): their
    # backing registration lives in the connection; the new server keeps
    # its id and open counts, and the last RELEASE after the takeovers
    # drops it, so a later open registers anew.
    f, mp = served("passthrough", opts=["kernel_passthrough=true"])
    path = os.path.join(mp, "kp")
    with open(path, "wb") as w:
        w.write(b"a" * 8192)
    rw = os.open(path, os.O_RDWR)
    ro = os.open(path, os.O_RDONLY)
    for _ in range(3):
        rc, line, _ = restart(mp)
        assert rc == 0, (line, f.log())
    if "kernel passthrough unavailable" in f.log() or \
            "offers no kernel passthrough" in f.log():
        pytest.skip("no FUSE passthrough here")
    os.pwrite(rw, b"b" * 4096, 0)
    assert os.pread(ro, 4096, 0) == b"b" * 4096
    os.close(rw)
    os.close(ro)
    with open(path, "r+b") as again:
        again.write(b"c")
    with open(os.path.join(f.source, "kp"), "rb") as r:
        assert r.read() == b"c" + b"b" * 4095 + b"a" * 4096


def test_passthrough_file_unlinked_while_open_is_lost_if_the_old_dies(served):
    # With the old server gone before the load (killed right after it
    # handed its state over), an open file can be reopened only by its
    # file handle: a linked one keeps working, one unlinked while open has
    # no handle that resolves any more: its I/O fails with EIO (or ESTALE
    # where the kernel asks for its attributes first), never a crash.
    f, mp = served("passthrough", env={"FRING_TEST_TAKEOVER_DIE": "old-saved"})
    kept = os.open(os.path.join(mp, "kept"), os.O_CREAT | os.O_RDWR, 0o600)
    gone = os.open(os.path.join(mp, "gone"), os.O_CREAT | os.O_RDWR, 0o600)
    os.write(gone, b"x")
    os.unlink(os.path.join(mp, "gone"))
    rc, line, _ = restart(mp)
    assert rc == 0, (line, f.log())
    assert "1 of 2 open files could not be reopened" in f.log(), f.log()
    os.pwrite(kept, b"kept", 0)
    assert os.pread(kept, 4, 0) == b"kept"
    for op in (lambda: os.pread(gone, 1, 0), lambda: os.pwrite(gone, b"y", 0)):
        with pytest.raises(OSError) as e:
            op()
        assert e.value.errno in (errno.EIO, errno.ESTALE), e.value
    with pytest.raises(OSError) as e:
        os.fsync(gone)
    assert e.value.errno == errno.EIO, e.value
    os.close(gone)
    os.close(kept)
    with open(os.path.join(mp, "after"), "w") as w:  # still serving
        w.write("y")
