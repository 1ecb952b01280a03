# SPDX-License-Identifier: MIT
"""What the mount suites (integration, conformance) share about the mounts
on a path: reading /proc/self/mountinfo, and taking a FUSE mount down when
a test or fring left it behind (abort its connection in fusectl, then a
lazy unmount)."""
import os
import subprocess

FUSECTL = "/sys/fs/fuse/connections"


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
    path = os.path.realpath(path) if os.path.exists(path) else path
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if _unescape(fields[4]) == path:
                found.append((fields[2], fields[sep + 1]))
    return found


def is_mounted(path):
    return bool(mount_entries(path))


def _ensure_fusectl():
    if any(line.split()[4] == FUSECTL and " - fusectl " in line
           for line in open("/proc/self/mountinfo")):
        return
    subprocess.run(["mount", "-t", "fusectl", "fusectl", FUSECTL],
                   check=False, capture_output=True)


def force_unmount(path):
    """Abort the FUSE connection(s) mounted on `path` (ours only: the device
    comes from path's own mountinfo line) and detach the mount."""
    for _ in range(4):
        entries = mount_entries(path)
        if not entries:
            return
        _ensure_fusectl()
        for dev, fstype in entries:
            major, minor = dev.split(":")
            abort = os.path.join(FUSECTL, minor, "abort")
            if fstype.startswith("fuse") and major == "0" and os.path.exists(abort):
                with open(abort, "w") as f:
                    f.write("1")
        subprocess.run(["umount", "-l", path], check=False, capture_output=True)
