// SPDX-License-Identifier: MIT
//! The permission rules this file system keeps itself.
//!
//! Mounted with `default_permissions` (which fring adds to an `allow_other`
//! mount of a plugin that does not check permissions), the kernel checks
//! mode bits, sticky directories and who may chmod, chown or set times.
//! What only the file system can do lives here: the caller's groups, the
//! owner and group of new files (setgid directories), when setuid/setgid
//! go (chown, chmod by a non-member, writes and truncates by unprivileged
//! callers) and who sees `trusted.*` names.
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use fring::{Errno, SetAttr};

use crate::inode::Inode;

pub(crate) const S_ISUID: u32 = 0o4000;
pub(crate) const S_ISGID: u32 = 0o2000;
pub(crate) const S_IXGRP: u32 = 0o0010;

/// Linux's rule: setuid always goes; setgid only with group execute
/// (without it the bit marks mandatory locking, not privilege).
pub(crate) fn kill_suidgid(mode: u32) -> u32 {
    let mut mode = mode & !S_ISUID;
    if mode & S_IXGRP != 0 {
        mode &= !S_ISGID;
    }
    mode
}

/// The caller of a request: uid, primary gid and the thread for
/// supplementary groups (FUSE passes only the primary one).
#[derive(Clone, Copy)]
pub(crate) struct Cred {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pid: u32,
}

impl Cred {
    pub(crate) fn of(info: fring::RequestInfo) -> Cred {
        Cred {
            uid: info.uid,
            gid: info.gid,
            pid: info.pid,
        }
    }

    pub(crate) fn in_group(&self, gid: u32) -> bool {
        self.gid == gid || (self.pid != 0 && supplementary_group(self.pid, gid))
    }
}

/// Whether thread `pid` has `gid` among its supplementary groups
/// (`/proc/PID/status`, "Groups:").
fn supplementary_group(pid: u32, gid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("Groups:"))
        .is_some_and(|g| g.split_whitespace().any(|x| x.parse() == Ok(gid)))
}

/// The mode and group of a new inode made by `c` in `parent`: the group
/// comes from a setgid parent, which new directories inherit; a file's
/// setgid (with group execute) goes if its maker is not in that group.
pub(crate) fn new_mode_gid(c: &Cred, parent: &Inode, mut mode: u32, is_dir: bool) -> (u32, u32) {
    let mut gid = c.gid;
    if parent.mode & S_ISGID != 0 {
        gid = parent.gid;
        if is_dir {
            mode |= S_ISGID;
        }
    }
    if !is_dir && mode & (S_ISGID | S_IXGRP) == S_ISGID | S_IXGRP && c.uid != 0 && !c.in_group(gid)
    {
        mode &= !S_ISGID;
    }
    (mode, gid)
}

/// Who may change owner and group: the kernel checks it
/// (default_permissions); these are the same rules, so that a failing
/// call changes nothing.
pub(crate) fn may_chown(c: &Cred, i: &Inode, set: &SetAttr) -> Result<(), Errno> {
    let root = c.uid == 0;
    let owner = root || c.uid == i.uid;
    if let Some(uid) = set.uid {
        if if uid != i.uid { !root } else { !owner } {
            return Err(Errno::EPERM);
        }
    }
    if let Some(gid) = set.gid {
        if !root && (!owner || (gid != i.gid && !c.in_group(gid))) {
            return Err(Errno::EPERM);
        }
    }
    Ok(())
}

/// The permission bits chmod to `mode` leaves: an owner outside the
/// file's group cannot set setgid.
pub(crate) fn chmod_bits(c: &Cred, i: &Inode, mode: u32) -> u32 {
    let mut mode = mode & 0o7777;
    if c.uid != 0 && c.uid == i.uid && !c.in_group(i.gid) {
        mode &= !S_ISGID;
    }
    mode
}

/// Does `listxattr` show `name` to `c`? `trusted.*` is for privileged
/// callers only.
pub(crate) fn may_list_xattr(c: &Cred, name: &OsStr) -> bool {
    c.uid == 0 || !name.as_bytes().starts_with(b"trusted.")
}
