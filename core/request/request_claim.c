// SPDX-License-Identifier: MIT
/*
 * The exactly-once claim of a request's reply: fring_req_claim, the
 * owner's fast path fring_req_claim_owner, the references off-thread
 * claimants hold, and the interrupt deadline's claim (fring_req_expire).
 * See request.h.
 */
#define _GNU_SOURCE
#include "request.h"
#include "request_internal.h"

#include <errno.h>

#include "../base/log.h"

__thread const void *fring_req_thread;
/* The request this thread's last claim took a reference on. */
static __thread struct fring_request *held;

int fring_req_xref_put(struct fring_request *r)
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
	struct fring_request *r = fring_req_ptr(h);
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
	struct fring_request *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s = atomic_load_explicit(&r->state, memory_order_relaxed);

	if (!r->owner || r->owner != fring_req_thread || r->fd >= 0 ||
	    FRING_REQ_ST(s) != FRING_REQ_PENDING)
		return fring_req_claim(h);
	if (fring_req_stale(r, hgen, s))
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
	struct fring_request *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s = atomic_load(&r->state);

	/* Every CAS below compares the whole word, generation included: a
	 * request recycled meanwhile fails it and is re-checked here. */
	for (;;) {
		if (fring_req_stale(r, hgen, s))
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
		if (fring_req_stale(r, hgen, s))
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

/* Move r PENDING -> EXPIRING (its bucket locked, so it cannot be
 * finished meanwhile). 1 if claimed; 0 if not; 2 if it is unanswered
 * but cannot be answered for the plugin (fd < 0, a ring entry's). */
static int expire_found(struct fring_request *r, void *arg)
{
	unsigned s = atomic_load(&r->state);

	*(struct fring_request **)arg = r;
	if (r->fd < 0)
		return FRING_REQ_ST(s) == FRING_REQ_PENDING ? 2 : 0;
	return FRING_REQ_ST(s) == FRING_REQ_PENDING &&
	       atomic_compare_exchange_strong(&r->state, &s,
					      WITH_ST(s, FRING_REQ_EXPIRING));
}

/* Find `unique` and claim it for expiry. Returns r; or NULL with *ring
 * set if it is unanswered but cannot be answered for the plugin. */
static struct fring_request *expire_claim(struct fring_inflight *t,
					  uint64_t unique, int *ring)
{
	struct fring_request *r = NULL;
	int ret = fring_inflight_find_do(t, unique, expire_found, &r);

	*ring = ret == 2;
	return ret == 1 ? r : NULL;
}

void fring_req_expire(struct fring_reqs *rq, uint64_t unique,
		      unsigned waited_ms)
{
	int ring;
	unsigned s;
	struct fring_request *r = expire_claim(&rq->inflight, unique, &ring);

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
