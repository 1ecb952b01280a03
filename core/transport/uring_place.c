// SPDX-License-Identifier: MIT
/*
 * transport.placement auto: close a window of load every
 * URING_PLACE_WINDOW_NS, feed it to the policy (place.c) and move the
 * queue threads it names with pthread_setaffinity_np.
 *
 * Only a thread's CPU changes: every qid keeps its ring, its entries and
 * its thread, so no request is dropped, redirected or reordered by a
 * change, and the kernel's queue map (every qid registered) is untouched.
 * Windows are closed by whichever queue thread finishes a batch after the
 * deadline, so an idle mount does nothing at all (no timer), and after
 * idleness the threads are where they were (no new wake-up cost).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/clock.h"
#include "../base/log.h"
#include "uring_internal.h"

#define URING_PLACE_WINDOW_NS 50000000ull /* 50 ms */

static const char *mnt(const struct fring_uring *u)
{
	return u->mountpoint ? u->mountpoint : "?";
}

/* Every qid's counters, by qid (u->queues is in thread order). */
static void snapshot(const struct fring_uring *u, struct fring_place_load *out)
{
	for (uint32_t q = 0; q < u->nr_qids; q++) {
		const struct uring_counters *c = &u->queues[q].ctr;
		struct fring_place_load *o = &out[u->queues[q].qid];

		o->requests = atomic_load_explicit(&c->requests, memory_order_relaxed);
		o->depth_sum = atomic_load_explicit(&c->depth_sum, memory_order_relaxed);
	}
}

/* FRING_TEST_PLACE_TRIAL=keep|revert fixes every trial's outcome, so that
 * tests can assert the moves that follow without depending on speed. */
static void trial_verdict(struct fring_uring *u)
{
	const char *v = getenv("FRING_TEST_PLACE_TRIAL");

	if (!v || !*v)
		return;
	u->place.pol.verdict = !strcmp(v, "keep") ? 1 : !strcmp(v, "revert") ? -1 : 0;
	fring_log(FRING_LOG_WARN, "%s: uring: FRING_TEST_PLACE_TRIAL=%s: every "
		  "placement trial is %s (a test setting)", mnt(u), v,
		  u->place.pol.verdict > 0 ? "kept" : u->place.pol.verdict < 0
		  ? "reverted" : "measured (unknown value)");
}

/* The window's tables, by qid (the kernel's: up to nr_cpus), and the
 * first window's end. */
static int windows_init(struct fring_uring *u)
{
	struct uring_place *pl = &u->place;

	pl->seen = calloc(u->nr_cpus, sizeof(*pl->seen));
	pl->win = calloc(u->nr_cpus, sizeof(*pl->win));
	pl->clients = calloc(u->nr_qids * URING_PLACE_PIDS, sizeof(*pl->clients));
	if (!pl->seen || !pl->win || !pl->clients)
		return -ENOMEM;
	atomic_store(&pl->next_ns, pl->since_ns + URING_PLACE_WINDOW_NS);
	return 0;
}

int uring_place_init(struct fring_uring *u, int placement)
{
	struct uring_place *pl = &u->place;
	int ret;

	atomic_flag_clear(&pl->busy);
	pl->since_ns = fring_clock_ns();
	if (placement == FRING_PLACEMENT_AUTO &&
	    (ret = uring_grow_init(u, &pl->on)))
		return ret;
	if (pl->on)
		return windows_init(u);
	if (u->reduced)
		snprintf(pl->why, sizeof(pl->why), "fixed (reduced queues: a "
			 "thread on each registered qid's CPU)");
	else if (u->nr_threads != u->nr_qids)
		snprintf(pl->why, sizeof(pl->why), "fixed (%s: %u thread%s for %u "
			 "qids)", u->cpus_set ? "transport.cpus" : "transport.queues",
			 u->nr_threads, u->nr_threads == 1 ? "" : "s", u->nr_qids);
	else if (placement == FRING_PLACEMENT_LOCAL)
		snprintf(pl->why, sizeof(pl->why), "local: transport.placement");
	else if (u->nr_qids < 2)
		snprintf(pl->why, sizeof(pl->why), "local: one CPU");
	if (pl->why[0])
		return 0;
	pl->usable = calloc(u->nr_qids, 1);
	if (!pl->usable || windows_init(u))
		return -ENOMEM;
	/* A thread per qid, in qid order (uring_layout.c); only CPUs this
	 * process may use (taskset, cpusets, transport.cpus). */
	for (uint32_t q = 0; q < u->nr_qids; q++)
		pl->usable[q] = u->queues[q].qid == q && u->usable[q];
	ret = fring_place_init(&pl->pol, u->nr_qids, pl->usable, u->node);
	if (ret == -EINVAL) {
		snprintf(pl->why, sizeof(pl->why), "local: no CPU of the qids is usable");
		return 0;
	}
	if (ret)
		return ret;
	trial_verdict(u);
	pl->on = 1;
	return 0;
}

void uring_place_free(struct fring_uring *u)
{
	fring_place_fini(&u->place.pol);
	fring_place_grow_fini(&u->place.grow);
	free(u->place.usable);
	free(u->place.seen);
	free(u->place.win);
	free(u->place.clients);
}

void uring_place_note(struct fring_uring *u, struct uring_queue *q, uint32_t pid)
{
	uint32_t ep = atomic_load_explicit(&u->place.epoch, memory_order_relaxed);
	struct uring_pids *s = &q->pids[ep & 1];

	if (!pid) /* the kernel's own (no issuing task in the client's pid ns) */
		return;
	if (atomic_load_explicit(&s->epoch, memory_order_relaxed) != ep) {
		/* First arrival of the window: forget the window before last. */
		for (int i = 0; i < URING_PLACE_PIDS; i++) {
			atomic_store_explicit(&s->pid[i], 0, memory_order_relaxed);
			atomic_store_explicit(&s->n[i], 0, memory_order_relaxed);
		}
		atomic_store_explicit(&s->epoch, ep, memory_order_relaxed);
	}
	for (int i = 0; i < URING_PLACE_PIDS; i++) {
		uint32_t p = atomic_load_explicit(&s->pid[i], memory_order_relaxed);

		if (p && p != pid)
			continue;
		if (!p)
			atomic_store_explicit(&s->pid[i], pid, memory_order_relaxed);
		atomic_store_explicit(&s->n[i], atomic_load_explicit(
			&s->n[i], memory_order_relaxed) + 1, memory_order_relaxed);
		return;
	}
}

/* The issuers of window ep on every qid, into pl->clients; the count. */
static size_t read_clients(const struct fring_uring *u, uint32_t ep)
{
	struct fring_place_client *c = u->place.clients;
	size_t n = 0;

	for (uint32_t q = 0; q < u->nr_qids; q++) {
		const struct uring_pids *s = &u->queues[q].pids[ep & 1];

		if (atomic_load_explicit(&s->epoch, memory_order_relaxed) != ep)
			continue; /* no arrival in the window */
		for (int i = 0; i < URING_PLACE_PIDS; i++) {
			uint32_t pid = atomic_load_explicit(&s->pid[i], memory_order_relaxed);

			if (pid)
				c[n++] = (struct fring_place_client){
					u->queues[q].qid, pid,
					atomic_load_explicit(&s->n[i], memory_order_relaxed) };
		}
	}
	return n;
}

void uring_place_describe(const struct fring_uring *u, char *buf, size_t len)
{
	if (u->place.growing)
		uring_grow_describe(u, buf, len);
	else if (u->place.on)
		snprintf(buf, len, "auto, starting local (each qid's thread on "
			 "its CPU; a qid whose client keeps requests in flight "
			 "gets its thread moved to an idle CPU, kept there if "
			 "that serves it faster)");
	else
		snprintf(buf, len, "%s", u->place.why);
}

static void move_thread(struct fring_uring *u, uint32_t q, int cpu)
{
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = pthread_setaffinity_np(u->threads[q].tid, sizeof(set), &set);
	if (ret)
		fring_log_ratelimited("uring-place", FRING_LOG_WARN,
				      "uring: moving qid %u's thread to CPU %d: "
				      "%s", q, cpu, strerror(ret));
}

/* What the last window's step did to a trial, for the debug line. */
static void trial_text(const struct fring_place *pol, char *buf, size_t len)
{
	buf[0] = 0;
	if (pol->event == FRING_PLACE_EV_TRIAL)
		snprintf(buf, len, "; a trial against %llu requests per window",
			 (unsigned long long)pol->base_rate);
	else if (pol->event == FRING_PLACE_EV_REVERTED)
		snprintf(buf, len, "; the trial served %u%% of the rate before "
			 "it, held off for %u windows", pol->rate_pct, pol->hold);
	else if (pol->event == FRING_PLACE_EV_UNDONE)
		snprintf(buf, len, "; the load changed under the trial, held off "
			 "for %u windows", pol->hold);
	else if (pol->event == FRING_PLACE_EV_CONFIRM)
		snprintf(buf, len, "; a check of the kept %s against its %llu "
			 "requests per window",
			 fring_place_kind_name(pol->from_kind),
			 (unsigned long long)pol->base_rate);
	else if (pol->event == FRING_PLACE_EV_CONFIRMED)
		snprintf(buf, len, "; the check served %u%% of its rate: kept "
			 "for good", pol->rate_pct);
}

/* The window just closed changed the placement: apply and say so. */
static void apply(struct fring_uring *u, const int *old, uint64_t now)
{
	struct uring_place *pl = &u->place;
	char map[256], why[96];
	size_t len = 0;

	pl->time_ns[pl->applied_kind] += now - pl->since_ns;
	pl->since_ns = now;
	pl->applied_kind = pl->pol.kind;
	pl->changes++;
	map[0] = 0;
	for (uint32_t q = 0; q < u->nr_qids; q++) {
		if (pl->pol.cpu[q] != old[q])
			move_thread(u, q, pl->pol.cpu[q]);
		if (pl->pol.cpu[q] != (int)q && len < sizeof(map) - 32)
			len += (size_t)snprintf(map + len, sizeof(map) - len,
						"%sqid %u on CPU %d", len ? ", " : "",
						q, pl->pol.cpu[q]);
	}
	trial_text(&pl->pol, why, sizeof(why));
	fring_dbg("%s: uring: placement now %s%s%s%s (window %llu ms)%s", mnt(u),
		  fring_place_kind_name(pl->pol.kind), len ? " (" : "", map,
		  len ? ")" : "",
		  (unsigned long long)(URING_PLACE_WINDOW_NS / 1000000), why);
}

void uring_place_tick(struct uring_thread *t)
{
	struct fring_uring *u = t->u;
	struct uring_place *pl = &u->place;
	struct fring_place_load *w = pl->win;
	int old[64], *prev = old;
	size_t nc;
	uint64_t now;
	uint32_t ep;

	if (!pl->on)
		return;
	now = fring_clock_ns();
	if (now < atomic_load_explicit(&pl->next_ns, memory_order_relaxed) ||
	    atomic_flag_test_and_set_explicit(&pl->busy, memory_order_acquire))
		return;
	if (now < atomic_load_explicit(&pl->next_ns, memory_order_relaxed))
		goto out;
	atomic_store_explicit(&pl->next_ns, now + URING_PLACE_WINDOW_NS,
			      memory_order_relaxed);
	/* Arrivals from here on note their pids in the next window's table. */
	ep = atomic_fetch_add_explicit(&pl->epoch, 1, memory_order_relaxed);
	snapshot(u, w);
	for (uint32_t q = 0; q < u->nr_cpus; q++) {
		struct fring_place_load cur = w[q];

		w[q].requests -= pl->seen[q].requests;
		w[q].depth_sum -= pl->seen[q].depth_sum;
		w[q].hop = 0;
		pl->seen[q] = cur;
	}
	nc = read_clients(u, ep);
	if (pl->growing) {
		uring_grow_window(u, w, pl->clients, nc);
		goto out;
	}
	fring_place_hops(pl->clients, nc, w, u->nr_qids);
	if (u->nr_qids > 64 && !(prev = malloc(u->nr_qids * sizeof(*prev))))
		goto out;
	memcpy(prev, pl->pol.cpu, u->nr_qids * sizeof(*prev));
	if (fring_place_step(&pl->pol, w))
		apply(u, prev, now);
	else if (pl->pol.event == FRING_PLACE_EV_KEPT)
		fring_dbg("%s: uring: placement %s kept: the trial served %u%% "
			  "of the rate before it", mnt(u),
			  fring_place_kind_name(pl->pol.kind), pl->pol.rate_pct);
	else if (pl->pol.event == FRING_PLACE_EV_OVERTURNED)
		fring_dbg("%s: uring: placement %s stays: it served %u%% of the "
			  "rate of the kept trial's placement, held off for %u "
			  "windows", mnt(u), fring_place_kind_name(pl->pol.kind),
			  pl->pol.rate_pct, pl->pol.hold);
	else if (pl->pol.event == FRING_PLACE_EV_RECHECKED)
		fring_dbg("%s: uring: placement %s served %u%% of the lost trial's "
			  "rate: the machine slowed, not the trial; it may be "
			  "tried again", mnt(u), fring_place_kind_name(pl->pol.kind),
			  pl->pol.rate_pct);
	if (prev != old)
		free(prev);
out:
	atomic_flag_clear_explicit(&pl->busy, memory_order_release);
}

void uring_place_log(const struct fring_uring *u, const char *name)
{
	const struct uring_place *pl = &u->place;
	uint64_t t[2] = { pl->time_ns[0], pl->time_ns[1] };

	if (pl->growing)
		uring_grow_log(u, name);
	if (!pl->on || pl->growing)
		return;
	t[pl->applied_kind] += fring_clock_ns() - pl->since_ns;
	fring_dbg("%s: uring: placement: local %.2f s, beside %.2f s, %u "
		  "changes, %u trials beside (%u kept, %u overturned by "
		  "their check)", name,
		  (double)t[FRING_PLACE_LOCAL] / 1e9,
		  (double)t[FRING_PLACE_BESIDE] / 1e9, pl->changes,
		  pl->pol.trials, pl->pol.trials_kept, pl->pol.overturned);
}
