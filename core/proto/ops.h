// SPDX-License-Identifier: MIT
/*
 * What the opcode table (ops.def) says about an opcode, as the runtime,
 * the transports and the tests ask it. A pure lookup: no state.
 */
#ifndef FRING_OPS_H
#define FRING_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "fring_uapi.h"

/* Bodies a success reply may carry, one bit each (the host's reply
 * functions; fring_op.replies). */
enum {
	FRING_R_EMPTY = 1u << 0,      /* reply_err(0): no body */
	FRING_R_ENTRY = 1u << 1,      /* fuse_entry_out (reply_entry) */
	FRING_R_CREATE = 1u << 2,     /* entry + fuse_open_out (reply_create) */
	FRING_R_ATTR = 1u << 3,       /* fuse_attr_out */
	FRING_R_STATX = 1u << 4,      /* fuse_statx_out */
	FRING_R_READLINK = 1u << 5,   /* the target, under a page */
	FRING_R_OPEN = 1u << 6,       /* fuse_open_out */
	FRING_R_WRITE = 1u << 7,      /* fuse_write_out (reply_write) */
	FRING_R_COPY64 = 1u << 8,     /* fuse_copy_file_range_out (reply_write) */
	FRING_R_DATA = 1u << 9,       /* bytes, at most the size asked for */
	FRING_R_STATFS = 1u << 10,    /* fuse_statfs_out */
	FRING_R_XATTR_SIZE = 1u << 11, /* fuse_getxattr_out: a size probe */
	FRING_R_LOCK = 1u << 12,      /* fuse_lk_out */
	FRING_R_LSEEK = 1u << 13,     /* fuse_lseek_out */
	FRING_R_DIRENT = 1u << 14,    /* fuse_dirent records (dir_add...) */
	FRING_R_DIRENTPLUS = 1u << 15, /* fuse_direntplus records */
	FRING_R_LAST = FRING_R_DIRENTPLUS
};

/* Row flags. */
enum {
	/* The kernel expects no reply, not even an error. */
	FRING_OP_NOREPLY = 1u << 0,
	/* Answered by the session, never the plugin: INIT once before
	 * serving, DESTROY at stop (runtime/dispatch.c). */
	FRING_OP_SESSION = 1u << 1,
	/* A NULL plugin op succeeds: R(EMPTY), an open with fh 0, or an
	 * empty statfs (so `df` works), whichever the row replies. */
	FRING_OP_DEFAULT = 1u << 2,
	/* FUSE_LK_FLOCK requests go to the flock op instead of the row's. */
	FRING_OP_FLOCK = 1u << 3,
	/* Set for OP rows (a plugin op of its own), not for HOST_OP rows. */
	FRING_OP_PLUGIN = 1u << 4,
};

struct fring_op {
	const char *name;  /* "LOOKUP"; NULL: no row */
	int16_t arg_size;  /* bytes of arg 0; -1: not decoded (ENOSYS) */
	uint16_t flags;    /* FRING_OP_* */
	uint32_t replies;  /* FRING_R_* */
};

/* Indexed by opcode; built from ops.def by ops.c. */
extern const struct fring_op fring_ops[FUSE_OPCODE_MAX];

/* The row of an opcode, or NULL if it has none. */
static inline const struct fring_op *fring_op(uint32_t opcode)
{
	return opcode < FUSE_OPCODE_MAX && fring_ops[opcode].name ?
		       &fring_ops[opcode] : NULL;
}

static inline uint32_t fring_op_flags(uint32_t opcode)
{
	const struct fring_op *op = fring_op(opcode);

	return op ? op->flags : 0;
}

static inline uint32_t fring_op_replies(uint32_t opcode)
{
	const struct fring_op *op = fring_op(opcode);

	return op ? op->replies : 0;
}

/* The one no-reply set: dispatch drops these, a transport commits an
 * unanswered one without an error. */
static inline int fring_op_no_reply(uint32_t opcode)
{
	return !!(fring_op_flags(opcode) & FRING_OP_NOREPLY);
}

#endif /* FRING_OPS_H */
