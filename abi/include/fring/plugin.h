// SPDX-License-Identifier: MIT
/*
 * fring plugin ABI, version 1.5 (abi/CHANGELOG.md lists what each minor added).
 *
 * A plugin is a shared object that exports exactly one symbol,
 * fring_plugin_entry_v1 (FRING_PLUGIN_ENTRY_SYMBOL). The host dlopen()s it,
 * calls the entry with its host function table and gets back a pointer to a
 * static struct fring_plugin. The entry must have no side effects: `fring
 * plugins` calls it just to list the plugin.
 *
 * Rules (README.md, "Writing a plugin"):
 *  - ABI major must match (it is part of the entry symbol's name); a plugin
 *    built against a newer minor than the host's is refused.
 *  - Every extensible struct starts with a uint32_t `size` (its sizeof as the
 *    writer compiled it). New fields are only ever appended. A reader uses a
 *    field only if `size` covers it (FRING_HAS_FIELD).
 *  - Fixed-width integer types only, no bitfields, no enums in structs, no
 *    inline functions, no varargs: this header is the input of the Rust
 *    (bindgen) and Python (cffi) bindings.
 *  - Errors are negative errno values everywhere.
 *  - Operations are inode based (the FUSE low-level vocabulary). Each one
 *    receives an opaque request handle and must be answered exactly once
 *    through one reply function of the host table, during the call or later,
 *    from any thread. The args struct and every pointer inside it stay valid
 *    until that reply. The runtime enforces exactly-once: a second reply
 *    returns -EALREADY and is logged; a reply of the wrong kind for the
 *    opcode returns -EINVAL and the request gets EIO.
 *  - Request handles (fring_req *): who, from which thread, until when.
 *    The callback's thread may use the handle during the call; the plugin
 *    may instead keep it and use it later from any one thread it hands it
 *    to (the hand-off itself must synchronise: a mutex, a queue). Until
 *    the reply, one thread at a time: the reply (or req_read_fd /
 *    req_write_fd accepting it) ends the plugin's right to the handle and
 *    to the args. Over io_uring the request belongs to its queue thread:
 *    a call from another thread holds a reference for its duration and
 *    the backing I/O is handed to that queue thread, so it is safe but
 *    costs a hand-over (README "Zero-copy"). A handle used after its
 *    request was answered, or after the mount's rings stopped (unmount,
 *    SIGTERM, an aborted connection), gets a negative errno (-EALREADY,
 *    -ENOTCONN) and a log line, never a crash or another request's data.
 *    Replying to one request from two threads at once is a plugin bug,
 *    but its outcome is defined: exactly one call wins and the kernel
 *    gets its reply, every other gets -EALREADY (tested with 100,000
 *    such pairs, tests/integration/test_owner_race.py). The queue
 *    thread's own req_read_fd / req_write_fd of a zero-copied request
 *    claims without an atomic read-modify-write, at the price of one full
 *    memory fence (README "Zero-copy"). Once destroy has returned, no
 *    handle may be used.
 *
 * Unless stated otherwise, times are nanoseconds, sizes and offsets bytes.
 */
#ifndef FRING_PLUGIN_H
#define FRING_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FRING_ABI_MAJOR 1
#define FRING_ABI_MINOR 8
#define FRING_PLUGIN_MAGIC 0x474e5246u /* "FRNG" little-endian */
#define FRING_PLUGIN_ENTRY_SYMBOL "fring_plugin_entry_v1"

/* Opaque runtime objects. */
typedef struct fring_req fring_req;     /* one in-flight FUSE request */
typedef struct fring_mount fring_mount; /* the host side of one mount */

/* Log levels for fring_host_api.log. */
#define FRING_LOG_ERROR 0
#define FRING_LOG_WARN 1
#define FRING_LOG_INFO 2
#define FRING_LOG_DEBUG 3

/* Thread models (fring_plugin.thread_model). The host never calls the
 * plugin more concurrently than its model allows. */
#define FRING_THREAD_SERIALIZE 0 /* one callback per instance at a time */
#define FRING_THREAD_PARALLEL 1  /* callbacks from any host thread at once */

/* ---------------------------------------------------------------------
 * Reply payloads (plugin -> host)
 * ------------------------------------------------------------------- */

/* File attributes. Maps to the kernel's struct fuse_attr. mode holds the
 * S_IF* type bits and permissions; rdev is the encoded dev_t (new_encode_dev
 * layout as returned by makedev()); blocks counts 512-byte units. */
struct fring_attr {
	uint64_t ino;
	uint64_t size;
	uint64_t blocks;
	int64_t atime_sec;
	int64_t mtime_sec;
	int64_t ctime_sec;
	uint32_t atime_nsec;
	uint32_t mtime_nsec;
	uint32_t ctime_nsec;
	uint32_t mode;
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint32_t rdev;
	uint32_t blksize;
	uint32_t flags; /* FUSE_ATTR_* (kernel), normally 0 */
};

/* A directory entry the kernel may cache. Maps to struct fuse_entry_out.
 * ino 0 with a reply_entry means a negative entry (cached ENOENT). Every
 * entry with ino != 0 replied to LOOKUP, MKNOD, MKDIR, SYMLINK, LINK, CREATE,
 * TMPFILE or READDIRPLUS adds one to the inode's lookup count, which FORGET
 * later subtracts. (ino, generation) must be unique for the fs's life. */
struct fring_entry {
	uint64_t ino;
	uint64_t generation;
	uint64_t entry_timeout_ns;
	uint64_t attr_timeout_ns;
	struct fring_attr attr;
};

/* FOPEN_* flags for fring_open_out.open_flags (kernel values). */
#define FRING_FOPEN_DIRECT_IO (1u << 0)
#define FRING_FOPEN_KEEP_CACHE (1u << 1)
#define FRING_FOPEN_NONSEEKABLE (1u << 2)
#define FRING_FOPEN_CACHE_DIR (1u << 3)
#define FRING_FOPEN_STREAM (1u << 4)
#define FRING_FOPEN_NOFLUSH (1u << 5)
#define FRING_FOPEN_PARALLEL_DIRECT_WRITES (1u << 6)
/* ABI 1.3: the kernel serves this open file's read, write and mmap from
 * the backing file fring_open_out.backing_id names (FOPEN_PASSTHROUGH;
 * needs FRING_CAP_PASSTHROUGH and host backing_open). */
#define FRING_FOPEN_PASSTHROUGH (1u << 7)
/* ABI 1.5: opt this open file in to io_uring zero-copy (Linux 7.3,
 * FOPEN_IO_URING_ZERO_COPY). The kernel may then hand a READ or WRITE of
 * this file to the server without copying its data: the client's pages
 * sit in a slot of the queue's ring, where only req_read_fd and
 * req_write_fd can reach them. A plugin that sets it must answer READ and
 * WRITE on this open file through those two (or with an error): on a
 * zero-copied WRITE fring_write_args.data is NULL, and reply_data with
 * bytes to a zero-copied READ, or reply_write with a count > 0 to a
 * zero-copied WRITE, gets -EINVAL and the caller EIO (logged, rate
 * limited). The host clears the flag unless the mount serves zero-copy
 * (transport.zero_copy; README "Zero-copy"), so setting it is always
 * safe; it is ignored on /dev/fuse and on kernels before 7.3. */
#define FRING_FOPEN_IO_URING_ZERO_COPY (1u << 8)

/* Result of OPEN/OPENDIR/CREATE. Maps to struct fuse_open_out. fh is an
 * opaque handle the kernel echoes in later requests on this open file. */
struct fring_open_out {
	uint64_t fh;
	uint32_t open_flags;
	int32_t backing_id; /* 0: no kernel passthrough */
};

/* Maps to struct fuse_kstatfs. */
struct fring_statfs {
	uint64_t blocks;
	uint64_t bfree;
	uint64_t bavail;
	uint64_t files;
	uint64_t ffree;
	uint32_t bsize;
	uint32_t namelen;
	uint32_t frsize;
	uint32_t padding;
};

/* A POSIX lock range. Maps to struct fuse_file_lock. type is F_RDLCK,
 * F_WRLCK or F_UNLCK; end is inclusive (OFFSET_MAX = INT64_MAX to EOF). */
struct fring_lock {
	uint64_t start;
	uint64_t end;
	uint32_t type;
	uint32_t pid;
};

/* ---------------------------------------------------------------------
 * Per-operation arguments (host -> plugin). Each starts with its size.
 * Names are NUL-terminated and also carry their length (without NUL).
 * ------------------------------------------------------------------- */

/* LOOKUP, UNLINK, RMDIR: `name` in directory `parent`. */
struct fring_name_args {
	uint32_t size;
	uint32_t namelen;
	uint64_t parent;
	const char *name;
};

/* READLINK, STATFS, and other ops that only name an inode. */
struct fring_node_args {
	uint32_t size;
	uint32_t padding;
	uint64_t nodeid;
};

/* One FORGET item: drop nlookup from nodeid's lookup count. Maps to struct
 * fuse_forget_one. */
struct fring_forget_one {
	uint64_t nodeid;
	uint64_t nlookup;
};

/* GETATTR. fh is valid when flags has FRING_GETATTR_FH. */
#define FRING_GETATTR_FH (1u << 0)
struct fring_getattr_args {
	uint32_t size;
	uint32_t flags;
	uint64_t nodeid;
	uint64_t fh;
};

/* SETATTR. `valid` says which fields to apply (FATTR_* kernel bits). */
#define FRING_SET_MODE (1u << 0)
#define FRING_SET_UID (1u << 1)
#define FRING_SET_GID (1u << 2)
#define FRING_SET_SIZE (1u << 3)
#define FRING_SET_ATIME (1u << 4)
#define FRING_SET_MTIME (1u << 5)
#define FRING_SET_FH (1u << 6)
#define FRING_SET_ATIME_NOW (1u << 7)
#define FRING_SET_MTIME_NOW (1u << 8)
#define FRING_SET_LOCKOWNER (1u << 9)
#define FRING_SET_CTIME (1u << 10)
#define FRING_SET_KILL_SUIDGID (1u << 11)
struct fring_setattr_args {
	uint32_t size;
	uint32_t valid;
	uint64_t nodeid;
	uint64_t fh;
	uint64_t file_size; /* new size when FRING_SET_SIZE */
	uint64_t lock_owner;
	int64_t atime_sec;
	int64_t mtime_sec;
	int64_t ctime_sec;
	uint32_t atime_nsec;
	uint32_t mtime_nsec;
	uint32_t ctime_nsec;
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
};

/* MKNOD, MKDIR, SYMLINK, CREATE, TMPFILE: make `name` in `parent`.
 * mode includes the S_IF* type for MKNOD (S_IFDIR for MKDIR, S_IFLNK for
 * SYMLINK); umask is the caller's umask (already applied by the kernel
 * unless the fs asked for DONT_MASK). rdev: MKNOD only. link_target: SYMLINK
 * only. flags (open(2) flags): CREATE/TMPFILE only. */
struct fring_make_args {
	uint32_t size;
	uint32_t namelen;
	uint64_t parent;
	const char *name;
	uint32_t mode;
	uint32_t umask;
	uint32_t rdev;
	uint32_t flags;
	const char *link_target;
	uint32_t link_target_len;
	uint32_t open_flags; /* fuse_create_in.open_flags (FUSE_OPEN_KILL_SUIDGID) */
};

/* RENAME and RENAME2. flags: RENAME_NOREPLACE (1), RENAME_EXCHANGE (2),
 * RENAME_WHITEOUT (4); 0 for plain RENAME. */
struct fring_rename_args {
	uint32_t size;
	uint32_t flags;
	uint64_t parent;
	uint64_t newparent;
	const char *name;
	const char *newname;
	uint32_t namelen;
	uint32_t newnamelen;
};

/* LINK: new hard link `newname` in `newparent` to inode `nodeid`. */
struct fring_link_args {
	uint32_t size;
	uint32_t newnamelen;
	uint64_t nodeid;
	uint64_t newparent;
	const char *newname;
};

/* OPEN and OPENDIR. flags are open(2) flags. open_flags: FUSE_OPEN_*
 * (KILL_SUIDGID: an O_TRUNC open by an unprivileged caller, clear the
 * setuid/setgid bits). */
#define FRING_OPEN_KILL_SUIDGID (1u << 0)
struct fring_open_args {
	uint32_t size;
	uint32_t flags;
	uint64_t nodeid;
	uint32_t open_flags; /* fuse_open_in.open_flags */
	uint32_t padding;
};

/* READ, READDIR, READDIRPLUS: up to `len` bytes at `offset`. For READDIR*
 * offset is the `next_off` of the last entry the kernel got (0 = start). */
struct fring_read_args {
	uint32_t size;
	uint32_t len;
	uint64_t nodeid;
	uint64_t fh;
	uint64_t offset;
	uint64_t lock_owner;
	uint32_t read_flags;
	uint32_t flags;
};

/* WRITE: `len` bytes at `data` to `offset`. write_flags: FUSE_WRITE_*
 * bits below. With HANDLE_KILLPRIV_V2 negotiated, KILL_SUIDGID asks the fs
 * to clear the setuid/setgid bits as a write by an unprivileged caller
 * would. */
#define FRING_WRITE_CACHE (1u << 0) /* a write-back cache write */
#define FRING_WRITE_LOCKOWNER (1u << 1)
#define FRING_WRITE_KILL_SUIDGID (1u << 2)
struct fring_write_args {
	uint32_t size;
	uint32_t len;
	uint64_t nodeid;
	uint64_t fh;
	uint64_t offset;
	uint64_t lock_owner;
	uint32_t write_flags;
	uint32_t flags;
	const void *data;
};

/* RELEASE, RELEASEDIR, FLUSH. flush: flags/release_flags are 0. */
struct fring_release_args {
	uint32_t size;
	uint32_t flags;
	uint64_t nodeid;
	uint64_t fh;
	uint64_t lock_owner;
	uint32_t release_flags;
	uint32_t padding;
};

/* FSYNC, FSYNCDIR. datasync != 0: only data (fdatasync). */
struct fring_fsync_args {
	uint32_t size;
	uint32_t datasync;
	uint64_t nodeid;
	uint64_t fh;
};

/* SETXATTR, GETXATTR, LISTXATTR, REMOVEXATTR.
 * SETXATTR: name, value/value_len, flags (XATTR_CREATE/XATTR_REPLACE),
 *   setxattr_flags (FUSE_SETXATTR_ACL_KILL_SGID).
 * GETXATTR/LISTXATTR: `max` is the caller's buffer size; 0 is a size probe
 *   answered with reply_xattr_size; otherwise reply_data, or -ERANGE if
 *   the value does not fit. LISTXATTR: NUL-separated names, no name.
 * REMOVEXATTR: name only. */
struct fring_xattr_args {
	uint32_t size;
	uint32_t namelen;
	uint64_t nodeid;
	const char *name;
	const void *value;
	uint32_t value_len;
	uint32_t flags;
	uint32_t max;
	uint32_t setxattr_flags;
};

/* ACCESS: mask is R_OK|W_OK|X_OK or F_OK. */
struct fring_access_args {
	uint32_t size;
	uint32_t mask;
	uint64_t nodeid;
};

/* GETLK, SETLK, SETLKW (POSIX locks) and FLOCK.
 * For FLOCK, lock.type is F_RDLCK (LOCK_SH), F_WRLCK (LOCK_EX) or F_UNLCK
 * and the range is the whole file. sleep != 0 for SETLKW (may block). */
struct fring_lock_args {
	uint32_t size;
	uint32_t sleep;
	uint64_t nodeid;
	uint64_t fh;
	uint64_t owner;
	struct fring_lock lock;
};

/* FALLOCATE: mode is the fallocate(2) mode (FALLOC_FL_*). */
struct fring_fallocate_args {
	uint32_t size;
	uint32_t mode;
	uint64_t nodeid;
	uint64_t fh;
	uint64_t offset;
	uint64_t length;
};

/* LSEEK: whence is SEEK_DATA (3) or SEEK_HOLE (4) (others are handled in
 * the kernel). Reply with reply_lseek or -ENXIO past EOF. */
struct fring_lseek_args {
	uint32_t size;
	uint32_t whence;
	uint64_t nodeid;
	uint64_t fh;
	uint64_t offset;
};

/* COPY_FILE_RANGE: copy len bytes; reply with reply_write(bytes copied). */
struct fring_copy_range_args {
	uint32_t size;
	uint32_t padding;
	uint64_t nodeid_in;
	uint64_t fh_in;
	uint64_t off_in;
	uint64_t nodeid_out;
	uint64_t fh_out;
	uint64_t off_out;
	uint64_t len;
	uint64_t flags;
};

/* STATX (7.40+, kernel sends it only when it wants fields GETATTR lacks,
 * such as STATX_BTIME). Answer with reply_statx (ABI 1.1). Without a statx
 * op the host answers -ENOSYS and the kernel falls back to GETATTR for the
 * rest of the connection. */
struct fring_statx_args {
	uint32_t size;
	uint32_t getattr_flags;
	uint64_t nodeid;
	uint64_t fh;
	uint32_t sx_flags;
	uint32_t sx_mask;
};

/* ---------------------------------------------------------------------
 * Connection negotiation (FUSE_INIT)
 * ------------------------------------------------------------------- */

/* Kernel INIT flag bits (64-bit flag word, FUSE_* values) that a plugin may
 * add to or remove from fring_conn.want. */
#define FRING_CAP_ASYNC_READ (1ull << 0)
#define FRING_CAP_POSIX_LOCKS (1ull << 1)
#define FRING_CAP_ATOMIC_O_TRUNC (1ull << 3)
#define FRING_CAP_EXPORT_SUPPORT (1ull << 4)
#define FRING_CAP_DONT_MASK (1ull << 6)
#define FRING_CAP_FLOCK_LOCKS (1ull << 10)
#define FRING_CAP_AUTO_INVAL_DATA (1ull << 12)
#define FRING_CAP_READDIRPLUS (1ull << 13)
#define FRING_CAP_READDIRPLUS_AUTO (1ull << 14)
#define FRING_CAP_ASYNC_DIO (1ull << 15)
#define FRING_CAP_WRITEBACK_CACHE (1ull << 16)
#define FRING_CAP_PARALLEL_DIROPS (1ull << 18)
#define FRING_CAP_HANDLE_KILLPRIV (1ull << 19)
#define FRING_CAP_POSIX_ACL (1ull << 20)
#define FRING_CAP_CACHE_SYMLINKS (1ull << 23)
#define FRING_CAP_HANDLE_KILLPRIV_V2 (1ull << 28)
#define FRING_CAP_SETXATTR_EXT (1ull << 29)
/* ABI 1.3. Kernel FUSE passthrough (FUSE_PASSTHROUGH, Linux 6.9+): OPEN and
 * CREATE replies may name a backing file registered with backing_open, and
 * the kernel then serves that file's read, write and mmap itself, without
 * requests. The host answers INIT with max_stack_depth 1 (the backing file
 * must not be on a stacked file system such as overlayfs) and drops this
 * bit when WRITEBACK_CACHE is wanted too, which the kernel refuses. */
#define FRING_CAP_PASSTHROUGH (1ull << 37)

/* Passed to fring_plugin.init during FUSE_INIT. `capable` is what the
 * kernel offered; `want` is what the host intends to accept (already
 * limited to `capable` and to the ops the plugin implements). The plugin
 * may clear bits of `want` or set bits that are in `capable`; the host
 * masks the result with `capable`. */
struct fring_conn {
	uint32_t size;
	uint32_t proto_major;
	uint32_t proto_minor;
	uint32_t max_write;     /* bytes; plugin may lower it */
	uint32_t max_readahead; /* bytes; plugin may lower it */
	uint32_t time_gran;     /* ns; plugin may raise it */
	uint64_t capable;
	uint64_t want;
	/* FRING_TRANSPORT_* the host intends to use. The rings are set up
	 * after init (their buffers depend on max_write), so in mode auto a
	 * ring setup failure can still put the mount on /dev/fuse; plugins
	 * must not depend on this value for correctness. */
	uint32_t transport;
	uint32_t nr_queues; /* queues (uring) or worker threads (devfuse) */
};
#define FRING_TRANSPORT_DEVFUSE 0
#define FRING_TRANSPORT_URING 1

/* STATX reply (ABI 1.1). Maps to struct fuse_statx_out. mask holds the
 * STATX_* bits that are valid (STATX_BASIC_STATS | STATX_BTIME ...);
 * attributes/attributes_mask are STATX_ATTR_* bits. */
struct fring_statx {
	uint32_t size;
	uint32_t mask;
	struct fring_attr attr;
	int64_t btime_sec;
	uint32_t btime_nsec;
	uint32_t padding;
	uint64_t attributes;
	uint64_t attributes_mask;
};

/* Per-request context (fring_host_api.req_ctx). Maps to fuse_in_header. */
struct fring_req_ctx {
	uint32_t size;
	uint32_t opcode;
	uint64_t unique;
	uint64_t nodeid;
	uint32_t uid;
	uint32_t gid;
	uint32_t pid;
	uint32_t queue;
};

/* ---------------------------------------------------------------------
 * Host function table (host -> plugin, passed to the entry and to load)
 * ------------------------------------------------------------------- */

struct fring_host_api {
	uint32_t size;
	uint16_t abi_major;
	uint16_t abi_minor;
	const char *host_version;

	/* Logging. msg is one line without trailing newline. Any thread. */
	void (*log)(fring_mount *m, int32_t level, const char *msg);
	int32_t (*log_enabled)(fring_mount *m, int32_t level);

	/* Config helpers. parse_size accepts "4096", "64KiB", "1M", "2GiB"
	 * (K/M/G/T suffixes are binary). parse_bool: true/false/yes/no/on/off/
	 * 1/0. Both return 0 or -EINVAL. */
	int32_t (*parse_size)(const char *s, uint64_t *out);
	int32_t (*parse_bool)(const char *s, int32_t *out);

	/* Request inspection, valid until the reply. */
	int32_t (*req_ctx)(fring_req *r, struct fring_req_ctx *out);
	fring_mount *(*req_mount)(fring_req *r);
	/* 1 if the kernel sent an INTERRUPT for this request (the caller got a
	 * signal); the plugin may then finish early with reply_err(-EINTR).
	 * Over /dev/fuse, a request still unanswered 1 s after its INTERRUPT
	 * is answered EINTR by the host, so the caller is not held; the
	 * handle and args stay valid and the plugin's later reply returns
	 * -EALREADY. Over io_uring the caller waits for the plugin. */
	int32_t (*req_interrupted)(fring_req *r);

	/* Replies. Exactly one per request. All return 0 or a negative errno
	 * (-EALREADY: already answered; -EINVAL: wrong reply for this op or bad
	 * value, the request then gets EIO). */
	int32_t (*reply_err)(fring_req *r, int32_t neg_errno); /* 0 = success, no data */
	int32_t (*reply_entry)(fring_req *r, const struct fring_entry *e);
	int32_t (*reply_create)(fring_req *r, const struct fring_entry *e,
				const struct fring_open_out *o);
	int32_t (*reply_attr)(fring_req *r, const struct fring_attr *a,
			      uint64_t attr_timeout_ns);
	int32_t (*reply_readlink)(fring_req *r, const char *target, uint32_t len);
	int32_t (*reply_open)(fring_req *r, const struct fring_open_out *o);
	/* WRITE and COPY_FILE_RANGE: bytes written. */
	int32_t (*reply_write)(fring_req *r, uint32_t count);
	/* READ, GETXATTR, LISTXATTR: len bytes (<= the requested size). */
	int32_t (*reply_data)(fring_req *r, const void *data, uint32_t len);
	int32_t (*reply_statfs)(fring_req *r, const struct fring_statfs *s);
	/* GETXATTR/LISTXATTR size probe (args.max == 0). */
	int32_t (*reply_xattr_size)(fring_req *r, uint32_t value_size);
	int32_t (*reply_lock)(fring_req *r, const struct fring_lock *l);
	int32_t (*reply_lseek)(fring_req *r, uint64_t offset);

	/* Directory listing for READDIR and READDIRPLUS: add entries, then
	 * reply_dir. next_off is the offset the kernel passes back to continue
	 * after this entry (stable, non-zero). type is the S_IF* mode type
	 * (mode & S_IFMT). Returns 1 if the entry was added, 0 if the reply is
	 * full (the entry was NOT added; reply now), negative errno on error.
	 * dir_add_plus is for READDIRPLUS; an entry with e->ino == 0 does not
	 * count as a lookup (the listing still shows e->attr.ino). dir_add is
	 * also accepted in a READDIRPLUS reply (e.g. for "." and ".."). */
	int32_t (*dir_add)(fring_req *r, const char *name, uint32_t namelen,
			   uint64_t ino, uint32_t type, uint64_t next_off);
	int32_t (*dir_add_plus)(fring_req *r, const char *name, uint32_t namelen,
				const struct fring_entry *e, uint64_t next_off);
	int32_t (*reply_dir)(fring_req *r);

	/* Ask the mount to shut down (unmount) as soon as possible. */
	void (*mount_request_shutdown)(fring_mount *m);

	/* ---- ABI 1.1: request-scoped data-path services ----
	 * Check FRING_HAS_FIELD(host, struct fring_host_api, req_write_fd)
	 * before calling. Both ANSWER the request: 0 means accepted and the
	 * runtime will send the reply itself when the I/O completes (short
	 * read: short reply; I/O error: that errno); a negative errno means
	 * not accepted (wrong opcode, bad fd, len over the request's size) and
	 * the request is still the plugin's to answer. On io_uring the I/O is
	 * an IORING_OP_READ_FIXED / WRITE_FIXED on the owning queue's ring,
	 * straight between fd and the ring entry's registered payload buffer,
	 * so the queue thread never blocks on it; on /dev/fuse it is a
	 * synchronous pread/pwrite. fd must stay open until the reply. flags:
	 * 0 (reserved). On a zero-copied request (ABI 1.5,
	 * FRING_FOPEN_IO_URING_ZERO_COPY) the I/O goes straight between fd and
	 * the caller's pages instead, and these two are the only way to move
	 * its data. -ENOTCONN: the mount's rings have stopped. */
	/* READ: reply with up to len bytes of fd at offset. */
	int32_t (*req_read_fd)(fring_req *r, int32_t fd, uint64_t offset,
			       uint32_t len, uint32_t flags);
	/* WRITE: write this request's data to fd at offset, reply the count. */
	int32_t (*req_write_fd)(fring_req *r, int32_t fd, uint64_t offset,
				uint32_t flags);
	/* STATX (ABI 1.1). */
	int32_t (*reply_statx)(fring_req *r, const struct fring_statx *sx,
			       uint64_t attr_timeout_ns);

	/* ---- ABI 1.2 ----
	 * Check FRING_HAS_FIELD(host, struct fring_host_api, mount_point).
	 * The directory the mount is served on, absolute with symlinks
	 * resolved (realpath when the mount was set up; the configured path
	 * if that failed). Valid from create until destroy returns; NULL for
	 * a NULL m. Lets a plugin refuse a mountpoint inside its own backing
	 * tree, where serving a request would wait on its own mount. */
	const char *(*mount_point)(fring_mount *m);

	/* ---- ABI 1.3: kernel passthrough (FRING_CAP_PASSTHROUGH) ----
	 * Check FRING_HAS_FIELD(host, struct fring_host_api, backing_close).
	 * backing_open registers fd, an open regular file, with the kernel
	 * (FUSE_DEV_IOC_BACKING_OPEN) and returns its backing id (> 0) for
	 * fring_open_out.backing_id with FRING_FOPEN_PASSTHROUGH. The kernel
	 * does the I/O through that file (its access mode must allow what the
	 * opens using it do) and holds its own reference: fd may be closed
	 * after the call. Errors: -EOPNOTSUPP when passthrough was not
	 * negotiated (the plugin did not want FRING_CAP_PASSTHROUGH, the
	 * kernel lacks it, or writeback caching is on), -EPERM without
	 * CAP_SYS_ADMIN, -EINVAL for flags != 0 or a file the kernel cannot
	 * pass through to (too deeply stacked, no read_iter), -EBADF.
	 * The kernel accepts one backing file per inode at a time (another
	 * one fails the open with EIO): give every concurrent open of an
	 * inode the same id. backing_close(id) drops the registration; files
	 * opened with it keep working. Only close an id once no OPEN/CREATE
	 * reply naming it can still be on its way (the kernel looks the id up
	 * when it processes the reply, which on io_uring happens after
	 * reply_open returns): closing at the inode's last RELEASE is safe.
	 * Returns 0 or -EOPNOTSUPP / -EINVAL (unknown id). */
	int32_t (*backing_open)(fring_mount *m, int32_t fd, uint32_t flags);
	int32_t (*backing_close)(fring_mount *m, int32_t backing_id);
};

/* ---------------------------------------------------------------------
 * Filesystem operations (plugin -> host). NULL slots get the host default:
 * -ENOSYS for most ops (the kernel then stops sending FLUSH, FSYNC,
 * FSYNCDIR, xattr ops, ACCESS, CREATE, FALLOCATE, RENAME2 flags, LSEEK,
 * COPY_FILE_RANGE, STATX, TMPFILE), success for FLUSH/RELEASE/RELEASEDIR/
 * FSYNCDIR/OPENDIR/OPEN (fh 0), an empty file system for STATFS (so df
 * keeps working), nothing for FORGET. A read-only plugin should answer
 * the modifying ops (CREATE, MKNOD, MKDIR, SETATTR, WRITE...) with -EROFS
 * rather than leave them NULL, or users see "Function not implemented". POSIX_LOCKS/FLOCK_LOCKS
 * are only negotiated when getlk+setlk / flock are present.
 * ------------------------------------------------------------------- */

struct fring_fs_ops {
	uint32_t size;
	uint32_t padding;

	void (*lookup)(void *inst, fring_req *r, const struct fring_name_args *a);
	/* FORGET and BATCH_FORGET: no request, no reply. */
	void (*forget)(void *inst, const struct fring_forget_one *items,
		       uint32_t count);
	void (*getattr)(void *inst, fring_req *r, const struct fring_getattr_args *a);
	void (*setattr)(void *inst, fring_req *r, const struct fring_setattr_args *a);
	void (*readlink)(void *inst, fring_req *r, const struct fring_node_args *a);
	void (*mknod)(void *inst, fring_req *r, const struct fring_make_args *a);
	void (*mkdir)(void *inst, fring_req *r, const struct fring_make_args *a);
	void (*symlink)(void *inst, fring_req *r, const struct fring_make_args *a);
	void (*unlink)(void *inst, fring_req *r, const struct fring_name_args *a);
	void (*rmdir)(void *inst, fring_req *r, const struct fring_name_args *a);
	void (*rename)(void *inst, fring_req *r, const struct fring_rename_args *a);
	void (*link)(void *inst, fring_req *r, const struct fring_link_args *a);
	void (*open)(void *inst, fring_req *r, const struct fring_open_args *a);
	void (*read)(void *inst, fring_req *r, const struct fring_read_args *a);
	void (*write)(void *inst, fring_req *r, const struct fring_write_args *a);
	void (*flush)(void *inst, fring_req *r, const struct fring_release_args *a);
	void (*release)(void *inst, fring_req *r, const struct fring_release_args *a);
	void (*fsync)(void *inst, fring_req *r, const struct fring_fsync_args *a);
	void (*opendir)(void *inst, fring_req *r, const struct fring_open_args *a);
	void (*readdir)(void *inst, fring_req *r, const struct fring_read_args *a);
	void (*readdirplus)(void *inst, fring_req *r, const struct fring_read_args *a);
	void (*releasedir)(void *inst, fring_req *r, const struct fring_release_args *a);
	void (*fsyncdir)(void *inst, fring_req *r, const struct fring_fsync_args *a);
	void (*statfs)(void *inst, fring_req *r, const struct fring_node_args *a);
	void (*setxattr)(void *inst, fring_req *r, const struct fring_xattr_args *a);
	void (*getxattr)(void *inst, fring_req *r, const struct fring_xattr_args *a);
	void (*listxattr)(void *inst, fring_req *r, const struct fring_xattr_args *a);
	void (*removexattr)(void *inst, fring_req *r, const struct fring_xattr_args *a);
	void (*access)(void *inst, fring_req *r, const struct fring_access_args *a);
	void (*create)(void *inst, fring_req *r, const struct fring_make_args *a);
	void (*getlk)(void *inst, fring_req *r, const struct fring_lock_args *a);
	void (*setlk)(void *inst, fring_req *r, const struct fring_lock_args *a);
	void (*flock)(void *inst, fring_req *r, const struct fring_lock_args *a);
	void (*fallocate)(void *inst, fring_req *r, const struct fring_fallocate_args *a);
	void (*lseek)(void *inst, fring_req *r, const struct fring_lseek_args *a);
	void (*copy_file_range)(void *inst, fring_req *r,
				const struct fring_copy_range_args *a);
	void (*tmpfile)(void *inst, fring_req *r, const struct fring_make_args *a);
	void (*statx)(void *inst, fring_req *r, const struct fring_statx_args *a);
};

/* ---------------------------------------------------------------------
 * Plugin descriptor (plugin -> host), returned by the entry point.
 * ------------------------------------------------------------------- */

/* fring_plugin.features (ABI 1.4): what the plugin declares about itself.
 *
 * CHECKS_PERMISSIONS: the plugin checks every caller's permissions itself
 * (req_ctx uid/gid). Without it, a mount with allow_other gets
 * default_permissions from the host, so that the kernel checks mode bits:
 * otherwise every local user could do whatever the server's own uid may
 * (the mount option trust_plugin_permissions turns that off explicitly). */
#define FRING_FEATURE_CHECKS_PERMISSIONS (1ull << 0)
/* ATOMIC_O_TRUNC (ABI 1.6): the plugin's open truncates the file to 0
 * bytes itself when fring_open_args.flags holds O_TRUNC. Only then does
 * the host negotiate FUSE_ATOMIC_O_TRUNC for the mount, which tells the
 * kernel that OPEN truncates and that it need not. Without it (every
 * plugin built before 1.6 too) the kernel strips O_TRUNC from OPEN and
 * sends SETATTR with FATTR_SIZE 0 after it, so a plugin whose open ignores
 * the flag still leaves no old bytes behind; a plugin without setattr
 * then fails such an open with ENOSYS (logged once at mount). A plugin
 * may also set FRING_CAP_ATOMIC_O_TRUNC in fring_conn.want from init,
 * per mount (the bindings do, for a filesystem whose open says so). */
#define FRING_FEATURE_ATOMIC_O_TRUNC (1ull << 1)

struct fring_plugin {
	/* Header: stamped by FRING_PLUGIN_DEFINE, never typed by authors. */
	uint32_t size;
	uint32_t magic;      /* FRING_PLUGIN_MAGIC */
	uint16_t abi_major;  /* FRING_ABI_MAJOR the plugin was built with */
	uint16_t abi_minor;  /* FRING_ABI_MINOR the plugin was built with */
	uint32_t thread_model;
	uint64_t flags;      /* reserved, 0 */

	/* Identity. */
	const char *name;
	const char *version;
	const char *description;
	const char *config_help; /* "key: type: meaning" lines, may be NULL */

	/* Lifecycle, in call order. All optional except create.
	 * load: once per .so. create: once per mount; *inst is passed to every
	 * later callback. config: once per option in YAML order (nested maps
	 * are flattened to dotted keys, lists repeat the key); return -EINVAL
	 * after logging why. config_complete: check required options.
	 * init: during FUSE_INIT, may adjust conn->want. destroy: after
	 * unmount; requests still unanswered then are abandoned (logged) and
	 * must not be replied to once destroy has returned. unload: reserved;
	 * this host never dlclose()s a plugin (Rust and CPython runtimes do
	 * not survive it) and does not call it. `fring plugins` calls the
	 * entry and load (to check the plugin loads), nothing else. */
	int32_t (*load)(const struct fring_host_api *host);
	int32_t (*create)(fring_mount *m, void **inst);
	int32_t (*config)(void *inst, const char *key, const char *value);
	int32_t (*config_complete)(void *inst);
	int32_t (*init)(void *inst, struct fring_conn *conn);
	void (*destroy)(void *inst);
	void (*unload)(void);

	const struct fring_fs_ops *ops;

	/* ---- ABI 1.4 ---- FRING_FEATURE_* bits (a mount refuses unknown
	 * ones); `flags` above stays reserved and 0. */
	uint64_t features;

	/* ---- ABI 1.7 ---- Takeover (`fring restart`): both or neither.
	 * state_save: the old instance writes its whole state to fd (a memfd
	 * the runtime gives, at offset 0) once it takes no more requests, and
	 * sets *version to the format it wrote. state_load: a new instance,
	 * after create/config/config_complete and before any request, reads
	 * fd (offset 0) written by a save of that version. A version it cannot
	 * read: log why and return -EPROTO (the takeover is refused and the
	 * old server keeps serving). Node ids and file handles the kernel
	 * holds must mean the same after the load. Without them a takeover is
	 * refused and the old server keeps serving. */
	int32_t (*state_save)(void *inst, int fd, uint32_t *version);
	int32_t (*state_load)(void *inst, int fd, uint32_t version);

	/* ---- ABI 1.8 ---- Restart after a crash (`restart: on_crash`).
	 * state_live: after init and before any other request, the runtime
	 * gives fd, a memfd that outlives this process (the supervisor holds
	 * it); only to a mount with the key served over /dev/fuse. The instance keeps
	 * in it, as it goes, what a new instance needs should this process
	 * die: every node id, generation and open file the kernel holds. An
	 * update cut short by the death must leave fd readable (an
	 * append-only log whose records become visible last, say). flags 0:
	 * fd is empty; write the instance's current state (fresh, or just
	 * loaded by state_load) and keep it. FRING_STATE_LIVE_RECOVER: fd
	 * holds what a crashed instance kept: rebuild from it (requests the
	 * dead process had not answered are sent again, so one it had
	 * carried out may come twice), then keep it. A negative errno: log
	 * why; the mount is then not restarted after a crash. Without the
	 * hook a crash aborts the connection (ENOTCONN). */
	int32_t (*state_live)(void *inst, int fd, uint32_t flags);
};

/* state_live flags */
#define FRING_STATE_LIVE_RECOVER 1u

/* The one exported symbol. */
typedef const struct fring_plugin *(*fring_plugin_entry_fn)(
	const struct fring_host_api *host);

#ifdef __cplusplus
}
#endif
#endif /* FRING_PLUGIN_H */
