// SPDX-License-Identifier: MIT
/* Summing the request counters' shards; see stats.h. */
#include "stats.h"

#include <string.h>

void fring_stats_sum(const struct fring_stats *shards, struct fring_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < FRING_STAT_SHARDS; i++) {
		const struct fring_stats *s = &shards[i];

		for (unsigned op = 0; op <= FUSE_OPCODE_MAX; op++)
			out->requests[op] += atomic_load(&s->requests[op]);
		out->replies += atomic_load(&s->replies);
		out->errors += atomic_load(&s->errors);
		out->malformed += atomic_load(&s->malformed);
		out->interrupts += atomic_load(&s->interrupts);
		out->misuse += atomic_load(&s->misuse);
		out->send_failures += atomic_load(&s->send_failures);
		out->outstanding += atomic_load(&s->outstanding);
	}
}

long fring_stats_outstanding(const struct fring_stats *shards)
{
	long n = 0;

	for (unsigned i = 0; i < FRING_STAT_SHARDS; i++)
		n += atomic_load(&shards[i].outstanding);
	return n;
}
