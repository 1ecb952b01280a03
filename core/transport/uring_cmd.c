// SPDX-License-Identifier: MIT
/*
 * SQE preparation, owner thread only. liburing 2.3 has no uring_cmd helper,
 * so the 128-byte SQE is filled by hand (the kernel reads it in
 * fs/fuse/dev_uring.c fuse_uring_cmd): opcode 46, the session
 * fd as fixed file 0, cmd_op, and struct fuse_uring_cmd_req in the 80-byte
 * command area at offset 48. Every SQE is zeroed whole first: liburing does
 * not clear reused slots, and the 7.3 layout reads bytes past qid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "uring_internal.h"

#define SQE_SIZE 128

_Static_assert(offsetof(struct io_uring_sqe, cmd) == 48,
	       "uring_cmd area must start at SQE offset 48");
_Static_assert(sizeof(struct fuse_uring_cmd_req) <= SQE_SIZE - 48,
	       "fuse_uring_cmd_req must fit the 80-byte command area");

/* A zeroed 128-byte SQE. The SQ holds one slot per entry plus the polls,
 * so it is only ever full with prepared SQEs; flushing them frees slots. */
struct io_uring_sqe *uring_get_sqe(struct uring_thread *t)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);

	if (!sqe) {
		io_uring_submit(&t->ring);
		sqe = io_uring_get_sqe(&t->ring);
		if (!sqe)
			return NULL;
	}
	memset(sqe, 0, SQE_SIZE);
	return sqe;
}

static uint64_t ud_of(struct uring_ent *e, unsigned tag)
{
	return (uint64_t)(uintptr_t)e | tag;
}

struct io_uring_sqe *uring_prep_fuse_cmd(struct uring_thread *t, uint32_t cmd_op,
					 uint16_t qid, uint64_t user_data)
{
	struct io_uring_sqe *sqe = uring_get_sqe(t);

	if (!sqe)
		return NULL;
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->fd = 0; /* fixed file 0: /dev/fuse */
	sqe->cmd_op = cmd_op;
	sqe->user_data = user_data;
	((struct fuse_uring_cmd_req *)sqe->cmd)->qid = qid;
	return sqe;
}

static int prep_cmd(struct uring_thread *t, struct uring_ent *e,
		    uint32_t cmd_op, uint64_t commit_id)
{
	struct io_uring_sqe *sqe = uring_prep_fuse_cmd(t, cmd_op, e->qid,
						       ud_of(e, UD_TAG_CMD));

	if (!sqe)
		return -EBUSY;
	if (cmd_op == FUSE_IO_URING_CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)e->reg_iov;
		sqe->len = 2;
		uring_zc_register_sqe(e, sqe);
	}
	((struct fuse_uring_cmd_req *)sqe->cmd)->commit_id = commit_id;
	e->last_cmd = cmd_op;
	uring_pool_sqe(e, sqe); /* a registered pool's flag and index */
	return 0;
}

int uring_prep_register(struct uring_thread *t, struct uring_ent *e)
{
	return prep_cmd(t, e, FUSE_IO_URING_CMD_REGISTER, 0);
}

int uring_prep_commit(struct uring_thread *t, struct uring_ent *e)
{
	/* Nonzero marks a request held in the entry (uring_handover.c); the
	 * kernel reads only payload_sz of this struct at a commit. */
	e->hdr->ring_ent_in_out.commit_id = 0;
	/* The id the kernel handed out for this request: full 64 bits, and
	 * never 0 (checked when the request arrived). */
	return prep_cmd(t, e, FUSE_IO_URING_CMD_COMMIT_AND_FETCH, e->commit_id);
}

int uring_prep_io(struct uring_thread *t, struct uring_ent *e)
{
	struct io_uring_sqe *sqe = uring_get_sqe(t);

	if (!sqe)
		return -EBUSY;
	if (e->zc)
		uring_zc_prep_io(e, sqe);
	else if (e->action == ACT_READ)
		io_uring_prep_read_fixed(sqe, e->io_fd, e->payload, e->io_len,
					 e->io_off, e->buf_index);
	else
		io_uring_prep_write_fixed(sqe, e->io_fd, e->io_src, e->io_len,
					  e->io_off, e->buf_index);
	sqe->user_data = ud_of(e, UD_TAG_IO);
	return 0;
}

int uring_prep_wake_poll(struct uring_thread *t)
{
	struct io_uring_sqe *sqe = uring_get_sqe(t);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_multishot(sqe, t->wake_fd, POLLIN);
	sqe->user_data = UD_WAKE;
	return 0;
}

int uring_prep_stop_poll(struct uring_thread *t)
{
	struct io_uring_sqe *sqe = uring_get_sqe(t);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, t->u->stop_fd, POLLIN);
	sqe->user_data = UD_STOP;
	return 0;
}
