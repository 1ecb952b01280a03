// SPDX-License-Identifier: MIT
/* Reply deadline of interrupted requests; see expiry.h. */
#define _GNU_SOURCE
#include "expiry.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "../base/log.h"

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fring_expiry_init(struct fring_expiry *e, const char *name,
		       fring_expiry_fn due, void *ud)
{
	pthread_condattr_t ca;

	memset(e, 0, sizeof(*e));
	e->name = name;
	e->due = due;
	e->ud = ud;
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
}

/* Remove and return the uniques due by `now` (lock held). */
static unsigned take_due(struct fring_expiry *e, int64_t now, uint64_t *out,
			 int64_t *next)
{
	unsigned got = 0;

	*next = INT64_MAX;
	for (unsigned i = 0; i < e->n;) {
		if (e->q[i].due_ms <= now) {
			out[got++] = e->q[i].unique;
			e->q[i] = e->q[--e->n];
			continue;
		}
		if (e->q[i].due_ms < *next)
			*next = e->q[i].due_ms;
		i++;
	}
	return got;
}

static void *expiry_main(void *arg)
{
	struct fring_expiry *e = arg;
	uint64_t due[FRING_EXPIRY_SLOTS];

	pthread_mutex_lock(&e->lock);
	while (!e->stopping) {
		int64_t next, now = mono_ms();
		unsigned n = take_due(e, now, due, &next);

		if (n) {
			pthread_mutex_unlock(&e->lock);
			for (unsigned i = 0; i < n; i++)
				e->due(e->ud, due[i],
				       FRING_INTERRUPT_DEADLINE_MS);
			pthread_mutex_lock(&e->lock);
			continue;
		}
		if (next == INT64_MAX) {
			pthread_cond_wait(&e->cond, &e->lock);
		} else {
			struct timespec ts = { .tv_sec = next / 1000,
					       .tv_nsec = (next % 1000) * 1000000L };

			pthread_cond_timedwait(&e->cond, &e->lock, &ts);
		}
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

void fring_expiry_arm(struct fring_expiry *e, uint64_t unique)
{
	unsigned slot;

	pthread_mutex_lock(&e->lock);
	if (e->stopping)
		goto out;
	if (!e->started) {
		/* Called from a transport thread: all signals blocked, which
		 * the new thread inherits. */
		int ret = pthread_create(&e->thread, NULL, expiry_main, e);

		if (ret) {
			fring_log_ratelimited(
				"expiry-thread", FRING_LOG_WARN,
				"%s: no thread for interrupt deadlines: %s",
				e->name, strerror(ret));
			goto out;
		}
		e->started = 1;
	}
	slot = e->n;
	if (slot == FRING_EXPIRY_SLOTS) {
		/* Full: replace the slot due first (it is the oldest). */
		slot = 0;
		for (unsigned i = 1; i < e->n; i++)
			if (e->q[i].due_ms < e->q[slot].due_ms)
				slot = i;
	} else {
		e->n++;
	}
	e->q[slot].unique = unique;
	e->q[slot].due_ms = mono_ms() + FRING_INTERRUPT_DEADLINE_MS;
	pthread_cond_signal(&e->cond);
out:
	pthread_mutex_unlock(&e->lock);
}

void fring_expiry_stop(struct fring_expiry *e)
{
	int join;

	pthread_mutex_lock(&e->lock);
	e->stopping = 1;
	join = e->started;
	e->started = 0;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
	if (join)
		pthread_join(e->thread, NULL);
}

void fring_expiry_destroy(struct fring_expiry *e)
{
	fring_expiry_stop(e);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
}
