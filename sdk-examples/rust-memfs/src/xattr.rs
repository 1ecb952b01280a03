// SPDX-License-Identifier: MIT
//! Extended attributes: set, get, list and remove.
//!
//! Names are kept per inode in the order set. As on Linux (tmpfs), only
//! the `user.`, `trusted.` and `security.` namespaces exist (others are
//! EOPNOTSUPP), `user.*` is for regular files and directories only, and
//! `trusted.*` is hidden from unprivileged listings (perm.rs).
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::SystemTime;

use fring::Errno;

use crate::inode::{Body, Inode};
use crate::perm::{may_list_xattr, Cred};
use crate::MemFs;

const XATTR_NAME_MAX: usize = 255;
const XATTR_SIZE_MAX: usize = 65536;
const XATTR_CREATE: i32 = 1;
const XATTR_REPLACE: i32 = 2;

/// The namespaces Linux knows; others are EOPNOTSUPP, as on tmpfs.
fn xattr_ns_known(name: &[u8]) -> bool {
    name.starts_with(b"user.") || name.starts_with(b"trusted.") || name.starts_with(b"security.")
}

/// `user.*` is only for regular files and directories, as on Linux.
fn user_ns_denied(i: &Inode, name: &[u8]) -> bool {
    name.starts_with(b"user.") && !matches!(i.body, Body::File(_) | Body::Dir(_))
}

impl MemFs {
    pub(crate) fn do_setxattr(
        &self,
        ino: u64,
        name: &OsStr,
        value: &[u8],
        flags: i32,
    ) -> Result<(), Errno> {
        if flags & !(XATTR_CREATE | XATTR_REPLACE) != 0 {
            return Err(Errno::EINVAL);
        }
        let n = name.as_bytes();
        if n.is_empty() || n.len() > XATTR_NAME_MAX {
            return Err(Errno::ERANGE);
        }
        if !xattr_ns_known(n) {
            return Err(Errno::EOPNOTSUPP);
        }
        if value.len() > XATTR_SIZE_MAX {
            return Err(Errno::E2BIG);
        }
        let mut t = self.lock();
        let i = t.get_mut(ino)?;
        if user_ns_denied(i, n) {
            return Err(Errno::EPERM);
        }
        match i.xattrs.iter_mut().find(|(k, _)| k == name) {
            Some(_) if flags & XATTR_CREATE != 0 => return Err(Errno::EEXIST),
            Some((_, v)) => *v = value.to_vec(),
            None if flags & XATTR_REPLACE != 0 => return Err(Errno::ENODATA),
            None => i.xattrs.push((name.to_owned(), value.to_vec())),
        }
        i.touch(false, SystemTime::now());
        Ok(())
    }

    /// The value of `name`; `size` 0 asks only for its length, which the
    /// caller answers from the value.
    pub(crate) fn do_getxattr(&self, ino: u64, name: &OsStr, size: u32) -> Result<Vec<u8>, Errno> {
        let n = name.as_bytes();
        if n.len() > XATTR_NAME_MAX {
            return Err(Errno::ERANGE);
        }
        if !xattr_ns_known(n) {
            return Err(Errno::EOPNOTSUPP);
        }
        let t = self.lock();
        let i = t.get(ino)?;
        let (_, v) = i
            .xattrs
            .iter()
            .find(|(k, _)| k == name)
            .ok_or(Errno::ENODATA)?;
        if size != 0 && v.len() > size as usize {
            return Err(Errno::ERANGE);
        }
        Ok(v.clone())
    }

    /// The names `c` may see, each ending in NUL.
    pub(crate) fn do_listxattr(&self, c: &Cred, ino: u64) -> Result<Vec<u8>, Errno> {
        self.lock().get(ino).map(|i| {
            let mut names = Vec::new();
            for (k, _) in &i.xattrs {
                if may_list_xattr(c, k) {
                    names.extend_from_slice(k.as_bytes());
                    names.push(0);
                }
            }
            names
        })
    }

    pub(crate) fn do_removexattr(&self, ino: u64, name: &OsStr) -> Result<(), Errno> {
        if !xattr_ns_known(name.as_bytes()) {
            return Err(Errno::EOPNOTSUPP);
        }
        let mut t = self.lock();
        let i = t.get_mut(ino)?;
        let at = i
            .xattrs
            .iter()
            .position(|(k, _)| k == name)
            .ok_or(Errno::ENODATA)?;
        i.xattrs.remove(at);
        i.touch(false, SystemTime::now());
        Ok(())
    }
}
