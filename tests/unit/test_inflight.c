// SPDX-License-Identifier: MIT
/*
 * The in-flight table (core/request/inflight.c): requests of many queues
 * (a shard each) entered and removed, found by unique from any shard (as
 * an INTERRUPT finds its target), an INTERRUPT that overtakes its target
 * kept until the target is entered, the teardown's pop and the
 * statistics' oldest start. Bare request objects: only unique, queue and
 * t0_ns matter to the table.
 */
#include <stdatomic.h>
#include <string.h>

#include <criterion/criterion.h>

#include "request/inflight.h"
#include "request/req.h"

#define NR 200

static struct fring_inflight t;
static struct fring_request reqs[NR];

static void setup(void)
{
	fring_inflight_init(&t);
	memset(reqs, 0, sizeof(reqs));
	for (unsigned i = 0; i < NR; i++) {
		reqs[i].unique = 2 * (i + 1); /* the kernel's step */
		reqs[i].queue = i % 37;       /* more queues than shards */
		reqs[i].t0_ns = 1000 + i;
	}
}

static void teardown(void)
{
	fring_inflight_destroy(&t);
}

TestSuite(inflight, .init = setup, .fini = teardown);

static int found_queue(struct fring_request *r, void *arg)
{
	*(struct fring_request **)arg = r;
	return (int)r->queue;
}

Test(inflight, found_by_unique_whatever_its_queue)
{
	struct fring_request *r;

	for (unsigned i = 0; i < NR; i++)
		fring_inflight_add(&t, &reqs[i]);
	for (unsigned i = 0; i < NR; i++) {
		r = NULL;
		cr_assert_eq(fring_inflight_find_do(&t, reqs[i].unique,
						    found_queue, &r),
			     (int)reqs[i].queue);
		cr_assert_eq(r, &reqs[i]);
	}
	cr_assert_eq(fring_inflight_find_do(&t, 2 * NR + 2, found_queue, &r),
		     -1);
}

Test(inflight, removed_requests_are_not_found)
{
	struct fring_request *r;

	for (unsigned i = 0; i < NR; i++)
		fring_inflight_add(&t, &reqs[i]);
	for (unsigned i = 0; i < NR; i += 2)
		fring_inflight_del(&t, &reqs[i]);
	for (unsigned i = 0; i < NR; i++)
		cr_assert_eq(fring_inflight_find_do(&t, reqs[i].unique,
						    found_queue, &r) < 0,
			     i % 2 == 0, "request %u", i);
	/* removing one that is not there changes nothing */
	fring_inflight_del(&t, &reqs[0]);
	cr_assert_eq(fring_inflight_find_do(&t, reqs[1].unique, found_queue,
					    &r),
		     (int)reqs[1].queue);
}

Test(inflight, oldest_and_pop_cover_every_shard)
{
	unsigned popped = 0;
	struct fring_request *r;

	cr_assert_eq(fring_inflight_oldest(&t), 0);
	for (unsigned i = 0; i < NR; i++)
		fring_inflight_add(&t, &reqs[NR - 1 - i]);
	cr_assert_eq(fring_inflight_oldest(&t), 1000);
	fring_inflight_del(&t, &reqs[0]);
	cr_assert_eq(fring_inflight_oldest(&t), 1001);
	while ((r = fring_inflight_pop(&t))) {
		cr_assert_null(r->hnext);
		popped++;
	}
	cr_assert_eq(popped, NR - 1);
	cr_assert_eq(fring_inflight_oldest(&t), 0);
}

Test(inflight, interrupt_finds_its_target_or_waits_for_it)
{
	fring_inflight_add(&t, &reqs[5]);
	cr_assert_eq(fring_inflight_interrupt(&t, reqs[5].unique), 0);
	cr_assert_eq(atomic_load(&reqs[5].interrupted), 1);

	/* overtaken: the target is entered after its INTERRUPT */
	cr_assert_eq(fring_inflight_interrupt(&t, reqs[9].unique), 1);
	cr_assert_eq(atomic_load(&reqs[9].interrupted), 0);
	fring_inflight_add(&t, &reqs[9]);
	fring_inflight_take_pending(&t, &reqs[9]);
	cr_assert_eq(atomic_load(&reqs[9].interrupted), 1);

	/* a request nobody interrupted is not flagged */
	fring_inflight_add(&t, &reqs[11]);
	fring_inflight_take_pending(&t, &reqs[11]);
	cr_assert_eq(atomic_load(&reqs[11].interrupted), 0);
}
