// SPDX-License-Identifier: MIT
/*
 * Busy-poll trials (core/transport/poll_trial.c) on given windows: each
 * window's request count depends on whether the threads polled in it, as
 * uring_poll.c would read it. No timing: the policy sees only numbers.
 * The rates are 50 ms windows of J7 (psync x4) on the AMD EPYC VM.
 */
#include <criterion/criterion.h>

#include "transport/poll_trial.h"

/* One window of a load served at on (polling) or off (sleeping when dry). */
static int feed(struct fring_poll_trial *p, uint64_t on, uint64_t off)
{
	return fring_poll_trial_step(p, p->on ? on : off);
}

/* Windows until the next trial begins; the count fed. */
static int until_trial(struct fring_poll_trial *p, uint64_t on, uint64_t off)
{
	for (int i = 1; i < 10000; i++) {
		int changed = feed(p, on, off);

		if (p->event == FRING_POLL_EV_TRIAL) {
			cr_assert(changed);
			return i;
		}
		cr_assert(!changed, "a change outside a trial");
	}
	cr_assert_fail("no trial");
	return -1;
}

/* Feed a trial to its verdict; the step's return. */
static int through_trial(struct fring_poll_trial *p, uint64_t on, uint64_t off)
{
	for (int i = 0; i < FRING_POLL_TRIAL_SETTLE + FRING_POLL_TRIAL_MEASURE;
	     i++) {
		int changed = feed(p, on, off);

		if (i < FRING_POLL_TRIAL_SETTLE + FRING_POLL_TRIAL_MEASURE - 1)
			cr_assert(!changed && p->event == FRING_POLL_EV_NONE);
		else
			return changed;
	}
	return -1;
}

Test(poll_trial, starts_polling_and_tries_after_a_base)
{
	struct fring_poll_trial p;

	fring_poll_trial_init(&p);
	cr_assert(p.on);
	cr_assert_eq(until_trial(&p, 8000, 6000), FRING_POLL_BASE_WINDOWS);
	cr_assert(!p.on, "the trial is of not polling");
}

Test(poll_trial, polling_that_pays_is_kept_and_the_wait_doubles)
{
	struct fring_poll_trial p;

	fring_poll_trial_init(&p);
	until_trial(&p, 8000, 6000);
	cr_assert(through_trial(&p, 8000, 6000), "back to polling is a change");
	cr_assert(p.on);
	cr_assert_eq(p.event, FRING_POLL_EV_KEPT);
	cr_assert_eq(p.rate_pct, 133);
	cr_assert_eq(p.hold, 2 * FRING_POLL_HOLD_MIN);
	cr_assert_eq(until_trial(&p, 8000, 6000), 2 * FRING_POLL_HOLD_MIN);
}

Test(poll_trial, polling_within_the_gain_is_turned_off)
{
	struct fring_poll_trial p;

	fring_poll_trial_init(&p);
	until_trial(&p, 6100, 6000); /* 101%: less than the gain asked */
	cr_assert(!through_trial(&p, 6100, 6000), "off stays: no change");
	cr_assert(!p.on);
	cr_assert_eq(p.event, FRING_POLL_EV_CHANGED);
	cr_assert_eq(p.rate_pct, 101);
	cr_assert_eq(p.changes, 1);
	/* Then polling is tried again, against not polling's base. */
	cr_assert_eq(until_trial(&p, 6100, 6000), FRING_POLL_HOLD_MIN);
	cr_assert(p.on);
	cr_assert(through_trial(&p, 6100, 6000));
	cr_assert(!p.on);
	cr_assert_eq(p.event, FRING_POLL_EV_KEPT);
}

Test(poll_trial, polling_that_starts_to_pay_comes_back)
{
	struct fring_poll_trial p;

	fring_poll_trial_init(&p);
	until_trial(&p, 6000, 6400);
	through_trial(&p, 6000, 6400);
	cr_assert(!p.on);
	until_trial(&p, 9000, 6400); /* the load changed: polling pays now */
	cr_assert(!through_trial(&p, 9000, 6400));
	cr_assert(p.on);
	cr_assert_eq(p.event, FRING_POLL_EV_CHANGED);
	cr_assert_eq(p.hold, FRING_POLL_HOLD_MIN);
}

Test(poll_trial, a_light_window_drops_the_trial)
{
	struct fring_poll_trial p;

	fring_poll_trial_init(&p);
	until_trial(&p, 6000, 6400);
	cr_assert(!p.on);
	cr_assert(feed(&p, 6000, 6400) == 0);
	cr_assert(fring_poll_trial_step(&p, FRING_POLL_MIN_REQUESTS - 1));
	cr_assert(p.on, "back to the setting before the trial");
	cr_assert_eq(p.event, FRING_POLL_EV_DROPPED);
	/* The base restarts: BASE loaded windows before the next trial. */
	cr_assert_eq(until_trial(&p, 6000, 6400), FRING_POLL_BASE_WINDOWS);
}

Test(poll_trial, the_wait_stops_doubling_at_hold_max)
{
	struct fring_poll_trial p;

	fring_poll_trial_init(&p);
	for (int i = 0; i < 10; i++) {
		until_trial(&p, 8000, 6000);
		through_trial(&p, 8000, 6000);
	}
	cr_assert(p.on);
	cr_assert_eq(p.hold, FRING_POLL_HOLD_MAX);
	cr_assert_eq(p.trials, 10);
	cr_assert_eq(p.changes, 0);
}
