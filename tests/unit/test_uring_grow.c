// SPDX-License-Identifier: MIT
/*
 * Reduced queues registered under load (uring_grow.c), on the real
 * transport set up against /dev/null (as test_uring_layout.c): with
 * FUSE_URING_REDUCED_Q offered and transport.queues and placement auto,
 * one qid per NUMA node gets its ring and entries at start and the other
 * threads stay dormant (no ring, no memory); two clients on one qid for
 * FRING_PLACE_AGREE windows arm a dormant thread, which then sets up and
 * submits its REGISTERs once the transport runs (here /dev/null refuses
 * them, so the threads end). The policy's choices are in
 * tests/kmodel/test_grow.c.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "uring_null.h"

static struct fring_uring *setup(int reduced, int placement, char **err)
{
	return uring_null_setup(
		(struct fring_cfg_transport){
			.placement = (enum fring_placement)placement},
		reduced, err);
}

static struct uring_thread *first_dormant(struct fring_uring *u)
{
	for (uint32_t i = 0; i < u->nr_threads; i++)
		if (u->threads[i].dormant)
			return &u->threads[i];
	return NULL;
}

static int wake_pending(const struct uring_thread *t)
{
	struct pollfd p = { t->wake_fd, POLLIN, 0 };

	return poll(&p, 1, 0) == 1;
}

/* Two clients sending every request to qid q for n windows. */
static void shared_windows(struct fring_uring *u, int q, int n)
{
	struct fring_place_load *w = calloc(u->nr_cpus, sizeof(*w));
	struct fring_place_client c[2] = { { (uint32_t)q, 100, 2000 },
					   { (uint32_t)q, 101, 2000 } };

	cr_assert_not_null(w);
	w[q].requests = w[q].depth_sum = 4000;
	for (int i = 0; i < n; i++)
		uring_grow_window(u, w, c, 2);
	free(w);
}

Test(uring_grow, dormant_qids_until_the_load_asks)
{
	char *err;
	struct fring_uring *u = setup(1, FRING_PLACEMENT_AUTO, &err);
	struct uring_thread *d, *live = NULL;
	uint32_t dormant = 0;

	cr_assert_not_null(u, "setup: %s", err ? err : "?");
	if (fring_uring_possible_cpus() < 2) {
		cr_expect_not(u->place.growing, "one CPU: nothing to grow into");
		fring_uring_free(u);
		return;
	}
	cr_expect(u->place.growing);
	for (uint32_t i = 0; i < u->nr_threads; i++) {
		struct uring_thread *t = &u->threads[i];

		dormant += t->dormant;
		if (t->dormant) {
			cr_expect_not(t->ring_ok, "a dormant thread has no ring");
			cr_expect_null(t->queues[0].region, "nor entry memory");
		} else {
			cr_expect(t->ring_ok);
			cr_expect_not_null(t->queues[0].region);
			live = t;
		}
	}
	cr_assert_not_null(live);
	{
		uint32_t reg = 0;

		for (uint32_t q = 0; q < u->place.grow.nr; q++)
			reg += u->place.grow.reg[q];
		cr_expect_eq(reg + dormant, u->nr_threads,
			     "every thread but the first qids' is dormant");
		cr_expect_geq(dormant, 1);
	}
	d = first_dormant(u);
	cr_assert_not_null(d);

	shared_windows(u, live->queues[0].qid, 1);
	cr_expect_not(atomic_load(&d->arm), "one window is not agreement");
	shared_windows(u, live->queues[0].qid, 1);
	/* On one node the next qid after the shared one is armed. */
	for (uint32_t i = 0; i < u->nr_threads; i++)
		if (atomic_load(&u->threads[i].arm))
			d = &u->threads[i];
	cr_expect(atomic_load(&d->arm), "two windows arm a dormant qid");
	cr_expect(wake_pending(d), "and wake its thread");
	cr_expect_eq(u->place.armed, 1);

	/* Running: the armed thread builds its ring and entries and sends
	 * its REGISTERs, which /dev/null refuses: every thread then ends. */
	fring_uring_start(u);
	for (int i = 0; i < 1000; i++) {
		int done;

		pthread_mutex_lock(&u->lock);
		done = d->exited;
		pthread_mutex_unlock(&u->lock);
		if (done)
			break;
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	cr_expect_not(d->dormant, "the armed thread set up");
	cr_expect_not_null(d->queues[0].region, "with its entry memory");
	fring_uring_free(u);
}

Test(uring_grow, only_with_reduced_queues_and_auto)
{
	char *err;
	struct fring_uring *u;

	u = setup(0, FRING_PLACEMENT_AUTO, &err);
	cr_assert_not_null(u, "setup: %s", err ? err : "?");
	cr_expect_not(u->place.growing, "no reduced queues: every qid at start");
	cr_expect_null(first_dormant(u));
	fring_uring_free(u);

	u = setup(1, FRING_PLACEMENT_LOCAL, &err);
	cr_assert_not_null(u, "setup: %s", err ? err : "?");
	cr_expect_not(u->place.growing, "placement local: every qid at start");
	cr_expect_null(first_dormant(u));
	fring_uring_free(u);
}
