// SPDX-License-Identifier: MIT
/*
 * What a kernel cannot serve and how much memory a mount pins
 * (core/transport/kernel_probe.c), decided from given facts: the offer of
 * a 6.18 kernel (io_uring, no buffer pools), of a 7.3 one (pools), of one
 * without io_uring, and none known. The probe itself runs in the mount
 * tests (test_cli.py).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "config/config.h"
#include "proto/fring_uapi.h"
#include "transport/kernel_probe.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

static const struct fring_kernel_offer k618 = {
	.known = 1, .major = 7, .minor = 45,
	.capable = FUSE_INIT_EXT | FUSE_OVER_IO_URING,
};
static const struct fring_kernel_offer k73 = {
	.known = 1, .major = 7, .minor = 46,
	.capable = FUSE_INIT_EXT | FUSE_OVER_IO_URING | FUSE_HAS_IO_URING_BUFPOOL,
};
static const struct fring_kernel_offer old = {
	.known = 1, .major = 7, .minor = 39, .capable = FUSE_INIT_EXT,
};

static struct fring_kernel_facts facts(const struct fring_kernel_offer *o)
{
	return (struct fring_kernel_facts){
		.offer = o, .uring_enabled = 1, .cap_sys_admin = 1, .qids = 2,
		.mem_total = 16 * GIB,
	};
}

static struct fring_cfg_transport tr(void)
{
	struct fring_cfg_transport t;

	fring_cfg_transport_defaults(&t);
	t.at_section = (struct fring_cfg_at){ 4, 5 };
	return t;
}

static int refuses(const struct fring_cfg_transport *t,
		   const struct fring_kernel_facts *k, char *why,
		   struct fring_cfg_at *at)
{
	return fring_kernel_refuses(t, k, why, 256, at);
}

Test(kernel_check, bufpool_on_without_pools_is_refused_at_its_value)
{
	struct fring_cfg_transport t = tr();
	struct fring_kernel_facts k = facts(&k618);
	struct fring_cfg_at at;
	char why[256];

	t.bufpool = FRING_ON;
	t.at_bufpool = (struct fring_cfg_at){ 6, 16 };
	cr_assert_eq(refuses(&t, &k, why, &at), -EOPNOTSUPP);
	cr_assert_str_eq(why, "transport.bufpool on: the kernel has no io_uring "
			 "buffer pools (they need FUSE 7.46, Linux 7.3)");
	cr_assert_eq(at.line, 6);
	cr_assert_eq(at.column, 16);
	k = facts(&k73);
	cr_assert_eq(refuses(&t, &k, why, &at), 0);
}

Test(kernel_check, zero_copy_on_needs_pools_then_cap_sys_admin)
{
	struct fring_cfg_transport t = tr();
	struct fring_kernel_facts k = facts(&k618);
	struct fring_cfg_at at;
	char why[256];

	t.zero_copy = FRING_ON;
	t.at_zero_copy = (struct fring_cfg_at){ 7, 18 };
	cr_assert_eq(refuses(&t, &k, why, &at), -EOPNOTSUPP);
	cr_assert_str_eq(why, "transport.zero_copy on: the kernel has no io_uring "
			 "zero-copy (FUSE 7.46, Linux 7.3)");
	cr_assert_eq(at.line, 7);
	k = facts(&k73);
	cr_assert_eq(refuses(&t, &k, why, &at), 0);
	k.cap_sys_admin = 0;
	cr_assert_eq(refuses(&t, &k, why, &at), -EOPNOTSUPP);
	cr_assert_str_eq(why, "transport.zero_copy on: CAP_SYS_ADMIN is not in "
			 "the effective set");
}

/* The busiest queue thread's fixed-buffer table (16,384 slots) and SQ
 * (32,768 entries), as fring_uring_setup checks them: refused at the
 * value to change (queue_depth) when something must be served; zero-copy
 * auto would turn itself off at setup instead. */
Test(kernel_check, ring_table_limits_are_refused_at_queue_depth)
{
	struct fring_cfg_transport t = tr();
	struct fring_kernel_facts k = facts(&k73);
	struct fring_cfg_at at;
	char why[256];

	k.busiest = 4; /* e.g. queues: 1 on a 4-CPU machine */
	t.zero_copy = FRING_ON;
	t.at_zero_copy = (struct fring_cfg_at){ 7, 18 };
	t.queue_depth = 4095;
	t.at_queue_depth = (struct fring_cfg_at){ 6, 20 };
	t.bufpool_size = 8ull << 20;
	cr_assert_eq(refuses(&t, &k, why, &at), 0); /* 4 x (1 + 4095) = 16384 */
	t.queue_depth = 4096;
	cr_assert_eq(refuses(&t, &k, why, &at), -E2BIG);
	cr_assert_str_eq(why, "transport.zero_copy on: a queue thread serving 4 "
			 "queues x 4096 entries needs 16388 fixed-buffer slots "
			 "(one per entry for zero-copy), more than io_uring's "
			 "16384: lower transport.queue_depth or raise "
			 "transport.queues");
	cr_assert_eq(at.line, 6);
	cr_assert_eq(at.column, 20);
	/* Not in the file: at zero_copy. */
	t.at_queue_depth = (struct fring_cfg_at){ 0, 0 };
	cr_assert_eq(refuses(&t, &k, why, &at), -E2BIG);
	cr_assert_eq(at.line, 7);
	/* auto: served without zero-copy (setup warns), nothing refused. */
	t.zero_copy = FRING_AUTO;
	t.mode = FRING_MODE_URING;
	cr_assert_eq(refuses(&t, &k, why, &at), 0);
	/* More entries than one ring's SQ: 8 x 4096 + 4. */
	k.busiest = 8;
	cr_assert_eq(refuses(&t, &k, why, &at), -E2BIG);
	cr_assert_str_eq(why, "transport uring: io_uring unavailable: ring setup "
			 "failed: a queue thread serving 8 queues x 4096 entries "
			 "needs 32772 ring entries, more than io_uring's 32768: "
			 "lower transport.queue_depth or raise transport.queues");
	cr_assert_eq(at.line, 4); /* the section: queue_depth not in the file */
	k.busiest = 7;
	cr_assert_eq(refuses(&t, &k, why, &at), 0);
	/* mode auto falls back to /dev/fuse: nothing to refuse. */
	k.busiest = 8;
	t.mode = FRING_MODE_AUTO;
	cr_assert_eq(refuses(&t, &k, why, &at), 0);
}

Test(kernel_check, what_needs_io_uring_on_a_kernel_without)
{
	struct fring_cfg_transport t = tr();
	struct fring_kernel_facts k = facts(&old);
	struct fring_cfg_at at;
	char why[256];

	cr_assert_eq(refuses(&t, &k, why, &at), 0); /* auto: /dev/fuse */
	t.mode = FRING_MODE_URING;
	t.at_mode = (struct fring_cfg_at){ 5, 13 };
	cr_assert_eq(refuses(&t, &k, why, &at), -EOPNOTSUPP);
	cr_assert_str_eq(why, "transport uring: io_uring unavailable: kernel too "
			 "old (FUSE 7.39; io_uring needs 7.42)");
	cr_assert_eq(at.line, 5);
	cr_assert_eq(at.column, 13);
	/* bufpool on alone: at its value */
	t = tr();
	t.bufpool = FRING_ON;
	t.at_bufpool = (struct fring_cfg_at){ 6, 16 };
	cr_assert_eq(refuses(&t, &k, why, &at), -EOPNOTSUPP);
	cr_assert_eq(at.line, 6);
	/* not given in a file (fring mount -t uring): no place */
	t = tr();
	t.at_section = (struct fring_cfg_at){ 0, 0 };
	t.mode = FRING_MODE_URING;
	cr_assert_eq(refuses(&t, &k, why, &at), -EOPNOTSUPP);
	cr_assert_eq(at.line, 0);
}

Test(kernel_check, unknown_kernel_and_devfuse_refuse_nothing)
{
	struct fring_cfg_transport t = tr();
	struct fring_kernel_facts k = facts(NULL);
	struct fring_kernel_offer unknown = { .known = 0 };
	struct fring_cfg_at at;
	char why[256];

	t.bufpool = FRING_ON;
	t.zero_copy = FRING_ON;
	t.mode = FRING_MODE_URING;
	cr_assert_eq(refuses(&t, &k, why, &at), 0);
	k.offer = &unknown;
	cr_assert_eq(refuses(&t, &k, why, &at), 0);
	k = facts(&k618);
	t = tr();
	t.mode = FRING_MODE_DEVFUSE;
	cr_assert_eq(refuses(&t, &k, why, &at), 0);
}

Test(kernel_check, pinned_memory_as_the_readme_says)
{
	struct fring_cfg_transport t = tr();
	struct fring_kernel_facts k = facts(&k618);
	char what[96];

	/* per-entry buffers: queues x depth x 1028 KiB */
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)),
		     2ull * 8 * 1028 * 1024);
	cr_assert_str_eq(what, "2 queues x 8 entries x 1028 KiB");
	t.queue_depth = 4096;
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)),
		     2ull * 4096 * 1028 * 1024); /* 8.03 GiB */
	/* with pools: queues x pool size (at most one buffer per entry) */
	k = facts(&k73);
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)), 2 * 8 * MIB);
	cr_assert_str_eq(what, "2 queues x a pool of 8 x 1024 KiB");
	t.bufpool_size = 64 * MIB;
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)), 2 * 64 * MIB);
	t.queue_depth = 4;
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)), 2 * 4 * MIB);
	/* bufpool off: per-entry buffers even where pools are offered */
	t.bufpool = FRING_OFF;
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)),
		     2ull * 4 * 1028 * 1024);
	/* over /dev/fuse nothing is pinned */
	t.mode = FRING_MODE_DEVFUSE;
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)), 0);
	t = tr();
	k = facts(&old);
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)), 0);
	/* unknown offer: what enable_uring and the kernel version suggest */
	k = facts(NULL);
	k.pools_likely = 1;
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)), 2 * 8 * MIB);
	k.uring_enabled = 0;
	cr_assert_eq(fring_kernel_pinned(&t, &k, what, sizeof(what)), 0);
}

Test(kernel_check, warning_threshold)
{
	cr_assert_eq(fring_kernel_pinned_threshold(0), GIB);
	cr_assert_eq(fring_kernel_pinned_threshold(64 * GIB), GIB);
	cr_assert_eq(fring_kernel_pinned_threshold(4 * GIB), GIB);
	cr_assert_eq(fring_kernel_pinned_threshold(2 * GIB), 512 * MIB);
	/* the default depth on 2 CPUs stays far below; depth 4096 does not */
	cr_assert_lt(2ull * 8 * 1028 * 1024, fring_kernel_pinned_threshold(2 * GIB));
	cr_assert_gt(2ull * 4096 * 1028 * 1024, fring_kernel_pinned_threshold(0));
}
