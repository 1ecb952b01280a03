# SPDX-License-Identifier: MIT
"""What the jobs run against: the raw backing directory, fring's
passthrough (`fring run CONFIG`), and any other FUSE server given as a
command template. start() makes the data visible and returns the
directory the jobs run in; stop() leaves nothing mounted or running.
Timeouts are seconds."""

import json
import os
import selectors
import shlex
import subprocess
import threading
import time

from .procs import (first_child, is_fuse_mounted, is_zombie, kill_pid, mount_entries,
                    proc_info, unmount, STOP_TIMEOUT)
from .util import tail

READY_TIMEOUT = 20      # seconds for a server to mount (a parameter of each target)


class Unavailable(Exception):
    pass


class Target:
    kind = "?"
    pid = None

    def __init__(self, name, ready_timeout=READY_TIMEOUT):
        self.name = name
        self.ready_timeout = ready_timeout
        self.status = "ok"      # or "unavailable: why"
        self.info = {}          # shown in the targets table

    def describe(self):
        return ""

    def start(self, src, mnt, logpath):
        """Make the data visible; return the directory the jobs run in."""
        raise NotImplementedError

    def stop(self):
        pass

    def record(self):
        """The target as results.json keeps it."""
        return {"name": self.name, "kind": self.kind, "what": self.describe(),
                "status": self.status, "server": self.info}


class Recorded(Target):
    """A target read back from a results.json record (for reports of a
    stored run): it describes itself, it does not run."""

    def __init__(self, rec):
        super().__init__(rec["name"])
        self.kind, self.what = rec["kind"], rec["what"]
        self.status, self.info = rec["status"], rec.get("server") or {}

    def describe(self):
        return self.what


class RawTarget(Target):
    kind = "raw"

    def describe(self):
        return "the tmpfs backing directory itself (no FUSE)"

    def start(self, src, mnt, logpath):
        return src


class FringTarget(Target):
    kind = "fring"

    def __init__(self, name, build_dir, transport, transport_extra=(), plugin_extra=(),
                 ready_timeout=READY_TIMEOUT, stats_off=False, plugin="passthrough"):
        super().__init__(name, ready_timeout)
        self.stats_off = stats_off
        self.plugin = plugin    # passthrough gets source: the backing directory
        self.build_dir = build_dir
        self.transport = transport
        self.transport_extra = list(transport_extra)
        self.plugin_extra = list(plugin_extra)
        self.workdir = None
        self.proc = None
        self.mnt = None
        self.logf = None
        self.drainer = None
        self.fring = os.path.join(build_dir, "bin", "fring")

    def describe(self):
        return "`%s run CONFIG`: plugin %s%s, transport { mode: %s%s }%s" % (
            self.fring, self.plugin, "".join(", %s=%s" % kv for kv in self.plugin_extra),
            self.transport, "".join(", %s: %s" % kv for kv in self.transport_extra),
            ", stats { enabled: false }" if self.stats_off else "")

    def start(self, src, mnt, logpath):
        if not os.access(self.fring, os.X_OK):
            raise Unavailable("%s not built" % self.fring)
        cfg = os.path.join(self.workdir, "%s.yaml" % self.name)
        options = ([("source", json.dumps(src))] if self.plugin == "passthrough" else []) + \
            self.plugin_extra
        with open(cfg, "w") as f:
            # JSON strings are valid YAML scalars (a bare null is YAML's null)
            f.write("mounts:\n"
                    "  - mountpoint: %s\n"
                    "    plugin: %s\n"
                    "    options: { %s }\n"
                    "    transport: { mode: %s%s }\n%s"
                    % (json.dumps(mnt), json.dumps(self.plugin),
                       ", ".join("%s: %s" % kv for kv in options), self.transport,
                       "".join(", %s: %s" % kv for kv in self.transport_extra),
                       "    stats: { enabled: false }\n" if self.stats_off else ""))
        env = dict(os.environ)
        plugdir = os.path.join(self.build_dir, "lib", "fring", "plugins")
        env["FRING_PLUGIN_PATH"] = plugdir + (
            ":" + env["FRING_PLUGIN_PATH"] if env.get("FRING_PLUGIN_PATH") else "")
        env["LD_LIBRARY_PATH"] = os.path.join(self.build_dir, "lib") + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        self.mnt = mnt
        self.logpath = logpath
        self.logf = open(logpath, "ab")
        self.proc = subprocess.Popen([self.fring, "run", cfg], stdout=subprocess.PIPE,
                                     stderr=self.logf, stdin=subprocess.DEVNULL,
                                     env=env, start_new_session=True)
        self.pid = self.proc.pid
        line = self._wait_ready()
        # "fring: MOUNTPOINT ready (plugin NAME, transport T)"
        got = line.rsplit("transport", 1)[-1].strip(" )\n")
        if got != self.transport:
            self.stop()
            raise Unavailable("fring served transport %r, not %r" % (got, self.transport))
        if not is_fuse_mounted(mnt):
            self.stop()
            raise Unavailable("fring said ready but %s is not a FUSE mount" % mnt)
        # fring serves from a supervised child: describe that process (CPU
        # figures come from self.pid, which counts its children).
        self.info = proc_info(first_child(self.pid) or self.pid)
        return mnt

    def _wait_ready(self):
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        buf = b""
        deadline = time.monotonic() + self.ready_timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.stop()
                    raise Unavailable("not ready after %ds: %s" % (
                        self.ready_timeout, tail(self.logpath, 5)))
                if sel.select(min(left, 0.5)):
                    chunk = os.read(self.proc.stdout.fileno(), 4096)
                    if not chunk:
                        rc = self.proc.wait(STOP_TIMEOUT)
                        self.stop()
                        raise Unavailable("fring exited (rc %s) before ready: %s" % (
                            rc, tail(self.logpath, 2).replace("\n", " | ")))
                    buf += chunk
                    for l in buf.split(b"\n")[:-1]:
                        if b" ready (" in l:
                            self.drainer = threading.Thread(
                                target=self._drain, args=(buf,), daemon=True)
                            self.drainer.start()
                            return l.decode(errors="replace")
        finally:
            sel.close()

    def _drain(self, already):
        # keep fring's stdout from filling up; append it to the log
        try:
            self.logf.write(b"[stdout] " + already)
            while True:
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    return
                self.logf.write(b"[stdout] " + chunk)
        except (OSError, ValueError):
            return

    def stop(self):
        if self.proc is not None:
            kill_pid(self.proc.pid, self.proc)
            if self.drainer is not None:
                self.drainer.join(5)     # fring's exit closed the pipe
                self.drainer = None
            self.proc.stdout.close()
            self.proc = None
        if self.logf is not None:
            self.logf.close()
            self.logf = None
        if self.mnt and mount_entries(self.mnt):
            unmount(self.mnt)
        self.pid = None


class ExtraTarget(Target):
    kind = "extra"

    def __init__(self, name, template, ready_timeout=READY_TIMEOUT):
        super().__init__(name, ready_timeout)
        self.template = template
        self.proc = None
        self.mnt = None

    def describe(self):
        return "`%s`" % self.template

    def start(self, src, mnt, logpath):
        cmd = shlex.split(self.template.replace("{src}", shlex.quote(src))
                          .replace("{mnt}", shlex.quote(mnt)))
        self.mnt = mnt
        self.logpath = logpath
        logf = open(logpath, "ab")
        try:
            self.proc = subprocess.Popen(cmd, stdout=logf, stderr=logf,
                                         stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        except OSError as e:
            raise Unavailable("cannot run %s: %s" % (cmd[0], e))
        finally:
            logf.close()
        self.pid = self.proc.pid
        deadline = time.monotonic() + self.ready_timeout
        while not is_fuse_mounted(mnt):
            rc = self.proc.poll()
            if rc not in (None, 0) or time.monotonic() > deadline:
                self.stop()
                raise Unavailable("no FUSE mount on %s (rc %s): %s" % (
                    mnt, rc, tail(logpath, 5).replace("\n", " | ")))
            time.sleep(0.05)
        time.sleep(0.2)
        if self.proc.poll() is not None:
            # it daemonized: find the server by its mountpoint argument
            self.pid = self._find_daemon(mnt)
            if self.pid is None:
                self.stop()
                raise Unavailable("server daemonized and its PID was not found; "
                                  "run it in the foreground (e.g. --foreground / -f)")
        self.info = proc_info(self.pid)
        return mnt

    @staticmethod
    def _find_daemon(mnt):
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if mnt.encode() in args and int(d) != os.getpid():
                return int(d)
        return None

    def stop(self):
        if self.mnt and mount_entries(self.mnt):
            unmount(self.mnt)
        if self.pid is not None:
            mine = self.proc if self.proc is not None and self.proc.pid == self.pid else None
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and os.path.exists("/proc/%d" % self.pid) \
                    and (mine is None or mine.poll() is None):
                if mine is None and is_zombie(self.pid):
                    break
                time.sleep(0.05)
            kill_pid(self.pid, mine)
        if self.proc is not None and self.proc.poll() is None:
            kill_pid(self.proc.pid, self.proc)
        self.proc = None
        self.pid = None
