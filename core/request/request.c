/* Request lifetime, handles and the exactly-once claim; see request.h. */
#define _GNU_SOURCE
#include "request.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"

/* The generation (24 bits) of a state word, and the next one for a
 * recycled request: never 0 in its low 16 bits, the handle's share. */
#define GEN_OF(s) ((unsigned)(s) >> 8)
#define WITH_ST(s, st) (((unsigned)(s) & ~0xffu) | (st))

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

void fring_req_quiesce(struct fring_req *r)
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

void fring_req_init(struct fring_req *r, struct fring_reqs *rq,
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
	memset(&r->zero_copy, 0, offsetof(struct fring_req, state) -
				 offsetof(struct fring_req, zero_copy));
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

void fring_req_set_owner(struct fring_req *r, const void *owner)
{
	SET_IF(r->owner, owner);
}

fring_req *fring_req_handle(struct fring_req *r)
{
	uintptr_t a = (uintptr_t)r;

	/* An address above 48 bits (not seen on Linux without an explicit
	 * high mmap hint) goes untagged: unchecked, never misread. */
	if (a & ~(uintptr_t)FRING_REQ_ADDR_MASK)
		return r;
	return (fring_req *)(a | (uintptr_t)(GEN_OF(atomic_load_explicit(
			     &r->state, memory_order_relaxed)) & 0xffffu)
			     << FRING_REQ_HANDLE_SHIFT);
}

static int stale(struct fring_req *r, uint32_t hgen, unsigned s)
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

struct fring_req *fring_req_get(fring_req *h)
{
	struct fring_req *r = fring_req_ptr(h);

	if (!r)
		return NULL;
	return stale(r, fring_req_hgen(h),
		     atomic_load_explicit(&r->state, memory_order_acquire))
		       ? NULL : r;
}

int fring_req_pending(fring_req *h)
{
	struct fring_req *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s;

	if (!r)
		return 0;
	s = atomic_load_explicit(&r->state, memory_order_acquire);
	return (!hgen || (GEN_OF(s) & 0xffffu) == hgen) &&
	       FRING_REQ_ST(s) == FRING_REQ_PENDING;
}

struct fring_req *fring_req_enter(fring_req *h, int *ref)
{
	struct fring_req *r = fring_req_ptr(h);
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
	if (stale(r, hgen, s) || FRING_REQ_ST(s) == FRING_REQ_RECYCLING) {
		fring_req_leave(r, *ref);
		*ref = 0;
		return NULL;
	}
	return r;
}

void fring_req_leave(struct fring_req *r, int ref)
{
	if (ref)
		atomic_fetch_sub_explicit(&r->xrefs, 1, memory_order_release);
}

void fring_req_track(struct fring_req *r)
{
	struct fring_inflight *t = &r->rq->inflight;

	r->tracked = 1;
	FRING_STAT_INC(r->rq, r->queue, outstanding);
	fring_inflight_add(t, r);
	fring_inflight_take_pending(t, r);
}

void fring_req_finish(struct fring_req *r)
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

__thread const void *fring_req_thread;
/* The request this thread's last claim took a reference on. */
static __thread struct fring_req *held;

int fring_req_xref_put(struct fring_req *r)
{
	if (!r || held != r)
		return 0;
	held = NULL;
	atomic_fetch_sub(&r->xrefs, 1);
	return 1;
}

static int claim(fring_req *h, int off_owner);

int fring_req_claim(fring_req *h)
{
	struct fring_req *r = fring_req_ptr(h);
	int ret;

	if (!r->owner || r->owner == fring_req_thread)
		return claim(h, 0);
	/* Off the owner thread: hold a reference before looking, so that an
	 * owner about to claim or commit r sees us (request.h, "Owners"). */
	fring_req_xref_put(held); /* a claim that never handed back */
	atomic_fetch_add(&r->xrefs, 1);
	held = r;
	ret = claim(h, 1);
	if (ret)
		fring_req_xref_put(r);
	return ret;
}

/*
 * The owner's fast path (core/transport/README.md, "The owner's claim
 * without an atomic read-modify-write"), and why it is exactly-once.
 *
 * States: a request leaves PENDING once per generation (fring_req_init
 * starts a new one; the handle carries its low 16 bits). Claimants: the
 * owner thread (here, or claim() when it comes through fring_req_claim)
 * and any other thread (fring_req_claim), which first adds a reference
 * to xrefs with a sequentially consistent read-modify-write and only then
 * looks. The interrupt expiry, the one other writer of state, claims only
 * requests with fd >= 0, which an owned ring request never has.
 *
 * The first version loaded xrefs and state and then stored REPLIED: an
 * off-thread claim whose reference and compare-and-swap both fell between
 * that load and that store saw PENDING and won too (tests/unit/
 * test_request_claim.c found 1292 such double wins in 200,000 rounds; a
 * fence and a look at xrefs alone still let 139-919 through, from callers
 * that had already handed their reference back).
 * The system call before the commit cannot close that window: by then both
 * sides have acted on their win, and the other thread may even have handed
 * its reference back already.
 *
 * Now the owner announces its claim in oclaim (a plain store of the
 * generation), passes a full fence and then reads xrefs; an off-thread
 * claim increments xrefs (a full barrier itself) and then reads oclaim.
 * That is Dekker's pattern: the two cannot both miss each other. But
 * xrefs is a count, back at 0 once a caller has left, so the owner also
 * reads state again after xrefs (which it loads with acquire):
 *  - Its xrefs load does not see the other thread's increment: then that
 *    thread's look at oclaim, after its increment, finds this generation
 *    (the fence), and it gives up without touching state (-EALREADY).
 *  - It sees the increment, and xrefs != 0: a caller is inside (of this
 *    generation or a stale one). The owner then decides by compare-and-
 *    swap like anyone else: a caller that saw oclaim has given up, one
 *    that did not races the owner's CAS on the whole state word, and
 *    exactly one CAS wins.
 *  - It sees the increment and 0 (the caller has left): it read the
 *    value of a decrement after that caller's claim, so (release sequence,
 *    acquire) that claim happened before, and if it won, the second state
 *    load no longer shows PENDING of this generation: the owner falls to
 *    the CAS, which fails. State unchanged: nobody else won, and every
 *    later caller's increment comes after the xrefs load (first case).
 * Only then does the owner move state to REPLIED, with a plain store
 * (later claims, its own included, see it).
 * A handle of an older generation fails the stale check on either side,
 * and oclaim of an older generation never matches the current one.
 * Lifetime: a loser reads r until it drops its reference; the transport
 * waits for xrefs == 0 (acquire) before it commits, so r is not recycled
 * under it (owner_commit_check in uring_serve.c).
 *
 * Cost: no atomic read-modify-write on shared memory, but one full fence
 * (mfence, or a locked no-op on the thread's own stack) and three loads
 * of lines the owner just wrote, instead of the CAS.
 */
int fring_req_claim_owner(fring_req *h)
{
	struct fring_req *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s = atomic_load_explicit(&r->state, memory_order_relaxed);

	if (!r->owner || r->owner != fring_req_thread || r->fd >= 0 ||
	    FRING_REQ_ST(s) != FRING_REQ_PENDING)
		return fring_req_claim(h);
	if (stale(r, hgen, s))
		return -EALREADY;
	atomic_store_explicit(&r->oclaim, GEN_OF(s), memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->xrefs, memory_order_acquire) ||
	    atomic_load_explicit(&r->state, memory_order_relaxed) != s)
		return claim(h, 0); /* contended: compare-and-swap decides */
	atomic_store_explicit(&r->state, WITH_ST(s, FRING_REQ_REPLIED),
			      memory_order_relaxed);
	return 0;
}

/* off_owner: an off-thread claim of an owned request, holding its
 * reference, which also yields to the owner's fast path. */
static int claim(fring_req *h, int off_owner)
{
	struct fring_req *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s = atomic_load(&r->state);

	/* Every CAS below compares the whole word, generation included: a
	 * request recycled meanwhile fails it and is re-checked here. */
	for (;;) {
		if (stale(r, hgen, s))
			return -EALREADY;
		if (FRING_REQ_ST(s) != FRING_REQ_PENDING)
			break;
		if (off_owner && atomic_load(&r->oclaim) == GEN_OF(s))
			break; /* the owner's fast path has it */
		if (atomic_compare_exchange_strong(&r->state, &s,
						   WITH_ST(s, FRING_REQ_REPLIED))) {
			r->claim_rmw = 1; /* only the winner writes it */
			return 0;
		}
	}
	while (FRING_REQ_ST(s) == FRING_REQ_EXPIRING ||
	       FRING_REQ_ST(s) == FRING_REQ_EXPIRED) {
		if (stale(r, hgen, s))
			return -EALREADY;
		if (FRING_REQ_ST(s) == FRING_REQ_EXPIRING &&
		    atomic_compare_exchange_strong(&r->state, &s,
						   WITH_ST(s, FRING_REQ_LATE)))
			return -EALREADY; /* the expiring thread finishes r */
		if (FRING_REQ_ST(s) == FRING_REQ_EXPIRED &&
		    atomic_compare_exchange_strong(&r->state, &s,
						   WITH_ST(s, FRING_REQ_REPLIED))) {
			fring_dbg(
				"%s: late reply to %s (unique %llu) after its "
				"interrupt deadline: dropped",
				r->rq->name, fring_opcode_name(r->opcode),
				(unsigned long long)r->unique);
			fring_req_finish(r);
			return -EALREADY;
		}
	}
	fring_log_ratelimited("double-reply", FRING_LOG_WARN,
			      "%s: plugin replied twice to %s (unique %llu); "
			      "second reply ignored",
			      r->rq->name, fring_opcode_name(r->opcode),
			      (unsigned long long)r->unique);
	return -EALREADY;
}

/* Find `unique` and move it PENDING -> EXPIRING, under the bucket lock so
 * r cannot be finished meanwhile. Returns r; or NULL with *ring set if it
 * is unanswered but cannot be answered for the plugin (fd < 0). */
static struct fring_req *expire_claim(struct fring_inflight *t,
				      uint64_t unique, int *ring)
{
	struct fring_req *r;
	unsigned s;

	*ring = 0;
	r = fring_inflight_lock_find(t, unique);
	if (r) {
		s = atomic_load(&r->state);
		if (r->fd < 0) {
			*ring = FRING_REQ_ST(s) == FRING_REQ_PENDING;
			r = NULL;
		} else if (FRING_REQ_ST(s) != FRING_REQ_PENDING ||
			   !atomic_compare_exchange_strong(
				   &r->state, &s, WITH_ST(s, FRING_REQ_EXPIRING))) {
			r = NULL;
		}
	}
	fring_inflight_unlock(t, unique);
	return r;
}

void fring_req_expire(struct fring_reqs *rq, uint64_t unique,
		      unsigned waited_ms)
{
	int ring;
	unsigned s;
	struct fring_req *r = expire_claim(&rq->inflight, unique, &ring);

	if (!r) {
		if (ring)
			fring_log_ratelimited(
				"expire-uring", FRING_LOG_WARN,
				"%s: plugin did not answer the "
				"interrupted request %llu within %u ms; "
				"io_uring requests can only be "
				"answered by the plugin: the caller "
				"waits",
				rq->name, (unsigned long long)unique,
				waited_ms);
		return;
	}
	fring_log_ratelimited(
		"expire", FRING_LOG_WARN,
		"%s: plugin did not answer the interrupted %s "
		"(unique %llu) within %u ms; answered EINTR for it",
		rq->name, fring_opcode_name(r->opcode),
		(unsigned long long)unique, waited_ms);
	fring_req_send_raw(r, -EINTR, NULL, 0);
	/* Only this thread or a LATE claim move it out of EXPIRING. */
	s = WITH_ST(atomic_load(&r->state), FRING_REQ_EXPIRING);
	if (!atomic_compare_exchange_strong(&r->state, &s,
					    WITH_ST(s, FRING_REQ_EXPIRED)))
		fring_req_finish(r); /* LATE: the plugin replied meanwhile */
}

int fring_req_send_raw(struct fring_req *r, int32_t error,
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
	if (error)
		FRING_STAT_INC(rq, r->queue, errors);
	if (ret < 0 && ret != -ENOENT)
		FRING_STAT_INC(rq, r->queue, send_failures);
	return ret;
}

int fring_req_send(struct fring_req *r, int32_t error, const struct iovec *body,
		   int nbody)
{
	int ret = fring_req_send_raw(r, error, body, nbody);

	fring_req_finish(r);
	return ret;
}

static void set_replied(struct fring_req *r)
{
	atomic_store(&r->state, WITH_ST(atomic_load(&r->state),
					FRING_REQ_REPLIED));
}

void fring_req_drop(struct fring_req *r)
{
	set_replied(r);
	fring_req_finish(r);
}

void fring_req_abandon(struct fring_req *r)
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

void fring_reqs_destroy(struct fring_reqs *rq)
{
	fring_expiry_destroy(&rq->expiry);
	fring_inflight_destroy(&rq->inflight);
}
