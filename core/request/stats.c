// SPDX-License-Identifier: MIT
/* Summing the request counters' shards; see stats.h. */
#include "stats.h"

#include <string.h>

#define LD(f) atomic_load_explicit(&s->f, memory_order_relaxed)

void fring_stats_add(struct fring_stats *out, const struct fring_stats *s)
{
	for (unsigned op = 0; op <= FUSE_OPCODE_MAX; op++) {
		out->requests[op] += LD(requests[op]);
		out->op_errors[op] += LD(op_errors[op]);
	}
	out->replies += LD(replies);
	out->errors += LD(errors);
	out->malformed += LD(malformed);
	out->interrupts += LD(interrupts);
	out->misuse += LD(misuse);
	out->send_failures += LD(send_failures);
	out->bytes_read += LD(bytes_read);
	out->bytes_written += LD(bytes_written);
	out->outstanding += LD(outstanding);
}

void fring_stats_sum(const struct fring_stats *shards, struct fring_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < FRING_STAT_SHARDS; i++)
		fring_stats_add(out, &shards[i]);
}

long fring_stats_outstanding(const struct fring_stats *shards)
{
	long n = 0;

	for (unsigned i = 0; i < FRING_STAT_SHARDS; i++)
		n += atomic_load(&shards[i].outstanding);
	return n;
}

uint64_t fring_stats_requests(const struct fring_stats *st)
{
	uint64_t n = 0;

	for (unsigned op = 0; op <= FUSE_OPCODE_MAX; op++)
		n += atomic_load_explicit(&st->requests[op],
					  memory_order_relaxed);
	return n;
}
