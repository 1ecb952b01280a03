// SPDX-License-Identifier: MIT
/*
 * FUSE request decoder: checks every length against the bytes actually
 * received, then fills the plugin ABI args structs (contract in proto.h).
 *
 * Layout handled: header, arg 0 (fuse_*_in), payload (names, data, the
 * BATCH_FORGET array), extensions (total_extlen * 8 bytes at the very end).
 * Pointers placed in `out` (names, write data, xattr value, forget items)
 * point into the caller's payload bytes and carry no alignment promise
 * beyond the buffer's own: the classic form puts the payload at header +
 * 40 + arg 0 (8-aligned when the read buffer is), the io_uring payload
 * buffer is page aligned.
 *
 * Opcodes decoded minimally: SYNCFS and NOTIFY_REPLY fill a.node only (the
 * retrieved data of NOTIFY_REPLY is not exposed; fring never sends
 * RETRIEVE). IOCTL, POLL and BMAP check arg 0 then return -ENOSYS, as do
 * SETUPMAPPING/REMOVEMAPPING (DAX) and unknown opcodes. Arg 0 sizes are the
 * 7.45 ones; the pre-7.12 compat layouts are not accepted (fring never
 * negotiates such a minor), except for the short pre-7.36 fuse_init_in.
 *
 * Here: the length checks and the routing to the row's decoder, which
 * is in decode_ops.c.
 */
#include "decode_internal.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ops.h"
#include "proto.h"

#define IN_HEADER_SIZE ((uint32_t)sizeof(struct fuse_in_header))

_Static_assert(sizeof(struct fuse_in_header) == 40, "fuse_in_header");
_Static_assert(sizeof(struct fuse_setattr_in) == 88, "fuse_setattr_in");
_Static_assert(sizeof(struct fuse_read_in) == 40, "fuse_read_in");
_Static_assert(sizeof(struct fuse_write_in) == 40, "fuse_write_in");
_Static_assert(sizeof(struct fuse_lk_in) == 48, "fuse_lk_in");
_Static_assert(sizeof(struct fuse_init_in) == 64, "fuse_init_in");
_Static_assert(sizeof(struct fuse_copy_file_range_in) == 56, "copy_file_range_in");
_Static_assert(sizeof(struct fuse_forget_one) == 16, "fuse_forget_one");

int fring_proto_arg_size(uint32_t opcode, const struct fring_proto_conn *conn)
{
	const struct fring_op *op = fring_op(opcode);

	if (!op)
		return -1;
	/* Without FUSE_SETXATTR_EXT the kernel sends the short struct. */
	if (opcode == FUSE_SETXATTR && !(conn && conn->setxattr_ext))
		return FUSE_COMPAT_SETXATTR_IN_SIZE;
	return op->arg_size;
}

/* Arg 0 fits the copy for every row. */
#define ARG(s)                                                              \
	_Static_assert(sizeof(struct fuse_##s##_in) <= sizeof(union arg0), #s);
#define NOARG
#define UNDECODED
#define HOST_OP(code, arg0, decoder, replies, flags) arg0
#define OP(code, arg0, decoder, member, slot, replies, flags) arg0
#include "ops.def"
#undef ARG
#undef NOARG
#undef UNDECODED

/* Routing: the row's decoder. */
static int decode_op(uint32_t op, const union arg0 *u, size_t a0len,
		     struct cursor *c, const struct fring_proto_conn *conn,
		     struct fring_decoded *out)
{
	switch (op) {
#define OP(code, arg0, decoder, member, slot, replies, flags)               \
	case FUSE_##code:                                                   \
		return fring_dec_##decoder(op, u, a0len, c, conn, out);
#include "ops.def"
	}
	return -ENOSYS;
}

int fring_decode(const struct fuse_in_header *in, const void *arg,
		 size_t arglen, const void *payload, size_t paylen,
		 const struct fring_proto_conn *conn, struct fring_decoded *out)
{
	union arg0 u;
	struct cursor c;
	size_t need, minimum, a0len, ext;
	int size;

	if (!out)
		return -EPROTO;
	memset(out, 0, sizeof(*out));
	if (!in)
		return -EPROTO;
	out->opcode = in->opcode;
	out->unique = in->unique;
	out->nodeid = in->nodeid;
	out->uid = in->uid;
	out->gid = in->gid;
	out->pid = in->pid;

	size = fring_proto_arg_size(in->opcode, conn);
	if (size < 0)
		return -ENOSYS;
	if (in->len < IN_HEADER_SIZE || (!arg && arglen) ||
	    (!payload && paylen))
		return -EPROTO;
	need = (size_t)size;
	/* Kernels before 7.36 send a 16-byte fuse_init_in. */
	minimum = in->opcode == FUSE_INIT ? FUSE_COMPAT_INIT_IN_SIZE : need;
	if (arglen < minimum)
		return -EPROTO;
	a0len = arglen < need ? arglen : need;

	if (!payload) {
		/* Classic: one read() worth of bytes, split at arg 0. */
		if ((uint64_t)in->len != IN_HEADER_SIZE + (uint64_t)arglen)
			return -EPROTO;
		c.p = (const uint8_t *)arg + a0len;
		c.left = arglen - a0len;
	} else {
		c.p = payload;
		c.left = paylen;
	}

	ext = (size_t)in->total_extlen * 8;
	if (ext > c.left)
		return -EPROTO;
	c.left -= ext;

	memset(&u, 0, sizeof(u));
	if (a0len)
		memcpy(&u, arg, a0len);
	return decode_op(in->opcode, &u, a0len, &c, conn, out);
}
