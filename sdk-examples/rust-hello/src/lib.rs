//! rust-hello: a root directory holding one read-only file, "hello",
//! written against the raw bindings (fring-sys). The same plugin as
//! sdk-examples/c-hello, callback for callback.
use core::ffi::{c_char, c_void};
use core::mem::size_of;
use core::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use fring_sys::*;

const ROOT: u64 = 1; // the kernel's root inode
const HELLO: u64 = 2;
const TIMEOUT_NS: u64 = 1_000_000_000;
const ENOENT: i32 = 2;
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const TEXT: &[u8] = b"hello from Rust\n";

/// The host table, stored by the entry point before any other callback.
static HOST: AtomicPtr<fring_host_api> = AtomicPtr::new(ptr::null_mut());

fn host() -> &'static fring_host_api {
    // SAFETY: set once by fring_plugin_entry_v1; the host table outlives us.
    unsafe { &*HOST.load(Ordering::Acquire) }
}

fn attr(ino: u64) -> fring_attr {
    fring_attr {
        ino,
        mode: if ino == ROOT { S_IFDIR | 0o755 } else { S_IFREG | 0o444 },
        nlink: if ino == ROOT { 2 } else { 1 },
        size: if ino == ROOT { 0 } else { TEXT.len() as u64 },
        ..Default::default()
    }
}

unsafe extern "C" fn create(_m: *mut fring_mount, inst: *mut *mut c_void) -> i32 {
    *inst = ptr::null_mut(); // no per-mount state
    0
}

unsafe extern "C" fn lookup(_i: *mut c_void, r: *mut fring_req, a: *const fring_name_args) {
    let a = &*a;
    let name = core::slice::from_raw_parts(a.name as *const u8, a.namelen as usize);
    if a.parent != ROOT || name != b"hello" {
        host().reply_err.unwrap()(r, -ENOENT);
        return;
    }
    let e = fring_entry {
        ino: HELLO,
        entry_timeout_ns: TIMEOUT_NS,
        attr_timeout_ns: TIMEOUT_NS,
        attr: attr(HELLO),
        ..Default::default()
    };
    host().reply_entry.unwrap()(r, &e);
}

unsafe extern "C" fn getattr(_i: *mut c_void, r: *mut fring_req, a: *const fring_getattr_args) {
    let ino = (*a).nodeid;
    if ino != ROOT && ino != HELLO {
        host().reply_err.unwrap()(r, -ENOENT);
        return;
    }
    host().reply_attr.unwrap()(r, &attr(ino), TIMEOUT_NS);
}

unsafe extern "C" fn read(_i: *mut c_void, r: *mut fring_req, a: *const fring_read_args) {
    let a = &*a;
    let off = (a.offset as usize).min(TEXT.len());
    let n = (TEXT.len() - off).min(a.len as usize);
    host().reply_data.unwrap()(r, TEXT[off..].as_ptr() as *const c_void, n as u32);
}

unsafe extern "C" fn readdir(_i: *mut c_void, r: *mut fring_req, a: *const fring_read_args) {
    const ENTS: [(&[u8], u64, u32); 3] =
        [(b".", ROOT, S_IFDIR), (b"..", ROOT, S_IFDIR), (b"hello", HELLO, S_IFREG)];
    // offset is the next_off of the last entry the kernel got
    for (i, (name, ino, kind)) in ENTS.iter().enumerate().skip((*a).offset as usize) {
        let added = host().dir_add.unwrap()(
            r,
            name.as_ptr() as *const c_char,
            name.len() as u32,
            *ino,
            *kind,
            i as u64 + 1,
        );
        if added != 1 {
            break;
        }
    }
    host().reply_dir.unwrap()(r);
}

/// Statics holding C pointers: immutable after construction.
struct Shared<T>(T);
unsafe impl<T> Sync for Shared<T> {}

static OPS: Shared<fring_fs_ops> = Shared(fring_fs_ops {
    size: size_of::<fring_fs_ops>() as u32,
    lookup: Some(lookup),
    getattr: Some(getattr),
    read: Some(read),
    readdir: Some(readdir),
    // SAFETY: every other slot NULL (host default), as in C.
    ..unsafe { core::mem::zeroed() }
});

static PLUGIN: Shared<fring_plugin> = Shared(fring_plugin {
    size: size_of::<fring_plugin>() as u32,
    magic: FRING_PLUGIN_MAGIC,
    abi_major: FRING_ABI_MAJOR as u16,
    abi_minor: FRING_ABI_MINOR as u16,
    thread_model: FRING_THREAD_SERIALIZE,
    name: c"hello-rust".as_ptr(),
    version: c"1.0".as_ptr(),
    description: c"one read-only file, in Rust".as_ptr(),
    create: Some(create),
    ops: &OPS.0,
    ..unsafe { core::mem::zeroed() }
});

/// The one exported symbol (FRING_PLUGIN_ENTRY_SYMBOL).
#[no_mangle]
pub extern "C" fn fring_plugin_entry_v1(h: *const fring_host_api) -> *const fring_plugin {
    HOST.store(h as *mut fring_host_api, Ordering::Release);
    &PLUGIN.0
}
