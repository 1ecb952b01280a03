// SPDX-License-Identifier: MIT
/*
 * Linux 7.3 buffer pools (core/transport/uring_bufpool.c) against the fake
 * ring of fakering.h: ADD_QUEUE and ADD_BUFPOOL answered before any
 * REGISTER, REGISTERs with an empty payload iovec, a registered pool's
 * flag and index on every command, a request's payload at pool base +
 * offset and the buffer held until its commit, requests without a buffer,
 * offsets outside the pool, and the fallbacks: a pool the kernel refuses
 * (per-entry buffers carved from it) and a kernel that offers none. One
 * test per feature.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "config/config.h"
#include "runtime/host.h"
#include "fakering.h"

#define DEPTH 4
#define BUFS 3
#define BUF FAKE_PAYLOAD_SZ
#define CID 0x0102030405060708ull

static struct fake_queue fq;

/* The kernel: every ADD it was sent, and what it answers. */
static struct fake_sqe adds[16];
static unsigned nadds, registers_submitted;
static int queue_res[4], pool_res[4]; /* per ADD of that kind, in turn */
static unsigned nqueue, npool;

static void kernel(struct io_uring *ring, struct fake_sqe *s)
{
	uint32_t op = s->sqe.cmd_op;

	if (op == FUSE_IO_URING_CMD_REGISTER) {
		registers_submitted++;
		return;
	}
	cr_assert(op == FUSE_IO_URING_CMD_ADD_QUEUE ||
		  op == FUSE_IO_URING_CMD_ADD_BUFPOOL, "cmd_op %u", op);
	cr_assert_lt(nadds, 16);
	adds[nadds++] = *s;
	fakering_post(ring, s->sqe.user_data,
		      op == FUSE_IO_URING_CMD_ADD_QUEUE ? queue_res[nqueue++ & 3]
							: pool_res[npool++ & 3]);
}

static void reset(void)
{
	memset(&fake_plugin, 0, sizeof(fake_plugin));
	memset(queue_res, 0, sizeof(queue_res));
	memset(pool_res, 0, sizeof(pool_res));
	nadds = nqueue = npool = registers_submitted = 0;
	fakering_kernel = kernel;
}

static int start(int registered)
{
	struct fake_queue_cfg cfg = { .depth = DEPTH, .pool_bufs = BUFS,
				      .registered = registered };

	return fake_queue_init(&fq, &cfg, &fake_plugin_ops);
}

static void teardown(void)
{
	fake_queue_free(&fq);
}

TestSuite(bufpool, .init = reset, .fini = teardown);

/* The n REGISTERs prepared after the ADDs. */
static void take_registers(struct fake_sqe *s, unsigned n)
{
	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH + 1), n);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(s[i].sqe.cmd_op, FUSE_IO_URING_CMD_REGISTER);
}

static void expect_commit(struct uring_ent *e, struct fake_sqe *out)
{
	cr_assert_eq(fakering_take(&fq.t.ring, out, 2), 1);
	cr_assert_eq(out->sqe.cmd_op, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
	cr_assert_eq(out->sqe.user_data, (uint64_t)(uintptr_t)e | UD_TAG_CMD);
	cr_assert_eq(fake_cmd(out)->commit_id, CID);
}

static struct fake_req getattr_at(uint64_t unique, uint32_t offset)
{
	static struct fuse_getattr_in ga;

	return (struct fake_req){ .opcode = FUSE_GETATTR, .unique = unique,
				  .nodeid = unique, .arg = &ga,
				  .arglen = sizeof(ga), .commit_id = CID,
				  .offset = offset };
}

Test(bufpool, adds_answered_before_any_register)
{
	struct fake_sqe s[DEPTH + 1];

	cr_assert_eq(start(0), 0);
	cr_assert_eq(nadds, 2);
	cr_assert_eq(registers_submitted, 0, "a REGISTER went out before the ADDs");
	cr_assert_eq(adds[0].sqe.cmd_op, FUSE_IO_URING_CMD_ADD_QUEUE);
	cr_assert_eq(fake_cmd(&adds[0])->qid, 0);
	cr_assert_eq(fake_cmd(&adds[0])->flags, 0);
	cr_assert_eq(adds[1].sqe.cmd_op, FUSE_IO_URING_CMD_ADD_BUFPOOL);
	cr_assert_eq(fake_cmd(&adds[1])->bufpool.uaddr,
		     (uint64_t)(uintptr_t)fq.q.pool);
	cr_assert_eq(fake_cmd(&adds[1])->bufpool.len, BUFS * BUF);
	cr_assert_eq(fake_cmd(&adds[1])->bufpool.reserved, 0);
	cr_assert_eq(fake_cmd(&adds[1])->flags, 0);
	cr_assert_eq(adds[1].sqe.uring_cmd_flags, 0, "not registered");
	cr_assert_eq(fq.q.pool_added, 1);
	cr_assert_eq(fq.q.pool_fixed, 0);
	/* Every entry, with its header only: the payload iovec is empty. */
	take_registers(s, DEPTH);
	for (int i = 0; i < DEPTH; i++) {
		const struct iovec *iov = (const void *)(uintptr_t)s[i].sqe.addr;

		cr_assert_eq(iov[0].iov_base, (void *)fq.q.ents[i].hdr);
		cr_assert_geq(iov[0].iov_len, sizeof(struct fuse_uring_req_header));
		cr_assert_null(iov[1].iov_base);
		cr_assert_eq(iov[1].iov_len, 0);
		cr_assert_eq(s[i].sqe.uring_cmd_flags, 0);
	}
	cr_assert_eq(fq.t.live, DEPTH);
}

Test(bufpool, registered_pool_flag_and_index_on_every_command)
{
	struct fake_sqe s[DEPTH + 1], c;
	struct uring_ent *e;
	struct fake_req r = getattr_at(1, 0);

	cr_assert_eq(start(1), 0);
	cr_assert_eq(adds[1].sqe.uring_cmd_flags, IORING_URING_CMD_FIXED);
	cr_assert_eq(adds[1].sqe.buf_index, fq.q.buf_base);
	cr_assert_eq(fq.q.pool_fixed, 1);
	take_registers(s, DEPTH);
	for (int i = 0; i < DEPTH; i++) {
		cr_assert_eq(s[i].sqe.uring_cmd_flags, IORING_URING_CMD_FIXED);
		cr_assert_eq(s[i].sqe.buf_index, fq.q.buf_base);
	}
	e = fakering_arrive(&fq, 0, &r);
	expect_commit(e, &c);
	cr_assert_eq(c.sqe.uring_cmd_flags, IORING_URING_CMD_FIXED);
	cr_assert_eq(c.sqe.buf_index, fq.q.buf_base);
}

Test(bufpool, payload_at_pool_base_plus_offset)
{
	struct fake_sqe s[DEPTH + 1], c;
	struct fake_req r = getattr_at(9, 2 * BUF);
	struct uring_ent *e;

	cr_assert_eq(start(0), 0);
	take_registers(s, DEPTH);
	fake_plugin.answer = FA_HOLD;
	e = fakering_arrive(&fq, 1, &r);
	cr_assert_eq(e->payload, fq.q.pool + 2 * BUF);
	cr_assert_eq(e->payload_cap, BUF);
	cr_assert_eq(fq.q.pool_busy, 1, "held while in userspace");
	cr_assert_eq(atomic_load(&fq.q.ctr.pool_hits), 1);
	cr_assert_eq(fring_host_table()->reply_attr(fake_plugin.held,
		&(struct fring_attr){ .ino = 9, .mode = 0100644, .nlink = 1 }, 0), 0);
	expect_commit(e, &c);
	/* The reply went where the kernel reads it: the lent buffer. */
	cr_assert_eq(((const struct fuse_attr_out *)(fq.q.pool + 2 * BUF))->attr.ino, 9);
	cr_assert_eq(e->hdr->ring_ent_in_out.payload_sz, sizeof(struct fuse_attr_out));
	cr_assert_eq(fq.q.pool_busy, 0, "released at the commit");
}

Test(bufpool, write_data_read_from_the_pool)
{
	struct fake_sqe s[DEPTH + 1], c;
	struct fuse_write_in wi = { .size = 9 };
	struct fake_req r = { .opcode = FUSE_WRITE, .unique = 3, .nodeid = 2,
			      .arg = &wi, .arglen = sizeof(wi), .commit_id = CID,
			      .offset = BUF, .payload_sz = 9 };
	struct uring_ent *e;

	cr_assert_eq(start(0), 0);
	take_registers(s, DEPTH);
	memcpy(fq.q.pool + BUF, "from pool", 9);
	memcpy(fq.q.pool, "not this!", 9);
	e = fakering_arrive(&fq, 0, &r);
	cr_assert_str_eq(fake_plugin.data, "from pool");
	expect_commit(e, &c);
	cr_assert_eq(((const struct fuse_write_out *)(fq.q.pool + BUF))->size, 9);
}

Test(bufpool, request_without_buffer_leaves_buffer_0_alone)
{
	struct fake_sqe s[DEPTH + 1], c;
	struct fake_req held = getattr_at(1, 0); /* offset 0: buffer 0 */
	struct fuse_flush_in fl = { .fh = 5 };
	struct fake_req flush = { .opcode = FUSE_FLUSH, .unique = 2, .nodeid = 4,
				  .arg = &fl, .arglen = sizeof(fl),
				  .commit_id = CID };
	struct uring_ent *e0, *e1;
	fring_req *h;

	cr_assert_eq(start(0), 0);
	take_registers(s, DEPTH);
	fake_plugin.answer = FA_HOLD;
	e0 = fakering_arrive(&fq, 0, &held);
	h = fake_plugin.held;
	cr_assert_eq(e0->payload, fq.q.pool);
	cr_assert_eq(fq.q.pool_busy, 1);
	/* FLUSH has nothing to copy either way: offset 0 is "no buffer". */
	fake_plugin.answer = FA_REPLY;
	e1 = fakering_arrive(&fq, 1, &flush);
	cr_assert_null(e1->payload);
	cr_assert_eq(e1->pool_held, 0);
	cr_assert_eq(fq.q.pool_busy, 1);
	expect_commit(e1, &c);
	cr_assert_eq(fake_out_header(e1).len, sizeof(struct fuse_out_header));
	cr_assert_eq(fring_host_table()->reply_attr(h,
		&(struct fring_attr){ .ino = 1, .mode = 0100644, .nlink = 1 }, 0), 0);
	expect_commit(e0, &c);
	cr_assert_eq(((const struct fuse_attr_out *)fq.q.pool)->attr.ino, 1);
	cr_assert_eq(fq.q.pool_busy, 0);
}

Test(bufpool, offset_outside_the_pool_ends_the_connection)
{
	struct fake_sqe s[DEPTH + 1];
	struct fake_req past = getattr_at(1, BUFS * BUF);
	struct fake_req inside = getattr_at(2, BUF / 2); /* no buffer starts there */

	cr_assert_eq(start(0), 0);
	take_registers(s, DEPTH);
	fakering_arrive(&fq, 0, &past);
	cr_assert_eq(atomic_load(&fq.q.ents[0].state), ENT_GONE);
	cr_assert_eq(atomic_load(&fq.u.fatal), 1);
	fakering_arrive(&fq, 1, &inside);
	cr_assert_eq(atomic_load(&fq.q.ents[1].state), ENT_GONE);
	cr_assert_eq(fake_plugin.calls, 0);
	cr_assert_eq(fq.q.pool_busy, 0);
	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH), 0);
}

Test(bufpool, every_buffer_lent_counts_pool_full)
{
	struct fake_sqe s[DEPTH + 1];

	cr_assert_eq(start(0), 0);
	take_registers(s, DEPTH);
	fake_plugin.answer = FA_HOLD;
	for (uint32_t i = 0; i < BUFS; i++) {
		struct fake_req r = getattr_at(i + 1, i * BUF);

		fakering_arrive(&fq, i, &r);
		cr_assert_eq(atomic_load(&fq.q.ctr.pool_full), i + 1 == BUFS);
	}
	cr_assert_eq(fq.q.pool_busy, BUFS);
}

/* A refused pool: per-entry buffers carved from it, one per entry, for as
 * many entries as it has buffers; offsets are then not looked at. */
static void expect_carved(void)
{
	struct fake_sqe s[DEPTH + 1], c;
	struct fake_req r = getattr_at(6, 7 * BUF); /* ignored */
	struct uring_ent *e;

	cr_assert_eq(fq.q.pool_added, 0);
	cr_assert_eq(fq.q.depth, BUFS);
	take_registers(s, BUFS);
	for (int i = 0; i < BUFS; i++) {
		const struct iovec *iov = (const void *)(uintptr_t)s[i].sqe.addr;

		cr_assert_eq(iov[1].iov_base, (void *)(fq.q.pool + i * BUF));
		cr_assert_eq(iov[1].iov_len, BUF);
		cr_assert_eq(fq.q.ents[i].payload, fq.q.pool + i * BUF);
	}
	cr_assert_eq(fq.t.live, BUFS);
	e = fakering_arrive(&fq, 2, &r);
	cr_assert_eq(atomic_load(&fq.u.fatal), 0);
	expect_commit(e, &c);
	cr_assert_eq(((const struct fuse_attr_out *)(fq.q.pool + 2 * BUF))->attr.ino, 6);
	cr_assert_eq(fq.q.pool_busy, 0, "no pool accounting without a pool");
}

Test(bufpool, refused_bufpool_falls_back_to_carved_buffers)
{
	pool_res[0] = -EINVAL;
	cr_assert_eq(start(0), 0);
	cr_assert_eq(nadds, 2);
	expect_carved();
}

Test(bufpool, refused_queue_gets_no_bufpool_and_falls_back)
{
	queue_res[0] = -EOPNOTSUPP;
	cr_assert_eq(start(0), 0);
	cr_assert_eq(nadds, 1, "ADD_BUFPOOL sent for a queue the kernel refused");
	expect_carved();
}

Test(bufpool, add_before_init_is_retried)
{
	queue_res[0] = -EAGAIN; /* INIT reply not processed yet */
	cr_assert_eq(start(0), 0);
	cr_assert_eq(nadds, 3);
	cr_assert_eq(adds[1].sqe.cmd_op, FUSE_IO_URING_CMD_ADD_QUEUE);
	cr_assert_eq(adds[2].sqe.cmd_op, FUSE_IO_URING_CMD_ADD_BUFPOOL);
	cr_assert_eq(fq.q.pool_added, 1);
}

/* The plan, before any queue exists: per-entry buffers when the kernel
 * offers no pool (auto), a clear error when one is required (on), and
 * the pool's size. Nothing to tear down. */
TestSuite(bufpool_plan);

static int plan(int bufpool, int offered, uint64_t size, uint32_t *bufs,
		char *why, char **err)
{
	struct fring_uring u = { .depth = 16, .payload_sz = BUF };
	struct fring_cfg_transport cfg = { .bufpool = bufpool,
					   .bufpool_size = size };
	struct fring_uring_params p = { .cfg = &cfg,
					.bufpool_offered = offered };
	int ret;

	why[0] = 0;
	*err = NULL;
	ret = uring_pool_plan(&u, &p, why, 128, err);
	*bufs = u.pool_bufs;
	return ret;
}

Test(bufpool_plan, not_offered)
{
	char why[128], *err;
	uint32_t n;

	cr_assert_eq(plan(FRING_AUTO, 0, 0, &n, why, &err), 0);
	cr_assert_eq(n, 0);
	cr_assert_str_eq(why, "kernel has no buffer pools");
	cr_assert_eq(plan(FRING_ON, 0, 0, &n, why, &err), -EOPNOTSUPP);
	cr_assert_not_null(strstr(err, "transport.bufpool on"));
	free(err);
	cr_assert_eq(plan(FRING_OFF, 1, 0, &n, why, &err), 0);
	cr_assert_eq(n, 0);
	cr_assert_str_eq(why, "transport.bufpool off");
}

Test(bufpool_plan, size)
{
	char why[128], *err;
	uint32_t n;

	cr_assert_eq(plan(FRING_AUTO, 1, 0, &n, why, &err), 0);
	cr_assert_eq(n, 8, "default: min(depth, 8)");
	cr_assert_eq(plan(FRING_AUTO, 1, 5 * BUF + 1, &n, why, &err), 0);
	cr_assert_eq(n, 5, "whole buffers of the size");
	cr_assert_eq(plan(FRING_AUTO, 1, 64 * BUF, &n, why, &err), 0);
	cr_assert_eq(n, 16, "at most one per entry");
	cr_assert_eq(plan(FRING_AUTO, 1, BUF - 1, &n, why, &err), -EINVAL);
	free(err);
}
