# SPDX-License-Identifier: MIT
"""plugins/s3 at scale, on a Ceph gateway of this file's own (ctest
s3_scale): a directory of 100,000 keys, put by a separate S3 client (curl,
its URL globbing and parallel transfers), listed completely through the
mount (scandir: every name once, all regular files; sizes of a sample by
stat, bytes of a few); and one large file written through the mount in
1 MiB writes across many 8 MiB parts, its SHA-256 checked against the
object curl reads back from the bucket (and its ETag's part count), then
read back whole through a fresh mount.

The large file is 5 GiB (S3's largest single PUT, 640 parts), what CI
runs: 1.5-2 min here (tests/README.md). FRING_S3_LARGE sets
another size for a quicker run by hand (768MiB, 100m, 5000000: bytes
without a unit). The gateway's memstore (RAM) is sized for it. Each
phase's time is printed (pytest -s)."""
import hashlib
import os
import re
import subprocess
import time

import pytest


MIB = 1 << 20
GIB = 1 << 30
KEYS = 100_000
PART = 8 * MIB                  # the plugin's default part_size
LARGE_DEFAULT = 5 * GIB
UNITS = {"": 1, "k": 1 << 10, "kib": 1 << 10, "m": MIB, "mib": MIB,
         "g": GIB, "gib": GIB}


def parse_size(s):
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", s)
    assert m and m.group(2).lower() in UNITS, "FRING_S3_LARGE=%r" % s
    return int(m.group(1)) * UNITS[m.group(2).lower()]


LARGE = parse_size(os.environ.get("FRING_S3_LARGE", str(LARGE_DEFAULT)))


def note(what, seconds, nbytes=None):
    rate = " (%.0f MiB/s)" % (nbytes / MIB / seconds) if nbytes else ""
    print("s3_scale: %s: %.1f s%s" % (what, seconds, rate), flush=True)


@pytest.fixture(scope="module")
def gateway(start_gateway):
    """This file's own gateway (not the suite's session one): its
    memstore holds the large file, and the 100,000 keys are in no other
    test's bucket. conftest's `mounted` mounts it."""
    with start_gateway(osd_bytes=max(2 * GIB, 2 * LARGE + GIB)) as gw:
        yield gw


def key_size(i):
    return i % 10               # 0..9 bytes: empty objects too


def put_keys(gw, prefix, tmp):
    """KEYS objects prefix + k00000..k99999 by curl: one process per last
    digit (its size), each PUTting its 10,000 URLs of one glob in parallel
    over kept-alive connections. A PUT that failed (curl's status 000 for
    a timeout, 5xx) is tried once more on its own; then every key must
    have had a 200."""
    procs = []
    for d in range(10):
        body = str(d).encode() * key_size(d)
        path = "/%s/%sk[0000-9999]%d" % (gw.bucket, prefix, d)
        cmd = gw.curl_cmd("PUT", path, data=body, max_time=300)
        (tmp / str(d)).write_bytes(body)
        cmd[cmd.index("--data-binary") + 1] = "@%s" % (tmp / str(d))
        cmd += ["-w", "\n%{http_code} %{url_effective}\n",
                "--parallel", "--parallel-max", "8", "--no-progress-meter"]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE))
    ok, again = 0, []
    for p in procs:
        out, err = p.communicate(timeout=900)
        for line in out.decode(errors="replace").splitlines():
            code, _, url = line.partition(" ")
            if url.startswith("http"):
                if code == "200":
                    ok += 1
                else:
                    again.append(url[len(gw.endpoint):])
        # 28: a transfer timed out, tried again below
        assert p.returncode in (0, 28), err.decode()[-500:]
    assert len(again) < 100, (ok, again[:5])
    for path in again:
        d = int(path[-1])
        st, body = gw.request("PUT", path, data=str(d).encode() * key_size(d))
        assert st == 200, (path, st, body[-300:])
        ok += 1
    assert ok == KEYS
    return len(again)


def test_list_100k_keys(gateway, mounted, tmp_path):
    prefix = "k100k/"
    t0 = time.monotonic()
    again = put_keys(gateway, prefix, tmp_path)
    note("%d keys put by curl (%d of them twice)" % (KEYS, again),
         time.monotonic() - t0)
    m = mounted()
    t0 = time.monotonic()
    with os.scandir(m.path(prefix)) as it:
        got = [(e.name, e.is_file(follow_symlinks=False)) for e in it]
    note("scandir of %d entries through the mount" % len(got),
         time.monotonic() - t0)
    names = [n for n, _ in got]
    assert len(names) == KEYS
    assert set(names) == {"k%05d" % i for i in range(KEYS)}
    assert all(f for _, f in got)
    # Sizes from the listing (stat), a sample spread over every page.
    for i in list(range(0, KEYS, 997)) + [KEYS - 1]:
        st = os.stat(m.path(prefix, "k%05d" % i))
        assert st.st_size == key_size(i), i
    for i in (0, 9, 54321, KEYS - 1):
        with open(m.path(prefix, "k%05d" % i), "rb") as f:
            assert f.read() == str(i % 10).encode() * key_size(i), i


def chunks(size, step=MIB):
    """size bytes in step-sized chunks, each starting with its index, so
    parts that were swapped or repeated change the hash."""
    block = os.urandom(32 * MIB)
    i = 0
    for off in range(0, size, step):
        n = min(step, size - off)
        at = (i * 1048573) % (len(block) - step)
        yield (i.to_bytes(8, "little") + block[at:at + n])[:n]
        i += 1


def curl_sha(gw, key):
    """(SHA-256 hex, bytes) of the object, streamed from curl's stdout."""
    cmd = gw.curl_cmd("GET", "/%s/%s" % (gw.bucket, key), max_time=1800)
    cmd[cmd.index("-w") + 1] = ""      # only the body on stdout
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    h, n = hashlib.sha256(), 0
    while True:
        b = p.stdout.read(4 * MIB)
        if not b:
            break
        h.update(b)
        n += len(b)
    assert p.wait(60) == 0, p.stderr.read().decode()[-500:]
    return h.hexdigest(), n


def file_sha(path):
    h, n = hashlib.sha256(), 0
    with open(path, "rb", buffering=0) as f:
        while True:
            b = f.read(4 * MIB)
            if not b:
                break
            h.update(b)
            n += len(b)
    return h.hexdigest(), n


def test_large_file_through_the_mount(gateway, mounted):
    prefix, name = "large/", "big.bin"
    m = mounted([("prefix", prefix)])
    h = hashlib.sha256()
    t0 = time.monotonic()
    fd = os.open(m.path(name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for c in chunks(LARGE):
            h.update(c)
            view = memoryview(c)
            while view:
                view = view[os.write(fd, view):]
    finally:
        os.close(fd)    # the multipart upload completes here
    want = h.hexdigest()
    note("%d bytes written through the mount" % LARGE,
         time.monotonic() - t0, LARGE)

    t0 = time.monotonic()
    assert curl_sha(gateway, prefix + name) == (want, LARGE)
    note("read back by curl", time.monotonic() - t0, LARGE)
    st, body = gateway.request(
        "GET", "/%s?list-type=2&prefix=%s%s" % (gateway.bucket, prefix, name))
    assert st == 200, body
    etag = re.search(r"<ETag>([^<]*)</ETag>", body.decode()).group(1)
    parts = -(-LARGE // PART)
    if parts > 1:       # a multipart upload's ETag ends in -PARTS
        assert etag.replace("&quot;", "").endswith("-%d" % parts), etag

    r = mounted([("prefix", prefix)])  # no page cache from the writes
    assert os.stat(r.path(name)).st_size == LARGE
    t0 = time.monotonic()
    assert file_sha(r.path(name)) == (want, LARGE)
    note("read back through a fresh mount", time.monotonic() - t0, LARGE)
