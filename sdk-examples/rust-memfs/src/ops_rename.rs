// SPDX-License-Identifier: MIT
//! rename, with `RENAME_NOREPLACE` and `RENAME_EXCHANGE`.
//!
//! The one operation that changes two directories at once; it keeps
//! readdir cookies (a replaced name keeps its cookie and names the source),
//! ".." and the link counts of both parents, and refuses to move a
//! directory into its own subtree.
use std::ffi::OsStr;
use std::time::SystemTime;

use fring::Errno;

use crate::dir::NAME_MAX;
use crate::inode::Body;
use crate::MemFs;

const RENAME_NOREPLACE: u32 = 1;
const RENAME_EXCHANGE: u32 = 2;

impl MemFs {
    pub(crate) fn do_rename(
        &self,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: u32,
    ) -> Result<(), Errno> {
        if flags & !(RENAME_NOREPLACE | RENAME_EXCHANGE) != 0
            || (flags & RENAME_NOREPLACE != 0 && flags & RENAME_EXCHANGE != 0)
        {
            return Err(Errno::EINVAL);
        }
        if name.len() > NAME_MAX || newname.len() > NAME_MAX {
            return Err(Errno::ENAMETOOLONG);
        }
        let dot = |n: &OsStr| n == "." || n == "..";
        if dot(name) || dot(newname) {
            return Err(Errno::EBUSY);
        }
        let mut t = self.lock();
        let op = t.get(parent)?;
        let np = t.get(newparent)?;
        let (od, nd) = (op.dir()?, np.dir()?);
        if np.nlink == 0 {
            return Err(Errno::ENOENT);
        }
        let src = od.get(name).ok_or(Errno::ENOENT)?;
        let dst = nd.get(newname);
        if flags & RENAME_EXCHANGE != 0 && dst.is_none() {
            return Err(Errno::ENOENT);
        }
        if flags & RENAME_NOREPLACE != 0 && dst.is_some() {
            return Err(Errno::EEXIST);
        }
        if dst == Some(src) {
            return Ok(()); // two names of one inode: nothing happens
        }
        let src_dir = t.get(src)?.is_dir();
        if src_dir && t.in_subtree(src, newparent) {
            return Err(Errno::EINVAL);
        }
        let now = SystemTime::now();
        if flags & RENAME_EXCHANGE != 0 {
            let dst = dst.unwrap();
            let dst_dir = t.get(dst)?.is_dir();
            if dst_dir && t.in_subtree(dst, parent) {
                return Err(Errno::EINVAL);
            }
            t.get_mut(parent)?.dir_mut()?.set(name, dst);
            t.get_mut(newparent)?.dir_mut()?.set(newname, src);
            if parent != newparent {
                for (moved, is_dir, from, to) in [
                    (src, src_dir, parent, newparent),
                    (dst, dst_dir, newparent, parent),
                ] {
                    if is_dir {
                        t.get_mut(moved)?.dir_mut()?.parent = to;
                        t.get_mut(from)?.nlink -= 1;
                        t.get_mut(to)?.nlink += 1;
                    }
                }
            }
            t.get_mut(dst)?.ctime = now;
        } else {
            if let Some(dst) = dst {
                let d = t.get(dst)?;
                match (src_dir, d.is_dir()) {
                    (true, false) => return Err(Errno::ENOTDIR),
                    (false, true) => return Err(Errno::EISDIR),
                    (true, true) if !d.dir()?.is_empty() => return Err(Errno::ENOTEMPTY),
                    _ => {}
                }
                // the replaced name keeps its cookie and now names src
                t.get_mut(newparent)?.dir_mut()?.set(newname, src);
                let d = t.get_mut(dst)?;
                let dst_was_dir = d.is_dir();
                if let Body::Dir(dd) = &mut d.body {
                    d.nlink = 0;
                    dd.parent = 0;
                } else {
                    d.nlink -= 1;
                }
                d.ctime = now;
                if dst_was_dir {
                    t.get_mut(newparent)?.nlink -= 1;
                }
                t.maybe_free(dst);
            } else {
                t.get_mut(newparent)?.dir_mut()?.add(newname, src);
            }
            t.get_mut(parent)?.dir_mut()?.remove(name);
            if src_dir && parent != newparent {
                t.get_mut(src)?.dir_mut()?.parent = newparent;
                t.get_mut(parent)?.nlink -= 1;
                t.get_mut(newparent)?.nlink += 1;
            }
        }
        t.get_mut(src)?.ctime = now;
        for p in [parent, newparent] {
            let p = t.get_mut(p)?;
            p.mtime = now;
            p.ctime = now;
        }
        Ok(())
    }
}
