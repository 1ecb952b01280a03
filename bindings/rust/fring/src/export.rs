// SPDX-License-Identifier: MIT
//! The C side: the descriptor, the lifecycle callbacks and one trampoline
//! per operation, generic over the filesystem type. Used by [`plugin!`].
use std::any::Any;
use std::ffi::{c_char, c_void, CStr, CString, OsString};
use std::os::unix::ffi::OsStringExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr;
use std::sync::{Mutex, OnceLock};

use fring_sys as sys;

use crate::fs::Filesystem;
use crate::host::{set_host, Conn, Mount};
use crate::options::{config_help, Options};
use crate::reply::*;
use crate::types::{Lock, LockType, SetAttr};

/// The plugin's name, for messages (one plugin per shared object).
static NAME: OnceLock<&'static str> = OnceLock::new();

fn name() -> &'static str {
    NAME.get().copied().unwrap_or("rust plugin")
}

/// Identity strings of the descriptor, given to [`plugin!`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Meta {
    pub name: &'static str,
    pub version: &'static str,
    pub description: &'static str,
}

/// The descriptor and what it points to, built once by the entry point.
#[doc(hidden)]
pub struct Descriptor {
    plugin: sys::fring_plugin,
    _ops: Box<sys::fring_fs_ops>,
    _strings: Vec<CString>,
}

// SAFETY: immutable after construction; the pointers inside it point to
// its own heap allocations (ops, strings), never freed.
unsafe impl Send for Descriptor {}
// SAFETY: as above.
unsafe impl Sync for Descriptor {}

impl Descriptor {
    /// The `struct fring_plugin` the entry returns.
    pub fn plugin(&self) -> &sys::fring_plugin {
        &self.plugin
    }
}

fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

fn build<F: Filesystem>(meta: Meta) -> Descriptor {
    let ops = Box::new(ops::<F>());
    let mut strings = vec![cstring(meta.name), cstring(meta.version), cstring(meta.description)];
    let help = config_help(F::OPTIONS);
    if !help.is_empty() {
        strings.push(cstring(&help));
    }
    let plugin = sys::fring_plugin {
        size: std::mem::size_of::<sys::fring_plugin>() as u32,
        magic: sys::FRING_PLUGIN_MAGIC,
        abi_major: sys::FRING_ABI_MAJOR as u16,
        abi_minor: sys::FRING_ABI_MINOR as u16,
        thread_model: if F::PARALLEL { sys::FRING_THREAD_PARALLEL } else { sys::FRING_THREAD_SERIALIZE },
        flags: 0,
        name: strings[0].as_ptr(),
        version: strings[1].as_ptr(),
        description: strings[2].as_ptr(),
        config_help: strings.get(3).map_or(ptr::null(), |s| s.as_ptr()),
        load: Some(load),
        create: Some(create_instance::<F>),
        config: Some(config::<F>),
        config_complete: Some(config_complete::<F>),
        init: Some(init::<F>),
        destroy: Some(destroy::<F>),
        unload: None,
        ops: &*ops,
        features: features::<F>(),
        state_save: if F::TAKEOVER { Some(state_save::<F>) } else { None },
        state_load: if F::TAKEOVER { Some(state_load::<F>) } else { None },
        state_live: None, // ABI 1.8: restart after a crash, not in the crate yet
    };
    Descriptor { plugin, _ops: ops, _strings: strings }
}

/// `fring_plugin.features`: what the filesystem's constants declare.
#[allow(clippy::unnecessary_cast)] // bindgen picks u32 or u64 per value
pub(crate) fn features<F: Filesystem>() -> u64 {
    let mut f = 0u64;
    if F::CHECKS_PERMISSIONS {
        f |= sys::FRING_FEATURE_CHECKS_PERMISSIONS as u64;
    }
    if F::ATOMIC_O_TRUNC {
        f |= sys::FRING_FEATURE_ATOMIC_O_TRUNC as u64;
    }
    f
}

/// The body of the exported `fring_plugin_entry_v1` (see [`plugin!`]).
#[doc(hidden)]
pub fn entry<F: Filesystem>(
    host: *const sys::fring_host_api,
    slot: &'static OnceLock<Descriptor>,
    meta: Meta,
) -> *const sys::fring_plugin {
    set_host(host);
    let _ = NAME.set(meta.name);
    match catch_unwind(|| slot.get_or_init(|| build::<F>(meta))) {
        Ok(d) => &d.plugin,
        Err(p) => {
            crate::host::log(
                crate::Level::Error,
                &format!("{}: entry panicked: {}", meta.name, panic_message(&*p)),
            );
            ptr::null()
        }
    }
}

/// The per-mount instance behind `void *inst`.
pub(crate) struct Instance<F> {
    pub(crate) mount: Mount,
    pub(crate) options: Mutex<Options>,
    pub(crate) fs: OnceLock<F>,
}

pub(crate) fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_owned()
    }
}

/// # Safety
/// `inst` is what `create::<F>` stored, not destroyed yet.
unsafe fn instance<'a, F>(inst: *mut c_void) -> Option<&'a Instance<F>> {
    // SAFETY: per the contract.
    unsafe { (inst as *const Instance<F>).as_ref() }
}

unsafe fn copy(p: *const c_char, len: u32) -> OsString {
    if p.is_null() || len == 0 {
        return OsString::new();
    }
    // SAFETY: the host's name of `len` bytes, valid for the call.
    OsString::from_vec(unsafe { std::slice::from_raw_parts(p as *const u8, len as usize) }.to_vec())
}

unsafe fn c_str<'a>(p: *const c_char) -> std::borrow::Cow<'a, str> {
    if p.is_null() {
        return "".into();
    }
    // SAFETY: a NUL-terminated string from the host, valid for the call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy()
}

/// Runs a lifecycle step, turning a panic into `-EIO`.
fn guarded(what: &str, f: impl FnOnce() -> i32) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            crate::host::log(
                crate::Level::Error,
                &format!("{}: {what} panicked: {}", name(), panic_message(&*p)),
            );
            -libc::EIO
        }
    }
}

unsafe extern "C" fn load(host: *const sys::fring_host_api) -> i32 {
    set_host(host);
    0
}

unsafe extern "C" fn create_instance<F: Filesystem>(m: *mut sys::fring_mount, inst: *mut *mut c_void) -> i32 {
    guarded("create", || {
        let i = Box::new(Instance::<F> {
            mount: Mount::from_raw(m),
            options: Mutex::new(Options::default()),
            fs: OnceLock::new(),
        });
        // SAFETY: the host's out pointer.
        unsafe { *inst = Box::into_raw(i) as *mut c_void };
        0
    })
}

unsafe extern "C" fn config<F: Filesystem>(
    inst: *mut c_void,
    key: *const c_char,
    value: *const c_char,
) -> i32 {
    guarded("config", || {
        // SAFETY: the host passes the instance create made.
        let Some(i) = (unsafe { instance::<F>(inst) }) else {
            return -libc::EINVAL;
        };
        // SAFETY: NUL-terminated strings valid for the call.
        let (key, value) = unsafe { (c_str(key), c_str(value)) };
        let mut opts = i.options.lock().unwrap_or_else(|e| e.into_inner());
        match opts.set(F::OPTIONS, &key, &value) {
            Ok(()) => 0,
            Err(msg) => {
                i.mount.error(&format!("{}: {msg}", name()));
                -libc::EINVAL
            }
        }
    })
}

unsafe extern "C" fn config_complete<F: Filesystem>(inst: *mut c_void) -> i32 {
    guarded("new", || {
        // SAFETY: the host passes the instance create made.
        let Some(i) = (unsafe { instance::<F>(inst) }) else {
            return -libc::EINVAL;
        };
        let opts = i.options.lock().unwrap_or_else(|e| e.into_inner());
        let made = opts.check_required(F::OPTIONS).and_then(|()| F::new(&opts, i.mount));
        match made {
            Ok(fs) => {
                let _ = i.fs.set(fs);
                0
            }
            Err(msg) => {
                i.mount.error(&format!("{}: {msg}", name()));
                -libc::EINVAL
            }
        }
    })
}

unsafe extern "C" fn init<F: Filesystem>(inst: *mut c_void, conn: *mut sys::fring_conn) -> i32 {
    guarded("init", || {
        // SAFETY: the host passes the instance create made, and its conn.
        let (Some(i), Some(conn)) = (unsafe { instance::<F>(inst) }, unsafe { conn.as_mut() }) else {
            return -libc::EINVAL;
        };
        match i.fs.get() {
            Some(fs) => match fs.init(&mut Conn::new(conn)) {
                Ok(()) => 0,
                Err(e) => -e.raw(),
            },
            None => -libc::EINVAL,
        }
    })
}

unsafe extern "C" fn state_save<F: Filesystem>(inst: *mut c_void, fd: i32, version: *mut u32) -> i32 {
    guarded("state_save", || {
        // SAFETY: the host passes the instance create made, and *version.
        let (Some(i), Some(version)) = (unsafe { instance::<F>(inst) }, unsafe { version.as_mut() }) else {
            return -libc::EINVAL;
        };
        let Some(fs) = i.fs.get() else {
            return -libc::EINVAL;
        };
        match fs.state_save() {
            Ok((v, data)) => {
                let mut left = &data[..];
                while !left.is_empty() {
                    // SAFETY: fd is the host's memfd, left a live slice.
                    let n = unsafe { libc::write(fd, left.as_ptr() as *const c_void, left.len()) };
                    if n < 0 {
                        let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
                        if e == libc::EINTR {
                            continue;
                        }
                        return -e;
                    }
                    left = &left[n as usize..];
                }
                *version = v;
                0
            }
            Err(e) => -e.raw(),
        }
    })
}

unsafe extern "C" fn state_load<F: Filesystem>(inst: *mut c_void, fd: i32, version: u32) -> i32 {
    guarded("state_load", || {
        // SAFETY: the host passes the instance create made.
        let Some(i) = (unsafe { instance::<F>(inst) }) else {
            return -libc::EINVAL;
        };
        let Some(fs) = i.fs.get() else {
            return -libc::EINVAL;
        };
        let mut data = Vec::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            // SAFETY: fd is the host's memfd, buf a live buffer.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut c_void, buf.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
                if e == libc::EINTR {
                    continue;
                }
                return -e;
            }
            if n == 0 {
                break;
            }
            data.extend_from_slice(&buf[..n as usize]);
        }
        match fs.state_load(version, &data) {
            Ok(()) => 0,
            Err(e) => -e.raw(),
        }
    })
}

unsafe extern "C" fn destroy<F: Filesystem>(inst: *mut c_void) {
    if inst.is_null() {
        return;
    }
    guarded("drop", || {
        // SAFETY: create's Box, destroyed once; nothing uses it after.
        drop(unsafe { Box::from_raw(inst as *mut Instance<F>) });
        0
    });
}

/// Hands one request to the filesystem: `call` gets it and the reply
/// handle; a panic is caught, logged, and answered EIO by the reply's drop.
///
/// # Safety
/// `inst` is create's instance, `r` a fresh request handle.
unsafe fn serve<F: Filesystem>(
    inst: *mut c_void,
    r: *mut sys::fring_req,
    op: &'static str,
    call: impl FnOnce(&F, Req),
) {
    // SAFETY: a fresh handle from the host; this Req is its only owner.
    let Some(req) = (unsafe { Req::new(r, op) }) else {
        return;
    };
    // SAFETY: per the contract.
    let Some(i) = (unsafe { instance::<F>(inst) }) else {
        return drop(req);
    };
    let Some(fs) = i.fs.get() else {
        i.mount.error(&format!("{op}: no filesystem (config_complete failed?)"));
        return drop(req);
    };
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| call(fs, req))) {
        i.mount.error(&format!("{}: {op} panicked: {}", name(), panic_message(&*p)));
    }
}

/// One trampoline: copies the args struct (plain values and raw pointers)
/// before anything else, then serves the request.
macro_rules! op {
    ($name:ident, $args:ty, |$fs:ident, $req:ident, $a:ident| $body:expr) => {
        unsafe extern "C" fn $name<F: Filesystem>(
            inst: *mut c_void,
            r: *mut sys::fring_req,
            a: *const $args,
        ) {
            if a.is_null() {
                // SAFETY: a fresh handle; answered EIO by the drop.
                return drop(unsafe { Req::new(r, stringify!($name)) });
            }
            // SAFETY: the host's args, valid until the reply; copied now.
            let $a: $args = unsafe { a.read() };
            let call = |$fs: &F, $req: Req| $body;
            // SAFETY: the host's instance and a fresh handle.
            unsafe { serve::<F>(inst, r, stringify!($name), call) }
        }
    };
}

op!(lookup, sys::fring_name_args, |fs, req, a| {
    // SAFETY: the name of namelen bytes, valid for the call (all copies below alike).
    let name = unsafe { copy(a.name, a.namelen) };
    fs.lookup(a.parent, &name, ReplyEntry { req })
});
op!(getattr, sys::fring_getattr_args, |fs, req, a| {
    let fh = (a.flags & sys::FRING_GETATTR_FH != 0).then_some(a.fh);
    fs.getattr(a.nodeid, fh, ReplyAttr { req })
});
op!(setattr, sys::fring_setattr_args, |fs, req, a| {
    fs.setattr(a.nodeid, SetAttr::from_sys(&a), ReplyAttr { req })
});
op!(readlink, sys::fring_node_args, |fs, req, a| fs.readlink(a.nodeid, ReplyReadlink { req }));
op!(mknod, sys::fring_make_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    fs.mknod(a.parent, &name, a.mode, a.umask, a.rdev, ReplyEntry { req })
});
op!(mkdir, sys::fring_make_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    fs.mkdir(a.parent, &name, a.mode, a.umask, ReplyEntry { req })
});
op!(symlink, sys::fring_make_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    let target = unsafe { copy(a.link_target, a.link_target_len) };
    fs.symlink(a.parent, &name, Path::new(&target), ReplyEntry { req })
});
op!(unlink, sys::fring_name_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    fs.unlink(a.parent, &name, ReplyEmpty { req })
});
op!(rmdir, sys::fring_name_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    fs.rmdir(a.parent, &name, ReplyEmpty { req })
});
op!(rename, sys::fring_rename_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    let newname = unsafe { copy(a.newname, a.newnamelen) };
    fs.rename(a.parent, &name, a.newparent, &newname, a.flags, ReplyEmpty { req })
});
op!(link, sys::fring_link_args, |fs, req, a| {
    let newname = unsafe { copy(a.newname, a.newnamelen) };
    fs.link(a.nodeid, a.newparent, &newname, ReplyEntry { req })
});
op!(open, sys::fring_open_args, |fs, req, a| {
    let kill_suidgid = a.open_flags & sys::FRING_OPEN_KILL_SUIDGID != 0;
    fs.open(a.nodeid, a.flags as i32, ReplyOpen { req, kill_suidgid })
});
op!(read, sys::fring_read_args, |fs, req, a| {
    fs.read(a.nodeid, a.fh, a.offset, a.len, ReplyRead { req, size: a.len })
});
op!(write, sys::fring_write_args, |fs, req, a| {
    let reply = ReplyWrite { req, data: a.data as *const u8, len: a.len };
    fs.write(a.nodeid, a.fh, a.offset, a.write_flags, reply)
});
op!(flush, sys::fring_release_args, |fs, req, a| fs.flush(a.nodeid, a.fh, a.lock_owner, ReplyEmpty { req }));
op!(release, sys::fring_release_args, |fs, req, a| {
    fs.release(a.nodeid, a.fh, a.flags as i32, ReplyEmpty { req })
});
op!(fsync, sys::fring_fsync_args, |fs, req, a| fs.fsync(a.nodeid, a.fh, a.datasync != 0, ReplyEmpty { req }));
op!(opendir, sys::fring_open_args, |fs, req, a| {
    fs.opendir(a.nodeid, a.flags as i32, ReplyOpen { req, kill_suidgid: false })
});
op!(readdir, sys::fring_read_args, |fs, req, a| fs.readdir(a.nodeid, a.fh, a.offset, ReplyDir { req }));
op!(readdirplus, sys::fring_read_args, |fs, req, a| {
    fs.readdirplus(a.nodeid, a.fh, a.offset, ReplyDirPlus { req })
});
op!(releasedir, sys::fring_release_args, |fs, req, a| {
    fs.releasedir(a.nodeid, a.fh, a.flags as i32, ReplyEmpty { req })
});
op!(fsyncdir, sys::fring_fsync_args, |fs, req, a| {
    fs.fsyncdir(a.nodeid, a.fh, a.datasync != 0, ReplyEmpty { req })
});
op!(statfs, sys::fring_node_args, |fs, req, a| fs.statfs(a.nodeid, ReplyStatfs { req }));
op!(setxattr, sys::fring_xattr_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    let value = unsafe { copy(a.value as *const c_char, a.value_len) }.into_vec();
    fs.setxattr(a.nodeid, &name, &value, a.flags as i32, ReplyEmpty { req })
});
op!(getxattr, sys::fring_xattr_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    fs.getxattr(a.nodeid, &name, a.max, ReplyXattr { req })
});
op!(listxattr, sys::fring_xattr_args, |fs, req, a| fs.listxattr(a.nodeid, a.max, ReplyXattr { req }));
op!(removexattr, sys::fring_xattr_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    fs.removexattr(a.nodeid, &name, ReplyEmpty { req })
});
op!(access, sys::fring_access_args, |fs, req, a| fs.access(a.nodeid, a.mask as i32, ReplyEmpty { req }));
op!(create, sys::fring_make_args, |fs, req, a| {
    let name = unsafe { copy(a.name, a.namelen) };
    fs.create(a.parent, &name, a.mode, a.umask, a.flags as i32, ReplyCreate { req })
});
op!(fallocate, sys::fring_fallocate_args, |fs, req, a| {
    fs.fallocate(a.nodeid, a.fh, a.offset, a.length, a.mode as i32, ReplyEmpty { req })
});
op!(lseek, sys::fring_lseek_args, |fs, req, a| {
    fs.lseek(a.nodeid, a.fh, a.offset, a.whence as i32, ReplyLseek { req })
});
op!(copy_file_range, sys::fring_copy_range_args, |fs, req, a| {
    fs.copy_file_range(
        a.nodeid_in,
        a.fh_in,
        a.off_in,
        a.nodeid_out,
        a.fh_out,
        a.off_out,
        a.len,
        a.flags,
        ReplyCopy { req },
    )
});
op!(tmpfile, sys::fring_make_args, |fs, req, a| {
    fs.tmpfile(a.parent, a.mode, a.umask, a.flags as i32, ReplyCreate { req })
});

op!(getlk, sys::fring_lock_args, |fs, req, a| {
    fs.getlk(a.nodeid, a.fh, a.owner, Lock::from_sys(&a.lock), ReplyLock { req })
});
op!(setlk, sys::fring_lock_args, |fs, req, a| {
    fs.setlk(a.nodeid, a.fh, a.owner, Lock::from_sys(&a.lock), a.sleep != 0, ReplyEmpty { req })
});
op!(flock, sys::fring_lock_args, |fs, req, a| {
    let kind = LockType::from_raw(a.lock.type_);
    fs.flock(a.nodeid, a.fh, a.owner, kind, a.sleep != 0, ReplyEmpty { req })
});
op!(statx, sys::fring_statx_args, |fs, req, a| {
    let fh = (a.getattr_flags & sys::FRING_GETATTR_FH != 0).then_some(a.fh);
    fs.statx(a.nodeid, fh, a.sx_mask, ReplyStatx { req })
});

unsafe extern "C" fn forget<F: Filesystem>(
    inst: *mut c_void,
    items: *const sys::fring_forget_one,
    count: u32,
) {
    // SAFETY: the host's instance.
    let Some(fs) = (unsafe { instance::<F>(inst) }).and_then(|i| i.fs.get()) else {
        return;
    };
    if items.is_null() {
        return;
    }
    // SAFETY: `count` items, valid for the call; copied at once.
    let items = unsafe { std::slice::from_raw_parts(items, count as usize) }.to_vec();
    guarded("forget", || {
        for it in items {
            fs.forget(it.nodeid, it.nlookup);
        }
        0
    });
}

/// The ops table: every operation, but those whose mere presence changes
/// what is negotiated (READDIRPLUS, POSIX and BSD locks) only when the
/// filesystem says it has them, so the trait's defaults behave as the
/// host's NULL slots.
#[allow(clippy::needless_update)]
fn ops<F: Filesystem>() -> sys::fring_fs_ops {
    sys::fring_fs_ops {
        size: std::mem::size_of::<sys::fring_fs_ops>() as u32,
        padding: 0,
        lookup: Some(lookup::<F>),
        forget: Some(forget::<F>),
        getattr: Some(getattr::<F>),
        setattr: Some(setattr::<F>),
        readlink: Some(readlink::<F>),
        mknod: Some(mknod::<F>),
        mkdir: Some(mkdir::<F>),
        symlink: Some(symlink::<F>),
        unlink: Some(unlink::<F>),
        rmdir: Some(rmdir::<F>),
        rename: Some(rename::<F>),
        link: Some(link::<F>),
        open: Some(open::<F>),
        read: Some(read::<F>),
        write: Some(write::<F>),
        flush: Some(flush::<F>),
        release: Some(release::<F>),
        fsync: Some(fsync::<F>),
        opendir: Some(opendir::<F>),
        readdir: Some(readdir::<F>),
        readdirplus: if F::READDIRPLUS { Some(readdirplus::<F>) } else { None },
        releasedir: Some(releasedir::<F>),
        fsyncdir: Some(fsyncdir::<F>),
        statfs: Some(statfs::<F>),
        setxattr: Some(setxattr::<F>),
        getxattr: Some(getxattr::<F>),
        listxattr: Some(listxattr::<F>),
        removexattr: Some(removexattr::<F>),
        access: Some(access::<F>),
        create: Some(create::<F>),
        fallocate: Some(fallocate::<F>),
        lseek: Some(lseek::<F>),
        copy_file_range: Some(copy_file_range::<F>),
        getlk: if F::POSIX_LOCKS { Some(getlk::<F>) } else { None },
        setlk: if F::POSIX_LOCKS { Some(setlk::<F>) } else { None },
        flock: if F::FLOCK_LOCKS { Some(flock::<F>) } else { None },
        tmpfile: Some(tmpfile::<F>),
        statx: Some(statx::<F>),
        // slots a newer header adds stay NULL (host default) until handled here
        ..Default::default()
    }
}

/// Exports a [`Filesystem`] as a fring plugin: defines the entry symbol
/// `fring_plugin_entry_v1` and the descriptor, in a `cdylib` crate.
///
/// ```ignore
/// fring::plugin!(Hello, name: "hello-rust", version: "1.0",
///                description: "one read-only file, in Rust");
/// // or, with version and description from Cargo.toml:
/// fring::plugin!(Hello, name: "hello-rust");
/// ```
///
/// Build with the default `panic = "unwind"`: panics are caught at the
/// boundary (a method's panic answers EIO with the message logged);
/// `panic = "abort"` would end the serving process instead.
#[macro_export]
macro_rules! plugin {
    ($fs:ty, name: $name:expr, version: $version:expr, description: $desc:expr $(,)?) => {
        /// The fring plugin entry point (`FRING_PLUGIN_ENTRY_SYMBOL`).
        #[no_mangle]
        #[allow(unsafe_code)]
        pub extern "C" fn fring_plugin_entry_v1(
            host: *const $crate::sys::fring_host_api,
        ) -> *const $crate::sys::fring_plugin {
            static DESCRIPTOR: ::std::sync::OnceLock<$crate::__private::Descriptor> =
                ::std::sync::OnceLock::new();
            $crate::__private::entry::<$fs>(
                host,
                &DESCRIPTOR,
                $crate::__private::Meta { name: $name, version: $version, description: $desc },
            )
        }
    };
    ($fs:ty, name: $name:expr $(,)?) => {
        $crate::plugin!($fs, name: $name, version: ::core::env!("CARGO_PKG_VERSION"),
                        description: ::core::env!("CARGO_PKG_DESCRIPTION"));
    };
}
