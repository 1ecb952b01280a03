// SPDX-License-Identifier: MIT
/*
 * A queue entry as a request (the fring_req_ops of io_uring): a reply,
 * from the owner thread or any other, is written into the entry's header
 * and payload buffers (the entry is the server's while the request is in
 * userspace); the release hook then hands the entry's commit to its owner
 * (uring_hand_over, uring_serve.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "../base/log.h"
#include "../proto/ops.h"
#include "uring_internal.h"

static struct uring_ent *ent_of(struct fring_request *r)
{
	return (struct uring_ent *)((char *)r - offsetof(struct uring_ent, req));
}

static int ent_cas(struct uring_ent *e, int from, int to)
{
	return atomic_compare_exchange_strong_explicit(
		&e->state, &from, to, memory_order_acq_rel, memory_order_acquire);
}

void uring_write_out_header(struct uring_ent *e, int32_t error,
			    uint64_t unique, uint32_t body)
{
	struct fuse_out_header oh = {
		.len = (uint32_t)sizeof(oh) + body,
		.error = error,
		.unique = unique,
	};

	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	e->hdr->ring_ent_in_out.payload_sz = body;
}

/* A reply to a zero-copied request that carries bytes in memory: the
 * client's pages are reachable only through the slot, so the bytes cannot
 * be delivered (plugin.h, FRING_FOPEN_IO_URING_ZERO_COPY). An empty READ
 * (EOF) and a WRITE count of 0 carry no data and pass. */
static int zc_refuse(struct uring_ent *e, struct fring_request *r,
		     const struct iovec *iov, int iovcnt, size_t total)
{
	const struct fuse_write_out *wo;

	if (iovcnt == 2 && iov[1].iov_base == uring_zc_body)
		return 0;
	if (r->opcode == FUSE_READ && !total)
		return 0;
	if (r->opcode == FUSE_WRITE) {
		wo = iovcnt > 1 && iov[1].iov_len >= sizeof(*wo) ? iov[1].iov_base
								  : NULL;
		if (e->zc == 2 || (wo && !wo->size))
			return 0; /* 2: the WRITE_FIXED's own count */
	}
	ctr_inc(&e->q->ctr.zc_refused);
	fring_log_ratelimited(
		"uring-zc-reply", FRING_LOG_WARN,
		"%s: plugin answered a zero-copied %s (unique %llu) "
		"with %s; only req_%s_fd can reach the client's "
		"pages: sent EIO",
		r->rq->name, fring_opcode_name(r->opcode),
		(unsigned long long)r->unique,
		r->opcode == FUSE_READ ? "bytes (reply_data)"
				       : "a count (reply_write)",
		r->opcode == FUSE_READ ? "read" : "write");
	return 1;
}

/* fring_req send hook (any thread): reply into the entry's buffers. The
 * commit itself waits for the release hook, because the request layer
 * still touches the fring_req after send returns. */
static int ent_send(struct fring_request *r, const struct iovec *iov,
		    int iovcnt)
{
	struct uring_ent *e = ent_of(r);
	const struct fuse_out_header *oh = iov[0].iov_base;
	int st = atomic_load_explicit(&e->state, memory_order_acquire);
	int32_t error = oh->error;
	size_t total = 0, pos = 0;

	if (st != ENT_USER && st != ENT_IO) {
		fring_err("uring: reply to unique %llu on an entry in state %d "
			  "refused", (unsigned long long)oh->unique, st);
		return -EALREADY;
	}
	for (int i = 1; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (e->zc && !error && zc_refuse(e, r, iov, iovcnt, total)) {
		uring_write_out_header(e, -EIO, oh->unique, 0);
		atomic_store_explicit(&e->state, ENT_REPLIED, memory_order_release);
		return -EINVAL;
	}
	if (e->zc && iovcnt == 2 && iov[1].iov_base == uring_zc_body) {
		/* The READ_FIXED put the data into the client's pages. */
		uring_write_out_header(e, error, oh->unique, (uint32_t)total);
		atomic_store_explicit(&e->state, ENT_REPLIED, memory_order_release);
		return 0;
	}
	if (!error && total > e->payload_cap) {
		fring_log_ratelimited("uring-big-reply", FRING_LOG_ERROR,
				      "uring: %zu-byte reply to %s exceeds the "
				      "%u-byte payload buffer; sent EIO", total,
				      fring_opcode_name(r->opcode),
				      e->payload_cap);
		error = -EIO;
	}
	if (error)
		total = 0;
	for (int i = 1; i < iovcnt && total; i++) {
		const char *src = iov[i].iov_base;

		/* Bodies built in place (READ_FIXED data, READDIR in the
		 * scratch area) may overlap the payload buffer. */
		if (src == e->payload + pos)
			; /* already in place (READ data read straight into it) */
		else if (src >= e->payload && src < e->payload + e->payload_cap)
			memmove(e->payload + pos, src, iov[i].iov_len);
		else
			memcpy(e->payload + pos, src, iov[i].iov_len);
		pos += iov[i].iov_len;
	}
	uring_write_out_header(e, error, oh->unique, (uint32_t)total);
	atomic_store_explicit(&e->state, ENT_REPLIED, memory_order_release);
	return 0;
}

/* fring_req release hook (any thread): the request layer is done with the
 * fring_req, so the entry may go back to the kernel. */
static void ent_release(struct fring_request *r)
{
	struct uring_ent *e = ent_of(r);

	if (atomic_load_explicit(&e->state, memory_order_acquire) == ENT_IO) {
		/* Abandoned at teardown with I/O still landing in the payload:
		 * the I/O completion commits it. */
		atomic_store(&e->abandoned, 1);
		return;
	}
	/* The owner's zero-copy path: nobody else holds the entry. */
	if (e->owner_claimed && !r->claim_rmw && uring_self == e->th &&
	    atomic_load_explicit(&e->state, memory_order_relaxed) == ENT_REPLIED) {
		atomic_store_explicit(&e->state, ENT_COMMITTING,
				      memory_order_relaxed);
		uring_hand_over(e, ACT_COMMIT);
		return;
	}
	/* Finished without a reply: dropped (NOTIFY_REPLY...) or abandoned.
	 * Every ring request must be committed, or the entry is lost. */
	if (atomic_load_explicit(&e->state, memory_order_acquire) == ENT_USER &&
	    ent_cas(e, ENT_USER, ENT_REPLIED))
		uring_write_out_header(e, fring_op_no_reply(r->opcode) ? 0 : -EIO,
				 r->unique, 0);
	if (!ent_cas(e, ENT_REPLIED, ENT_COMMITTING)) {
		fring_err("uring: qid %u: second commit of one request "
			  "refused (state %d)", e->qid,
			  atomic_load(&e->state));
		fring_req_xref_put(r);
		return;
	}
	fring_req_xref_put(r); /* an off-thread replier hands back */
	uring_hand_over(e, ACT_COMMIT);
}

/* req_read_fd / req_write_fd become READ_FIXED / WRITE_FIXED. */
static const struct fring_req_ops ent_req_ops = {
	.send = ent_send,
	.release = ent_release,
	.read_fd = fring_uring_read_fd,
	.write_fd = fring_uring_write_fd,
};

void uring_ent_init_req(struct uring_ent *e)
{
	fring_req_init(&e->req, e->th->u->sv.rq, &ent_req_ops, e, -1, e->qid);
	fring_req_set_owner(&e->req, e->th);
	/* READDIR builds its listing straight in the payload buffer. */
	e->req.scratch = e->payload;
	e->req.scratch_cap = e->payload_cap;
}

int uring_is_ent(const struct fring_request *r)
{
	return r && r->ops == &ent_req_ops;
}

struct uring_ent *uring_ent_of(struct fring_request *r)
{
	return ent_of(r);
}
