// SPDX-License-Identifier: MIT
/*
 * Per-mount request counters: relaxed atomics, statistics but for
 * `outstanding` (tracked requests not yet finished, which stop waits for).
 * Kept per shard of queues (fring_req.queue), each shard on its own cache
 * lines, so queue threads on different CPUs never write one line per
 * request; fring_stats_sum adds them up.
 */
#ifndef FRING_STATS_H
#define FRING_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "../proto/proto.h"

#define FRING_STAT_SHARDS 16
struct fring_stats {
	atomic_ulong
		requests[FUSE_OPCODE_MAX + 1]; /* [FUSE_OPCODE_MAX]: unknown */
	atomic_ulong op_errors[FUSE_OPCODE_MAX + 1]; /* replies with an error */
	atomic_ulong replies;
	atomic_ulong errors;	/* replies with error != 0 */
	atomic_ulong malformed; /* requests that failed to decode */
	atomic_ulong interrupts;
	atomic_ulong misuse; /* plugin replies of the wrong kind/value */
	atomic_ulong send_failures;
	atomic_ulong bytes_read;    /* READ reply data */
	atomic_ulong bytes_written; /* WRITE sizes replied */
	atomic_long outstanding;
} __attribute__((aligned(64)));

/* The counters a request of queue `queue` counts in. */
static inline struct fring_stats *fring_stats_of(struct fring_stats *shards,
						 uint32_t queue)
{
	return &shards[queue % FRING_STAT_SHARDS];
}

/* rq: a struct fring_reqs * (request.h). */
#define FRING_STAT_ADD(rq, queue, field, n)                                   \
	atomic_fetch_add_explicit(&fring_stats_of((rq)->stats, queue)->field, \
				  n, memory_order_relaxed)
#define FRING_STAT_INC(rq, queue, field) FRING_STAT_ADD(rq, queue, field, 1)

/* An opcode's index in the per-opcode arrays. */
static inline unsigned fring_stat_op(uint32_t opcode)
{
	return opcode < FUSE_OPCODE_MAX ? opcode : FUSE_OPCODE_MAX;
}

/* The shards summed into *out (a snapshot, not atomic as a whole). */
void fring_stats_sum(const struct fring_stats *shards, struct fring_stats *out);
/* One shard's snapshot (relaxed loads) into *out. */
void fring_stats_add(struct fring_stats *out, const struct fring_stats *s);
/* The requests of every opcode in one fring_stats. */
uint64_t fring_stats_requests(const struct fring_stats *st);
/* Tracked requests not yet finished, over every shard. */
long fring_stats_outstanding(const struct fring_stats *shards);

#endif /* FRING_STATS_H */
