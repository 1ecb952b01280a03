// SPDX-License-Identifier: MIT
/*
 * The exactly-once claim of a request (core/request/request_claim.c): the owner
 * thread's fast path (fring_req_claim_owner: no atomic read-modify-write),
 * the off-thread claim (fring_req_claim: a reference in xrefs around a
 * compare-and-swap) and the hand-back (fring_req_xref_put), driven
 * directly on one request object of the fake transport (faketransport.h),
 * with no dispatch. The stress test races the owner's claim against an
 * off-thread one on a request that is recycled (fring_req_init: a new
 * generation) every round, as a ring entry is, and checks that exactly
 * one of them wins each round.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "request/request.h"
#include "runtime/dispatch.h"

#include "faketransport.h"

static struct fring_dispatch dx;
static struct fake_transport ft;
static struct ft_req one, two; /* the request under test, and a second */
static int owner_token; /* the owner thread's identity (fring_req_thread) */
static fring_req *recycle_handle; /* for enter_off */

/* A fresh generation of one.r, owned by owner_token's thread, as a ring
 * entry's request is when it arrives. */
static fring_req *recycle(void)
{
	ft_req_init(&ft, &one);
	fring_req_set_owner(&one.r, &owner_token);
	return fring_req_handle(&one.r);
}

static void setup(void)
{
	memset(&dx, 0, sizeof(dx));
	dx.mount.name = "/mnt/claim";
	dx.rq.name = dx.mount.name;
	memset(&one, 0, sizeof(one));
	memset(&two, 0, sizeof(two));
	ft_init(&ft, &dx.rq, 4096);
	fring_req_thread = &owner_token; /* the test's main thread owns req */
}

static void teardown(void)
{
	ft_fini(&ft);
}

TestSuite(claim, .init = setup, .fini = teardown);

static unsigned st(void)
{
	return FRING_REQ_ST(atomic_load(&one.r.state));
}

/* Run fn(arg) on a thread that is no transport's (fring_req_thread NULL)
 * and return its int result. */
struct off_call {
	int (*fn)(fring_req *h);
	fring_req *h;
	int put; /* hand back after a successful claim */
	int ret, xrefs_after, put_ret;
};

static void *off_thread(void *arg)
{
	struct off_call *c = arg;

	fring_req_thread = NULL;
	c->ret = c->fn(c->h);
	c->xrefs_after = atomic_load(&one.r.xrefs);
	if (c->put)
		c->put_ret = fring_req_xref_put(&one.r);
	return NULL;
}

static struct off_call call_off(int (*fn)(fring_req *h), fring_req *h, int put)
{
	struct off_call c = { .fn = fn, .h = h, .put = put };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, off_thread, &c), 0);
	pthread_join(t, NULL);
	return c;
}

Test(claim, owner_fast_path_no_rmw)
{
	fring_req *h = recycle();

	cr_assert_eq(fring_req_claim_owner(h), 0);
	cr_expect_eq(st(), FRING_REQ_REPLIED);
	cr_expect_eq(one.r.claim_rmw, 0, "the owner's uncontended claim took no RMW");
	cr_expect_eq(atomic_load(&one.r.xrefs), 0);
	/* Every later claim loses: the owner's own, the fast path again, and
	 * another thread's, which keeps no reference after losing. */
	cr_expect_eq(fring_req_claim(h), -EALREADY);
	cr_expect_eq(fring_req_claim_owner(h), -EALREADY);
	struct off_call c = call_off(fring_req_claim, h, 0);
	cr_expect_eq(c.ret, -EALREADY);
	cr_expect_eq(c.xrefs_after, 0, "a lost off-thread claim hands back");
	cr_expect_eq(ft.sends, 0); /* claims send nothing */
	cr_expect_eq(ft.releases, 0);
}

Test(claim, off_thread_claim_holds_a_reference_until_hand_back)
{
	fring_req *h = recycle();
	struct off_call c = call_off(fring_req_claim, h, 1);

	cr_expect_eq(c.ret, 0);
	cr_expect_eq(c.xrefs_after, 1, "the winner holds its reference");
	cr_expect_eq(c.put_ret, 1, "xref_put drops it");
	cr_expect_eq(atomic_load(&one.r.xrefs), 0);
	cr_expect_eq(one.r.claim_rmw, 1);
	cr_expect_eq(st(), FRING_REQ_REPLIED);
	/* The owner's fast path after an off-thread win: -EALREADY. */
	cr_expect_eq(fring_req_claim_owner(h), -EALREADY);
}

Test(claim, xref_put_only_drops_the_threads_own_reference)
{
	fring_req *h = recycle();

	/* On the owner thread no reference is taken: nothing to drop. */
	cr_expect_eq(fring_req_claim(h), 0);
	cr_expect_eq(fring_req_xref_put(&one.r), 0);
	cr_expect_eq(fring_req_xref_put(NULL), 0);
	cr_expect_eq(atomic_load(&one.r.xrefs), 0);
}

/* An off-thread caller that claims a second request without handing the
 * first back: its first reference is dropped by the second claim. */

static int claim_two(fring_req *h)
{
	int a = fring_req_claim(h), b, refs;

	ft_req_init(&ft, &two);
	two.r.owner = &owner_token;
	refs = atomic_load(&one.r.xrefs);
	b = fring_req_claim(fring_req_handle(&two.r));
	/* encode: first claim, second claim, one.r's refs before/after */
	return a == 0 && b == 0 && refs == 1 && atomic_load(&one.r.xrefs) == 0 &&
	       atomic_load(&two.r.xrefs) == 1 && fring_req_xref_put(&two.r) == 1 &&
	       fring_req_xref_put(&one.r) == 0 ? 0 : -1;
}

Test(claim, a_claim_that_never_handed_back_is_dropped_by_the_next)
{
	struct off_call c = call_off(claim_two, recycle(), 0);

	cr_expect_eq(c.ret, 0);
	cr_expect_eq(atomic_load(&two.r.xrefs), 0);
}

Test(claim, owner_falls_back_to_cas_while_another_thread_is_inside)
{
	fring_req *h = recycle();

	/* A caller on another thread between its reference and its look. */
	atomic_fetch_add(&one.r.xrefs, 1);
	cr_expect_eq(fring_req_claim_owner(h), 0);
	cr_expect_eq(one.r.claim_rmw, 1, "contended: decided by compare-and-swap");
	atomic_fetch_sub(&one.r.xrefs, 1);
	/* Its claim now loses. */
	struct off_call c = call_off(fring_req_claim, h, 0);
	cr_expect_eq(c.ret, -EALREADY);
	cr_expect_eq(c.xrefs_after, 0);
}

Test(claim, fast_path_only_on_the_owner_thread)
{
	fring_req *h = recycle();
	struct off_call c = call_off(fring_req_claim_owner, h, 1);

	cr_expect_eq(c.ret, 0);
	cr_expect_eq(one.r.claim_rmw, 1, "off the owner: the CAS path");
	cr_expect_eq(c.put_ret, 1, "with a reference, like fring_req_claim");
	cr_expect_eq(fring_req_claim_owner(h), -EALREADY);

	/* A request without an owner (devfuse): always the CAS path. */
	h = recycle();
	one.r.owner = NULL;
	cr_expect_eq(fring_req_claim_owner(h), 0);
	cr_expect_eq(one.r.claim_rmw, 1);
	cr_expect_eq(atomic_load(&one.r.xrefs), 0);
}

Test(claim, stale_handle_loses_after_recycle)
{
	fring_req *old = recycle();
	fring_req *cur;

	cr_assert_eq(fring_req_claim_owner(old), 0);
	cur = recycle();
	cr_assert_neq(cur, old, "a new generation, a new handle");
	cr_expect_eq(fring_req_get(old), NULL);
	cr_expect_eq(fring_req_claim_owner(old), -EALREADY);
	cr_expect_eq(fring_req_claim(old), -EALREADY);
	struct off_call c = call_off(fring_req_claim, old, 0);
	cr_expect_eq(c.ret, -EALREADY);
	cr_expect_eq(c.xrefs_after, 0);
	cr_expect_eq(st(), FRING_REQ_PENDING, "the stale claims left it alone");
	/* The current handle still claims, once. */
	cr_expect_eq(fring_req_claim_owner(cur), 0);
	cr_expect_eq(fring_req_claim_owner(cur), -EALREADY);
}

Test(claim, generation_survives_init_and_skips_zero)
{
	/* 70,000 recycles: the 16-bit handle generation wraps, never to 0. */
	for (int i = 0; i < 70000; i++) {
		fring_req *h = recycle();

		cr_assert_neq(fring_req_hgen(h), 0);
		cr_assert_eq(fring_req_ptr(h), &one.r);
	}
}

/* A late caller reads the identity (dx for its log line, owner to decide
 * on a reference) while the memory is recycled: init must leave it as it
 * was, never cleared for a moment (a loser once read dx as NULL). Runs
 * under TSan too, where a write there would be a reported race. */
static atomic_int ident_stop;

static void *ident_reader(void *arg)
{
	volatile struct fring_request *r = &one.r; /* a fresh read every time */
	long bad = 0;

	(void)arg;
	while (!atomic_load_explicit(&ident_stop, memory_order_relaxed))
		if (!r->rq || r->owner != &owner_token || r->ops != &ft_req_ops)
			bad++;
	return (void *)bad;
}

Test(claim, identity_stays_while_recycled)
{
	pthread_t t;
	void *bad;

	recycle();
	atomic_store(&ident_stop, 0);
	cr_assert_eq(pthread_create(&t, NULL, ident_reader, NULL), 0);
	for (int i = 0; i < 200000; i++)
		recycle();
	atomic_store(&ident_stop, 1);
	pthread_join(t, &bad);
	cr_assert_eq((long)bad, 0, "the reader saw the identity cleared %ld times",
		     (long)bad);
	cr_assert_eq(one.r.fd, -1);
}

/* fring_req_enter off the owner thread holds a reference until leave, and
 * fring_req_init (the owner recycling the memory) waits for it. */
static atomic_int recycled;

static void *recycler(void *arg)
{
	(void)arg;
	fring_req_thread = &owner_token;
	recycle();
	atomic_store(&recycled, 1);
	return NULL;
}

static void *enter_off(void *arg)
{
	struct fring_request **out = arg;
	int ref = 0;

	fring_req_thread = NULL;
	*out = fring_req_enter(recycle_handle, &ref);
	return (void *)(long)ref;
}

Test(claim, enter_holds_the_request_until_leave)
{
	fring_req *h = recycle();
	struct fring_request *got = NULL;
	pthread_t t;
	void *ref;

	recycle_handle = h;
	cr_assert_eq(pthread_create(&t, NULL, enter_off, &got), 0);
	pthread_join(t, &ref);
	cr_assert_eq(got, &one.r);
	cr_assert_eq((long)ref, 1, "off the owner thread: a reference");
	cr_assert_eq(atomic_load(&one.r.xrefs), 1);
	cr_assert_eq(fring_req_claim(h), 0); /* the owner answers */
	atomic_store(&recycled, 0);
	cr_assert_eq(pthread_create(&t, NULL, recycler, NULL), 0);
	usleep(50000);
	cr_expect_eq(atomic_load(&recycled), 0, "recycled under a reference");
	cr_expect_eq(st(), FRING_REQ_RECYCLING);
	fring_req_leave(&one.r, 1);
	pthread_join(t, NULL);
	cr_expect_eq(atomic_load(&recycled), 1);
	cr_expect_eq(st(), FRING_REQ_PENDING);
	/* The old handle now finds a newer request: no reference kept. */
	cr_assert_eq(pthread_create(&t, NULL, enter_off, &got), 0);
	pthread_join(t, &ref);
	cr_expect_eq(got, NULL);
	cr_expect_eq((long)ref, 0);
	cr_expect_eq(atomic_load(&one.r.xrefs), 0);
}

Test(claim, enter_on_the_owner_thread_takes_no_reference)
{
	fring_req *h = recycle();
	int ref = 1;

	cr_assert_eq(fring_req_enter(h, &ref), &one.r);
	cr_expect_eq(ref, 0);
	cr_expect_eq(atomic_load(&one.r.xrefs), 0);
	/* Mid-recycle, a caller's look finds RECYCLING: refused, unheld. */
	atomic_store(&one.r.state, (atomic_load(&one.r.state) & ~0xffu) |
				 FRING_REQ_RECYCLING);
	fring_req_thread = NULL;
	cr_expect_eq(fring_req_enter(h, &ref), NULL);
	cr_expect_eq(ref, 0);
	cr_expect_eq(atomic_load(&one.r.xrefs), 0);
}

/* ---- the race: owner fast path against an off-thread claim ---- */

#define ROUNDS 200000

static fring_req *_Atomic race_h;
static atomic_uint race_go, race_done;
static int race_off_ret;   /* written by the off thread before race_done */
static unsigned race_seed;

static void relax(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

/* Wait for *w to reach v: spin briefly, then give the CPU away (the two
 * threads may share one CPU on a busy machine). */
static void await(atomic_uint *w, unsigned v)
{
	for (unsigned i = 0; atomic_load_explicit(w, memory_order_acquire) != v; i++)
		if (i > 20000)
			sched_yield();
}

static void *racer(void *arg)
{
	unsigned seed = 12345;

	(void)arg;
	fring_req_thread = NULL;
	for (unsigned i = 1; i <= ROUNDS; i++) {
		await(&race_go, i);
		relax(rand_r(&seed) % 64);
		race_off_ret = fring_req_claim(atomic_load(&race_h));
		/* The winner replies and hands the request back (start_io /
		 * ent_release do it in the transport); a loser already has. */
		if (!race_off_ret)
			cr_assert_eq(fring_req_xref_put(&one.r), 1);
		atomic_store_explicit(&race_done, i, memory_order_release);
	}
	return NULL;
}

Test(claim, owner_fast_path_races_an_off_thread_claim, .timeout = 240)
{
	pthread_t t;
	unsigned owner_wins = 0, off_wins = 0, contended = 0, both = 0, none = 0;

	race_seed = 777;
	cr_assert_eq(pthread_create(&t, NULL, racer, NULL), 0);
	for (unsigned i = 1; i <= ROUNDS; i++) {
		int mine;

		atomic_store(&race_h, recycle());
		atomic_store_explicit(&race_go, i, memory_order_release);
		relax(rand_r(&race_seed) % 512);
		mine = fring_req_claim_owner(race_h);
		if (!mine && one.r.claim_rmw)
			contended++;
		/* The owner commits only when nobody else is inside
		 * (owner_commit_check), and the round ends with both done. */
		await(&race_done, i);
		while (atomic_load(&one.r.xrefs))
			sched_yield();
		if (!mine && !race_off_ret)
			both++;
		else if (mine && race_off_ret)
			none++;
		else if (!mine)
			owner_wins++;
		else
			off_wins++;
		cr_assert(mine == 0 || mine == -EALREADY, "round %u: %d", i, mine);
		cr_assert(race_off_ret == 0 || race_off_ret == -EALREADY);
	}
	pthread_join(t, NULL);
	fprintf(stderr, "claim race: %u rounds: owner won %u (%u of them by "
		"compare-and-swap, contended), off-thread won %u, both won %u, "
		"neither %u\n", ROUNDS, owner_wins, contended, off_wins, both, none);
	cr_expect_eq(both, 0, "%u rounds with two winners", both);
	cr_expect_eq(none, 0, "%u rounds without a winner", none);
	cr_expect_eq(owner_wins + off_wins, ROUNDS);
	cr_expect_eq(atomic_load(&one.r.xrefs), 0);
}
