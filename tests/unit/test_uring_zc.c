// SPDX-License-Identifier: MIT
/*
 * Linux 7.3 zero-copy (core/transport/uring_zc.c, with uring_io.c and
 * uring_serve.c) against the fake ring of fakering.h: ADD_QUEUE with
 * FUSE_URING_ZERO_COPY and a slot per entry on REGISTER, the queue added
 * again without it after EPERM, a zero-copy queue without its pool
 * refused, a zero-copied READ and WRITE moved by READ_FIXED / WRITE_FIXED
 * on the entry's slot and committed only from their completion, bytes in
 * memory refused for a zero-copied READ, a copied READ on a zero-copy
 * queue, and the plan when zero-copy is not offered. One test per feature.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "config/config.h"
#include "fakering.h"

#define DEPTH 4
#define BUFS 2
#define BUF FAKE_PAYLOAD_SZ
#define CID 0x00000000fedcba98ull

static struct fake_queue fq;
static struct fake_sqe adds[8];
static unsigned nadds;
static int queue_res[4], pool_res; /* the kernel's answers */
static unsigned nqueue;

static void kernel(struct io_uring *ring, struct fake_sqe *s)
{
	uint32_t op = s->sqe.cmd_op;

	cr_assert(op == FUSE_IO_URING_CMD_ADD_QUEUE ||
		  op == FUSE_IO_URING_CMD_ADD_BUFPOOL, "cmd_op %u", op);
	cr_assert_lt(nadds, 8);
	adds[nadds++] = *s;
	fakering_post(ring, s->sqe.user_data,
		      op == FUSE_IO_URING_CMD_ADD_QUEUE ? queue_res[nqueue++ & 3]
							: pool_res);
}

static void reset(void)
{
	memset(&fake_plugin, 0, sizeof(fake_plugin));
	memset(queue_res, 0, sizeof(queue_res));
	pool_res = 0;
	nadds = nqueue = 0;
	fakering_kernel = kernel;
}

static int start(void)
{
	struct fake_queue_cfg cfg = { .depth = DEPTH, .pool_bufs = BUFS, .zc = 1 };

	return fake_queue_init(&fq, &cfg, &fake_plugin_ops);
}

static void teardown(void)
{
	if (fake_plugin.fd > 0)
		close(fake_plugin.fd);
	fake_queue_free(&fq);
}

TestSuite(zc, .init = reset, .fini = teardown);

static void take_registers(struct fake_sqe *s)
{
	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH + 1), DEPTH);
}

static void expect_commit(struct uring_ent *e)
{
	struct fake_sqe c[2];

	cr_assert_eq(fakering_take(&fq.t.ring, c, 2), 1);
	cr_assert_eq(c[0].sqe.cmd_op, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
	cr_assert_eq(c[0].sqe.user_data, (uint64_t)(uintptr_t)e | UD_TAG_CMD);
	cr_assert_eq(fake_cmd(&c[0])->commit_id, CID);
	cr_assert_eq(atomic_load(&e->state), ENT_KERNEL);
}

static struct fake_req read_req(uint32_t len, uint64_t flags, uint32_t offset)
{
	static struct fuse_read_in ri;

	ri.size = len;
	return (struct fake_req){ .opcode = FUSE_READ, .unique = 70,
				  .nodeid = 2, .arg = &ri, .arglen = sizeof(ri),
				  .commit_id = CID, .flags = flags,
				  .offset = offset };
}

Test(zc, add_queue_flag_and_a_slot_per_entry)
{
	struct fake_sqe s[DEPTH + 1];

	cr_assert_eq(start(), 0);
	cr_assert_eq(adds[0].sqe.cmd_op, FUSE_IO_URING_CMD_ADD_QUEUE);
	cr_assert_eq(fake_cmd(&adds[0])->flags, FUSE_URING_ZERO_COPY);
	cr_assert_eq(fq.q.zc, 1);
	take_registers(s);
	for (int i = 0; i < DEPTH; i++) {
		const struct iovec *iov = (const void *)(uintptr_t)s[i].sqe.addr;

		/* Slots after the queue's own buffer (its pool, slot 0). */
		cr_assert_eq(fake_cmd(&s[i])->ent_zero_copy_buf_index,
			     fq.q.nbufs + i);
		cr_assert_eq(fq.q.ents[i].zc_slot, fq.q.nbufs + i);
		cr_assert_null(iov[1].iov_base, "zero-copy takes pool REGISTERs only");
	}
}

Test(zc, eperm_adds_the_queue_again_without_zero_copy)
{
	struct fake_sqe s[DEPTH + 1];

	queue_res[0] = -EPERM; /* CAP_SYS_ADMIN of a user namespace only */
	cr_assert_eq(start(), 0);
	cr_assert_eq(nadds, 3);
	cr_assert_eq(fake_cmd(&adds[0])->flags, FUSE_URING_ZERO_COPY);
	cr_assert_eq(adds[1].sqe.cmd_op, FUSE_IO_URING_CMD_ADD_QUEUE);
	cr_assert_eq(fake_cmd(&adds[1])->flags, 0);
	cr_assert_eq(adds[2].sqe.cmd_op, FUSE_IO_URING_CMD_ADD_BUFPOOL);
	cr_assert_eq(fq.q.zc, 0);
	cr_assert_eq(fq.q.pool_added, 1, "it still copies through its pool");
	take_registers(s);
	for (int i = 0; i < DEPTH; i++)
		cr_assert_eq(fake_cmd(&s[i])->ent_zero_copy_buf_index, 0,
			     "a slot on a queue without zero-copy is -EINVAL");
}

Test(zc, zero_copy_queue_without_its_pool_cannot_serve)
{
	struct fake_sqe s[DEPTH + 1];

	pool_res = -EINVAL;
	cr_assert_eq(start(), -EPROTO);
	/* A per-entry REGISTER would turn io_uring off: none is sent. */
	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH + 1), 0);
}

Test(zc, zero_copied_read_is_read_fixed_on_the_slot)
{
	struct fake_sqe s[DEPTH + 1];
	struct fake_req r = read_req(8192, FUSE_URING_ENT_ZERO_COPY, 0);
	struct uring_ent *e;

	cr_assert_eq(start(), 0);
	take_registers(s);
	fake_plugin.answer = FA_FD;
	fake_plugin.fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fake_plugin.fd, 0);
	e = fakering_arrive(&fq, 1, &r);
	cr_assert_eq(e->zc, 1);
	cr_assert_eq(e->req.zero_copy, 1);
	cr_assert_null(e->payload, "a zero-copied READ takes no pool buffer");
	cr_assert_eq(fq.q.pool_busy, 0);
	cr_assert_eq(fake_plugin.ret, 0);
	/* The I/O only: the commit would unregister the slot under it. */
	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH), 1);
	cr_assert_eq(s[0].sqe.opcode, IORING_OP_READ_FIXED);
	cr_assert_eq(s[0].sqe.buf_index, e->zc_slot);
	cr_assert_eq(s[0].sqe.addr, 0, "a kernel buffer's base is 0");
	cr_assert_eq(s[0].sqe.len, 8192);
	cr_assert_eq(s[0].sqe.fd, fake_plugin.fd);
	cr_assert_eq(atomic_load(&e->state), ENT_IO);
	fakering_complete(&fq, e, UD_TAG_IO, 3000); /* short: EOF */
	expect_commit(e);
	cr_assert_eq(e->hdr->ring_ent_in_out.payload_sz, 3000);
	cr_assert_eq(fake_out_header(e).len, sizeof(struct fuse_out_header) + 3000);
	cr_assert_eq(fake_out_header(e).error, 0);
	cr_assert_eq(atomic_load(&fq.q.ctr.zc_reads), 1);
	/* Claimed by its own thread without an atomic read-modify-write. */
	cr_assert_eq(atomic_load(&fq.q.ctr.zc_owner_plain), 1);
	cr_assert_eq(atomic_load(&fq.q.ctr.zc_owner_rmw), 0);
}

Test(zc, zero_copied_write_replies_through_the_pool)
{
	struct fake_sqe s[DEPTH + 1];
	struct fuse_write_in wi = { .size = 8192 };
	struct fake_req r = { .opcode = FUSE_WRITE, .unique = 71, .nodeid = 2,
			      .arg = &wi, .arglen = sizeof(wi), .commit_id = CID,
			      .flags = FUSE_URING_ENT_ZERO_COPY, .offset = BUF,
			      .payload_sz = 8192 };
	struct uring_ent *e;

	cr_assert_eq(start(), 0);
	take_registers(s);
	fake_plugin.answer = FA_FD;
	fake_plugin.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fake_plugin.fd, 0);
	e = fakering_arrive(&fq, 0, &r);
	cr_assert_eq(e->zc, 1);
	cr_assert_eq(e->payload, fq.q.pool + BUF, "its reply still needs a buffer");
	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH), 1);
	cr_assert_eq(s[0].sqe.opcode, IORING_OP_WRITE_FIXED);
	cr_assert_eq(s[0].sqe.buf_index, e->zc_slot);
	cr_assert_eq(s[0].sqe.addr, 0);
	cr_assert_eq(s[0].sqe.len, 8192);
	fakering_complete(&fq, e, UD_TAG_IO, 8192);
	expect_commit(e);
	cr_assert_eq(((const struct fuse_write_out *)(fq.q.pool + BUF))->size, 8192);
	cr_assert_eq(e->hdr->ring_ent_in_out.payload_sz,
		     sizeof(struct fuse_write_out));
	cr_assert_eq(atomic_load(&fq.q.ctr.zc_writes), 1);
	cr_assert_eq(fq.q.pool_busy, 0);
}

Test(zc, bytes_for_a_zero_copied_read_are_refused)
{
	struct fake_sqe s[DEPTH + 1];
	struct fake_req r = read_req(4096, FUSE_URING_ENT_ZERO_COPY, 0);
	struct uring_ent *e;

	cr_assert_eq(start(), 0);
	take_registers(s);
	fake_plugin.len = 4096; /* reply_data: only the pages could take it */
	e = fakering_arrive(&fq, 2, &r);
	cr_assert_neq(fake_plugin.ret, 0);
	expect_commit(e);
	cr_assert_eq(fake_out_header(e).error, -EIO);
	cr_assert_eq(e->hdr->ring_ent_in_out.payload_sz, 0);
	cr_assert_eq(atomic_load(&fq.q.ctr.zc_refused), 1);
}

Test(zc, copied_read_on_a_zero_copy_queue)
{
	struct fake_sqe s[DEPTH + 1];
	struct fake_req r = read_req(100, 0, BUF); /* not opted in: copied */
	struct uring_ent *e;

	cr_assert_eq(start(), 0);
	take_registers(s);
	memset(fake_data, 'z', 100);
	e = fakering_arrive(&fq, 3, &r);
	cr_assert_eq(e->zc, 0);
	cr_assert_eq(e->payload, fq.q.pool + BUF);
	cr_assert_eq(fake_plugin.ret, 0);
	expect_commit(e);
	cr_assert_eq(e->hdr->ring_ent_in_out.payload_sz, 100);
	cr_assert_eq(memcmp(fq.q.pool + BUF, fake_data, 100), 0);
	cr_assert_eq(atomic_load(&fq.q.ctr.zc_copied), 1);
}

/* The plan: why zero-copy is off when it is not offered or not possible,
 * and that `on` refuses to start then. Nothing to tear down. */
TestSuite(zc_plan);

static int plan(int zero_copy, int offered, uint32_t pool_bufs, int *zc,
		char **err)
{
	struct fring_uring u = { .pool_bufs = pool_bufs };
	struct fring_cfg_transport cfg = { .zero_copy = zero_copy };
	struct fring_uring_params p = { .cfg = &cfg,
					.bufpool_offered = offered };
	int ret;

	*err = NULL;
	ret = uring_zc_plan(&u, &p, err);
	*zc = u.zc;
	return ret;
}

Test(zc_plan, not_offered)
{
	char *err;
	int zc;

	cr_assert_eq(plan(FRING_AUTO, 0, 8, &zc, &err), 0);
	cr_assert_eq(zc, 0);
	cr_assert_eq(plan(FRING_AUTO, 1, 0, &zc, &err), 0, "no pool: auto copies");
	cr_assert_eq(zc, 0);
	cr_assert_eq(plan(FRING_OFF, 1, 8, &zc, &err), 0);
	cr_assert_eq(zc, 0);
	cr_assert_eq(plan(FRING_ON, 0, 8, &zc, &err), -EOPNOTSUPP);
	cr_assert_not_null(strstr(err, "transport.zero_copy on"));
	free(err);
	cr_assert_eq(plan(FRING_ON, 1, 0, &zc, &err), -EOPNOTSUPP);
	cr_assert_not_null(strstr(err, "buffer pool"));
	free(err);
}

Test(zc_plan, offered)
{
	char *err;
	int zc, cap = uring_cap_effective(CAP_SYS_ADMIN);

	cr_assert_eq(plan(FRING_AUTO, 1, 8, &zc, &err), 0);
	cr_assert_eq(zc, cap, "zero-copy exactly with CAP_SYS_ADMIN");
	cr_assert_eq(plan(FRING_ON, 1, 8, &zc, &err), cap ? 0 : -EOPNOTSUPP);
	free(err);
}
