// SPDX-License-Identifier: MIT
/* The opcode table (ops.def) as data: names, arg 0 sizes, flags, replies. */
#include "ops.h"
#include "proto.h"

#define ARG(s) ((int16_t)sizeof(struct fuse_##s##_in))
#define NOARG 0
#define UNDECODED (-1)
#define R(kind) FRING_R_##kind
#define F(flag) FRING_OP_##flag
#define OP(code, arg0, decoder, member, slot, replies, flags)              \
	[FUSE_##code] = { #code, arg0, (flags) | FRING_OP_PLUGIN, replies },
#define HOST_OP(code, arg0, decoder, replies, flags)                        \
	[FUSE_##code] = { #code, arg0, flags, replies },

const struct fring_op fring_ops[FUSE_OPCODE_MAX] = {
#include "ops.def"
};

const char *fring_opcode_name(uint32_t opcode)
{
	const struct fring_op *op = fring_op(opcode);

	return op ? op->name : "UNKNOWN";
}
