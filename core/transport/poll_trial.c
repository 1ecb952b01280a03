// SPDX-License-Identifier: MIT
/* Busy-poll trials: see poll_trial.h. */
#include <string.h>

#include "poll_trial.h"

void fring_poll_trial_init(struct fring_poll_trial *p)
{
	memset(p, 0, sizeof(*p));
	p->on = 1;
	p->hold = FRING_POLL_HOLD_MIN;
}

static uint64_t base_rate(const struct fring_poll_trial *p)
{
	uint64_t s = 0;

	for (uint32_t i = 0; i < FRING_POLL_BASE_WINDOWS; i++)
		s += p->base[i];
	return s / FRING_POLL_BASE_WINDOWS;
}

static int verdict(struct fring_poll_trial *p)
{
	uint64_t trial = p->sum / FRING_POLL_TRIAL_MEASURE, base = base_rate(p);
	uint64_t with = p->on ? trial : base, without = p->on ? base : trial;
	int was = p->before;

	p->rate_pct = without ? (uint32_t)(with * 100 / without) : 100;
	p->on = p->rate_pct >= FRING_POLL_GAIN_PCT;
	p->phase = 0;
	p->nbase = 0;
	if (p->on == was) {
		p->event = FRING_POLL_EV_KEPT;
		p->hold = p->hold * 2 < FRING_POLL_HOLD_MAX
				  ? p->hold * 2
				  : FRING_POLL_HOLD_MAX;
	} else {
		p->event = FRING_POLL_EV_CHANGED;
		p->hold = FRING_POLL_HOLD_MIN;
		p->changes++;
	}
	p->wait = p->hold;
	return p->on == was; /* back from the trial's setting */
}

int fring_poll_trial_step(struct fring_poll_trial *p, uint64_t requests)
{
	p->event = FRING_POLL_EV_NONE;
	if (requests < FRING_POLL_MIN_REQUESTS) {
		p->nbase = 0;
		if (!p->phase)
			return 0;
		p->phase = 0;
		p->event = FRING_POLL_EV_DROPPED;
		if (p->on == p->before)
			return 0;
		p->on = p->before;
		return 1;
	}
	if (p->phase) {
		if (p->phase++ > FRING_POLL_TRIAL_SETTLE)
			p->sum += requests;
		if (p->phase >
		    FRING_POLL_TRIAL_SETTLE + FRING_POLL_TRIAL_MEASURE)
			return verdict(p);
		return 0;
	}
	p->base[p->nbase++ % FRING_POLL_BASE_WINDOWS] = requests;
	if (p->wait)
		p->wait--;
	if (p->wait || p->nbase < FRING_POLL_BASE_WINDOWS)
		return 0;
	/* The base is the last BASE loaded windows in a row: try the other. */
	p->before = p->on;
	p->on = !p->on;
	p->phase = 1;
	p->sum = 0;
	p->trials++;
	p->event = FRING_POLL_EV_TRIAL;
	return 1;
}
