/* Request lifetime, handles and the exactly-once claim; see request.h. */
#define _GNU_SOURCE
#include "request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "log.h"

/* The generation (24 bits) of a state word, and the next one for a
 * recycled request: never 0 in its low 16 bits, the handle's share. */
#define GEN_OF(s) ((unsigned)(s) >> 8)
#define WITH_ST(s, st) (((unsigned)(s) & ~0xffu) | (st))

static unsigned next_gen(unsigned gen)
{
	gen = (gen + 1) & 0xffffffu;
	return gen & 0xffffu ? gen : gen + 1;
}

void fring_req_init(struct fring_req *r, struct fring_dispatch *dx,
		    fring_send_fn send, fring_release_fn release, void *tdata,
		    int fd, uint32_t queue)
{
	/* Transports hand in zeroed or recycled memory; the generation lives
	 * on across the memset. */
	unsigned gen = next_gen(GEN_OF(atomic_load_explicit(&r->state,
							    memory_order_relaxed)));

	memset(r, 0, offsetof(struct fring_req, xrefs));
	r->dx = dx;
	r->send = send;
	r->release = release;
	r->tdata = tdata;
	r->fd = fd;
	r->queue = queue;
	atomic_init(&r->interrupted, 0);
	/* Last, with release order: a stale handle that sees the new
	 * generation sees a fully initialised request. */
	atomic_store_explicit(&r->state, gen << 8 | FRING_REQ_PENDING,
			      memory_order_release);
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
	FRING_STAT_INC(r->dx, r->queue, misuse);
	fring_log_ratelimited("stale-handle", FRING_LOG_WARN,
			      "%s: plugin used the handle of a request it had "
			      "answered (the slot now holds %s, unique %llu); "
			      "refused", r->dx->mount.name,
			      fring_opcode_name(r->opcode),
			      (unsigned long long)r->unique);
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

void fring_req_track(struct fring_req *r)
{
	struct fring_inflight *t = &r->dx->inflight;

	r->tracked = 1;
	FRING_STAT_INC(r->dx, r->queue, outstanding);
	fring_inflight_add(t, r);
	fring_inflight_take_pending(t, r);
}

void fring_req_finish(struct fring_req *r)
{
	struct fring_dispatch *dx = r->dx;
	uint32_t queue = r->queue; /* r may be reused once released */
	int tracked = r->tracked;

	if (tracked)
		fring_inflight_del(&dx->inflight, r);
	if (r->dir_malloced)
		free(r->dirbuf);
	r->dirbuf = NULL;
	r->release(r);
	/* Counted last so that "outstanding == 0" means every release ran. */
	if (tracked)
		atomic_fetch_sub(&fring_stats_of(dx, queue)->outstanding, 1);
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

static int claim(fring_req *h);

int fring_req_claim(fring_req *h)
{
	struct fring_req *r = fring_req_ptr(h);
	int ret;

	if (!r->owner || r->owner == fring_req_thread)
		return claim(h);
	/* Off the owner thread: hold a reference before looking, so that an
	 * owner about to commit r sees us (request.h, "Owners"). */
	fring_req_xref_put(held); /* a claim that never handed back */
	atomic_fetch_add(&r->xrefs, 1);
	held = r;
	ret = claim(h);
	if (ret)
		fring_req_xref_put(r);
	return ret;
}

int fring_req_claim_owner(fring_req *h)
{
	struct fring_req *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s = atomic_load_explicit(&r->state, memory_order_relaxed);

	if (!r->owner || r->owner != fring_req_thread ||
	    atomic_load_explicit(&r->xrefs, memory_order_relaxed) ||
	    FRING_REQ_ST(s) != FRING_REQ_PENDING)
		return fring_req_claim(h);
	if (stale(r, hgen, s))
		return -EALREADY;
	/* Only the owner moves r out of PENDING without a reference: a plain
	 * store. An off-thread claim that raced it has its reference seen
	 * by the owner's check before the commit, past a system call. */
	atomic_store_explicit(&r->state, WITH_ST(s, FRING_REQ_REPLIED),
			      memory_order_relaxed);
	return 0;
}

static int claim(fring_req *h)
{
	struct fring_req *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s = atomic_load(&r->state);

	r->claim_rmw = 1;
	/* Every CAS below compares the whole word, generation included: a
	 * request recycled meanwhile fails it and is re-checked here. */
	for (;;) {
		if (stale(r, hgen, s))
			return -EALREADY;
		if (FRING_REQ_ST(s) != FRING_REQ_PENDING)
			break;
		if (atomic_compare_exchange_strong(&r->state, &s,
						   WITH_ST(s, FRING_REQ_REPLIED)))
			return 0;
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
			fring_dbg("%s: late reply to %s (unique %llu) after its "
				  "interrupt deadline: dropped",
				  r->dx->mount.name, fring_opcode_name(r->opcode),
				  (unsigned long long)r->unique);
			fring_req_finish(r);
			return -EALREADY;
		}
	}
	fring_log_ratelimited("double-reply", FRING_LOG_WARN,
			      "%s: plugin replied twice to %s (unique %llu); "
			      "second reply ignored",
			      r->dx->mount.name, fring_opcode_name(r->opcode),
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

void fring_req_expire(struct fring_dispatch *dx, uint64_t unique,
		      unsigned waited_ms)
{
	int ring;
	unsigned s;
	struct fring_req *r = expire_claim(&dx->inflight, unique, &ring);

	if (!r) {
		if (ring)
			fring_log_ratelimited("expire-uring", FRING_LOG_WARN,
					      "%s: plugin did not answer the "
					      "interrupted request %llu within %u ms; "
					      "io_uring requests can only be "
					      "answered by the plugin: the caller "
					      "waits", dx->mount.name,
					      (unsigned long long)unique, waited_ms);
		return;
	}
	fring_log_ratelimited("expire", FRING_LOG_WARN,
			      "%s: plugin did not answer the interrupted %s "
			      "(unique %llu) within %u ms; answered EINTR for it",
			      dx->mount.name, fring_opcode_name(r->opcode),
			      (unsigned long long)unique, waited_ms);
	fring_req_send_raw(r, -EINTR, NULL, 0);
	/* Only this thread or a LATE claim move it out of EXPIRING. */
	s = WITH_ST(atomic_load(&r->state), FRING_REQ_EXPIRING);
	if (!atomic_compare_exchange_strong(&r->state, &s,
					    WITH_ST(s, FRING_REQ_EXPIRED)))
		fring_req_finish(r); /* LATE: the plugin replied meanwhile */
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
	struct fring_dispatch *dx = r->dx;
	uint32_t queue = r->queue;

	/* Already out of the table (fring_inflight_pop). */
	set_replied(r);
	if (r->dir_malloced)
		free(r->dirbuf);
	r->dirbuf = NULL;
	r->release(r);
	atomic_fetch_sub(&fring_stats_of(dx, queue)->outstanding, 1);
}
