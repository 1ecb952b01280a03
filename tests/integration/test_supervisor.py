# SPDX-License-Identifier: MIT
"""`fring run` supervises its serving process: if that process dies (even
by SIGKILL, in the middle of heavy I/O), the supervisor aborts the FUSE
connection so clients get ENOTCONN at once instead of hanging, and exits
non-zero with a message saying how to clear the mountpoint."""
import errno
import os
import signal
import threading
import time

from conftest import force_unmount, is_mounted, serving_pid


def write_config(tmpdirs, plugin_lines):
    d = tmpdirs("cfg")
    mnt = tmpdirs("mnt")
    path = os.path.join(d, "fring.yaml")
    with open(path, "w") as f:
        f.write("mounts:\n  - mountpoint: %s\n%s" % (mnt, plugin_lines))
    return path, mnt


def test_serving_process_is_a_supervised_child(spawn, tmpdirs):
    cfg, mnt = write_config(tmpdirs, "    plugin: memfs\n")
    f = spawn(["run", cfg], [mnt])
    f.wait_ready(1)
    child = serving_pid(f.proc.pid)
    assert child != f.proc.pid
    # SIGTERM to the supervisor reaches the server: clean unmount, exit 0.
    assert f.stop(signal.SIGTERM) == 0, f.log()
    assert not is_mounted(mnt)
    assert not os.path.exists("/proc/%d" % child) or \
        open("/proc/%d/stat" % child).read().split()[2] == "Z"


def test_sigkill_mid_io_gives_enotconn_at_once(spawn, tmpdirs):
    src = tmpdirs("src")
    cfg, mnt = write_config(tmpdirs, "    plugin: passthrough\n    options: { source: %s }\n" % src)
    f = spawn(["run", cfg], [mnt])
    f.wait_ready(1)
    server = serving_pid(f.proc.pid)
    assert server != f.proc.pid

    stop = threading.Event()
    errors = []

    def writer(i):
        block = os.urandom(1 << 20)
        try:
            with open(os.path.join(mnt, "w%d" % i), "wb", buffering=0) as fh:
                while not stop.is_set():
                    fh.write(block)
                    fh.seek(0)
        except OSError as e:
            errors.append(e.errno)

    threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    os.kill(server, signal.SIGKILL)
    rc = f.proc.wait(10)
    stop.set()
    for t in threads:
        t.join(10)
        assert not t.is_alive(), "a client is still blocked after the server died"
    try:
        assert rc == 1
        log = f.log()
        assert "serving process (pid %d) died" % server in log
        assert "aborted the connection of %s" % mnt in log
        assert "fusermount3 -u %s" % mnt in log
        # The mount is detectably dead: ENOTCONN, not a hang.
        try:
            os.stat(mnt)
            raise AssertionError("stat on a dead mount succeeded")
        except OSError as e:
            assert e.errno == errno.ENOTCONN
        # In-flight I/O ends with ECONNABORTED or, for io_uring entries the
        # kernel tears down, ECANCELED; new requests get ENOTCONN.
        assert set(errors) <= {errno.ENOTCONN, errno.ECONNABORTED, errno.ECANCELED}, errors
    finally:
        force_unmount(mnt)
