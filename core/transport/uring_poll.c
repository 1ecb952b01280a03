// SPDX-License-Identifier: MIT
/*
 * Busy-poll trials (poll_trial.h): close a window of load every
 * URING_POLL_WINDOW_NS, feed its request count to the policy and tell
 * the queue threads whether to poll when their rings run dry.
 *
 * Like placement's windows (uring_place.c) they are closed by whichever
 * queue thread finishes a batch after the deadline, so an idle mount does
 * nothing. A window closed late (the mount was idle, then busy) counts
 * its requests per URING_POLL_WINDOW_NS, so that the trial compares rates.
 */

#include "../base/clock.h"
#include "../base/log.h"
#include "uring_internal.h"

#define URING_POLL_WINDOW_NS 50000000ull /* 50 ms, placement's window */

static uint64_t requests(const struct fring_uring *u)
{
	uint64_t n = 0;

	for (uint32_t q = 0; q < u->nr_qids; q++)
		n += atomic_load_explicit(&u->queues[q].ctr.requests,
					  memory_order_relaxed);
	return n;
}

void uring_poll_init(struct fring_uring *u)
{
	struct uring_poll *p = &u->poll;

	fring_poll_trial_init(&p->pol);
	atomic_store(&p->on, 1);
	atomic_flag_clear(&p->busy);
	p->since_ns = p->closed_ns = fring_clock_ns();
	atomic_store(&p->next_ns, p->since_ns + URING_POLL_WINDOW_NS);
}

static const char *event_text(enum fring_poll_event ev)
{
	switch (ev) {
	case FRING_POLL_EV_TRIAL: return "on trial";
	case FRING_POLL_EV_KEPT: return "back: the trial lost";
	case FRING_POLL_EV_CHANGED: return "kept: the trial won";
	case FRING_POLL_EV_DROPPED:
		return "back: the load changed under the trial";
	default: return "";
	}
}

/* The window just closed: step the policy, apply and say so. */
static void close_window(struct fring_uring *u, uint64_t now)
{
	struct uring_poll *p = &u->poll;
	uint64_t n = requests(u), w = n - p->seen, len = now - p->closed_ns;
	int was = p->pol.on;

	p->seen = n;
	p->closed_ns = now;
	if (len > URING_POLL_WINDOW_NS)
		w = w * URING_POLL_WINDOW_NS / len;
	if (!fring_poll_trial_step(&p->pol, w) &&
	    p->pol.event != FRING_POLL_EV_CHANGED)
		return;
	if (p->pol.on != was) {
		p->time_ns[was] += now - p->since_ns;
		p->since_ns = now;
		atomic_store_explicit(&p->on, p->pol.on, memory_order_relaxed);
	}
	if (p->pol.event == FRING_POLL_EV_TRIAL)
		fring_dbg("%s: uring: busy-poll %s %s (against %llu requests "
			  "per window)",
			  u->mountpoint ? u->mountpoint : "?",
			  p->pol.on ? "on" : "off", event_text(p->pol.event),
			  (unsigned long long)(p->pol.base[0] + p->pol.base[1] +
					       p->pol.base[2] +
					       p->pol.base[3]) /
				  4);
	else
		fring_dbg("%s: uring: busy-poll %s, %s (polling served %u%% of "
			  "not polling's rate; next trial in %u windows)",
			  u->mountpoint ? u->mountpoint : "?",
			  p->pol.on ? "on" : "off", event_text(p->pol.event),
			  p->pol.rate_pct, p->pol.wait);
}

void uring_poll_tick(struct uring_thread *t)
{
	struct uring_poll *p = &t->u->poll;
	uint64_t now;

	if (!t->u->poll_ns)
		return;
	now = fring_clock_ns();
	if (now < atomic_load_explicit(&p->next_ns, memory_order_relaxed) ||
	    atomic_flag_test_and_set_explicit(&p->busy, memory_order_acquire))
		return;
	if (now >= atomic_load_explicit(&p->next_ns, memory_order_relaxed)) {
		atomic_store_explicit(&p->next_ns, now + URING_POLL_WINDOW_NS,
				      memory_order_relaxed);
		close_window(t->u, now);
	}
	atomic_flag_clear_explicit(&p->busy, memory_order_release);
}

void uring_poll_log(const struct fring_uring *u, const char *name)
{
	const struct uring_poll *p = &u->poll;
	uint64_t t[2] = { p->time_ns[0], p->time_ns[1] };

	if (!u->poll_ns)
		return;
	t[p->pol.on] += fring_clock_ns() - p->since_ns;
	fring_dbg("%s: uring: busy-poll trials: polling %.2f s, not polling "
		  "%.2f s, %u trials, %u changed the setting",
		  name, (double)t[1] / 1e9, (double)t[0] / 1e9, p->pol.trials,
		  p->pol.changes);
}
