# SPDX-License-Identifier: MIT
"""`fring mount s3` on a temporary mountpoint for the s3 suite, against
the gateway of ceph_gateway.py, always unmounted at the end (SIGTERM, then
fusectl + umount -l through tests/lib/mounts.py if fring left it)."""
import os
import signal
import subprocess
import tempfile
import time

from mounts import force_unmount, is_mounted

FRING = os.environ.get("FRING_BIN", "fring")
PLUGIN_DIR = os.environ.get("FRING_PLUGIN_DIR", "")
READY_TIMEOUT = 20


def fring_env(extra=None):
    env = dict(os.environ)
    if PLUGIN_DIR:
        env["FRING_PLUGIN_PATH"] = PLUGIN_DIR
    env.update(extra or {})
    return env


def mount_args(gw, mp, options=(), transport=None):
    """The gateway's bucket, endpoint and region unless options name
    their own."""
    given = {k for k, _ in options}
    args = [FRING, "mount", "s3", mp]
    for k, v in (("bucket", gw.bucket), ("endpoint", gw.endpoint),
                 ("region", gw.region)):
        if k not in given:
            args += ["-o", "%s=%s" % (k, v)]
    if transport:
        args += ["-t", transport]
    for k, v in options:
        args += ["-o", "%s=%s" % (k, v)]
    return args


class S3Mount:
    """A serving `fring mount s3`; keys come from the environment
    (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), unless options say."""

    def __init__(self, gw, options=(), transport=None, env=None):
        self.mp = tempfile.mkdtemp(prefix="fring-s3-mnt-")
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            mount_args(gw, self.mp, options, transport),
            stdout=subprocess.PIPE, stderr=self.err,
            env=fring_env(gw.env() if env is None else env))
        self.ready = None

    def log(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def wait_ready(self):
        fd = self.proc.stdout.fileno()
        os.set_blocking(fd, False)
        buf = b""
        deadline = time.monotonic() + READY_TIMEOUT
        while b" ready (" not in buf:
            if self.proc.poll() is not None:
                raise AssertionError("fring exited %s before ready:\n%s"
                                     % (self.proc.returncode, self.log()))
            if time.monotonic() > deadline:
                raise AssertionError("fring not ready in %d s:\n%s"
                                     % (READY_TIMEOUT, self.log()))
            try:
                buf += os.read(fd, 4096) or b""
            except BlockingIOError:
                time.sleep(0.02)
        self.ready = buf.decode()
        return self

    def path(self, *names):
        return os.path.join(self.mp, *names)

    def stop(self):
        """SIGTERM; returns fring's exit code (None: it hung)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(15)
        except subprocess.TimeoutExpired:
            return None

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(15)
        force_unmount(self.mp)
        if not is_mounted(self.mp):
            os.rmdir(self.mp)
        self.proc.stdout.close()
        self.err.close()
