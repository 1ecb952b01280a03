// SPDX-License-Identifier: MIT
/*
 * Request latency histograms: per opcode (the ops.def index, as
 * fring_stats.requests), fixed log2 buckets split in four (HDR style:
 * every bucket within 25% of its bounds), from 1 us to 2^36 ns (about
 * 69 s). A queue's shard is written with relaxed atomic adds on its own
 * cache lines, no lock; percentiles are computed by the reader.
 */
#ifndef FRING_REQUEST_LATENCY_H
#define FRING_REQUEST_LATENCY_H

#include <stdatomic.h>
#include <stdint.h>

#include "../base/clock.h"
#include "../proto/proto.h"

#define FRING_LAT_MIN_SHIFT 10 /* bucket 0: below 1024 ns */
#define FRING_LAT_OCTAVES 26
#define FRING_LAT_SUB 4
#define FRING_LAT_BUCKETS (1 + FRING_LAT_OCTAVES * FRING_LAT_SUB + 1)
#define FRING_LAT_OPS (FUSE_OPCODE_MAX + 1) /* [FUSE_OPCODE_MAX]: unknown */

struct fring_lat {
	atomic_ulong n[FRING_LAT_OPS][FRING_LAT_BUCKETS];
	atomic_ulong sum_ns[FRING_LAT_OPS];
} __attribute__((aligned(64)));

/* Request times: the cheap clock (base/clock.h), set up by
 * fring_reqs_enable_latency. */
static inline uint64_t fring_lat_now(void)
{
	return fring_clock_ns();
}

/* The bucket of a latency, and the largest latency bucket b holds
 * (UINT64_MAX for the last, open one). */
static inline unsigned fring_lat_bucket(uint64_t ns)
{
	unsigned msb, b;

	if (ns < (1ull << FRING_LAT_MIN_SHIFT))
		return 0;
	msb = 63u - (unsigned)__builtin_clzll(ns);
	b = 1 + (msb - FRING_LAT_MIN_SHIFT) * FRING_LAT_SUB +
	    (unsigned)((ns >> (msb - 2)) & (FRING_LAT_SUB - 1));
	return b < FRING_LAT_BUCKETS - 1 ? b : FRING_LAT_BUCKETS - 1;
}
uint64_t fring_lat_upper(unsigned b);

static inline void fring_lat_record(struct fring_lat *l, unsigned op,
				    uint64_t ns)
{
	atomic_fetch_add_explicit(&l->n[op][fring_lat_bucket(ns)], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&l->sum_ns[op], ns, memory_order_relaxed);
}

/* The histograms a request of queue `queue` counts in (rq: a struct
 * fring_reqs *, request.h, whose lat is set). */
#define fring_lat_of(rq, queue) (&(rq)->lat[(queue) % FRING_STAT_SHARDS])

/* One opcode's histogram summed over the shards. */
struct fring_lat_sum {
	uint64_t n[FRING_LAT_BUCKETS];
	uint64_t count, sum_ns;
};
void fring_lat_sum_op(const struct fring_lat *shards, unsigned nshards,
		      unsigned op, struct fring_lat_sum *out);
/* The quantile bp/10000 (p99.9: 9990) in ns: the upper bound of the
 * bucket that holds it, so p50 <= p99 <= p99.9 always; 0 with no samples. */
uint64_t fring_lat_quantile(const struct fring_lat_sum *s, unsigned bp);

#endif /* FRING_REQUEST_LATENCY_H */
