// SPDX-License-Identifier: MIT
/*
 * The counts io_uring bounds and fring narrows, decided before any thread
 * starts (uring_table_fit, uring_zc.c): a ring's fixed-buffer table holds
 * at most 16,384 buffers (IORING_MAX_REG_BUFFERS, io_uring/rsrc.c), and
 * zero-copy gives every entry a slot of it, numbered in a uint16_t; a
 * ring's SQ holds at most 32,768 entries (IORING_MAX_ENTRIES). The largest
 * legal layout and the first illegal one of each. And whether fring trusts
 * the provisional FUSE_URING_REDUCED_Q bit (transport.reduced_queues,
 * fring_uring_reduced_queues in uring_init.c): its decision table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "config/config.h"
#include "proto/fring_uapi.h"
#include "transport/uring_internal.h"

#define MIB (1u << 20)

static int fit(uint32_t nq, uint32_t depth, int pool, int zero_copy, int *zc,
	       char *why)
{
	why[0] = 0;
	return uring_table_fit(nq, depth, MIB, pool, zero_copy, zc, why, 256);
}

Test(uring_limits, io_uring_limits_as_the_kernel_has_them)
{
	cr_expect_eq(URING_MAX_REG_BUFFERS, 16384u);
	cr_expect_eq(URING_MAX_BUF_BYTES, 1ull << 30);
	cr_expect_eq(URING_MAX_ENTRIES, 32768u);
}

Test(uring_limits, zero_copy_slots_largest_legal_and_first_illegal)
{
	char why[256];
	int zc;

	/* A pool per queue + a slot per entry: 4 x (1 + 4095) = 16384. */
	cr_expect_eq(uring_table_slots(4, 4095, MIB, 1, 1), 16384);
	zc = 1;
	cr_expect_eq(fit(4, 4095, 1, FRING_AUTO, &zc, why), 0);
	cr_expect_eq(zc, 1, "the largest legal layout keeps zero-copy");
	zc = 1;
	cr_expect_eq(fit(4, 4095, 1, FRING_ON, &zc, why), 0);
	cr_expect_eq(zc, 1);

	/* One more entry per queue: 4 x 4097 = 16388 slots. */
	cr_expect_eq(uring_table_slots(4, 4096, MIB, 1, 1), 16388);
	zc = 1;
	cr_expect_eq(fit(4, 4096, 1, FRING_AUTO, &zc, why), 0);
	cr_expect_eq(zc, 0, "auto: zero-copy off, the pools still fit");
	cr_expect_str_eq(why, "a queue thread serving 4 queues x 4096 entries "
			 "needs 16388 fixed-buffer slots (one per entry for "
			 "zero-copy), more than io_uring's 16384: lower "
			 "transport.queue_depth or raise transport.queues");
	zc = 1;
	cr_expect_eq(fit(4, 4096, 1, FRING_ON, &zc, why), -E2BIG, "on refuses");

	/* More queues, fewer entries: 8 x (1 + 2047) = 16384 fits,
	 * 8 x (1 + 2048) = 16392 does not. */
	zc = 1;
	cr_expect_eq(fit(8, 2047, 1, FRING_ON, &zc, why), 0);
	cr_expect_eq(zc, 1);
	cr_expect_eq(fit(8, 2048, 1, FRING_AUTO, &zc, why), 0);
	cr_expect_eq(zc, 0);
	zc = 1;
	cr_expect_eq(fit(8, 2048, 1, FRING_ON, &zc, why), -E2BIG);
}

Test(uring_limits, per_entry_buffers_largest_legal_and_first_illegal)
{
	char why[256];
	int zc = 0;

	/* Per-entry regions register 1 GiB chunks: 1020 entries of
	 * 1 MiB + 4 KiB each, so 4096 entries are 5 buffers. */
	cr_expect_eq(uring_table_slots(1, 4096, MIB, 0, 0), 5);
	/* Depth 1: a buffer per queue; 16384 queues fill the table. */
	cr_expect_eq(fit(16384, 1, 0, FRING_AUTO, &zc, why), 0);
	cr_expect_eq(fit(16385, 1, 0, FRING_AUTO, &zc, why), -E2BIG);
	cr_expect(strstr(why, "needs 16385 fixed-buffer slots, more than "
			      "io_uring's 16384") != NULL, "%s", why);
	/* A pool each, no zero-copy: the same bound. */
	cr_expect_eq(fit(16384, 1, 1, FRING_OFF, &zc, why), 0);
	cr_expect_eq(fit(16385, 1, 1, FRING_OFF, &zc, why), -E2BIG);
}

Test(uring_limits, ring_entries_largest_legal_and_first_illegal)
{
	char why[256];
	int zc = 0;

	/* An SQE per entry + 4: 8191 x 4 + 4 = 32768. */
	cr_expect_eq(fit(8191, 4, 0, FRING_AUTO, &zc, why), 0);
	cr_expect_eq(fit(8192, 4, 0, FRING_AUTO, &zc, why), -E2BIG);
	cr_expect_str_eq(why, "a queue thread serving 8192 queues x 4 entries "
			 "needs 32772 ring entries, more than io_uring's 32768: "
			 "lower transport.queue_depth or raise transport.queues");
	/* 8 queues at the deepest queue_depth: 32772 too. */
	cr_expect_eq(fit(8, 4096, 1, FRING_OFF, &zc, why), -E2BIG);
	cr_expect_eq(fit(7, 4096, 1, FRING_OFF, &zc, why), 0);
}

/* ---- transport.reduced_queues ---- */

#define BIT44 FUSE_URING_REDUCED_Q
#define BASE (FUSE_INIT_EXT | FUSE_OVER_IO_URING)

static int reduced(int mode, uint64_t capable, uint32_t minor, char *why)
{
	return fring_uring_reduced_queues(mode, capable, minor, why, 160);
}

Test(uring_limits, reduced_queues_decision_table)
{
	static const struct {
		int mode;
		uint64_t capable;
		uint32_t minor;
		int want;
		const char *why;
	} rows[] = {
		/* 6.18 (7.45) and 7.3 (7.46, pools in bit 43): no bit 44. */
		{ FRING_AUTO, BASE, 45, 0, "the kernel does not offer them" },
		{ FRING_AUTO, BASE | FUSE_HAS_IO_URING_BUFPOOL, 46, 0,
		  "the kernel does not offer them" },
		{ FRING_ON, BASE | FUSE_HAS_IO_URING_BUFPOOL, 46, 0,
		  "the kernel does not offer them" },
		{ FRING_OFF, BASE, 46, 0, "transport.reduced_queues off" },
		/* Bit 44 offered: auto knows no minor that carries it. */
		{ FRING_AUTO, BASE | BIT44, 46, 0,
		  "INIT bit 44 is offered, but FUSE 7.46 is not known to mean "
		  "reduced queues by it; transport.reduced_queues on trusts it" },
		{ FRING_AUTO, BASE | BIT44, 47, 0,
		  "INIT bit 44 is offered, but FUSE 7.47 is not known to mean "
		  "reduced queues by it; transport.reduced_queues on trusts it" },
		{ FRING_AUTO, BASE | BIT44, 0, 0,
		  "INIT bit 44 is offered, but FUSE 7.0 is not known to mean "
		  "reduced queues by it; transport.reduced_queues on trusts it" },
		/* on: a kernel patched with the reduced-queues series, whatever
		 * its minor. */
		{ FRING_ON, BASE | BIT44, 46, 1,
		  "transport.reduced_queues on trusts INIT bit 44" },
		{ FRING_ON, BASE | FUSE_HAS_IO_URING_BUFPOOL | BIT44, 47, 1,
		  "transport.reduced_queues on trusts INIT bit 44" },
		{ FRING_OFF, BASE | BIT44, 46, 0, "transport.reduced_queues off" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char why[160] = "";

		cr_expect_eq(reduced(rows[i].mode, rows[i].capable, rows[i].minor,
				     why), rows[i].want, "row %zu", i);
		cr_expect_str_eq(why, rows[i].why, "row %zu", i);
	}
}
