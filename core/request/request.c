// SPDX-License-Identifier: MIT
/* Request lifetime, handles and sending; the claim is request_claim.c.
 * See request.h. */
#define _GNU_SOURCE
#include "request.h"
#include "request_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"

/* The next generation for a recycled request: never 0 in its low 16
 * bits, the handle's share. */
static unsigned next_gen(unsigned gen)
{
	gen = (gen + 1) & 0xffffffu;
	return gen & 0xffffu ? gen : gen + 1;
}

/* A field of the request's identity: written only when it changes (new
 * memory), so readers of recycled memory race with no write. */
#define SET_IF(field, v)                                                      \
	do {                                                                  \
		if ((field) != (v))                                           \
			(field) = (v);                                        \
	} while (0)

void fring_req_quiesce(struct fring_request *r)
{
	unsigned s = atomic_load_explicit(&r->state, memory_order_relaxed);

	/* A late caller on another thread (a reply that lost, a stale
	 * handle) takes its reference before it looks at state
	 * (fring_req_enter): either it sees RECYCLING and reads nothing
	 * more, or the load below sees its reference and we wait (Dekker's
	 * pattern, both sides sequentially consistent). */
	if (FRING_REQ_ST(s) != FRING_REQ_RECYCLING)
		atomic_store(&r->state, WITH_ST(s, FRING_REQ_RECYCLING));
	for (long i = 0; atomic_load(&r->xrefs); i++) {
		if (i == 1000000) {
			fring_err(
				"%s: a plugin thread holds a request past its "
				"reply; recycling it anyway",
				r->rq ? r->rq->name : "?");
			break;
		}
		sched_yield();
	}
}

void fring_req_init(struct fring_request *r, struct fring_reqs *rq,
		    const struct fring_req_ops *ops, void *tdata, int fd,
		    uint32_t queue)
{
	/* Transports hand in zeroed or recycled memory; the generation lives
	 * on across the memset. */
	unsigned gen = next_gen(GEN_OF(atomic_load_explicit(&r->state,
							    memory_order_relaxed)));

	fring_req_quiesce(r);
	/* Not the identity, state, oclaim, xrefs: a late caller may be
	 * reading them. */
	memset(&r->zero_copy, 0, offsetof(struct fring_request, state) -
				 offsetof(struct fring_request, zero_copy));
	SET_IF(r->rq, rq);
	SET_IF(r->ops, ops);
	SET_IF(r->tdata, tdata);
	SET_IF(r->fd, fd);
	SET_IF(r->queue, queue);
	atomic_init(&r->interrupted, 0);
	/* Last, with release order: a stale handle that sees the new
	 * generation sees a fully initialised request. */
	atomic_store_explicit(&r->state, gen << 8 | FRING_REQ_PENDING,
			      memory_order_release);
}

void fring_req_set_owner(struct fring_request *r, const void *owner)
{
	SET_IF(r->owner, owner);
}

fring_req *fring_req_handle(struct fring_request *r)
{
	uintptr_t a = (uintptr_t)r;

	/* An address above 48 bits (not seen on Linux without an explicit
	 * high mmap hint) goes untagged: unchecked, never misread. */
	if (a & ~(uintptr_t)FRING_REQ_ADDR_MASK)
		return fring_req_untagged(r);
	return (fring_req *)(a | (uintptr_t)(GEN_OF(atomic_load_explicit(
			     &r->state, memory_order_relaxed)) & 0xffffu)
			     << FRING_REQ_HANDLE_SHIFT);
}

int fring_req_stale(struct fring_request *r, uint32_t hgen, unsigned s)
{
	if (!hgen || (GEN_OF(s) & 0xffffu) == hgen)
		return 0;
	/* Only the identity here: the slot's new request may be being
	 * decoded on its transport thread right now. */
	FRING_STAT_INC(r->rq, r->queue, misuse);
	fring_log_ratelimited("stale-handle", FRING_LOG_WARN,
			      "%s: plugin used the handle of a request it had "
			      "answered (the slot holds a newer request); "
			      "refused",
			      r->rq->name);
	return 1;
}

struct fring_request *fring_req_get(fring_req *h)
{
	struct fring_request *r = fring_req_ptr(h);

	if (!r)
		return NULL;
	return fring_req_stale(r, fring_req_hgen(h),
		     atomic_load_explicit(&r->state, memory_order_acquire))
		       ? NULL : r;
}

int fring_req_pending(fring_req *h)
{
	struct fring_request *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s;

	if (!r)
		return 0;
	s = atomic_load_explicit(&r->state, memory_order_acquire);
	return (!hgen || (GEN_OF(s) & 0xffffu) == hgen) &&
	       FRING_REQ_ST(s) == FRING_REQ_PENDING;
}

struct fring_request *fring_req_enter(fring_req *h, int *ref)
{
	struct fring_request *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s;

	*ref = 0;
	if (!r)
		return NULL;
	/* Untagged: the runtime's own call, on the transport's thread. */
	if (hgen && (!r->owner || r->owner != fring_req_thread)) {
		atomic_fetch_add(&r->xrefs, 1); /* before the look: see init */
		*ref = 1;
	}
	s = atomic_load(&r->state);
	if (fring_req_stale(r, hgen, s) || FRING_REQ_ST(s) == FRING_REQ_RECYCLING) {
		fring_req_leave(r, *ref);
		*ref = 0;
		return NULL;
	}
	return r;
}

void fring_req_leave(struct fring_request *r, int ref)
{
	if (ref)
		atomic_fetch_sub_explicit(&r->xrefs, 1, memory_order_release);
}

void fring_req_track(struct fring_request *r)
{
	struct fring_inflight *t = &r->rq->inflight;

	r->tracked = 1;
	FRING_STAT_INC(r->rq, r->queue, outstanding);
	fring_inflight_add(t, r);
	fring_inflight_take_pending(t, r);
}

void fring_req_finish(struct fring_request *r)
{
	struct fring_reqs *rq = r->rq;
	uint32_t queue = r->queue; /* r may be reused once released */
	int tracked = r->tracked;

	if (tracked)
		fring_inflight_del(&rq->inflight, r);
	if (r->dir_malloced)
		free(r->dirbuf);
	r->dirbuf = NULL;
	r->ops->release(r);
	/* Counted last so that "outstanding == 0" means every release ran. */
	if (tracked)
		atomic_fetch_sub(&fring_stats_of(rq->stats, queue)->outstanding,
				 1);
}

int fring_req_send_raw(struct fring_request *r, int32_t error,
		       const struct iovec *body, int nbody)
{
	struct fring_reqs *rq = r->rq;
	struct iovec iov[4];
	struct fuse_out_header oh;
	size_t len = sizeof(oh);
	int n = 1, ret;

	if (error != 0)
		nbody = 0;
	for (int i = 0; i < nbody && n < 4; i++) {
		if (!body[i].iov_len)
			continue;
		iov[n++] = body[i];
		len += body[i].iov_len;
	}
	oh.len = (uint32_t)len;
	oh.error = error;
	oh.unique = r->unique;
	iov[0].iov_base = &oh;
	iov[0].iov_len = sizeof(oh);

	ret = r->ops->send(r, iov, n);
	FRING_STAT_INC(rq, r->queue, replies);
	if (error) {
		FRING_STAT_INC(rq, r->queue, errors);
		FRING_STAT_INC(rq, r->queue,
			       op_errors[fring_stat_op(r->opcode)]);
	} else if (r->opcode == FUSE_READ) {
		FRING_STAT_ADD(rq, r->queue, bytes_read, len - sizeof(oh));
	} else if (r->opcode == FUSE_WRITE && n > 1 &&
		   iov[1].iov_len >= sizeof(struct fuse_write_out)) {
		FRING_STAT_ADD(
			rq, r->queue, bytes_written,
			((const struct fuse_write_out *)iov[1].iov_base)->size);
	}
	if (rq->lat && r->t0_ns)
		fring_lat_record(fring_lat_of(rq, r->queue),
				 fring_stat_op(r->opcode),
				 fring_lat_now() - r->t0_ns);
	if (ret < 0 && ret != -ENOENT)
		FRING_STAT_INC(rq, r->queue, send_failures);
	return ret;
}

int fring_req_send(struct fring_request *r, int32_t error,
		   const struct iovec *body, int nbody)
{
	int ret = fring_req_send_raw(r, error, body, nbody);

	fring_req_finish(r);
	return ret;
}

static void set_replied(struct fring_request *r)
{
	atomic_store(&r->state, WITH_ST(atomic_load(&r->state),
					FRING_REQ_REPLIED));
}

void fring_req_drop(struct fring_request *r)
{
	set_replied(r);
	fring_req_finish(r);
}

void fring_req_abandon(struct fring_request *r)
{
	struct fring_reqs *rq = r->rq;
	uint32_t queue = r->queue;

	/* Already out of the table (fring_inflight_pop). */
	set_replied(r);
	if (r->dir_malloced)
		free(r->dirbuf);
	r->dirbuf = NULL;
	r->ops->release(r);
	atomic_fetch_sub(&fring_stats_of(rq->stats, queue)->outstanding, 1);
}

static void expire_due(void *rq, uint64_t unique, unsigned waited_ms)
{
	fring_req_expire(rq, unique, waited_ms);
}

void fring_reqs_init(struct fring_reqs *rq, const char *name)
{
	rq->name = name;
	fring_inflight_init(&rq->inflight);
	fring_expiry_init(&rq->expiry, name, expire_due, rq);
}

int fring_reqs_enable_latency(struct fring_reqs *rq)
{
	fring_clock_init();
	if (!rq->lat)
		rq->lat = aligned_alloc(64,
					FRING_STAT_SHARDS * sizeof(*rq->lat));
	if (!rq->lat)
		return -ENOMEM;
	memset(rq->lat, 0, FRING_STAT_SHARDS * sizeof(*rq->lat));
	return 0;
}

void fring_reqs_destroy(struct fring_reqs *rq)
{
	free(rq->lat);
	rq->lat = NULL;
	fring_expiry_destroy(&rq->expiry);
	fring_inflight_destroy(&rq->inflight);
}
