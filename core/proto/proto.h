// SPDX-License-Identifier: MIT
/*
 * Request decoding and reply encoding for the FUSE wire protocol.
 * Pure functions: no I/O, no allocation, every length checked. Shared by
 * the /dev/fuse and io_uring transports, which hand over a request in two
 * parts: the op header ("arg 0", fuse_*_in) and the payload after it
 * (names, write data, ...), as the io_uring header/payload buffers do.
 */
#ifndef FRING_PROTO_H
#define FRING_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <fring/plugin.h>

#include "fring_uapi.h"

/* A decoded request. Pointers point into the transport's buffers. */
struct fring_decoded {
	uint32_t opcode;
	uint32_t uid, gid, pid;
	uint64_t unique;
	uint64_t nodeid;
	union {
		struct fring_name_args name;       /* LOOKUP UNLINK RMDIR */
		struct fring_node_args node;       /* READLINK STATFS DESTROY */
		struct fring_getattr_args getattr;
		struct fring_setattr_args setattr;
		struct fring_make_args make;       /* MKNOD MKDIR SYMLINK CREATE TMPFILE */
		struct fring_rename_args rename;   /* RENAME RENAME2 */
		struct fring_link_args link;
		struct fring_open_args open;       /* OPEN OPENDIR */
		struct fring_read_args read;       /* READ READDIR READDIRPLUS */
		struct fring_write_args write;
		struct fring_release_args release; /* RELEASE RELEASEDIR FLUSH */
		struct fring_fsync_args fsync;     /* FSYNC FSYNCDIR */
		struct fring_xattr_args xattr;     /* SET/GET/LIST/REMOVEXATTR */
		struct fring_access_args access;
		struct fring_lock_args lock;       /* GETLK SETLK SETLKW (and flock) */
		struct fring_fallocate_args fallocate;
		struct fring_lseek_args lseek;
		struct fring_copy_range_args copy;  /* COPY_FILE_RANGE(_64) */
		struct fring_statx_args statx;
		struct {
			uint64_t nlookup;            /* FORGET */
		} forget;
		struct {
			const struct fuse_forget_one *items; /* unaligned-safe copy needed */
			uint32_t count;
		} batch_forget;
		struct {
			uint64_t unique;             /* INTERRUPT target */
		} interrupt;
		struct fuse_init_in init;       /* INIT (flags2 zeroed if absent) */
	} a;
	uint32_t is_flock; /* SETLK/SETLKW with FUSE_LK_FLOCK */
};

/* Negotiated facts the decoder needs (from INIT). */
struct fring_proto_conn {
	uint32_t minor;      /* negotiated protocol minor */
	uint32_t setxattr_ext; /* FUSE_SETXATTR_EXT accepted */
	uint32_t max_write;
};

/* Decode. `in` is the fuse_in_header; `arg`/`arglen` the bytes right after
 * it up to the payload (for /dev/fuse: everything after the header; pass
 * payload NULL/0 and the decoder splits at the op's arg-0 size). The
 * two-part form (io_uring) must pass a non-NULL payload even when its
 * length is 0: NULL/0 selects the classic form. Returns 0,
 * -ENOSYS for an unknown opcode (decoded opcode/unique still valid), or
 * -EPROTO for a malformed request (too short, missing NUL, count too big,
 * in->len inconsistent). Never reads outside the given ranges. */
int fring_decode(const struct fuse_in_header *in, const void *arg,
		 size_t arglen, const void *payload, size_t paylen,
		 const struct fring_proto_conn *conn, struct fring_decoded *out);

/* Size of arg 0 (fuse_*_in) for an opcode under `conn`, or -1 unknown. */
int fring_proto_arg_size(uint32_t opcode, const struct fring_proto_conn *conn);

/* Name of an opcode ("LOOKUP"), or "UNKNOWN". */
const char *fring_opcode_name(uint32_t opcode);

/* Reply body encoders: fill the kernel struct from the ABI struct. */
void fring_encode_attr(const struct fring_attr *a, struct fuse_attr *out);
void fring_encode_entry(const struct fring_entry *e, struct fuse_entry_out *out);
void fring_encode_attr_out(const struct fring_attr *a, uint64_t timeout_ns,
			   struct fuse_attr_out *out);
void fring_encode_open(const struct fring_open_out *o, struct fuse_open_out *out);
void fring_encode_statx(const struct fring_statx *sx, uint64_t timeout_ns,
			struct fuse_statx_out *out);
void fring_encode_statfs(const struct fring_statfs *s, struct fuse_statfs_out *out);

/* Append a dirent / direntplus record to buf (capacity cap, used *used).
 * type is an S_IF* mode type or a DT_* value. Returns 1 added, 0 does not
 * fit (nothing written), -EINVAL for a name the kernel would reject (empty,
 * over 1024 bytes, containing '/' or NUL). */
int fring_encode_dirent(void *buf, size_t cap, size_t *used, const char *name,
			uint32_t namelen, uint64_t ino, uint32_t type,
			uint64_t off);
int fring_encode_direntplus(void *buf, size_t cap, size_t *used,
			    const char *name, uint32_t namelen,
			    const struct fring_entry *e, uint64_t off);

/* Clamp a plugin error into the range the kernel accepts: values outside
 * -511..0 become -EIO (plus *bad = 1 so the caller can log). */
int32_t fring_proto_sanitize_error(int32_t err, int *bad);

#endif /* FRING_PROTO_H */
