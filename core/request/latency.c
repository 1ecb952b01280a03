// SPDX-License-Identifier: MIT
/* Latency histograms, the reader's side; see latency.h. */
#include "latency.h"

#include <string.h>

uint64_t fring_lat_upper(unsigned b)
{
	unsigned o, sub;

	if (b == 0)
		return (1ull << FRING_LAT_MIN_SHIFT) - 1;
	if (b >= FRING_LAT_BUCKETS - 1)
		return UINT64_MAX;
	o = (b - 1) / FRING_LAT_SUB + FRING_LAT_MIN_SHIFT;
	sub = (b - 1) % FRING_LAT_SUB;
	return (1ull << o) + ((uint64_t)(sub + 1) << (o - 2)) - 1;
}

void fring_lat_sum_op(const struct fring_lat *shards, unsigned nshards,
		      unsigned op, struct fring_lat_sum *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < nshards; i++) {
		for (unsigned b = 0; b < FRING_LAT_BUCKETS; b++) {
			uint64_t c = atomic_load_explicit(&shards[i].n[op][b],
							  memory_order_relaxed);

			out->n[b] += c;
			out->count += c;
		}
		out->sum_ns += atomic_load_explicit(&shards[i].sum_ns[op],
						    memory_order_relaxed);
	}
}

uint64_t fring_lat_quantile(const struct fring_lat_sum *s, unsigned bp)
{
	uint64_t rank, seen = 0;

	if (!s->count)
		return 0;
	rank = (s->count * bp + 9999) / 10000; /* ceil, in basis points */
	if (rank < 1)
		rank = 1;
	for (unsigned b = 0; b < FRING_LAT_BUCKETS; b++) {
		seen += s->n[b];
		if (seen >= rank)
			return fring_lat_upper(b);
	}
	return fring_lat_upper(FRING_LAT_BUCKETS - 1);
}
