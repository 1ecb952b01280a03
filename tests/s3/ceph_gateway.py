# SPDX-License-Identifier: MIT
"""A one-node Ceph cluster and its RADOS Gateway, for the s3 tests.

ceph-mon (a fresh monmap and cephx keyrings), ceph-mgr, one ceph-osd on
memstore (RAM, no block file to format) and radosgw (beast) on a free
local port, all under one temporary directory owned by the caller, all
through `-c CONF` and `--id`: the machine's /etc/ceph and its systemd
units are never read or touched. Pools have size 1.

    with Gateway() as gw:       # or gw = Gateway(); gw.start(); gw.stop()
        gw.endpoint, gw.access_key, gw.secret_key, gw.bucket, gw.region

start() is bounded (START_TIMEOUT s in all) and raises GatewayError with
one line (which daemon, its last log line) when the cluster cannot start;
stop() ends the daemons it started, by PID, and removes the directory,
also after a failed start.

By hand: `python3 tests/s3/ceph_gateway.py start|env|stop` (the state is
in $TMPDIR/fring-ceph-gateway.json; `env` prints FRING_S3_* lines).
"""
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid

START_TIMEOUT = 120     # seconds, the whole start-up
STATE = os.path.join(tempfile.gettempdir(), "fring-ceph-gateway.json")
DAEMONS = ("ceph-mon", "ceph-mgr", "ceph-osd", "radosgw", "radosgw-admin",
           "ceph-authtool", "monmaptool", "ceph")


class GatewayError(Exception):
    """The cluster could not start; str() is one line saying why."""


def missing_tools():
    return [t for t in DAEMONS if shutil.which(t) is None]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        return "(no log)"
    return lines[-1][-300:] if lines else "(empty log)"


def canonical(path):
    """path?query with the query as SigV4 signs it: sorted, %-encoded
    (curl 7.88 signs the query as given)."""
    base, _, query = path.partition("?")
    if not query:
        return path
    pairs = sorted(urllib.parse.parse_qsl(query, keep_blank_values=True))
    return base + "?" + "&".join(
        "%s=%s" % (urllib.parse.quote(k, safe="-_.~"),
                   urllib.parse.quote(v, safe="-_.~")) for k, v in pairs)


CONF = """[global]
fsid = {fsid}
mon host = {mon_addrs}
ms bind ipv4 = true
ms bind ipv6 = false
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = {d}/keyring.$name
run dir = {d}/run
admin socket = {d}/run/$name.asok
pid file = {d}/run/$name.pid
log file = {d}/log/$name.log
log to stderr = false
err to stderr = true
crash dir = {d}/crash
mon data = {d}/mon.$id
mgr data = {d}/mgr.$id
osd data = {d}/osd.$id
osd objectstore = memstore
memstore device bytes = {osd_bytes}
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
osd memory target = 939524096
rgw frontends = beast endpoint=127.0.0.1:{rgw_port}
rgw init timeout = {timeout}
rgw enable usage log = false
rgw thread pool size = 64
"""


class Gateway:
    """One cluster and its gateway; see the module's doc."""

    def __init__(self, bucket="fring-test", region="default",
                 osd_bytes=2 << 30, timeout=START_TIMEOUT):
        self.bucket = bucket
        self.region = region        # RGW's default zonegroup name
        self.osd_bytes = osd_bytes
        self.timeout = timeout
        self.dir = None
        self.pids = {}              # daemon name -> PID we started
        self.endpoint = None
        self.access_key = uuid.uuid4().hex[:20].upper()
        self.secret_key = uuid.uuid4().hex + uuid.uuid4().hex[:8]
        self.start_seconds = None

    # -- helpers ------------------------------------------------------
    def _left(self):
        return max(1.0, self.deadline - time.monotonic())

    def _run(self, *args, what=None):
        """A ceph tool to its end, bounded by the start deadline."""
        try:
            p = subprocess.run(list(args), capture_output=True, text=True,
                               timeout=min(self._left(), 60))
        except subprocess.TimeoutExpired:
            raise GatewayError("%s: timed out" % (what or args[0]))
        if p.returncode:
            err = (p.stderr or p.stdout).strip().splitlines()
            raise GatewayError("%s: exit %d: %s" % (
                what or args[0], p.returncode, err[-1] if err else ""))
        return p.stdout

    def _ceph(self, *args):
        return self._run("ceph", "-c", self.conf, "--id", "admin",
                         "--connect-timeout", "20", *args,
                         what="ceph " + " ".join(args[:2]))

    def _spawn(self, name, log, *args):
        # Own session: a test's ^C does not reach them, stop() does.
        self.pids[name] = subprocess.Popen(
            list(args), stdin=subprocess.DEVNULL,
            stdout=open(os.path.join(self.dir, "log", name + ".out"), "w"),
            stderr=subprocess.STDOUT, start_new_session=True).pid
        self._logs[name] = log
        self._save()

    def _alive(self, name):
        pid = self.pids.get(name)
        try:
            r, _ = os.waitpid(pid, os.WNOHANG)
            return r == 0
        except ChildProcessError:
            # Not our child (stop from another process): probe it.
            try:
                os.kill(pid, 0)
                return True
            except OSError:
                return False

    def _why(self, name):
        log = self._logs.get(name)
        out = os.path.join(self.dir, "log", name + ".out")
        line = last_line(log) if log and os.path.exists(log) else "(no log)"
        if os.path.getsize(out) if os.path.exists(out) else 0:
            line = last_line(out)
        return "%s %s: %s" % (name, "exited" if not self._alive(name)
                              else "did not come up in time", line)

    def _wait(self, name, ready, step=0.2):
        while time.monotonic() < self.deadline:
            if not self._alive(name):
                raise GatewayError(self._why(name))
            try:
                if ready():
                    return
            except GatewayError:
                pass
            time.sleep(step)
        raise GatewayError(self._why(name))

    def _save(self):
        with open(os.path.join(self.dir, "state.json"), "w") as f:
            json.dump(self.info(), f)

    def info(self):
        return {"dir": self.dir, "pids": self.pids,
                "endpoint": self.endpoint, "region": self.region,
                "bucket": self.bucket, "access_key": self.access_key,
                "secret_key": self.secret_key,
                "start_seconds": self.start_seconds}

    def env(self):
        """The FRING_S3_* variables (and AWS_* for clients that read them)."""
        return {"FRING_S3_ENDPOINT": self.endpoint,
                "FRING_S3_REGION": self.region,
                "FRING_S3_BUCKET": self.bucket,
                "AWS_ACCESS_KEY_ID": self.access_key,
                "AWS_SECRET_ACCESS_KEY": self.secret_key}

    # -- start ------------------------------------------------------------
    def start(self):
        t0 = time.monotonic()
        self.deadline = t0 + self.timeout
        self._logs = {}
        gone = missing_tools()
        if gone:
            raise GatewayError("ceph not installed (tests/setup.sh): no "
                               + ", ".join(gone))
        self.dir = tempfile.mkdtemp(prefix="fring-ceph-")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        self.start_seconds = round(time.monotonic() - t0, 1)
        self._save()
        return self

    def _start(self):
        d = self.dir
        for sub in ("run", "log", "crash"):
            os.mkdir(os.path.join(d, sub))
        mon_addrs = "[v2:127.0.0.1:%d,v1:127.0.0.1:%d]" % (free_port(), free_port())
        rgw_port = free_port()
        self.conf = os.path.join(d, "ceph.conf")
        with open(self.conf, "w") as f:
            f.write(CONF.format(fsid=uuid.uuid4(), mon_addrs=mon_addrs,
                                rgw_port=rgw_port, d=d,
                                osd_bytes=self.osd_bytes,
                                timeout=int(self.timeout)))
            # Extra lines for debugging by hand (e.g. "debug osd = 10").
            f.write(os.environ.get("FRING_CEPH_CONF_EXTRA", "").replace(";", "\n") + "\n")
        log = lambda n: os.path.join(d, "log", n + ".log")
        at = "ceph-authtool"
        mon_kr = os.path.join(d, "mon.keyring")
        adm_kr = os.path.join(d, "keyring.client.admin")
        self._run(at, "--create-keyring", mon_kr, "--gen-key", "-n", "mon.",
                  "--cap", "mon", "allow *")
        self._run(at, "--create-keyring", adm_kr, "--gen-key", "-n",
                  "client.admin", "--cap", "mon", "allow *", "--cap", "osd",
                  "allow *", "--cap", "mgr", "allow *", "--cap", "mds",
                  "allow *")
        self._run(at, mon_kr, "--import-keyring", adm_kr)
        monmap = os.path.join(d, "monmap")
        fsid = open(self.conf).read().split("fsid = ")[1].split()[0]
        self._run("monmaptool", "--create", "--fsid", fsid, "--addv", "a",
                  mon_addrs, monmap)
        self._run("ceph-mon", "-c", self.conf, "--id", "a", "--mkfs",
                  "--monmap", monmap, "--keyring", mon_kr, what="ceph-mon --mkfs")
        self._spawn("ceph-mon", log("mon.a"), "ceph-mon", "-f", "-c",
                    self.conf, "--id", "a")
        self._wait("ceph-mon", lambda: self._ceph("mon", "stat") or True)

        # mgr: a keyring from the mon, then the daemon (not waited for:
        # the gateway does not need it, its start overlaps the OSD's).
        os.mkdir(os.path.join(d, "mgr.x"))
        self._ceph("auth", "get-or-create", "mgr.x", "mon", "allow profile mgr",
                   "osd", "allow *", "mds", "allow *", "-o",
                   os.path.join(d, "keyring.mgr.x"))
        self._spawn("ceph-mgr", log("mgr.x"), "ceph-mgr", "-f", "-c",
                    self.conf, "--id", "x")

        osd_uuid = str(uuid.uuid4())
        osd_id = self._ceph("osd", "new", osd_uuid).strip()
        os.mkdir(os.path.join(d, "osd." + osd_id))
        self._ceph("auth", "get-or-create", "osd." + osd_id, "mon",
                   "allow profile osd", "mgr", "allow profile osd", "osd",
                   "allow *", "-o", os.path.join(d, "keyring.osd." + osd_id))
        self._run("ceph-osd", "-c", self.conf, "--id", osd_id, "--mkfs",
                  "--osd-uuid", osd_uuid, what="ceph-osd --mkfs")
        self._spawn("ceph-osd", log("osd." + osd_id), "ceph-osd", "-f",
                    "-c", self.conf, "--id", osd_id)
        self._wait("ceph-osd", lambda: '"num_up_osds":1' in
                   self._ceph("osd", "stat", "-f", "json").replace(" ", ""))

        self._ceph("auth", "get-or-create", "client.rgw.a", "mon", "allow rw",
                   "osd", "allow rwx", "mgr", "allow rw", "-o",
                   os.path.join(d, "keyring.client.rgw.a"))
        self._spawn("radosgw", log("client.rgw.a"), "radosgw", "-f", "-c",
                    self.conf, "--id", "rgw.a")
        self.endpoint = "http://127.0.0.1:%d" % rgw_port
        self._wait("radosgw", self._http_up)

        self._run("radosgw-admin", "-c", self.conf, "--id", "admin",
                  "user", "create", "--uid", "fring", "--display-name",
                  "fring tests", "--access-key", self.access_key,
                  "--secret", self.secret_key, what="radosgw-admin user create")
        # The bucket through S3 itself (radosgw-admin does not create them).
        last = []

        def made():
            last[:] = self.request("PUT", "/" + self.bucket)
            return last[0] == 200
        try:
            self._wait("radosgw", made)
        except GatewayError as e:
            raise GatewayError("%s (bucket PUT: %s %s)" % (
                e, last[:1], last[1:] and last[1][-200:]))

    def _http_up(self):
        try:
            with socket.create_connection(("127.0.0.1",
                                           int(self.endpoint.rsplit(":", 1)[1])),
                                          timeout=1):
                return True
        except OSError:
            return False

    def curl_cmd(self, method, path, data=None, headers=(), out=None,
                 max_time=60):
        """The curl command line of one SigV4-signed request (data, if
        any, goes to its stdin); it prints the body, then a line with the
        HTTP status."""
        cmd = ["curl", "-sS", "-o", out or "-", "-w", "\n%{http_code}",
               "--max-time", str(max_time), "-X", method,
               "--aws-sigv4", "aws:amz:%s:s3" % self.region,
               "--user", "%s:%s" % (self.access_key, self.secret_key)]
        # S3 wants the payload's hash signed in; curl 7.88 leaves it out.
        cmd += ["-H", "x-amz-content-sha256: " +
                hashlib.sha256(data or b"").hexdigest()]
        for h in headers:
            cmd += ["-H", h]
        if data is not None:
            cmd += ["--data-binary", "@-"]
        if method == "PUT" and data is None:
            cmd += ["-H", "Content-Length: 0"]
        cmd.append(self.endpoint + canonical(path))
        return cmd

    def request(self, method, path, data=None, headers=(), out=None):
        """One SigV4-signed request by curl; (status, body bytes)."""
        cmd = self.curl_cmd(method, path, data, headers, out)
        p = subprocess.run(cmd, input=data, capture_output=True, timeout=90)
        body, _, code = p.stdout.rpartition(b"\n")
        return int(code or 0), body

    # -- stop -------------------------------------------------------------
    def stop(self):
        """End our daemons by PID (TERM, then KILL after 10 s), remove the dir."""
        order = ("radosgw", "ceph-osd", "ceph-mgr", "ceph-mon")
        # A PID whose command line no longer names our dir is not ours
        # (reused after the daemon died): leave it alone.
        for name, pid in list(self.pids.items()):
            if not self._ours(pid):
                del self.pids[name]
        for name in order:
            pid = self.pids.get(name)
            if pid:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        end = time.monotonic() + 10
        for name in order:
            pid = self.pids.get(name)
            while pid and time.monotonic() < end and self._alive(name):
                time.sleep(0.1)
            if pid and self._alive(name):
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except (ProcessLookupError, ChildProcessError):
                    pass
        self.pids = {}
        if self.dir and os.environ.get("FRING_CEPH_KEEP") == "1":
            print("ceph_gateway: kept %s" % self.dir, file=sys.stderr)
        elif self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def _ours(self, pid):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                return self.dir and self.dir.encode() in f.read()
        except OSError:
            return False

    def rss_kib(self):
        """VmRSS of each daemon we started, in KiB."""
        out = {}
        for name, pid in self.pids.items():
            try:
                with open("/proc/%d/status" % pid) as f:
                    for ln in f:
                        if ln.startswith("VmRSS:"):
                            out[name] = int(ln.split()[1])
            except OSError:
                pass
        return out

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _load():
    with open(STATE) as f:
        st = json.load(f)
    gw = Gateway(bucket=st["bucket"], region=st["region"])
    gw.dir, gw.pids, gw.endpoint = st["dir"], st["pids"], st["endpoint"]
    gw.access_key, gw.secret_key = st["access_key"], st["secret_key"]
    return gw, st


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "start":
        if os.path.exists(STATE):
            sys.exit("ceph_gateway: already started (%s); stop it first" % STATE)
        gw = Gateway()
        try:
            gw.start()
        except GatewayError as e:
            sys.exit("ceph_gateway: %s" % e)
        with open(STATE, "w") as f:
            json.dump(gw.info(), f)
        print("ceph_gateway: %s up in %.1f s, dir %s, RSS KiB %s" % (
            gw.endpoint, gw.start_seconds, gw.dir, gw.rss_kib()))
    elif cmd == "env":
        gw, _ = _load()
        for k, v in gw.env().items():
            print("export %s=%s" % (k, v))
    elif cmd == "stop":
        if not os.path.exists(STATE):
            sys.exit("ceph_gateway: not started")
        gw, _ = _load()
        gw.stop()
        os.unlink(STATE)
    else:
        sys.exit("usage: ceph_gateway.py start|env|stop")


if __name__ == "__main__":
    main(sys.argv)
