# SPDX-License-Identifier: MIT
"""plugins/s3 against the real Ceph RADOS Gateway of ceph_gateway.py,
over io_uring and /dev/fuse. Objects are put and read back by the test's
own SigV4 client (curl, gateway.request), the mount is fring's: sizes,
bytes (SHA-256), ranged reads across RGW's 4 MiB stripe, a listing of
1,500 keys (two pages and a half), ENOENT for a missing key, a wrong
secret key, an unknown access key, a missing bucket and no credentials
at all refusing the mount with one line, readonly=true's EROFS."""
import concurrent.futures
import errno
import hashlib
import os
import time

import pytest

from s3_mount import S3Mount

TRANSPORTS = ["uring", "devfuse"]
MIB = 1 << 20
# name -> size: empty, tiny, one page, across the 4 MiB stripe, and
# large enough for the readahead window to grow several times.
FILES = {"r/empty": 0, "r/one": 1, "r/page": 4096,
         "r/stripe.bin": 5 * MIB + 123, "r/sub/large.bin": 40 * MIB + 7}
MANY = 1500


def sha(b):
    return hashlib.sha256(b).hexdigest()


def put(gw, key, data):
    st, body = gw.request("PUT", "/%s/%s" % (gw.bucket, key), data=data)
    assert st == 200, (key, st, body[-300:])


@pytest.fixture(scope="module")
def objects(gateway):
    """The read fixtures, put once: {key: bytes}."""
    data = {k: os.urandom(n) for k, n in FILES.items()}
    for k, v in data.items():
        put(gateway, k, v)
    return data


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_read_sizes_bytes_ranges(gateway, objects, mounted, transport):
    m = mounted(transport=transport)
    assert m.ready.rstrip().endswith("transport %s)" % transport), m.ready
    for key, data in objects.items():
        st = os.stat(m.path(key))
        assert st.st_size == len(data), key
        # mtime is Last-Modified: the put a moment ago.
        assert abs(st.st_mtime - time.time()) < 600, (key, st.st_mtime)
        with open(m.path(key), "rb") as f:
            assert sha(f.read()) == sha(data), key
    big = objects["r/stripe.bin"]
    fd = os.open(m.path("r/stripe.bin"), os.O_RDONLY)
    try:
        # Across the stripe, then the last bytes and past the end.
        assert os.pread(fd, 400, 4194000) == big[4194000:4194400]
        assert os.pread(fd, 4096, len(big) - 10) == big[-10:]
        assert os.pread(fd, 4096, len(big) + 5) == b""
    finally:
        os.close(fd)
    large = objects["r/sub/large.bin"]
    fd = os.open(m.path("r/sub/large.bin"), os.O_RDONLY)
    try:
        # Random reads in the middle, out of order.
        for off in (31 * MIB + 5, 3 * MIB - 1, 20 * MIB, 39 * MIB + 77):
            assert os.pread(fd, 70000, off) == large[off:off + 70000], off
    finally:
        os.close(fd)
    assert sorted(os.listdir(m.path("r"))) == ["empty", "one", "page",
                                               "stripe.bin", "sub"]
    assert os.path.isdir(m.path("r/sub"))


def test_concurrent_readers(gateway, objects, mounted):
    m = mounted()
    want = sha(objects["r/sub/large.bin"])

    def one(_):
        with open(m.path("r/sub/large.bin"), "rb") as f:
            return sha(f.read())
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        assert list(ex.map(one, range(4))) == [want] * 4


def test_listing_paginated(gateway, mounted):
    names = ["k%05d" % i for i in range(MANY)]
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        list(ex.map(lambda n: put(gateway, "many/" + n, n.encode()), names))
    put(gateway, "many/zdir/inner", b"x")
    m = mounted()
    got = os.listdir(m.path("many"))
    assert len(got) == MANY + 1
    assert sorted(got) == sorted(names + ["zdir"])
    assert os.path.isdir(m.path("many/zdir"))
    # Sizes come from the listing: one stat each, all right.
    assert all(os.stat(m.path("many", n)).st_size == len(n) for n in names[::97])
    with open(m.path("many", names[-1]), "rb") as f:
        assert f.read() == names[-1].encode()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_missing_key_enoent(gateway, objects, mounted, transport):
    m = mounted(transport=transport)
    for p in ("no-such-key", "r/no-such-key", "r/sub/no/deeper"):
        with pytest.raises(FileNotFoundError):
            os.stat(m.path(p))
        with pytest.raises(FileNotFoundError):
            open(m.path(p), "rb")
    # A file is not a directory.
    with pytest.raises(NotADirectoryError):
        os.stat(m.path("r/one/x"))


WRONG_SECRET = "wrong" + "x" * 35


@pytest.mark.parametrize("case", ["wrong_secret", "unknown_key",
                                  "no_bucket", "no_creds"])
def test_bad_credentials_refuse_mount(gateway, tmp_path, case):
    """Checked at mount: a wrong secret key, an access key the gateway
    does not know, a bucket it does not have, no credentials anywhere (no
    options, no AWS_*, a HOME without ~/.aws): one line saying which,
    nothing mounted, no secret in any line."""
    env = {"AWS_ACCESS_KEY_ID": gateway.access_key,
           "AWS_SECRET_ACCESS_KEY": gateway.secret_key}
    options, want = [], {
        "wrong_secret": ("SignatureDoesNotMatch", "Permission denied"),
        "unknown_key": ("InvalidAccessKeyId", "Permission denied"),
        "no_bucket": ("NoSuchBucket", "no such bucket"),
        "no_creds": ("no credentials", "AWS_ACCESS_KEY_ID")}[case]
    if case == "wrong_secret":
        env["AWS_SECRET_ACCESS_KEY"] = WRONG_SECRET
    elif case == "unknown_key":
        env["AWS_ACCESS_KEY_ID"] = "NOSUCHKEY0123456789X"
    elif case == "no_bucket":
        options = [("bucket", "fring-no-such-bucket")]
    else:   # set empty: the test's own environment may have them
        env = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""}
    env["HOME"] = str(tmp_path)
    env["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "none")
    m = S3Mount(gateway, options=options, env=env)
    try:
        rc = m.proc.wait(30)
        log = m.log()
        assert rc != 0, log
        assert not os.path.ismount(m.mp)
        lines = [l for l in log.splitlines() if "s3:" in l]
        assert len(lines) == 1 and all(w in lines[0] for w in want), log
        assert WRONG_SECRET not in log and gateway.secret_key not in log
    finally:
        m.cleanup()


def test_readonly_erofs(gateway, objects, mounted):
    m = mounted(options=[("readonly", "true")])
    for fn in (lambda: open(m.path("r/new"), "wb"),
               lambda: open(m.path("r/one"), "r+b"),
               lambda: os.mkdir(m.path("r/newdir")),
               lambda: os.unlink(m.path("r/one")),
               lambda: os.rename(m.path("r/one"), m.path("r/two"))):
        with pytest.raises(OSError) as e:
            fn()
        assert e.value.errno == errno.EROFS, fn
    with open(m.path("r/one"), "rb") as f:
        assert f.read() == objects["r/one"]


def test_bad_options_refused(gateway):
    for opt in (("part_size", "1KiB"), ("retries", "-1"), ("no_such", "1")):
        m = S3Mount(gateway, options=[opt])
        try:
            assert m.proc.wait(30) != 0
            assert "s3: " in m.log() and opt[0] in m.log(), m.log()
            assert not os.path.ismount(m.mp)
        finally:
            m.cleanup()
