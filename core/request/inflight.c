// SPDX-License-Identifier: MIT
/* The in-flight table and its pending interrupts; see inflight.h. */
#define _GNU_SOURCE
#include "inflight.h"

#include <string.h>
#include <time.h>

#include "req.h"

#define EACH_BUCKET(t, bk)                                                   \
	for (struct fring_inflight_bucket *bk = &(t)->b[0][0];               \
	     bk <                                                            \
	     &(t)->b[0][0] + FRING_INFLIGHT_SHARDS * FRING_INFLIGHT_BUCKETS; \
	     bk++)

static unsigned hash_of(uint64_t unique)
{
	/* uniques step by 2; mix so consecutive ones spread over buckets */
	uint64_t h = (unique >> 1) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 58) % FRING_INFLIGHT_BUCKETS;
}

static struct fring_inflight_bucket *bucket_of(struct fring_inflight *t,
					       const struct fring_request *r)
{
	return &t->b[r->queue % FRING_INFLIGHT_SHARDS][hash_of(r->unique)];
}

void fring_inflight_init(struct fring_inflight *t)
{
	memset(t, 0, sizeof(*t));
	EACH_BUCKET(t, bk)
	pthread_mutex_init(&bk->lock, NULL);
	pthread_mutex_init(&t->pending_lock, NULL);
	atomic_init(&t->npending, 0);
}

void fring_inflight_destroy(struct fring_inflight *t)
{
	EACH_BUCKET(t, bk)
	pthread_mutex_destroy(&bk->lock);
	pthread_mutex_destroy(&t->pending_lock);
}

void fring_inflight_add(struct fring_inflight *t, struct fring_request *r)
{
	struct fring_inflight_bucket *bk = bucket_of(t, r);

	pthread_mutex_lock(&bk->lock);
	r->hnext = bk->head;
	bk->head = r;
	pthread_mutex_unlock(&bk->lock);
}

void fring_inflight_del(struct fring_inflight *t, struct fring_request *r)
{
	struct fring_inflight_bucket *bk = bucket_of(t, r);
	struct fring_request **pp;

	pthread_mutex_lock(&bk->lock);
	for (pp = &bk->head; *pp; pp = &(*pp)->hnext) {
		if (*pp == r) {
			*pp = r->hnext;
			break;
		}
	}
	pthread_mutex_unlock(&bk->lock);
	r->hnext = NULL;
}

int fring_inflight_find_do(struct fring_inflight *t, uint64_t unique,
			   int (*fn)(struct fring_request *r, void *arg),
			   void *arg)
{
	unsigned h = hash_of(unique);

	for (unsigned s = 0; s < FRING_INFLIGHT_SHARDS; s++) {
		struct fring_inflight_bucket *bk = &t->b[s][h];
		struct fring_request *r;
		int ret;

		pthread_mutex_lock(&bk->lock);
		for (r = bk->head; r && r->unique != unique; r = r->hnext)
			;
		ret = r ? fn(r, arg) : -1;
		pthread_mutex_unlock(&bk->lock);
		if (r)
			return ret;
	}
	return -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

static int flag_interrupted(struct fring_request *r, void *arg)
{
	(void)arg;
	atomic_store(&r->interrupted, 1);
	return 1;
}

/* Find `unique` in the table and flag it. Returns 1 if found. */
static int bucket_interrupt(struct fring_inflight *t, uint64_t unique)
{
	return fring_inflight_find_do(t, unique, flag_interrupted, NULL) == 1;
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
	EACH_BUCKET(t, bk)
	{
		struct fring_request *r;

		pthread_mutex_lock(&bk->lock);
		r = bk->head;
		if (r)
			bk->head = r->hnext;
		pthread_mutex_unlock(&bk->lock);
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

	EACH_BUCKET(t, bk)
	{
		pthread_mutex_lock(&bk->lock);
		for (struct fring_request *r = bk->head; r; r = r->hnext)
			if (r->t0_ns && (!oldest || r->t0_ns < oldest))
				oldest = r->t0_ns;
		pthread_mutex_unlock(&bk->lock);
	}
	return oldest;
}
