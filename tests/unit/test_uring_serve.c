// SPDX-License-Identifier: MIT
/*
 * The io_uring serve state machine (core/transport/uring_serve.c,
 * uring_cmd.c, uring_io.c) on a queue with per-entry buffers (Linux 6.18:
 * no pool offered), against the fake ring of fakering.h: the REGISTER each
 * entry parks, a request's arrival in an entry and its dispatch, the reply
 * written into the entry and its COMMIT_AND_FETCH with the kernel's
 * commit_id, the hand-over of a reply from another thread, the kernel's
 * answers that end an entry or the connection, and backing I/O as
 * READ_FIXED. One test per feature.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "runtime/host.h"
#include "fakering.h"

#define DEPTH 4
#define CID 0x8877665544332211ull /* a commit_id using all 64 bits */

static struct fake_queue fq;

static void setup(void)
{
	struct fake_queue_cfg cfg = { .depth = DEPTH };

	memset(&fake_plugin, 0, sizeof(fake_plugin));
	cr_assert_eq(fake_queue_init(&fq, &cfg, &fake_plugin_ops), 0);
}

static void teardown(void)
{
	fake_queue_free(&fq);
}

TestSuite(serve, .init = setup, .fini = teardown);

static struct fake_req getattr_req(uint64_t unique, uint64_t nodeid)
{
	static struct fuse_getattr_in ga;

	return (struct fake_req){ .opcode = FUSE_GETATTR, .unique = unique,
				  .nodeid = nodeid, .arg = &ga,
				  .arglen = sizeof(ga), .commit_id = CID };
}

/* Exactly one SQE prepared: the entry's COMMIT_AND_FETCH of commit_id. */
static void expect_commit(struct uring_ent *e, uint64_t commit_id)
{
	struct fake_sqe s[4];

	cr_assert_eq(fakering_take(&fq.t.ring, s, 4), 1);
	cr_assert_eq(s[0].sqe.opcode, IORING_OP_URING_CMD);
	cr_assert_eq(s[0].sqe.cmd_op, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
	cr_assert_eq(s[0].sqe.user_data, (uint64_t)(uintptr_t)e | UD_TAG_CMD);
	cr_assert_eq(fake_cmd(&s[0])->qid, e->qid);
	cr_assert_eq(fake_cmd(&s[0])->commit_id, commit_id);
	cr_assert_eq(atomic_load(&e->state), ENT_KERNEL);
	cr_assert_eq(atomic_load(&e->req.xrefs), 0, "a reference outlived the reply");
}

/* The REGISTERs prepared at set-up (register_parks_every_entry). */
static void skip_registers(void)
{
	struct fake_sqe s[DEPTH];

	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH), DEPTH);
}

static void expect_no_sqe(void)
{
	struct fake_sqe s[4];

	cr_assert_eq(fakering_take(&fq.t.ring, s, 4), 0);
}

Test(serve, register_parks_every_entry)
{
	struct fake_sqe s[DEPTH + 1];

	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH + 1), DEPTH);
	for (int i = 0; i < DEPTH; i++) {
		struct uring_ent *e = &fq.q.ents[i];
		const struct iovec *iov = (const void *)(uintptr_t)s[i].sqe.addr;

		cr_assert_eq(s[i].sqe.opcode, IORING_OP_URING_CMD);
		cr_assert_eq(s[i].sqe.cmd_op, FUSE_IO_URING_CMD_REGISTER);
		cr_assert_eq(s[i].sqe.flags, IOSQE_FIXED_FILE);
		cr_assert_eq(s[i].sqe.fd, 0);
		cr_assert_eq(s[i].sqe.user_data, (uint64_t)(uintptr_t)e | UD_TAG_CMD);
		cr_assert_eq(s[i].sqe.len, 2);
		cr_assert_eq(fake_cmd(&s[i])->commit_id, 0);
		cr_assert_eq(s[i].sqe.uring_cmd_flags, 0);
		/* Header, then the entry's own payload buffer. */
		cr_assert_eq(iov[0].iov_base, (void *)e->hdr);
		cr_assert_eq(iov[0].iov_len, FRING_URING_HEADER_SZ);
		cr_assert_eq(iov[1].iov_base, (void *)e->payload);
		cr_assert_eq(iov[1].iov_len, FAKE_PAYLOAD_SZ);
		cr_assert_eq(atomic_load(&e->state), ENT_KERNEL);
	}
}

Test(serve, arrival_dispatches_and_commits_with_commit_id)
{
	struct fake_req r = getattr_req(101, 77);
	struct uring_ent *e;
	struct fuse_out_header oh;
	const struct fuse_attr_out *ao;

	skip_registers();
	e = fakering_arrive(&fq, 2, &r);
	cr_assert_eq(fake_plugin.calls, 1);
	cr_assert_eq(fake_plugin.nodeid, 77);
	cr_assert_eq(fake_plugin.ret, 0);
	expect_commit(e, CID);
	oh = fake_out_header(e);
	cr_assert_eq(oh.unique, 101);
	cr_assert_eq(oh.error, 0);
	cr_assert_eq(oh.len, sizeof(oh) + sizeof(*ao));
	cr_assert_eq(e->hdr->ring_ent_in_out.payload_sz, sizeof(*ao));
	ao = (const void *)e->payload; /* the body sits in the entry's buffer */
	cr_assert_eq(ao->attr.ino, 77);
	cr_assert_eq(atomic_load(&fq.q.ctr.requests), 1);
	cr_assert_eq(atomic_load(&fq.q.ctr.commits), 1);
	cr_assert_eq(fq.q.held, 0);
}

Test(serve, write_payload_from_the_entry)
{
	struct fuse_write_in wi = { .size = 11 };
	struct fake_req r = { .opcode = FUSE_WRITE, .unique = 5, .nodeid = 9,
			      .arg = &wi, .arglen = sizeof(wi), .commit_id = 3,
			      .payload_sz = 11 };
	struct uring_ent *e = &fq.q.ents[0];
	const struct fuse_write_out *wo;

	skip_registers();
	memcpy(e->payload, "hello, ring", 11); /* the kernel's copy */
	fakering_arrive(&fq, 0, &r);
	cr_assert_eq(fake_plugin.len, 11);
	cr_assert_str_eq(fake_plugin.data, "hello, ring");
	expect_commit(e, 3);
	wo = (const void *)e->payload;
	cr_assert_eq(wo->size, 11);
	cr_assert_eq(fake_out_header(e).len,
		     sizeof(struct fuse_out_header) + sizeof(*wo));
}

Test(serve, commit_id_zero_ends_the_connection)
{
	struct fake_req r = getattr_req(7, 1);

	skip_registers();
	r.commit_id = 0;
	fakering_arrive(&fq, 1, &r);
	cr_assert_eq(fake_plugin.calls, 0, "dispatched with commit_id 0");
	cr_assert_eq(atomic_load(&fq.q.ents[1].state), ENT_GONE);
	cr_assert_eq(atomic_load(&fq.u.fatal), 1);
	cr_assert_eq(fq.t.live, DEPTH - 1);
	expect_no_sqe();
}

static void *reply_elsewhere(void *arg)
{
	struct fring_attr a = { .ino = 55, .mode = 0100644, .nlink = 1 };

	return (void *)(intptr_t)fring_host_table()->reply_attr(arg, &a, 0);
}

Test(serve, reply_from_another_thread_is_handed_over)
{
	struct fake_req r = getattr_req(21, 55);
	struct uring_ent *e;
	pthread_t th;
	void *ret;
	uint64_t n = 0;

	skip_registers();
	fake_plugin.answer = FA_HOLD;
	e = fakering_arrive(&fq, 3, &r);
	cr_assert_not_null(fake_plugin.held);
	cr_assert_eq(atomic_load(&e->state), ENT_USER);
	cr_assert_eq(fq.q.held, 1);
	expect_no_sqe();
	cr_assert_eq(pthread_create(&th, NULL, reply_elsewhere, fake_plugin.held), 0);
	pthread_join(th, &ret);
	cr_assert_eq((intptr_t)ret, 0);
	/* Only the owner touches the ring: the reply waits in its MPSC list
	 * and the thread was woken. */
	expect_no_sqe();
	cr_assert_eq(atomic_load(&e->state), ENT_COMMITTING);
	cr_assert_eq(read(fq.t.wake_fd, &n, sizeof(n)), sizeof(n));
	cr_assert_eq(n, 1);
	uring_drain_mpsc(&fq.t);
	expect_commit(e, CID);
	cr_assert_eq(fake_out_header(e).unique, 21);
	cr_assert_eq(((const struct fuse_attr_out *)e->payload)->attr.ino, 55);
	cr_assert_eq(atomic_load(&fq.q.ctr.remote), 1);
}

Test(serve, second_reply_refused_one_commit)
{
	struct fake_req r = getattr_req(8, 4);
	struct uring_ent *e;

	skip_registers();
	fake_plugin.answer = FA_TWICE;
	e = fakering_arrive(&fq, 0, &r);
	cr_assert_eq(fake_plugin.ret, 0);
	cr_assert_eq(fake_plugin.second, -EALREADY);
	expect_commit(e, CID);
	cr_assert_eq(atomic_load(&fq.q.ctr.commits), 1);
}

Test(serve, forget_is_committed_without_a_reply)
{
	struct fuse_forget_in fi = { .nlookup = 3 };
	struct fake_req r = { .opcode = FUSE_FORGET, .unique = 12, .nodeid = 6,
			      .arg = &fi, .arglen = sizeof(fi), .commit_id = CID };
	struct uring_ent *e;
	struct fuse_out_header oh;

	skip_registers();
	e = fakering_arrive(&fq, 1, &r);
	cr_assert_eq(fake_plugin.forgets, 1);
	/* The ring entry must still go back to the kernel: no error. */
	expect_commit(e, CID);
	oh = fake_out_header(e);
	cr_assert_eq(oh.error, 0);
	cr_assert_eq(oh.len, sizeof(oh));
}

Test(serve, kernel_answers_that_end_an_entry)
{
	struct fake_sqe s[DEPTH];

	fakering_take(&fq.t.ring, s, DEPTH);
	/* Unmount, abort, ring exit: the entry is gone, nothing else. */
	fakering_complete(&fq, &fq.q.ents[0], UD_TAG_CMD, -ENOTCONN);
	fakering_complete(&fq, &fq.q.ents[1], UD_TAG_CMD, -ECANCELED);
	cr_assert_eq(atomic_load(&fq.q.ents[0].state), ENT_GONE);
	cr_assert_eq(atomic_load(&fq.q.ents[1].state), ENT_GONE);
	cr_assert_eq(fq.t.live, DEPTH - 2);
	cr_assert_eq(atomic_load(&fq.u.fatal), 0);
	expect_no_sqe();
}

Test(serve, register_before_init_is_retried)
{
	struct fake_sqe s[DEPTH];

	fakering_take(&fq.t.ring, s, DEPTH);
	fakering_complete(&fq, &fq.q.ents[2], UD_TAG_CMD, -EAGAIN);
	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH), 1);
	cr_assert_eq(s[0].sqe.cmd_op, FUSE_IO_URING_CMD_REGISTER);
	cr_assert_eq(s[0].sqe.user_data,
		     (uint64_t)(uintptr_t)&fq.q.ents[2] | UD_TAG_CMD);
	cr_assert_eq(atomic_load(&fq.q.ents[2].state), ENT_KERNEL);
}

Test(serve, refused_register_falls_back_refused_commit_aborts)
{
	struct fake_req r = getattr_req(30, 2);
	struct uring_ent *e;

	skip_registers();
	/* A refused REGISTER: the kernel serves /dev/fuse instead. */
	fakering_complete(&fq, &fq.q.ents[0], UD_TAG_CMD, -EOPNOTSUPP);
	cr_assert_eq(atomic_load(&fq.q.ents[0].state), ENT_GONE);
	cr_assert_eq(atomic_load(&fq.u.fatal), 0);
	/* A refused commit strands its caller: the connection is aborted. */
	e = fakering_arrive(&fq, 1, &r);
	expect_commit(e, CID);
	fakering_complete(&fq, e, UD_TAG_CMD, -EINVAL);
	cr_assert_eq(atomic_load(&e->state), ENT_GONE);
	cr_assert_eq(atomic_load(&fq.u.fatal), 1);
}

Test(serve, read_fd_becomes_read_fixed_then_commit)
{
	struct fuse_read_in ri = { .size = 4096 };
	struct fake_req r = { .opcode = FUSE_READ, .unique = 40, .nodeid = 3,
			      .arg = &ri, .arglen = sizeof(ri), .commit_id = CID };
	struct fake_sqe s[DEPTH];
	struct uring_ent *e;

	setenv("FRING_URING_NO_INLINE", "1", 1); /* no RWF_NOWAIT fast path */
	fake_plugin.answer = FA_FD;
	fake_plugin.fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fake_plugin.fd, 0);
	fakering_take(&fq.t.ring, s, DEPTH);
	e = fakering_arrive(&fq, 2, &r);
	cr_assert_eq(fake_plugin.ret, 0);
	cr_assert_eq(atomic_load(&e->state), ENT_IO);
	/* Straight into the entry's registered payload buffer. */
	cr_assert_eq(fakering_take(&fq.t.ring, s, DEPTH), 1);
	cr_assert_eq(s[0].sqe.opcode, IORING_OP_READ_FIXED);
	cr_assert_eq(s[0].sqe.fd, fake_plugin.fd);
	cr_assert_eq(s[0].sqe.addr, (uint64_t)(uintptr_t)e->payload);
	cr_assert_eq(s[0].sqe.len, 4096);
	cr_assert_eq(s[0].sqe.buf_index, e->buf_index);
	cr_assert_eq(s[0].sqe.user_data, (uint64_t)(uintptr_t)e | UD_TAG_IO);
	cr_assert_eq(fq.t.io_inflight, 1);
	/* A short read (EOF): the commit carries what was read. */
	fakering_complete(&fq, e, UD_TAG_IO, 1000);
	expect_commit(e, CID);
	cr_assert_eq(e->hdr->ring_ent_in_out.payload_sz, 1000);
	cr_assert_eq(fake_out_header(e).error, 0);
	cr_assert_eq(atomic_load(&fq.q.ctr.fixed_reads), 1);
	cr_assert_eq(fq.t.io_inflight, 0);
	close(fake_plugin.fd);
}
