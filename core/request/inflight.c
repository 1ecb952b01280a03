// SPDX-License-Identifier: MIT
/* The in-flight table and its pending interrupts; see inflight.h. */
#define _GNU_SOURCE
#include "inflight.h"

#include <string.h>
#include <time.h>

#include "req.h"

static unsigned bucket_of(uint64_t unique)
{
	/* uniques step by 2; mix so consecutive ones spread over buckets */
	uint64_t h = (unique >> 1) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 58) % FRING_INFLIGHT_BUCKETS;
}

void fring_inflight_init(struct fring_inflight *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < FRING_INFLIGHT_BUCKETS; i++)
		pthread_mutex_init(&t->b[i].lock, NULL);
	pthread_mutex_init(&t->pending_lock, NULL);
	atomic_init(&t->npending, 0);
}

void fring_inflight_destroy(struct fring_inflight *t)
{
	for (unsigned i = 0; i < FRING_INFLIGHT_BUCKETS; i++)
		pthread_mutex_destroy(&t->b[i].lock);
	pthread_mutex_destroy(&t->pending_lock);
}

void fring_inflight_add(struct fring_inflight *t, struct fring_request *r)
{
	unsigned i = bucket_of(r->unique);

	pthread_mutex_lock(&t->b[i].lock);
	r->hnext = t->b[i].head;
	t->b[i].head = r;
	pthread_mutex_unlock(&t->b[i].lock);
}

void fring_inflight_del(struct fring_inflight *t, struct fring_request *r)
{
	unsigned i = bucket_of(r->unique);
	struct fring_request **pp;

	pthread_mutex_lock(&t->b[i].lock);
	for (pp = &t->b[i].head; *pp; pp = &(*pp)->hnext) {
		if (*pp == r) {
			*pp = r->hnext;
			break;
		}
	}
	pthread_mutex_unlock(&t->b[i].lock);
	r->hnext = NULL;
}

struct fring_request *fring_inflight_lock_find(struct fring_inflight *t,
					       uint64_t unique)
{
	unsigned i = bucket_of(unique);
	struct fring_request *r;

	pthread_mutex_lock(&t->b[i].lock);
	for (r = t->b[i].head; r && r->unique != unique; r = r->hnext)
		;
	return r;
}

void fring_inflight_unlock(struct fring_inflight *t, uint64_t unique)
{
	pthread_mutex_unlock(&t->b[bucket_of(unique)].lock);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

/* Find `unique` in its bucket and flag it. Returns 1 if found. */
static int bucket_interrupt(struct fring_inflight *t, uint64_t unique)
{
	struct fring_request *r = fring_inflight_lock_find(t, unique);

	if (r)
		atomic_store(&r->interrupted, 1);
	fring_inflight_unlock(t, unique);
	return r != NULL;
}

/* Claim the pending-interrupt slot of `unique` if any (pending_lock held). */
static int pending_take(struct fring_inflight *t, uint64_t unique)
{
	for (unsigned i = 0; i < FRING_PENDING_INTERRUPTS; i++) {
		if (t->pending[i].when_ms && t->pending[i].unique == unique) {
			t->pending[i].when_ms = 0;
			atomic_fetch_sub(&t->npending, 1);
			return 1;
		}
	}
	return 0;
}

void fring_inflight_take_pending(struct fring_inflight *t,
				 struct fring_request *r)
{
	if (atomic_load(&t->npending) > 0) {
		pthread_mutex_lock(&t->pending_lock);
		if (pending_take(t, r->unique))
			atomic_store(&r->interrupted, 1);
		pthread_mutex_unlock(&t->pending_lock);
	}
}

int fring_inflight_interrupt(struct fring_inflight *t, uint64_t unique)
{
	int64_t now = now_ms();
	unsigned slot = 0;
	int ret = 1;

	if (bucket_interrupt(t, unique))
		return 0;
	pthread_mutex_lock(&t->pending_lock);
	/* Reuse a free or expired slot, else the oldest. Expired slots hold
	 * interrupts whose target was answered before they arrived. */
	for (unsigned i = 0; i < FRING_PENDING_INTERRUPTS; i++) {
		int64_t w = t->pending[i].when_ms;

		if (w && now - w > 2000) {
			t->pending[i].when_ms = 0;
			atomic_fetch_sub(&t->npending, 1);
			w = 0;
		}
		if (!w || (t->pending[slot].when_ms && w < t->pending[slot].when_ms))
			slot = i;
	}
	if (!t->pending[slot].when_ms)
		atomic_fetch_add(&t->npending, 1);
	t->pending[slot].unique = unique;
	t->pending[slot].when_ms = now;
	/* Re-check after publishing npending: a worker that entered the
	 * target meanwhile either saw npending > 0 or is visible here. */
	if (bucket_interrupt(t, unique)) {
		pending_take(t, unique);
		ret = 0;
	}
	pthread_mutex_unlock(&t->pending_lock);
	return ret;
}

struct fring_request *fring_inflight_pop(struct fring_inflight *t)
{
	for (unsigned i = 0; i < FRING_INFLIGHT_BUCKETS; i++) {
		struct fring_request *r;

		pthread_mutex_lock(&t->b[i].lock);
		r = t->b[i].head;
		if (r)
			t->b[i].head = r->hnext;
		pthread_mutex_unlock(&t->b[i].lock);
		if (r) {
			r->hnext = NULL;
			return r;
		}
	}
	return NULL;
}

uint64_t fring_inflight_oldest(struct fring_inflight *t)
{
	uint64_t oldest = 0;

	for (unsigned i = 0; i < FRING_INFLIGHT_BUCKETS; i++) {
		pthread_mutex_lock(&t->b[i].lock);
		for (struct fring_request *r = t->b[i].head; r; r = r->hnext)
			if (r->t0_ns && (!oldest || r->t0_ns < oldest))
				oldest = r->t0_ns;
		pthread_mutex_unlock(&t->b[i].lock);
	}
	return oldest;
}
