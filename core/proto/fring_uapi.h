// SPDX-License-Identifier: MIT
/*
 * The FUSE kernel protocol as fring speaks it: opcodes, flags and the wire
 * structs (7.46 layouts), plus the io_uring command structs with the
 * buffer-pool and zero-copy values of Linux 7.3 (protocol 7.46), checked
 * against that kernel's include/uapi/linux/fuse.h and fs/fuse/dev_uring.c
 * and used in a 7.3 guest (tests/vm). Linux 6.18 speaks 7.45 and offers
 * none of the 7.46 additions. /usr/include/linux/fuse.h on Debian 12 is
 * 7.38 and must not be included alongside this file.
 *
 * Every protocol value lives here and nowhere else.
 */
#ifndef FRING_UAPI_H
#define FRING_UAPI_H

#include <stdint.h>

#define FUSE_KERNEL_VERSION 7
#define FUSE_KERNEL_MINOR_VERSION 46 /* 7.46 only adds io_uring buffer pools and zero-copy */
#define FUSE_ROOT_ID 1
#define FUSE_MIN_READ_BUFFER 8192

enum fuse_opcode {
	FUSE_LOOKUP = 1,
	FUSE_FORGET = 2,
	FUSE_GETATTR = 3,
	FUSE_SETATTR = 4,
	FUSE_READLINK = 5,
	FUSE_SYMLINK = 6,
	FUSE_MKNOD = 8,
	FUSE_MKDIR = 9,
	FUSE_UNLINK = 10,
	FUSE_RMDIR = 11,
	FUSE_RENAME = 12,
	FUSE_LINK = 13,
	FUSE_OPEN = 14,
	FUSE_READ = 15,
	FUSE_WRITE = 16,
	FUSE_STATFS = 17,
	FUSE_RELEASE = 18,
	FUSE_FSYNC = 20,
	FUSE_SETXATTR = 21,
	FUSE_GETXATTR = 22,
	FUSE_LISTXATTR = 23,
	FUSE_REMOVEXATTR = 24,
	FUSE_FLUSH = 25,
	FUSE_INIT = 26,
	FUSE_OPENDIR = 27,
	FUSE_READDIR = 28,
	FUSE_RELEASEDIR = 29,
	FUSE_FSYNCDIR = 30,
	FUSE_GETLK = 31,
	FUSE_SETLK = 32,
	FUSE_SETLKW = 33,
	FUSE_ACCESS = 34,
	FUSE_CREATE = 35,
	FUSE_INTERRUPT = 36,
	FUSE_BMAP = 37,
	FUSE_DESTROY = 38,
	FUSE_IOCTL = 39,
	FUSE_POLL = 40,
	FUSE_NOTIFY_REPLY = 41,
	FUSE_BATCH_FORGET = 42,
	FUSE_FALLOCATE = 43,
	FUSE_READDIRPLUS = 44,
	FUSE_RENAME2 = 45,
	FUSE_LSEEK = 46,
	FUSE_COPY_FILE_RANGE = 47,
	FUSE_SETUPMAPPING = 48,
	FUSE_REMOVEMAPPING = 49,
	FUSE_SYNCFS = 50,
	FUSE_TMPFILE = 51,
	FUSE_STATX = 52,
	FUSE_COPY_FILE_RANGE_64 = 53,
	FUSE_OPCODE_MAX = 54,
};

/* INIT flags: one 64-bit word; bits 32..63 travel in flags2. */
#define FUSE_ASYNC_READ (1ull << 0)
#define FUSE_POSIX_LOCKS (1ull << 1)
#define FUSE_ATOMIC_O_TRUNC (1ull << 3)
#define FUSE_EXPORT_SUPPORT (1ull << 4)
#define FUSE_BIG_WRITES (1ull << 5)
#define FUSE_DONT_MASK (1ull << 6)
#define FUSE_SPLICE_WRITE (1ull << 7)
#define FUSE_SPLICE_MOVE (1ull << 8)
#define FUSE_SPLICE_READ (1ull << 9)
#define FUSE_FLOCK_LOCKS (1ull << 10)
#define FUSE_HAS_IOCTL_DIR (1ull << 11)
#define FUSE_AUTO_INVAL_DATA (1ull << 12)
#define FUSE_DO_READDIRPLUS (1ull << 13)
#define FUSE_READDIRPLUS_AUTO (1ull << 14)
#define FUSE_ASYNC_DIO (1ull << 15)
#define FUSE_WRITEBACK_CACHE (1ull << 16)
#define FUSE_NO_OPEN_SUPPORT (1ull << 17)
#define FUSE_PARALLEL_DIROPS (1ull << 18)
#define FUSE_HANDLE_KILLPRIV (1ull << 19)
#define FUSE_POSIX_ACL (1ull << 20)
#define FUSE_ABORT_ERROR (1ull << 21)
#define FUSE_MAX_PAGES (1ull << 22)
#define FUSE_CACHE_SYMLINKS (1ull << 23)
#define FUSE_NO_OPENDIR_SUPPORT (1ull << 24)
#define FUSE_EXPLICIT_INVAL_DATA (1ull << 25)
#define FUSE_MAP_ALIGNMENT (1ull << 26)
#define FUSE_SUBMOUNTS (1ull << 27)
#define FUSE_HANDLE_KILLPRIV_V2 (1ull << 28)
#define FUSE_SETXATTR_EXT (1ull << 29)
#define FUSE_INIT_EXT (1ull << 30)
#define FUSE_INIT_RESERVED (1ull << 31)
#define FUSE_SECURITY_CTX (1ull << 32)
#define FUSE_HAS_INODE_DAX (1ull << 33)
#define FUSE_CREATE_SUPP_GROUP (1ull << 34)
#define FUSE_HAS_EXPIRE_ONLY (1ull << 35)
#define FUSE_DIRECT_IO_ALLOW_MMAP (1ull << 36)
#define FUSE_PASSTHROUGH (1ull << 37)
#define FUSE_NO_EXPORT_SUPPORT (1ull << 38)
#define FUSE_HAS_RESEND (1ull << 39)
#define FUSE_ALLOW_IDMAP (1ull << 40)
#define FUSE_OVER_IO_URING (1ull << 41)     /* 7.42, VERIFIED on 6.18 */
#define FUSE_REQUEST_TIMEOUT (1ull << 42)   /* 7.43, VERIFIED on 6.18 */
/* 7.46 (Linux 7.3): the kernel takes ADD_QUEUE / ADD_BUFPOOL. An offer
 * only: the server does not echo it; it just adds pools before REGISTER.
 * (The reduced-queues series used this bit for REDUCED_Q; on 7.3 and to
 * fring it is always buffer pools.) */
#define FUSE_HAS_IO_URING_BUFPOOL (1ull << 43)
/* PROVISIONAL, in no kernel: the reduced-queues patch series
 * (core/transport/README.md, "Reduced queues") lets the server register
 * 1..nr_cpus queues and has the kernel map every CPU to one of them. The
 * series numbers it bit 43 at
 * minor 46, which Linux 7.3 gave to buffer pools, so fring reads it from
 * the next free bit and only when offered; without it every CPU's queue is
 * registered (fewer hang all I/O on 7.3). An offer only, not echoed. */
#define FUSE_URING_REDUCED_Q (1ull << 44)

/* SETATTR valid bits (fuse_setattr_in.valid). */
#define FATTR_MODE (1u << 0)
#define FATTR_UID (1u << 1)
#define FATTR_GID (1u << 2)
#define FATTR_SIZE (1u << 3)
#define FATTR_ATIME (1u << 4)
#define FATTR_MTIME (1u << 5)
#define FATTR_FH (1u << 6)
#define FATTR_ATIME_NOW (1u << 7)
#define FATTR_MTIME_NOW (1u << 8)
#define FATTR_LOCKOWNER (1u << 9)
#define FATTR_CTIME (1u << 10)
#define FATTR_KILL_SUIDGID (1u << 11)

#define FUSE_GETATTR_FH (1u << 0)
#define FUSE_LK_FLOCK (1u << 0)
#define FUSE_WRITE_CACHE (1u << 0)
#define FUSE_WRITE_LOCKOWNER (1u << 1)
#define FUSE_WRITE_KILL_SUIDGID (1u << 2)
#define FUSE_READ_LOCKOWNER (1u << 1)
#define FUSE_RELEASE_FLUSH (1u << 0)
#define FUSE_RELEASE_FLOCK_UNLOCK (1u << 1)
#define FUSE_FSYNC_FDATASYNC (1u << 0)
#define FUSE_INT_REQ_BIT (1ull << 0)
#define FUSE_UNIQUE_RESEND (1ull << 63)

/* Error replies must satisfy -512 < error <= 0 (512 = ERESTARTSYS). */
#define FUSE_ERRNO_LIMIT 512

struct fuse_in_header {
	uint32_t len;
	uint32_t opcode;
	uint64_t unique;
	uint64_t nodeid;
	uint32_t uid;
	uint32_t gid;
	uint32_t pid;
	uint16_t total_extlen; /* in 8-byte units */
	uint16_t padding;
};

struct fuse_out_header {
	uint32_t len;
	int32_t error;
	uint64_t unique;
};

struct fuse_attr {
	uint64_t ino;
	uint64_t size;
	uint64_t blocks;
	uint64_t atime;
	uint64_t mtime;
	uint64_t ctime;
	uint32_t atimensec;
	uint32_t mtimensec;
	uint32_t ctimensec;
	uint32_t mode;
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint32_t rdev;
	uint32_t blksize;
	uint32_t flags;
};

struct fuse_entry_out {
	uint64_t nodeid;
	uint64_t generation;
	uint64_t entry_valid;
	uint64_t attr_valid;
	uint32_t entry_valid_nsec;
	uint32_t attr_valid_nsec;
	struct fuse_attr attr;
};

struct fuse_forget_in { uint64_t nlookup; };
struct fuse_forget_one { uint64_t nodeid; uint64_t nlookup; };
struct fuse_batch_forget_in { uint32_t count; uint32_t dummy; };

struct fuse_getattr_in { uint32_t getattr_flags; uint32_t dummy; uint64_t fh; };

struct fuse_attr_out {
	uint64_t attr_valid;
	uint32_t attr_valid_nsec;
	uint32_t dummy;
	struct fuse_attr attr;
};

struct fuse_setattr_in {
	uint32_t valid;
	uint32_t padding;
	uint64_t fh;
	uint64_t size;
	uint64_t lock_owner;
	uint64_t atime;
	uint64_t mtime;
	uint64_t ctime;
	uint32_t atimensec;
	uint32_t mtimensec;
	uint32_t ctimensec;
	uint32_t mode;
	uint32_t unused4;
	uint32_t uid;
	uint32_t gid;
	uint32_t unused5;
};

struct fuse_mknod_in { uint32_t mode; uint32_t rdev; uint32_t umask; uint32_t padding; };
struct fuse_mkdir_in { uint32_t mode; uint32_t umask; };
struct fuse_rename_in { uint64_t newdir; };
struct fuse_rename2_in { uint64_t newdir; uint32_t flags; uint32_t padding; };
struct fuse_link_in { uint64_t oldnodeid; };
struct fuse_open_in { uint32_t flags; uint32_t open_flags; };
struct fuse_create_in { uint32_t flags; uint32_t mode; uint32_t umask; uint32_t open_flags; };
struct fuse_open_out { uint64_t fh; uint32_t open_flags; int32_t backing_id; };

struct fuse_release_in {
	uint64_t fh;
	uint32_t flags;
	uint32_t release_flags;
	uint64_t lock_owner;
};

struct fuse_flush_in { uint64_t fh; uint32_t unused; uint32_t padding; uint64_t lock_owner; };

struct fuse_read_in {
	uint64_t fh;
	uint64_t offset;
	uint32_t size;
	uint32_t read_flags;
	uint64_t lock_owner;
	uint32_t flags;
	uint32_t padding;
};

struct fuse_write_in {
	uint64_t fh;
	uint64_t offset;
	uint32_t size;
	uint32_t write_flags;
	uint64_t lock_owner;
	uint32_t flags;
	uint32_t padding;
};

struct fuse_write_out { uint32_t size; uint32_t padding; };

struct fuse_kstatfs {
	uint64_t blocks;
	uint64_t bfree;
	uint64_t bavail;
	uint64_t files;
	uint64_t ffree;
	uint32_t bsize;
	uint32_t namelen;
	uint32_t frsize;
	uint32_t padding;
	uint32_t spare[6];
};
struct fuse_statfs_out { struct fuse_kstatfs st; };

struct fuse_fsync_in { uint64_t fh; uint32_t fsync_flags; uint32_t padding; };

/* 8 bytes without FUSE_SETXATTR_EXT, 16 with it. */
struct fuse_setxattr_in { uint32_t size; uint32_t flags; uint32_t setxattr_flags; uint32_t padding; };
#define FUSE_COMPAT_SETXATTR_IN_SIZE 8
struct fuse_getxattr_in { uint32_t size; uint32_t padding; };
struct fuse_getxattr_out { uint32_t size; uint32_t padding; };

struct fuse_file_lock { uint64_t start; uint64_t end; uint32_t type; uint32_t pid; };
struct fuse_lk_in {
	uint64_t fh;
	uint64_t owner;
	struct fuse_file_lock lk;
	uint32_t lk_flags;
	uint32_t padding;
};
struct fuse_lk_out { struct fuse_file_lock lk; };

struct fuse_access_in { uint32_t mask; uint32_t padding; };

struct fuse_init_in {
	uint32_t major;
	uint32_t minor;
	uint32_t max_readahead;
	uint32_t flags;
	uint32_t flags2;
	uint32_t unused[11];
};
#define FUSE_COMPAT_INIT_IN_SIZE 16 /* before 7.36: no flags2 */

struct fuse_init_out {
	uint32_t major;
	uint32_t minor;
	uint32_t max_readahead;
	uint32_t flags;
	uint16_t max_background;
	uint16_t congestion_threshold;
	uint32_t max_write;
	uint32_t time_gran;
	uint16_t max_pages;
	uint16_t map_alignment;
	uint32_t flags2;
	uint32_t max_stack_depth;
	uint16_t request_timeout;
	uint16_t unused[11];
};

struct fuse_interrupt_in { uint64_t unique; };
struct fuse_bmap_in { uint64_t block; uint32_t blocksize; uint32_t padding; };
struct fuse_bmap_out { uint64_t block; };

struct fuse_ioctl_in {
	uint64_t fh;
	uint32_t flags;
	uint32_t cmd;
	uint64_t arg;
	uint32_t in_size;
	uint32_t out_size;
};

struct fuse_poll_in { uint64_t fh; uint64_t kh; uint32_t flags; uint32_t events; };

struct fuse_fallocate_in {
	uint64_t fh;
	uint64_t offset;
	uint64_t length;
	uint32_t mode;
	uint32_t padding;
};

struct fuse_lseek_in { uint64_t fh; uint64_t offset; uint32_t whence; uint32_t padding; };
struct fuse_lseek_out { uint64_t offset; };

struct fuse_copy_file_range_in {
	uint64_t fh_in;
	uint64_t off_in;
	uint64_t nodeid_out;
	uint64_t fh_out;
	uint64_t off_out;
	uint64_t len;
	uint64_t flags;
};
struct fuse_copy_file_range_out { uint64_t bytes_copied; };

struct fuse_syncfs_in { uint64_t padding; };

struct fuse_statx_in {
	uint32_t getattr_flags;
	uint32_t reserved;
	uint64_t fh;
	uint32_t sx_flags;
	uint32_t sx_mask;
};

struct fuse_sx_time { int64_t tv_sec; uint32_t tv_nsec; int32_t reserved; };
struct fuse_statx {
	uint32_t mask;
	uint32_t blksize;
	uint64_t attributes;
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint16_t mode;
	uint16_t spare0[1];
	uint64_t ino;
	uint64_t size;
	uint64_t blocks;
	uint64_t attributes_mask;
	struct fuse_sx_time atime;
	struct fuse_sx_time btime;
	struct fuse_sx_time ctime;
	struct fuse_sx_time mtime;
	uint32_t rdev_major;
	uint32_t rdev_minor;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t spare2[14];
};
struct fuse_statx_out {
	uint64_t attr_valid;
	uint32_t attr_valid_nsec;
	uint32_t flags;
	uint64_t spare[2];
	struct fuse_statx stat;
};

struct fuse_dirent {
	uint64_t ino;
	uint64_t off;
	uint32_t namelen;
	uint32_t type;
	char name[];
};
#define FUSE_NAME_OFFSET 24 /* offsetof(struct fuse_dirent, name) */
#define FUSE_DIRENT_ALIGN(x) (((x) + 7u) & ~(uint64_t)7u)
#define FUSE_DIRENT_SIZE(namelen) FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + (namelen))

struct fuse_direntplus {
	struct fuse_entry_out entry_out;
	struct fuse_dirent dirent;
};
#define FUSE_NAME_OFFSET_DIRENTPLUS (128 + FUSE_NAME_OFFSET)
#define FUSE_DIRENTPLUS_SIZE(namelen) FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET_DIRENTPLUS + (namelen))

/* Request extensions (total_extlen * 8 bytes at the end of a request). */
struct fuse_ext_header { uint32_t size; uint32_t type; };
#define FUSE_EXT_GROUPS 32

/* Notifications (server -> kernel, out.unique = 0, out.error = code). */
enum fuse_notify_code {
	FUSE_NOTIFY_POLL = 1,
	FUSE_NOTIFY_INVAL_INODE = 2,
	FUSE_NOTIFY_INVAL_ENTRY = 3,
	FUSE_NOTIFY_STORE = 4,
	FUSE_NOTIFY_RETRIEVE = 5,
	FUSE_NOTIFY_DELETE = 6,
	FUSE_NOTIFY_RESEND = 7,
};
/* Arg 0 of NOTIFY_REPLY, the kernel's answer to a RETRIEVE. */
struct fuse_notify_retrieve_in {
	uint64_t dummy1;
	uint64_t offset;
	uint32_t size;
	uint32_t dummy2;
	uint64_t dummy3;
	uint64_t dummy4;
};

/* /dev/fuse ioctls. */
#define FUSE_DEV_IOC_MAGIC 229
#define FUSE_DEV_IOC_CLONE _IOR(FUSE_DEV_IOC_MAGIC, 0, uint32_t)

/* Kernel passthrough (7.40): a backing file for FOPEN_PASSTHROUGH opens. */
struct fuse_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define FUSE_DEV_IOC_BACKING_OPEN _IOW(FUSE_DEV_IOC_MAGIC, 1, struct fuse_backing_map)
#define FUSE_DEV_IOC_BACKING_CLOSE _IOW(FUSE_DEV_IOC_MAGIC, 2, uint32_t)
#define FOPEN_PASSTHROUGH (1u << 7)

/* ---- FUSE over io_uring (6.18 baseline, 7.3 buffer pools and zero-copy) ---- */

enum fuse_uring_cmd {
	FUSE_IO_URING_CMD_INVALID = 0,
	FUSE_IO_URING_CMD_REGISTER = 1,
	FUSE_IO_URING_CMD_COMMIT_AND_FETCH = 2,
	FUSE_IO_URING_CMD_ADD_QUEUE = 3,   /* 7.46; flags FUSE_URING_ZERO_COPY */
	FUSE_IO_URING_CMD_ADD_BUFPOOL = 4, /* 7.46; after ADD_QUEUE, before REGISTER */
};

#define FUSE_URING_IN_OUT_HEADER_SZ 128
#define FUSE_URING_OP_IN_OUT_SZ 128

struct fuse_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id; /* full 64 bits, never 0 */
	uint32_t payload_sz;
	uint32_t offset;    /* 7.46: payload's byte offset in the queue's pool
			     * (0 also when the request got no buffer); 7.45: padding */
	uint64_t reserved;
};

struct fuse_uring_req_header {
	char in_out[FUSE_URING_IN_OUT_HEADER_SZ];
	char op_in[FUSE_URING_OP_IN_OUT_SZ];
	struct fuse_uring_ent_in_out ring_ent_in_out;
};

struct fuse_uring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
	union {
		struct {
			uint64_t uaddr;
			uint32_t len;
			uint32_t reserved;
		} bufpool;
		uint16_t ent_zero_copy_buf_index;
	};
};

/* Zero-copy (7.46): ADD_QUEUE flag (needs CAP_SYS_ADMIN and a pool), the
 * per-request flag in fuse_uring_ent_in_out.flags, and the OPEN/CREATE
 * reply flag that opts a file in. */
#define FUSE_URING_ZERO_COPY (1u << 0)
#define FUSE_URING_ENT_ZERO_COPY (1u << 0)
#define FOPEN_IO_URING_ZERO_COPY (1u << 8)

/* A buffer pool is "registered" (the kernel reaches it through the ring's
 * fixed-buffer table, no per-copy pinning) exactly when ADD_BUFPOOL goes in
 * with IORING_URING_CMD_FIXED in sqe->uring_cmd_flags; sqe->buf_index names
 * the slot, and every later REGISTER and COMMIT_AND_FETCH of that queue must
 * carry the same flag and index or the kernel answers -EINVAL. There is no
 * flag for it in fuse_uring_cmd_req. Each pool buffer holds the largest
 * request (max(8192, max_write, max_pages * 4096) bytes); a pool that holds
 * none is -EINVAL; bufpool.len is 32 bits. */

#endif /* FRING_UAPI_H */
