// SPDX-License-Identifier: MIT
/*
 * Serving on a queue thread: request CQEs go to dispatch; replies, from
 * this thread or any other, become COMMIT_AND_FETCH SQEs on the owner's
 * ring, on the qid the request came on (the kernel looks the commit_id
 * up in that queue: fs/fuse/dev_uring.c fuse_uring_commit_fetch). Other
 * threads never touch the ring: they write the reply into the entry's
 * buffers (uring_reply.c; the entry is theirs while in userspace) and push
 * the entry on the owner's MPSC list, waking it through an eventfd only
 * when the list was empty. No lock on this path.
 *
 * Commit validation: the kernel's commit_id is checked (never 0) when the
 * request arrives and only that value is echoed; the state machine lets an
 * entry commit once per request. A commit the kernel rejects with anything
 * but a teardown code would strand the caller (fuse_uring_commit_fetch
 * answers -ENOENT for an unknown commit_id and leaves the request
 * unanswered: its caller sleeps uninterruptibly until an abort), so it
 * aborts the connection.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../proto/ops.h"
#include "uring_internal.h"

__thread struct uring_thread *uring_self;

/* Before the owner commits (and so lets the kernel recycle the entry): a
 * caller on another thread whose claim lost (a plugin replying twice at
 * once) may still be inside fring_req_claim, reading the request; it
 * holds a reference until it leaves, which it does at once. Wait for it
 * rather than recycle the entry under it (the acquire load orders its
 * reads before the next request's fring_req_init). Returns 1 if it
 * waited. A winner on another thread has handed its reference back
 * before it handed the commit over. */
static int callers_gone(struct uring_ent *e)
{
	int waited = 0;

	for (int i = 0; atomic_load_explicit(&e->req.xrefs, memory_order_acquire);
	     i++) {
		waited = 1;
		if (i > 100000) {
			fring_err("uring: qid %u: a caller on another thread "
				  "holds request %llu past its commit",
				  e->qid, (unsigned long long)e->req.unique);
			break;
		}
		sched_yield();
	}
	return waited;
}

/* The commit of a request the owner claimed itself (uring_io.c). */
static void owner_commit_check(struct uring_ent *e)
{
	struct uring_counters *c = &e->q->ctr;
	int rmw = e->req.claim_rmw;

	if (callers_gone(e))
		rmw = 1;
	ctr_inc(rmw ? &c->zc_owner_rmw : &c->zc_owner_plain);
	e->owner_claimed = 0;
}

/* Owner thread: turn a handed-over entry into its SQE. */
static void run_action(struct uring_thread *t, struct uring_ent *e)
{
	int ret;

	if (e->action == ACT_COMMIT) {
		if (e->owner_claimed)
			owner_commit_check(e);
		else
			callers_gone(e);
		uring_pool_release(e);
		URING_TSAN_RELEASE(t->u);
		e->q->held--;
		atomic_store_explicit(&e->state, ENT_KERNEL, memory_order_relaxed);
		ret = uring_prep_commit(t, e);
		if (!ret)
			ctr_inc(&e->q->ctr.commits);
	} else {
		ret = uring_prep_io(t, e);
		if (!ret)
			t->io_inflight++;
	}
	if (ret) {
		/* The SQ has a slot per entry; running out means a bug, and a
		 * lost commit would strand the caller. */
		fring_err("uring: qid %u: no SQE for a %s", e->qid,
			  e->action == ACT_COMMIT ? "commit" : "backing I/O");
		uring_abort_connection(t->u, "SQ exhausted");
	}
}

/* A hand-over to a thread whose ring is closed: the kernel side is gone,
 * so a commit has nothing to do, and I/O that never started answers its
 * request ENOTCONN (which nobody receives) to finish it. */
static void finish_dead(struct uring_ent *e)
{
	if (e->action == ACT_COMMIT) {
		uring_pool_release(e);
		atomic_store(&e->state, ENT_GONE);
		return;
	}
	fring_log_ratelimited("uring-dead-io", FRING_LOG_WARN,
			      "uring: qid %u: backing I/O for %s (unique %llu) "
			      "handed over after the queue stopped: answered "
			      "ENOTCONN", e->qid, fring_opcode_name(e->req.opcode),
			      (unsigned long long)e->req.unique);
	fring_req_send(&e->req, -ENOTCONN, NULL, 0);
}

void uring_close_handover(struct uring_thread *t)
{
	struct uring_ent *e, *next;

	atomic_store(&t->gone, 1);
	/* A caller that saw gone == 0 pushes within its handing_over window. */
	for (int i = 0; atomic_load(&t->u->handing_over) && i < 1000; i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	for (e = uring_mpsc_take(&t->mpsc); e; e = next) {
		next = e->mpsc_next;
		finish_dead(e);
	}
}

void uring_hand_over(struct uring_ent *e, int action)
{
	struct uring_thread *t = e->th;
	struct fring_uring *u = t->u;
	static const uint64_t one = 1;

	e->action = action;
	if (uring_self == t) {
		run_action(t, e);
		return;
	}
	/* Once pushed, the owner may finish the request and the session may
	 * go on to free the transport before we reach the write: free waits
	 * for handing_over to drop back. */
	atomic_fetch_add(&u->handing_over, 1);
	if (atomic_load(&t->gone)) {
		finish_dead(e); /* nobody drains t's list any more */
		atomic_fetch_sub(&u->handing_over, 1);
		return;
	}
	if (uring_mpsc_push(&t->mpsc, e) &&
	    write(t->wake_fd, &one, sizeof(one)) != sizeof(one))
		fring_err("uring: waking queue thread %u: %s", t->idx,
			  strerror(errno));
	atomic_fetch_sub(&u->handing_over, 1);
}

void uring_drain_mpsc(struct uring_thread *t)
{
	struct uring_ent *e = uring_mpsc_take(&t->mpsc), *next;

	for (; e; e = next) {
		next = e->mpsc_next;
		ctr_inc(&e->q->ctr.remote);
		run_action(t, e);
	}
}

static void ent_gone(struct uring_thread *t, struct uring_ent *e)
{
	atomic_store_explicit(&e->state, ENT_GONE, memory_order_relaxed);
	t->live--;
}

void uring_request_arrived(struct uring_thread *t, struct uring_ent *e)
{
	const struct fuse_uring_ent_in_out *eio = &e->hdr->ring_ent_in_out;
	struct fuse_in_header in;
	uint64_t commit_id = eio->commit_id;
	uint32_t psz = eio->payload_sz;

	/* Copy before anything can write the reply over it. */
	URING_TSAN_ACQUIRE(t->u);
	memcpy(&in, e->hdr->in_out, sizeof(in));
	if (!commit_id) {
		fring_err("uring: qid %u: request %s (unique %llu) with "
			  "commit_id 0", e->qid, fring_opcode_name(in.opcode),
			  (unsigned long long)in.unique);
		ent_gone(t, e);
		uring_abort_connection(t->u, "commit_id 0 from the kernel");
		return;
	}
	/* No late caller of the last request may read the entry from here. */
	fring_req_quiesce(&e->req);
	uring_zc_arrived(e, eio->flags, in.opcode);
	if (e->q->pool && uring_pool_locate(e, in.opcode, psz)) {
		fring_err("uring: qid %u: %s (unique %llu) got pool offset %u, "
			  "outside the %u-buffer pool", e->qid,
			  fring_opcode_name(in.opcode),
			  (unsigned long long)in.unique, eio->offset,
			  e->q->pool_bufs);
		ent_gone(t, e);
		uring_abort_connection(t->u, "a pool offset outside the pool");
		return;
	}
	if (psz > e->payload_cap)
		psz = e->payload_cap; /* the decoder then reports it malformed */
	e->commit_id = commit_id;
	atomic_store_explicit(&e->abandoned, 0, memory_order_relaxed);
	ctr_inc(&e->q->ctr.requests);
	/* Depth: the requests of this qid the thread has at once, counting
	 * those that came in the same CQE batch (an inline reply has already
	 * left held by the next arrival, but its commit is not yet sent). */
	++e->q->batch;
	++e->q->held;
	ctr_add(&e->q->ctr.depth_sum,
		e->q->batch > e->q->held ? e->q->batch : e->q->held);
	if (t->u->place.on)
		uring_place_note(t->u, e->q, in.pid);
	uring_ent_init_req(e);
	e->owner_claimed = 0;
	e->req.zero_copy = e->zc;
	atomic_store_explicit(&e->state, ENT_USER, memory_order_release);
	/* A pool request without a buffer has an empty payload; NULL would
	 * mean a classic /dev/fuse request to the decoder. */
	t->u->sv.arrived(&e->req, &in, e->hdr->op_in, FUSE_URING_OP_IN_OUT_SZ,
			 e->payload ? e->payload : "", psz);
}

static void cmd_done(struct uring_thread *t, struct uring_ent *e, int res)
{
	if (atomic_load_explicit(&e->state, memory_order_relaxed) != ENT_KERNEL) {
		fring_err("uring: qid %u: completion for an entry not in the "
			  "kernel (state %d)", e->qid, atomic_load(&e->state));
		return;
	}
	switch (res) {
	case 0:
		if (atomic_load_explicit(&t->u->hold, memory_order_relaxed)) {
			/* A takeover: the request stays here for the next
			 * server (uring_handover.c). */
			atomic_store(&e->state, ENT_HELD);
			t->nheld++;
			atomic_fetch_add(&t->u->nr_held, 1);
			return;
		}
		uring_request_arrived(t, e);
		return;
	case -EAGAIN: /* REGISTER before the INIT reply was processed */
	case -EINTR:
		if ((e->last_cmd == FUSE_IO_URING_CMD_REGISTER
			     ? uring_prep_register(t, e)
			     : uring_prep_commit(t, e)) != 0)
			uring_abort_connection(t->u, "SQ exhausted");
		return;
	case -ENOTCONN:     /* unmount or abort: the entry is gone */
	case -ECONNABORTED:
	case -ECANCELED:    /* ring exit cancelled the command */
		ent_gone(t, e);
		return;
	}
	ent_gone(t, e);
	if (e->last_cmd == FUSE_IO_URING_CMD_REGISTER) {
		/* The kernel has fallen back to /dev/fuse (a failed REGISTER
		 * clears the connection's io_uring mode: fs/fuse/dev_uring.c
		 * fuse_uring_cmd, core/transport/README.md). The
		 * refusal that turned io_uring off and the EOPNOTSUPP of the
		 * qids that register after it are limited apart, so the
		 * cause is logged whichever thread completes first. */
		fring_log_ratelimited(res == -EOPNOTSUPP ? "uring-register-off"
							  : "uring-register",
				      FRING_LOG_WARN,
				      "uring: REGISTER of qid %u failed: %s; "
				      "the kernel serves /dev/fuse instead",
				      e->qid, strerror(-res));
		return;
	}
	fring_err("uring: COMMIT_AND_FETCH (qid %u, commit_id %llu) failed: "
		  "%s", e->qid, (unsigned long long)e->commit_id,
		  strerror(-res));
	uring_abort_connection(t->u, "a commit was rejected");
}

static void io_done(struct uring_thread *t, struct uring_ent *e, int res)
{
	struct fring_request *r = &e->req;
	int bad;

	t->io_inflight--;
	ctr_inc(e->action == ACT_READ ? &e->q->ctr.fixed_reads
				      : &e->q->ctr.fixed_writes);
	if (e->zc) {
		ctr_inc(e->action == ACT_READ ? &e->q->ctr.zc_reads
					      : &e->q->ctr.zc_writes);
		e->zc = 2; /* the reply below is the I/O's own */
	}
	if (res < 0)
		ctr_inc(&e->q->ctr.io_errors);
	if (atomic_load(&e->abandoned)) {
		uring_write_out_header(e, -EIO, r->unique, 0);
		atomic_store(&e->state, ENT_COMMITTING);
		uring_hand_over(e, ACT_COMMIT);
		return;
	}
	if (res < 0) {
		fring_req_send(r, fring_proto_sanitize_error(res, &bad), NULL, 0);
	} else if (e->action == ACT_READ) {
		struct iovec iov = { e->zc ? uring_zc_body : e->payload,
				     (size_t)res };

		fring_req_send(r, 0, &iov, 1);
	} else {
		struct fuse_write_out wo = { .size = (uint32_t)res };
		struct iovec iov = { &wo, sizeof(wo) };

		fring_req_send(r, 0, &iov, 1);
	}
}

void uring_handle_cqe(struct uring_thread *t, const struct io_uring_cqe *cqe)
{
	uint64_t ud = cqe->user_data;
	struct uring_ent *e;

	if (ud == UD_WAKE) {
		ctr_inc(&t->queues[0].ctr.wakeups);
		if (!(cqe->flags & IORING_CQE_F_MORE) && uring_prep_wake_poll(t))
			fring_err("uring: thread %u: cannot re-arm its wake-up "
				  "poll", t->idx);
		uring_drain_mpsc(t);
		uring_release_held(t);
		return;
	}
	if (ud == UD_STOP) {
		t->stopping = 1;
		return;
	}
	e = (struct uring_ent *)(uintptr_t)(ud & ~(uint64_t)UD_TAG_MASK);
	if ((ud & UD_TAG_MASK) == UD_TAG_IO)
		io_done(t, e, cqe->res);
	else
		cmd_done(t, e, cqe->res);
}
