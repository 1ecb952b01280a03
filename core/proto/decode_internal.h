// SPDX-License-Identifier: MIT
/* What decode.c (lengths, routing) and decode_ops.c (the per-op decoders)
 * share: arg 0's aligned copy, the payload cursor, the decoders. */
#ifndef FRING_DECODE_INTERNAL_H
#define FRING_DECODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* Sizes the kernel's signed 32-bit paths can carry; larger is malformed. */
#define MAX_IO_SIZE 0x7fffffffu

/* Arg 0 copied out of the wire bytes so fields are read aligned. */
union arg0 {
	struct fuse_forget_in forget;
	struct fuse_getattr_in getattr;
	struct fuse_setattr_in setattr;
	struct fuse_mknod_in mknod;
	struct fuse_mkdir_in mkdir;
	struct fuse_rename_in rename;
	struct fuse_rename2_in rename2;
	struct fuse_link_in link;
	struct fuse_open_in open;
	struct fuse_create_in create;
	struct fuse_read_in read;
	struct fuse_write_in write;
	struct fuse_release_in release;
	struct fuse_flush_in flush;
	struct fuse_fsync_in fsync;
	struct fuse_setxattr_in setxattr;
	struct fuse_getxattr_in getxattr;
	struct fuse_lk_in lk;
	struct fuse_access_in access;
	struct fuse_init_in init;
	struct fuse_interrupt_in interrupt;
	struct fuse_batch_forget_in batch_forget;
	struct fuse_fallocate_in fallocate;
	struct fuse_lseek_in lseek;
	struct fuse_copy_file_range_in copy;
	struct fuse_statx_in statx;
	uint8_t raw[88];
};

/* The bytes after arg 0, extensions already cut off. */
struct cursor {
	const uint8_t *p;
	size_t left;
};

/* The decoders named in ops.def's decoder column (decode_ops.c): 0, or
 * -EPROTO (malformed) or -ENOSYS (not served). */
#define OP(code, a0, decoder, member, slot, replies, flags)                  \
	int fring_dec_##decoder(uint32_t op, const union arg0 *u, size_t a0len, \
				struct cursor *c,                             \
				const struct fring_proto_conn *conn,          \
				struct fring_decoded *out);
#include "ops.def"

#endif /* FRING_DECODE_INTERNAL_H */
