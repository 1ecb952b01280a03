// SPDX-License-Identifier: MIT
/* Queue thread heartbeats; see heartbeat.h. The hot path is one relaxed
 * store to the thread's own slot: no lock on a queue thread. */
#include "heartbeat.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "clock.h"

struct hb {
	_Atomic uint64_t busy_since; /* CLOCK_MONOTONIC ns; 0 while idle */
	struct hb *next;
};

static pthread_mutex_t hb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hb *hb_list;
static __thread struct hb *hb_self;

void fring_hb_enter(void)
{
	struct hb *h = calloc(1, sizeof(*h));

	fring_clock_init();
	/* Without memory the thread just goes unwatched. */
	if (!h)
		return;
	atomic_store(&h->busy_since, fring_clock_ns());
	pthread_mutex_lock(&hb_lock);
	h->next = hb_list;
	hb_list = h;
	pthread_mutex_unlock(&hb_lock);
	hb_self = h;
}

void fring_hb_leave(void)
{
	struct hb **p;

	if (!hb_self)
		return;
	pthread_mutex_lock(&hb_lock);
	for (p = &hb_list; *p; p = &(*p)->next) {
		if (*p == hb_self) {
			*p = hb_self->next;
			break;
		}
	}
	pthread_mutex_unlock(&hb_lock);
	free(hb_self);
	hb_self = NULL;
}

void fring_hb_idle(void)
{
	if (hb_self)
		atomic_store_explicit(&hb_self->busy_since, 0,
				      memory_order_relaxed);
}

void fring_hb_busy(void)
{
	if (hb_self)
		atomic_store_explicit(&hb_self->busy_since, fring_clock_ns(),
				      memory_order_relaxed);
}

uint64_t fring_hb_woke(void)
{
	return hb_self ? atomic_load_explicit(&hb_self->busy_since,
					      memory_order_relaxed)
		       : 0;
}

unsigned fring_hb_stuck(uint64_t max_ns, unsigned *nr_threads)
{
	uint64_t now = fring_clock_ns();
	unsigned stuck = 0, n = 0;

	pthread_mutex_lock(&hb_lock);
	for (struct hb *h = hb_list; h; h = h->next) {
		uint64_t since = atomic_load_explicit(&h->busy_since,
						      memory_order_relaxed);

		n++;
		if (since && now - since > max_ns)
			stuck++;
	}
	pthread_mutex_unlock(&hb_lock);
	if (nr_threads)
		*nr_threads = n;
	return stuck;
}
