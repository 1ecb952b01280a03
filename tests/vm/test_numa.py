# SPDX-License-Identifier: MIT
"""NUMA placement on a real (emulated) two-node machine (runs in the tests/vm
guest, booted by ctest's vm_numa with FRING_VM_NUMA=2 FRING_VM_CPUS=4: CPUs
0-1 on node 0, 2-3 on node 1).

The topology is checked first, and every test fails (not skips) without
it. Then passthrough is mounted over io_uring (the default buffer pool,
`placement: local`, so no thread moves) with `queues: auto`, `queues: 2`,
`queues: 2` with `reduced_queues: on` (7.3 does not offer bit 44, so every
qid is still registered), `queues: 1` and `cpus: "2-3"`; for each: the mount's `queues:` line, the
CPU affinity of every fring-uring-N thread of the serving process (it must
agree with the line and keep to the CPUs and nodes asked for), the node of
every page of each queue's memory (headers and pool: their addresses come
from the FRING_LOG=debug line `uring: qid Q (thread T, CPU C): headers ADDR
N KiB, pool ADDR N KiB`, the nodes from move_pages(2)), which must be the
node of the CPUs its thread is pinned to, and O_DIRECT round trips issued
from each CPU in turn (so through every qid), checked by SHA-256 on the
mount and on the backing file.
"""

import ctypes
import glob
import hashlib
import mmap
import os
import platform
import re
import signal

import pytest

import conftest as itg  # tests/vm/conftest.py: the integration fixtures

NODES, CPUS = 2, 4  # what vm_numa asks run.sh for
PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1 << 20


def cpulist(text):
    """"0-1,3" -> {0, 1, 3}"""
    out = set()
    for part in text.strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def read(path):
    with open(path) as f:
        return f.read()


@pytest.fixture(scope="module")
def node_of():
    """{cpu: node} of the guest; fails unless it is 2 nodes x 2 CPUs."""
    nodes = {}
    for d in sorted(glob.glob("/sys/devices/system/node/node[0-9]*")):
        nodes[int(d.rsplit("node", 1)[1])] = cpulist(read(d + "/cpulist"))
    want = {0: {0, 1}, 1: {2, 3}}
    assert nodes == want, (
        "the guest is not the 2-node machine vm_numa asks for (nodes %s, "
        "want %s): boot it with FRING_VM_NUMA=2 FRING_VM_CPUS=4 "
        "tests/vm/run.sh" % (nodes, want))
    assert os.cpu_count() == CPUS
    return {c: n for n, cs in nodes.items() for c in cs}


def test_topology_is_two_nodes_of_two_cpus(node_of):
    assert node_of == {0: 0, 1: 0, 2: 1, 3: 1}
    # each node has memory of its own (vng --numa: half each)
    for n in range(NODES):
        kb = int(re.search(r"MemTotal:\s+(\d+) kB",
                           read("/sys/devices/system/node/node%d/meminfo" % n)).group(1))
        assert kb > 512 * 1024, (n, kb)


# ---- where the kernel keeps a process's pages ----

_NR_MOVE_PAGES = {"x86_64": 279, "aarch64": 239}[platform.machine()]
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def page_nodes(pid, addr, length):
    """The node of each page of [addr, addr+length) in pid (move_pages(2)
    with nodes NULL: only asks). A page not present gives -ENOENT."""
    n = (length + PAGE - 1) // PAGE
    pages = (ctypes.c_void_p * n)(*[addr + i * PAGE for i in range(n)])
    status = (ctypes.c_int * n)()
    ret = _libc.syscall(ctypes.c_long(_NR_MOVE_PAGES), ctypes.c_long(pid),
                        ctypes.c_ulong(n), pages, None, status, ctypes.c_int(0))
    assert ret == 0, "move_pages: %s" % os.strerror(ctypes.get_errno())
    return list(status)


# ---- one mount ----

def serve(spawn, tmpdirs, transport):
    """passthrough over io_uring with this transport section, FRING_LOG=debug;
    (mountpoint, source, Fring, serving pid)."""
    mp, src = tmpdirs("mnt"), tmpdirs("src")
    cfg = os.path.join(tmpdirs("cfg"), "fring.yaml")
    with open(cfg, "w") as f:
        f.write("mounts:\n  - mountpoint: %s\n    plugin: passthrough\n"
                "    options: { source: %s }\n    transport: %s\n"
                % (mp, src, transport))
    os.environ["FRING_LOG"] = "debug"
    try:
        fr = spawn(["run", cfg], [mp])
    finally:
        os.environ.pop("FRING_LOG", None)
    ready = fr.wait_ready(1, timeout=60)
    assert ready[0].endswith("transport uring)"), ready
    return mp, src, fr, itg.serving_pid(fr.proc.pid)


def queues_line(log):
    """The `queues:` info line: (text, [(qids, cpus, nodes)] per thread)."""
    m = re.search(r": queues: (.*)", log)
    assert m, log
    text = m.group(1)
    groups = [(cpulist(q), cpulist(c), cpulist(n)) for q, c, n in re.findall(
        r"qids? ([\d,-]+) on CPUs? ([\d,-]+) nodes? ([\d,-]+)", text)]
    assert groups, text
    return text, groups


def queue_threads(pid):
    """{N: allowed CPUs} of the fring-uring-N threads of pid."""
    out = {}
    for task in glob.glob("/proc/%d/task/*" % pid):
        try:
            comm = read(task + "/comm").strip()
            status = read(task + "/status")
        except OSError:
            continue
        m = re.fullmatch(r"fring-uring-(\d+)", comm)
        if m:
            allowed = re.search(r"^Cpus_allowed_list:\s*(\S+)", status, re.M)
            out[int(m.group(1))] = cpulist(allowed.group(1))
    return out


def queue_memory(log):
    """{qid: (thread, [(addr, bytes), ...])} from the debug lines."""
    out = {}
    for qid, th, hdr, hkb, pool, pkb in re.findall(
            r"uring: qid (\d+) \(thread (\d+), CPU -?\d+\): headers "
            r"(0x[0-9a-f]+) (\d+) KiB, pool (0x[0-9a-f]+) (\d+) KiB", log):
        out[int(qid)] = (int(th), [(int(hdr, 16), int(hkb) << 10),
                                   (int(pool, 16), int(pkb) << 10)])
    return out


def round_trips(mp, src):
    """An O_DIRECT write and read back of 256 KiB from each CPU in turn
    (the kernel queues a request on its caller's CPU's qid)."""
    mine = os.sched_getaffinity(0)
    n = 256 << 10
    buf, back = mmap.mmap(-1, n), mmap.mmap(-1, n)
    try:
        for cpu in range(CPUS):
            os.sched_setaffinity(0, {cpu})
            data = os.urandom(n)
            buf[:] = data
            path = os.path.join(mp, "cpu%d" % cpu)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o644)
            try:
                assert os.pwritev(fd, [buf], 0) == n
                assert os.preadv(fd, [back], 0) == n
            finally:
                os.close(fd)
            want = hashlib.sha256(data).hexdigest()
            assert hashlib.sha256(back).hexdigest() == want, cpu
            with open(os.path.join(src, "cpu%d" % cpu), "rb") as f:
                assert hashlib.sha256(f.read()).hexdigest() == want, cpu
    finally:
        os.sched_setaffinity(0, mine)
        buf.close()
        back.close()


def nodes_of(cpus, node_of):
    return {node_of[c] for c in cpus}


CASES = {
    # transport section, expected queues line
    "auto": ("{ mode: uring, placement: local, queues: auto }",
             "4, a thread each (no reduced queues: the kernel does not offer "
             "them): qid 0 on CPU 0 node 0; qid 1 on CPU 1 node 0; "
             "qid 2 on CPU 2 node 1; qid 3 on CPU 3 node 1"),
    "queues2": ("{ mode: uring, placement: local, queues: 2 }", None),
    # `on` trusts bit 44 only where INIT offers it: vanilla 7.3 does not,
    # so every qid is still registered (2 threads for 4 qids, not 2 qids).
    "reduced_on": ("{ mode: uring, placement: local, queues: 2, reduced_queues: on }",
                   None),
    "queues1": ("{ mode: uring, placement: local, queues: 1 }", None),
    "cpus2-3": ('{ mode: uring, placement: local, queues: auto, cpus: "2-3" }', None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_threads_and_queue_memory_on_their_nodes(spawn, tmpdirs, node_of, case):
    transport, want_line = CASES[case]
    mp, src, fr, pid = serve(spawn, tmpdirs, transport)
    log = fr.log()
    text, groups = queues_line(log)
    threads = queue_threads(pid)
    memory = queue_memory(log)
    print("\n%s: queues: %s" % (case, text))
    print("%s: threads %s" % (case, {"fring-uring-%d" % i: sorted(c)
                                     for i, c in sorted(threads.items())}))

    # The line and the threads agree: thread i serves the i-th group's qids
    # and may run on its CPUs only.
    assert len(groups) == len(threads), (text, threads)
    for i, (qids, cpus, node) in enumerate(groups):
        assert threads[i] == cpus, (i, text, threads)
        # the nodes named are its CPUs'
        assert node == nodes_of(cpus, node_of), (i, text)
        assert len(node) == 1 or case == "queues1", (i, text)
    # Every qid (one per CPU: the 7.3 kernel has no reduced queues) has
    # its memory, allocated by the thread the line names.
    assert sorted(memory) == list(range(CPUS)), log
    for i, (qids, _, _) in enumerate(groups):
        for q in qids:
            assert memory[q][0] == i, (q, memory[q], text)

    if case == "auto":
        assert text == want_line
        assert threads == {i: {i} for i in range(CPUS)}
    elif case in ("queues2", "reduced_on"):
        assert text.startswith("4, every CPU's, on 2 threads (no reduced "
                               "queues, fewer would hang the kernel's I/O: "
                               "the kernel does not offer them)"), text
        assert len(threads) == 2
        # one thread per node, not both on node 0
        assert sorted(nodes_of(c, node_of) for c in threads.values()) == [{0}, {1}], threads
    elif case == "queues1":
        assert text.startswith("4, every CPU's, on 1 thread "), text
        assert len(threads) == 1
    else:  # cpus 2-3
        assert len(threads) == 2
        assert set().union(*threads.values()) <= {2, 3}, threads
        assert threads == {0: {2}, 1: {3}}, threads

    # Each queue's pages are on its own CPU's node (also with one thread
    # for both nodes, queues1), or, for a CPU transport.cpus leaves out,
    # on its thread's node.
    seen = {}
    for q, (th, regions) in sorted(memory.items()):
        got = []
        for addr, length in regions:
            got += page_nodes(pid, addr, length)
        counts = {n: got.count(n) for n in sorted(set(got))}
        seen[q] = counts
        assert all(n >= 0 for n in got), (q, counts)  # populated at start
        want = {node_of[q]} if case != "cpus2-3" or q in (2, 3) else nodes_of(threads[th], node_of)
        assert set(got) == want, ("qid %d (thread %d on CPUs %s): pages "
                                  "per node %s" % (q, th, sorted(threads[th]), counts))
    print("%s: pages per node of each qid's headers+pool %s" % (case, seen))

    round_trips(mp, src)
    assert queue_threads(pid) == threads  # placement local: nobody moved

    rc = fr.stop(signal.SIGTERM, timeout=30)
    log = fr.log()
    assert rc == 0, log
    assert not itg.is_mounted(mp)
    per = re.search(r"requests over the ring \(([^)]*)\)", log)
    assert per, log
    print("%s: %s" % (case, per.group(1)))
    counts = [int(x) for x in re.findall(r"qid \d+: (\d+)", per.group(1))]
    assert len(counts) == CPUS and all(counts), per.group(1)  # every qid served
