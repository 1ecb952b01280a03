// SPDX-License-Identifier: MIT
/* Queue-thread placement policy: see place.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"

static int first_usable(const struct fring_place *p)
{
	for (uint32_t i = 0; i < p->nr; i++)
		if (p->usable[i])
			return (int)i;
	return -1;
}

static int local_cpu(const struct fring_place *p, uint32_t q)
{
	return p->usable[q] ? (int)q : first_usable(p);
}

int fring_place_init(struct fring_place *p, uint32_t nr, const uint8_t *usable,
		     const int *node)
{
	memset(p, 0, sizeof(*p));
	p->nr = nr;
	p->usable = usable;
	p->node = node;
	if (!nr || first_usable(p) < 0)
		return -EINVAL;
	p->cpu = calloc(5 * (size_t)nr, sizeof(*p->cpu));
	if (!p->cpu)
		return -ENOMEM;
	p->next = p->cpu + nr;
	p->cand = p->next + nr;
	p->from = p->cand + nr;
	p->failed = p->from + nr;
	p->backoff = FRING_PLACE_HOLD_MIN;
	for (uint32_t q = 0; q < nr; q++)
		p->cpu[q] = p->next[q] = local_cpu(p, q);
	p->kind = p->next_kind = FRING_PLACE_LOCAL;
	return 0;
}

void fring_place_fini(struct fring_place *p)
{
	free(p->cpu);
	p->cpu = p->next = p->cand = p->from = p->failed = NULL;
}

static int same_node(const struct fring_place *p, uint32_t a, uint32_t b)
{
	return !p->node || p->node[a] == p->node[b];
}

/* Is CPU i a better place for q's thread than CPU b: q's node first, then
 * the one with fewer requests (a free CPU may still see hops). */
static int better(const struct fring_place *p, uint32_t q,
		  const struct fring_place_load *w, uint32_t i, uint32_t b)
{
	int ni = same_node(p, q, i), nb = same_node(p, q, b);

	return ni != nb ? ni : w[i].requests < w[b].requests;
}

/* A free CPU for qid q: the one it has if still free, else the best;
 * taken[] marks CPUs given out. -1 if none is left. */
static int pick_free(const struct fring_place *p, uint32_t q,
		     const struct fring_place_load *w, const uint8_t *loaded,
		     const uint8_t *taken)
{
	int c = p->cpu[q], best = -1;

	if (c >= 0 && (uint32_t)c != q && p->usable[c] && !loaded[c] && !taken[c])
		return c;
	for (uint32_t i = 0; i < p->nr; i++) {
		if (!p->usable[i] || loaded[i] || taken[i])
			continue;
		if (best < 0 || better(p, q, w, i, (uint32_t)best))
			best = (int)i;
	}
	return best;
}

int fring_place_propose(const struct fring_place *p,
			const struct fring_place_load *w, int *out)
{
	uint64_t total = 0;
	uint8_t *loaded, *deep, *taken;
	int kind = FRING_PLACE_LOCAL;

	for (uint32_t q = 0; q < p->nr; q++)
		total += w[q].requests;
	if (total < FRING_PLACE_MIN_REQUESTS)
		return -1;
	loaded = calloc(3 * (size_t)p->nr, 1);
	if (!loaded)
		return -1;
	deep = loaded + p->nr;
	taken = deep + p->nr;
	for (uint32_t q = 0; q < p->nr; q++) {
		/* own / total >= 1 / (DIV * nr), without division */
		uint64_t own = w[q].requests - (w[q].hop < w[q].requests
						? w[q].hop : w[q].requests);
		uint64_t mark = (uint32_t)q != (uint32_t)p->cpu[q]
					? FRING_PLACE_DEEP_STAY : FRING_PLACE_DEEP_ENTER;

		loaded[q] = own && own * FRING_PLACE_LOADED_DIV * p->nr >= total;
		deep[q] = loaded[q] && w[q].depth_sum * 100 >= w[q].requests * mark;
		out[q] = local_cpu(p, q);
	}
	/* Busiest deep qid first: when free CPUs run short, they go where
	 * most requests are. */
	for (;;) {
		int best = -1, c;

		for (uint32_t q = 0; q < p->nr; q++)
			if (deep[q] && (best < 0 || w[q].requests > w[best].requests))
				best = (int)q;
		if (best < 0)
			break;
		deep[best] = 0;
		c = pick_free(p, (uint32_t)best, w, loaded, taken);
		if (c < 0)
			break;
		taken[c] = 1;
		out[best] = c;
		/* Swap: c's own qid is idle, so its thread takes best's CPU.
		 * A client that hops between the two CPUs (the scheduler
		 * moves it, or io-wq issues for it) then finds its queue's
		 * thread on the other CPU either way. */
		if (!deep[c] && out[c] == local_cpu(p, (uint32_t)c) &&
		    p->usable[best])
			out[c] = best;
		kind = FRING_PLACE_BESIDE;
	}
	free(loaded);
	return kind;
}

static uint64_t window_requests(const struct fring_place *p,
				const struct fring_place_load *w)
{
	uint64_t total = 0;

	for (uint32_t q = 0; q < p->nr; q++)
		total += w[q].requests;
	return total;
}

static void set_cpu(struct fring_place *p, const int *cpu, int kind)
{
	memcpy(p->cpu, cpu, p->nr * sizeof(*cpu));
	p->kind = kind;
}

/* A placement lost its trial: remember it and hold it off, each loss in
 * a row for twice as long. */
static void hold_off(struct fring_place *p, const int *lost)
{
	memcpy(p->failed, lost, p->nr * sizeof(*lost));
	p->hold = p->backoff;
	p->backoff = p->backoff * 2 > FRING_PLACE_HOLD_MAX ? FRING_PLACE_HOLD_MAX
							   : p->backoff * 2;
	p->trial = 0;
}

/* The end of a kept trial's check (the placement before it, on trial
 * again): won, it stays and the kept placement is held off; lost, the
 * kept placement is back for good. 1 if the placement changed. */
static int confirm_verdict(struct fring_place *p, int won)
{
	p->confirming = 0;
	if (won) {
		p->event = FRING_PLACE_EV_OVERTURNED;
		p->overturned++;
		hold_off(p, p->from);
		return 0;
	}
	p->event = FRING_PLACE_EV_CONFIRMED;
	p->trial = 0;
	set_cpu(p, p->from, p->from_kind);
	p->nhist = 0;
	return 1;
}

/* A window of a running trial: after the settling window, add up the
 * rate; at the end keep the trial's placement, or go back and hold it
 * off. 1 if the placement changed. */
static int trial_window(struct fring_place *p, uint64_t total)
{
	uint32_t seen = p->trial++; /* windows of the trial, this one included */
	uint64_t want;
	int won;

	if (seen <= FRING_PLACE_TRIAL_SETTLE)
		return 0;
	p->trial_sum += total;
	if (seen < FRING_PLACE_TRIAL_SETTLE + FRING_PLACE_TRIAL_MEASURE)
		return 0;
	want = p->base_rate * FRING_PLACE_TRIAL_MEASURE;
	p->rate_pct = want ? (uint32_t)(p->trial_sum * 100 / want) : 100;
	won = p->verdict > 0 ||
	      (!p->verdict && p->trial_sum * 100 >= want * FRING_PLACE_TRIAL_KEEP_PCT);
	if (p->confirming)
		return confirm_verdict(p, won);
	if (won) {
		p->event = FRING_PLACE_EV_KEPT;
		p->trials_kept++;
		p->backoff = FRING_PLACE_HOLD_MIN;
		p->trial = 0;
		if (!p->verdict) /* tests that fix verdicts fix the checks too */
			p->confirm_in = FRING_PLACE_CONFIRM_AFTER;
		return 0;
	}
	p->event = FRING_PLACE_EV_REVERTED;
	hold_off(p, p->cpu);
	set_cpu(p, p->from, p->from_kind);
	p->nhist = 0;
	if (!p->verdict) { /* tests that fix verdicts fix the holds too */
		p->recheck = 1;
		p->recheck_sum = 0;
		p->trial_rate = p->trial_sum / FRING_PLACE_TRIAL_MEASURE;
	}
	return 1;
}

/* A window after a lost trial, back where it came from: measured as the
 * trial was; a rate under RECHECK_PCT % of the trial's lifts the hold. */
static void recheck_window(struct fring_place *p, uint64_t total)
{
	uint32_t seen = p->recheck++;
	uint64_t after;

	if (seen <= FRING_PLACE_TRIAL_SETTLE)
		return;
	p->recheck_sum += total;
	if (seen < FRING_PLACE_TRIAL_SETTLE + FRING_PLACE_TRIAL_MEASURE)
		return;
	p->recheck = 0;
	after = p->recheck_sum / FRING_PLACE_TRIAL_MEASURE;
	if (after * 100 >= p->trial_rate * FRING_PLACE_RECHECK_PCT)
		return; /* going back served more: the loss stands */
	p->event = FRING_PLACE_EV_RECHECKED;
	p->rate_pct = p->trial_rate ? (uint32_t)(after * 100 / p->trial_rate) : 0;
	p->hold = 0;
	p->backoff = p->backoff / 2 < FRING_PLACE_HOLD_MIN ? FRING_PLACE_HOLD_MIN
							    : p->backoff / 2;
}

/* The mean requests per window of the applied placement's last windows. */
static uint64_t base_rate(const struct fring_place *p)
{
	uint64_t sum = 0;
	uint32_t n = p->nhist < FRING_PLACE_BASE_WINDOWS ? p->nhist
							  : FRING_PLACE_BASE_WINDOWS;

	for (uint32_t i = 0; i < n; i++)
		sum += p->hist[i];
	return n ? sum / n : 0;
}

/* A kept trial's check: back to the placement before it (still in
 * from[]), on trial against the kept one's last windows. */
static int start_confirm(struct fring_place *p)
{
	int kind = p->from_kind;

	memcpy(p->next, p->from, p->nr * sizeof(*p->from));
	memcpy(p->from, p->cpu, p->nr * sizeof(*p->cpu));
	p->from_kind = p->kind;
	p->base_rate = base_rate(p);
	p->trial = 1;
	p->trial_sum = 0;
	p->confirming = 1;
	p->event = FRING_PLACE_EV_CONFIRM;
	set_cpu(p, p->next, kind);
	p->agree = 0;
	p->nhist = 0;
	return 1;
}

int fring_place_step(struct fring_place *p, const struct fring_place_load *w)
{
	uint64_t total = window_requests(p, w);
	int kind = fring_place_propose(p, w, p->cand);

	p->event = FRING_PLACE_EV_NONE;
	if (kind < 0) /* too light to learn from: nothing pends, nothing ends */
		return 0;
	p->hist[p->nhist++ % FRING_PLACE_BASE_WINDOWS] = total;
	if (p->hold)
		p->hold--;
	if (p->recheck)
		recheck_window(p, total);
	if (!memcmp(p->cand, p->cpu, p->nr * sizeof(*p->cand)) ||
	    (p->hold && !memcmp(p->cand, p->failed, p->nr * sizeof(*p->cand))) ||
	    (p->confirming && !memcmp(p->cand, p->from, p->nr * sizeof(*p->cand)))) {
		/* What is applied, what lost its trial a moment ago, or what
		 * a running check is measured against. */
		p->agree = 0;
		if (p->trial)
			return trial_window(p, total);
		if (p->confirm_in && !--p->confirm_in)
			return start_confirm(p);
		return 0;
	}
	if (p->agree && !memcmp(p->cand, p->next, p->nr * sizeof(*p->cand))) {
		p->agree++;
	} else {
		memcpy(p->next, p->cand, p->nr * sizeof(*p->cand));
		p->next_kind = kind;
		p->agree = 1;
	}
	if (p->agree < (p->next_kind == FRING_PLACE_BESIDE ? FRING_PLACE_TRIAL_AGREE
							   : FRING_PLACE_AGREE))
		return p->trial ? trial_window(p, total) : 0;
	p->event = FRING_PLACE_EV_MOVED;
	if (p->trial && !memcmp(p->next, p->from, p->nr * sizeof(*p->next))) {
		/* The load that asked for the trial went away with it (moved
		 * beside, a client's depth can fall under the mark): a loss,
		 * or the two would take turns for ever. */
		p->event = FRING_PLACE_EV_UNDONE;
		hold_off(p, p->cpu);
	}
	p->trial = 0;
	p->recheck = 0;
	p->confirming = 0;
	p->confirm_in = 0;
	/* Moving threads away from their CPUs is a trial, measured against
	 * the rate of the windows before it. */
	if (p->next_kind == FRING_PLACE_BESIDE) {
		memcpy(p->from, p->cpu, p->nr * sizeof(*p->cpu));
		p->from_kind = p->kind;
		p->base_rate = base_rate(p);
		p->trial = 1;
		p->trial_sum = 0;
		p->trials++;
		p->event = FRING_PLACE_EV_TRIAL;
	}
	set_cpu(p, p->next, p->next_kind);
	p->agree = 0;
	p->nhist = 0;
	return 1;
}

const char *fring_place_kind_name(int kind)
{
	return kind == FRING_PLACE_BESIDE ? "beside" : "local";
}
