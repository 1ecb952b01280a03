// SPDX-License-Identifier: MIT
//! setattr: truncate, chown, chmod and times in one request.
//!
//! Everything is checked before anything changes, so a failing call
//! changes nothing; the rules for who may chown and what chmod keeps are
//! in perm.rs.
use std::time::SystemTime;

use fring::{Attr, Errno, SetAttr, TimeOrNow};

use crate::data::MAX_FILE_SIZE;
use crate::perm::{chmod_bits, kill_suidgid, may_chown, Cred};
use crate::MemFs;

impl MemFs {
    pub(crate) fn do_setattr(&self, c: &Cred, ino: u64, set: &SetAttr) -> Result<Attr, Errno> {
        let mut t = self.lock();
        let i = t.get(ino)?;
        if let Some(size) = set.size {
            i.file_or(Errno::EINVAL)?;
            if size > MAX_FILE_SIZE {
                return Err(Errno::EFBIG);
            }
        }
        may_chown(c, i, set)?;
        let now = SystemTime::now();
        let i = t.get_mut(ino)?;
        if set.size.is_some_and(|s| s != i.size) {
            let size = set.size.unwrap();
            t.truncate(ino, size);
            t.get_mut(ino)?.mtime = now;
        }
        let i = t.get_mut(ino)?;
        if set.uid.is_some() || set.gid.is_some() {
            if let Some(uid) = set.uid {
                i.uid = uid;
            }
            if let Some(gid) = set.gid {
                i.gid = gid;
            }
            // as chown(2) on Linux: a new owner loses the privileges
            if !i.is_dir() {
                i.mode = i.mode & !0o7777 | kill_suidgid(i.mode & 0o7777);
            }
        }
        if let Some(mode) = set.mode {
            i.mode = i.mode & !0o7777 | chmod_bits(c, i, mode);
        }
        if set.kill_suidgid {
            i.mode = kill_suidgid(i.mode);
        }
        let time = |t: TimeOrNow| match t {
            TimeOrNow::Now => now,
            TimeOrNow::Time(t) => t,
        };
        if let Some(a) = set.atime {
            i.atime = time(a);
        }
        if let Some(m) = set.mtime {
            i.mtime = time(m);
        }
        i.ctime = set.ctime.unwrap_or(now);
        Ok(i.attr(ino))
    }
}
