// SPDX-License-Identifier: MIT
/*
 * The in-flight table, where an INTERRUPT (and the interrupt deadline,
 * expiry.h) finds its target. Request lifetime (request.c) enters and
 * removes requests; dispatch and the session's teardown use the rest.
 */
#ifndef FRING_INFLIGHT_H
#define FRING_INFLIGHT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct fring_request;

/* In-flight table: requests awaiting a reply, by unique. A shard per
 * queue (queue % FRING_INFLIGHT_SHARDS, as the statistics), so a queue
 * thread enters and removes its requests under locks no other CPU takes:
 * one table striped by unique alone had both CPUs' queue threads bounce
 * every bucket's line between them, 13% of fring's own CPU time in a
 * 4k-read profile. Within a shard, buckets by unique for /dev/fuse's
 * workers. A lookup by unique (INTERRUPT, its deadline; rare) tries
 * every shard. An INTERRUPT can overtake its target when another worker
 * read the target but has not entered it yet; such interrupts wait in
 * `pending` (a short list whose slots expire) for the target to arrive. */
#define FRING_INFLIGHT_SHARDS 16
#define FRING_INFLIGHT_BUCKETS 8 /* per shard */
#define FRING_PENDING_INTERRUPTS 32
struct fring_inflight {
	struct fring_inflight_bucket {
		pthread_mutex_t lock;
		struct fring_request *head;
	} __attribute__((aligned(64)))
	b[FRING_INFLIGHT_SHARDS][FRING_INFLIGHT_BUCKETS]; /* a line each */
	pthread_mutex_t pending_lock;
	atomic_int npending;
	struct {
		uint64_t unique;
		int64_t when_ms; /* 0: free slot */
	} pending[FRING_PENDING_INTERRUPTS];
};

void fring_inflight_init(struct fring_inflight *t);
void fring_inflight_destroy(struct fring_inflight *t);
/* Set the interrupted flag of the request `unique`: 0 if it is in the
 * table, else 1 (remembered briefly in case the target is about to be
 * entered; if it was answered already, its slot just expires). */
int fring_inflight_interrupt(struct fring_inflight *t, uint64_t unique);
/* Remove and return any one request still in the table, or NULL (for the
 * teardown of requests a plugin never answered). */
struct fring_request *fring_inflight_pop(struct fring_inflight *t);

/* Enter r (by r->unique) in the table / take it out again (no-op if it is
 * not there). For request lifetime (fring_req_track, fring_req_finish). */
void fring_inflight_add(struct fring_inflight *t, struct fring_request *r);
void fring_inflight_del(struct fring_inflight *t, struct fring_request *r);
/* After fring_inflight_add: if an INTERRUPT for r overtook it (waits in
 * `pending`), take it and set r's interrupted flag. */
void fring_inflight_take_pending(struct fring_inflight *t,
				 struct fring_request *r);

/* Find `unique` and call fn(r, arg) with r's bucket locked (r cannot
 * leave the table meanwhile). Returns fn's result, or -1 if `unique` is
 * not in the table. For the interrupt and its deadline's claim. */
int fring_inflight_find_do(struct fring_inflight *t, uint64_t unique,
			   int (*fn)(struct fring_request *r, void *arg),
			   void *arg);
/* The earliest fring_req.t0_ns of the requests in the table (0: none
 * timed). For statistics: locks each bucket in turn. */
uint64_t fring_inflight_oldest(struct fring_inflight *t);

#endif /* FRING_INFLIGHT_H */
