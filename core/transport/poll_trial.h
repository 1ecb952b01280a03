// SPDX-License-Identifier: MIT
/*
 * Whether the queue threads busy-poll (transport.poll_us) at all: a
 * policy of trials on the request rate, like placement's (place.h).
 *
 * A poll keeps a queue thread runnable when its ring runs dry, so the next
 * request needs no wake-up. Where a wake-up from halt is dear (30-40 us on
 * the Intel Xeon VM, haltpoll off) that raises the rate; where it is cheap,
 * or where more synchronous clients than CPUs keep every CPU busy, the
 * poller's slices are CPU the clients do not get: perf on the AMD EPYC VM
 * (fio psync x4, bench/README.md "Where a synchronous request's CPU goes")
 * put a quarter of fring's server samples in the poll loop (sched_yield,
 * io_uring_get_events, clock_gettime) and half in being preempted on the
 * way back to user space, and fring served that job at 1.19x libfuse's CPU
 * per request.
 *
 * So polling is kept only where it measurably pays: every so often the
 * other setting is tried for TRIAL_MEASURE windows (after SETTLE), and its
 * rate is compared with the BASE windows before it. Polling wins when it
 * served at least GAIN_PCT % of not polling's rate; otherwise the threads
 * sleep when dry. A trial that kept the setting doubles the wait before the
 * next one (HOLD_MIN 1 s up to HOLD_MAX 32 s of windows); one that changed
 * it waits HOLD_MIN. A light window (fewer than MIN_REQUESTS) ends a trial
 * without a verdict (the load it measured went away) and restarts the base.
 *
 * This file is the decision only, with no threads and no clock, so tests
 * feed it windows (tests/unit/test_poll_trial.c); uring_poll.c counts the
 * requests and applies it.
 */
#ifndef FRING_TRANSPORT_POLL_TRIAL_H
#define FRING_TRANSPORT_POLL_TRIAL_H

#include <stdint.h>

#define FRING_POLL_MIN_REQUESTS 256
#define FRING_POLL_BASE_WINDOWS 4
#define FRING_POLL_TRIAL_SETTLE 1
#define FRING_POLL_TRIAL_MEASURE 4
#define FRING_POLL_GAIN_PCT 103
#define FRING_POLL_HOLD_MIN 20
#define FRING_POLL_HOLD_MAX 640

enum fring_poll_event {
	FRING_POLL_EV_NONE,
	FRING_POLL_EV_TRIAL,   /* the other setting applied, on trial */
	FRING_POLL_EV_KEPT,    /* the trial lost: back to the setting before */
	FRING_POLL_EV_CHANGED, /* the trial won: its setting stays */
	FRING_POLL_EV_DROPPED, /* a light window ended the trial, no verdict */
};

struct fring_poll_trial {
	int on;         /* polling now (the applied setting) */
	int before;     /* during a trial: the setting before it */
	uint32_t phase; /* 0 steady, else windows into the trial */
	uint64_t base[FRING_POLL_BASE_WINDOWS]; /* last steady windows */
	uint32_t nbase;
	uint64_t sum;  /* the trial's measured requests */
	uint32_t wait; /* steady windows left before a trial */
	uint32_t hold; /* the wait after the last verdict */
	enum fring_poll_event event;
	uint32_t rate_pct; /* polling's rate as % of not polling's */
	uint32_t trials, changes;
};

/* Start polling, a trial due as soon as BASE windows are loaded. */
void fring_poll_trial_init(struct fring_poll_trial *p);

/* One closed window's requests (all qids). Returns 1 when the setting
 * (p->on) changed; p->event says why. */
int fring_poll_trial_step(struct fring_poll_trial *p, uint64_t requests);

#endif
