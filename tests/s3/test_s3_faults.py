# SPDX-License-Identifier: MIT
"""plugins/s3 when the gateway stops answering mid-read: radosgw (our own
daemon, by PID) is stopped with SIGSTOP while a file is open, a read of
bytes not yet fetched fails with EIO within the plugin's timeout and
retries (never hangs), and once the gateway runs again (SIGCONT) the same
read returns the right bytes; over io_uring and /dev/fuse."""
import errno
import os
import signal
import threading
import time

import pytest

from s3_mount import S3Mount

MIB = 1 << 20


def put(gw, key, data):
    st, body = gw.request("PUT", "/%s/%s" % (gw.bucket, key), data=data)
    assert st == 200, (key, st, body[-300:])


def timed_pread(fd, n, off, bound):
    """(bytes or the OSError, seconds), failing the test past bound."""
    out = {}

    def run():
        t0 = time.monotonic()
        try:
            out["r"] = os.pread(fd, n, off)
        except OSError as e:
            out["r"] = e
        out["t"] = time.monotonic() - t0

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(bound)
    assert not t.is_alive(), "a read still hangs after %d s" % bound
    return out["r"], out["t"]


@pytest.mark.parametrize("transport", ["uring", "devfuse"])
def test_gateway_stopped_mid_read(gateway, transport):
    key = "faults/%s.bin" % transport
    data = os.urandom(20 * MIB)
    put(gateway, key, data)
    rgw = gateway.pids["radosgw"]
    m = S3Mount(gateway, [("timeout", "2"), ("connect_timeout", "1"),
                          ("retries", "1")], transport)
    try:
        m.wait_ready()
        fd = os.open(m.path(key), os.O_RDONLY)
        try:
            assert os.pread(fd, 4096, 0) == data[:4096]
            os.kill(rgw, signal.SIGSTOP)
            try:
                off = 15 * MIB
                r, took = timed_pread(fd, 4096, off, 60)
                assert isinstance(r, OSError) and r.errno == errno.EIO, r
                # 2 attempts of at most 2 s and a backoff under 2 s
                assert took < 15, took
            finally:
                os.kill(rgw, signal.SIGCONT)
            r, _ = timed_pread(fd, 4096, off, 60)
            assert r == data[off:off + 4096]
        finally:
            os.close(fd)
        # one line for the kind, with curl's reason
        lines = [l for l in m.log().splitlines() if "GET %s" % key in l]
        assert len(lines) == 1 and "Timeout was reached" in lines[0], m.log()
        rc = m.stop()
        assert rc == 0, "exit %s after SIGTERM:\n%s" % (rc, m.log())
    finally:
        os.kill(rgw, signal.SIGCONT)
        m.cleanup()
