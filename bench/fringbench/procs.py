# SPDX-License-Identifier: MIT
"""Mounts and processes: what is mounted where (from /proc/self/mountinfo),
unmounting what we mounted, a server's CPU seconds, threads and io_uring
instances, and stopping a process we started (by PID only). Timeouts are
seconds."""

import os
import shutil
import signal
import time

from .util import read_text, run

FUSECTL = "/sys/fs/fuse/connections"
STOP_TIMEOUT = 15       # seconds from SIGTERM to SIGKILL


def _unescape(field):
    # mountinfo escapes space, tab, newline and backslash as \ooo
    out, i = "", 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit():
            out += chr(int(field[i + 1:i + 4], 8))
            i += 4
        else:
            out += field[i]
            i += 1
    return out


def mount_entries(path):
    """(device "major:minor", fstype) of every mount stacked on path."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if _unescape(fields[4]) == path:
                found.append((fields[2], fields[sep + 1]))
    return found


def mounts_under(path):
    """Every mountpoint at or below path."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = _unescape(line.split()[4])
            if mp == path or mp.startswith(path + "/"):
                out.append(mp)
    return out


def is_fuse_mounted(path):
    return any(t.startswith("fuse") for _, t in mount_entries(path))


def fuse_abort(path, fusectl=FUSECTL):
    """Abort the FUSE connection mounted on path (ours: the device comes from
    path's own mountinfo line)."""
    if not any(l.split()[4] == fusectl and " - fusectl " in l
               for l in open("/proc/self/mountinfo")):
        run(["mount", "-t", "fusectl", "fusectl", fusectl])
    for dev, fstype in mount_entries(path):
        major, minor = dev.split(":")
        abort = os.path.join(fusectl, minor, "abort")
        if fstype.startswith("fuse") and major == "0" and os.path.exists(abort):
            try:
                with open(abort, "w") as f:
                    f.write("1")
            except OSError:
                pass


def unmount(path, fuse=True):
    """Unmount everything stacked on path (which we mounted): polite first,
    then abort + lazy."""
    for attempt in range(6):
        if not mount_entries(path):
            return True
        if attempt == 0:
            run(["umount", path])
        elif attempt == 1 and fuse and shutil.which("fusermount3"):
            run(["fusermount3", "-u", path])
        else:
            if fuse:
                fuse_abort(path)
            run(["umount", "-l", path])
        time.sleep(0.2)
    return not mount_entries(path)


def _stat_fields(pid):
    text = read_text("/proc/%s/stat" % pid)
    if text is None:
        return None
    return text[text.rindex(")") + 2:].split()


def proc_cpu_seconds(pid):
    """utime + stime in seconds of a server process (all its threads, live
    and exited) plus those of its live descendants, so that a wrapper (sh
    -c, a launcher script) around the real server is measured too."""
    if pid is None:
        return None
    rest = _stat_fields(pid)
    if rest is None:
        return None
    ticks = int(rest[11]) + int(rest[12])
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            f = _stat_fields(d)
            if f is not None:
                children.setdefault(int(f[1]), []).append((int(d), f))
    unvisited = [pid]
    while unvisited:
        for child, f in children.get(unvisited.pop(), []):
            ticks += int(f[11]) + int(f[12])
            unvisited.append(child)
    return ticks / os.sysconf("SC_CLK_TCK")


def proc_info(pid):
    """Threads and io_uring instances of a server process (a sanity check
    that a 'uring' server really uses rings)."""
    info = {"pid": pid}
    try:
        info["threads"] = len(os.listdir("/proc/%d/task" % pid))
        rings = 0
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:[io_uring]":
                    rings += 1
            except OSError:
                pass
        info["io_uring_fds"] = rings
    except OSError:
        pass
    return info


def first_child(pid):
    """The first child of pid (fring serves from a supervised child), or
    None."""
    kids = (read_text("/proc/%d/task/%d/children" % (pid, pid), "") or "").split()
    return int(kids[0]) if kids else None


def is_zombie(pid):
    return (read_text("/proc/%d/stat" % pid, "") or "").split(") ")[-1][:1] == "Z"


def kill_pid(pid, proc=None, timeout=STOP_TIMEOUT):
    """SIGTERM, wait up to timeout seconds, SIGKILL one process we started
    (by PID only); proc is its Popen where we have one."""
    def alive():
        if proc is not None:
            return proc.poll() is None
        return os.path.exists("/proc/%d" % pid) and not is_zombie(pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not alive():
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while alive() and time.monotonic() < deadline:
            time.sleep(0.05)
    if proc is not None and proc.poll() is None:
        proc.wait(5)
