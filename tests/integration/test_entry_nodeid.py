# SPDX-License-Identifier: MIT
"""Entry replies naming a nodeid no entry may name (core/runtime/
entry_check.h) are refused by the host for every plugin: the caller gets
EIO, one line is logged, and the mount keeps working. Nodeid 1 is the
root: a LOOKUP answered with it used to make the kernel mark the root inode
bad (every access to the mount then failed with EIO, and stopping fring
left a dead mount behind). The plugin is tests/fixtures/root_nodeid.c."""
import errno
import os
import signal
import stat

import pytest

from conftest import FRING, is_mounted

FIXTURE_DIR = os.environ.get("FRING_FIXTURE_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(FRING)), "tests", "fixtures")
ROOT_NODEID = os.path.join(FIXTURE_DIR, "root_nodeid.so")


def eio(fn, *args):
    with pytest.raises(OSError) as e:
        fn(*args)
    assert e.value.errno == errno.EIO, e.value


@pytest.mark.parametrize("transport", ["devfuse", "uring"])
def test_entries_naming_nodeid_1_or_0_are_refused(spawn, tmpdirs, transport):
    mp = tmpdirs("mnt")
    f = spawn(["mount", ROOT_NODEID, mp, "-t", transport], [mp])
    f.wait_ready(1)
    p = lambda name: os.path.join(mp, name)

    eio(os.stat, p("evil"))                              # LOOKUP
    eio(os.mknod, p("node"), stat.S_IFREG | 0o644)       # MKNOD
    eio(os.mkdir, p("dir"))                              # MKDIR
    eio(os.mkdir, p("zero"))                             # MKDIR, nodeid 0
    eio(os.symlink, "target", p("link"))                 # SYMLINK
    eio(os.link, p("ok"), p("hard"))                     # LINK
    eio(os.open, p("new"), os.O_CREAT | os.O_WRONLY, 0o644)  # CREATE
    eio(os.open, mp, os.O_TMPFILE | os.O_WRONLY, 0o644)  # TMPFILE
    eio(os.listdir, p("baddir"))                         # READDIRPLUS

    # The root is still the root, "." and ".." (nodeid 1) still list.
    assert stat.S_ISDIR(os.stat(mp).st_mode)
    assert sorted(os.listdir(mp)) == ["baddir", "ok"]
    assert stat.S_ISREG(os.stat(p("ok")).st_mode)

    assert f.stop(signal.SIGTERM) == 0, f.log()
    assert not is_mounted(mp), f.log()
    log = f.log()
    for op, name, nodeid in [("LOOKUP", "evil", 1), ("MKNOD", "node", 1),
                             ("MKDIR", "dir", 1), ("SYMLINK", "link", 1),
                             ("LINK", "hard", 1), ("CREATE", "new", 1),
                             ("TMPFILE", "", 1), ("READDIRPLUS", "x", 1)]:
        lines = [l for l in log.splitlines()
                 if "plugin answered %s (unique" % op in l
                 and "for '%s' naming nodeid %d" % (name, nodeid) in l]
        assert len(lines) == 1, (op, log)
        assert lines[0].endswith("; sent EIO"), lines
    # MKDIR's second refusal (nodeid 0) falls within the rate limit of
    # the first; its EIO is what counts.
    assert "covers ours" not in log, log
