// SPDX-License-Identifier: MIT
/*
 * The opcode table (core/proto/ops.def, built into fring_ops[] by ops.c):
 * every FUSE_* member of enum fuse_opcode in fring_uapi.h, read from the
 * header's text, has exactly one row named after it, and the rows' flags
 * and reply kinds agree with one another and with the kernel's rules.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "proto/ops.h"
#include "proto/proto.h"

#define UAPI FRING_TEST_DATA_DIR "/../../core/proto/fring_uapi.h"

struct member {
	char name[64];
	unsigned value;
};

/* The members of enum fuse_opcode, as written in the header. */
static size_t uapi_opcodes(struct member *out, size_t cap)
{
	FILE *f = fopen(UAPI, "r");
	char line[256];
	regex_t re;
	regmatch_t m[3];
	size_t n = 0;
	int in_enum = 0;

	cr_assert_not_null(f, "cannot open %s", UAPI);
	cr_assert_eq(regcomp(&re, "^[[:space:]]*FUSE_([A-Z0-9_]+)[[:space:]]*="
				  "[[:space:]]*([0-9]+)[[:space:]]*,",
			     REG_EXTENDED), 0);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "enum fuse_opcode {")) {
			in_enum = 1;
			continue;
		}
		if (!in_enum)
			continue;
		if (strstr(line, "};"))
			break;
		if (regexec(&re, line, 3, m, 0))
			continue;
		cr_assert_lt(n, cap);
		snprintf(out[n].name, sizeof(out[n].name), "%.*s",
			 (int)(m[1].rm_eo - m[1].rm_so), line + m[1].rm_so);
		out[n].value = (unsigned)strtoul(line + m[2].rm_so, NULL, 10);
		n++;
	}
	regfree(&re);
	fclose(f);
	cr_assert(in_enum, "no enum fuse_opcode in %s", UAPI);
	return n;
}

Test(ops_table, every_uapi_opcode_has_its_row)
{
	struct member mb[128];
	size_t n = uapi_opcodes(mb, 128), members = 0, rows = 0;
	int saw_max = 0;

	for (size_t i = 0; i < n; i++) {
		const struct fring_op *op;

		if (!strcmp(mb[i].name, "OPCODE_MAX")) {
			cr_expect_eq(mb[i].value, FUSE_OPCODE_MAX);
			saw_max = 1;
			continue;
		}
		members++;
		op = fring_op(mb[i].value);
		cr_expect_not_null(op, "FUSE_%s (%u) has no row in "
			       "core/proto/ops.def", mb[i].name, mb[i].value);
		if (op)
			cr_expect_str_eq(op->name, mb[i].name,
					 "opcode %u: row %s, enum FUSE_%s",
					 mb[i].value, op->name, mb[i].name);
	}
	cr_assert(saw_max, "FUSE_OPCODE_MAX not found: the parse is wrong");
	cr_assert_geq(members, 51, "only %zu opcodes parsed", members);
	/* And no row without an enum member (a row's FUSE_##code must
	 * compile, so this counts duplicates the compiler let through). */
	for (uint32_t v = 0; v < FUSE_OPCODE_MAX; v++)
		rows += fring_op(v) != NULL;
	cr_expect_eq(rows, members, "%zu rows, %zu enum members", rows, members);
}

Test(ops_table, unknown_opcodes_have_no_row)
{
	static const uint32_t none[] = { 0, 7, 19, FUSE_OPCODE_MAX, 4096,
					 0xffffffffu };

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		cr_expect_null(fring_op(none[i]), "opcode %u", none[i]);
		cr_expect_eq(fring_op_flags(none[i]), 0);
		cr_expect_eq(fring_op_replies(none[i]), 0);
		cr_expect_eq(fring_op_no_reply(none[i]), 0);
		cr_expect_str_eq(fring_opcode_name(none[i]), "UNKNOWN");
	}
}

/* The requests never answered, written here apart from the table: the
 * kernel expects no reply to FORGET, BATCH_FORGET and NOTIFY_REPLY, and
 * an INTERRUPT needs none (runtime/dispatch.c, do_interrupt). */
Test(ops_table, no_reply_set_is_the_kernels)
{
	for (uint32_t v = 0; v < FUSE_OPCODE_MAX + 8; v++) {
		int want = v == FUSE_FORGET || v == FUSE_BATCH_FORGET ||
			   v == FUSE_INTERRUPT || v == FUSE_NOTIFY_REPLY;

		cr_expect_eq(fring_op_no_reply(v), want, "%s",
			     fring_opcode_name(v));
	}
}

Test(ops_table, flags_and_replies_agree)
{
	const uint32_t all = (FRING_R_LAST << 1) - 1;
	const uint32_t defaults = FRING_R_EMPTY | FRING_R_OPEN | FRING_R_STATFS;

	for (uint32_t v = 0; v < FUSE_OPCODE_MAX; v++) {
		const struct fring_op *op = fring_op(v);
		uint32_t f;

		if (!op)
			continue;
		f = op->flags;
		cr_expect_eq(op->replies & ~all, 0, "%s: unknown reply bit",
			     op->name);
		cr_expect_geq(op->arg_size, -1, "%s", op->name);
		if (f & FRING_OP_NOREPLY)
			cr_expect(!op->replies && !(f & FRING_OP_PLUGIN),
				  "%s: no reply, yet replies or a plugin op",
				  op->name);
		if (f & FRING_OP_PLUGIN)
			cr_expect(op->replies, "%s: a plugin op that cannot "
				  "succeed", op->name);
		if (f & FRING_OP_DEFAULT)
			cr_expect((f & FRING_OP_PLUGIN) &&
				  (op->replies & defaults),
				  "%s: a host default with no way to give it",
				  op->name);
		if (f & FRING_OP_FLOCK)
			cr_expect(f & FRING_OP_PLUGIN, "%s", op->name);
		if (f & FRING_OP_SESSION)
			cr_expect(!(f & FRING_OP_PLUGIN), "%s", op->name);
		/* Only decoded ops are answered by anything. */
		if (op->arg_size < 0)
			cr_expect(!op->replies && !(f & FRING_OP_PLUGIN),
				  "%s", op->name);
	}
}
