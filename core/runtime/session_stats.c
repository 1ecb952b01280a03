// SPDX-License-Identifier: MIT
/* A session's counters at its end (FRING_LOG=debug). */
#include "session.h"
#include "session_internal.h"

#include <stdatomic.h>
#include <stdio.h>

#include "../base/log.h"

void fring_session_log_stats(const struct fring_session *s)
{
	struct fring_stats sum, *st = &sum;
	unsigned long total = 0;

	fring_dispatch_stats(&s->dx, &sum);
	for (unsigned i = 0; i <= FUSE_OPCODE_MAX; i++)
		total += atomic_load(&st->requests[i]);
	fring_dbg("%s: %lu requests, %lu replies (%lu errors), %lu malformed, "
		  "%lu interrupts, %lu plugin misuses, %lu failed writes",
		  s->mountpoint, total, atomic_load(&st->replies),
		  atomic_load(&st->errors), atomic_load(&st->malformed),
		  atomic_load(&st->interrupts), atomic_load(&st->misuse),
		  atomic_load(&st->send_failures));
	if (fring_log_enabled(FRING_LOG_DEBUG)) {
		char line[1024];
		size_t n = 0;

		for (unsigned i = 0; i <= FUSE_OPCODE_MAX && n < sizeof(line);
		     i++) {
			unsigned long c = atomic_load(&st->requests[i]);

			if (c)
				n += (size_t)snprintf(
					line + n, sizeof(line) - n, "%s%s %lu",
					n ? ", " : "",
					i == FUSE_OPCODE_MAX
						? "unknown"
						: fring_opcode_name(i),
					c);
		}
		fring_dbg("%s: requests by opcode: %s", s->mountpoint,
			  n ? line : "none");
	}
	for (int i = 0; i < FRING_TRANSPORTS_MAX; i++)
		if (s->ts.t[i] && s->ts.t[i]->ops->log_stats)
			s->ts.t[i]->ops->log_stats(s->ts.t[i], s->mountpoint);
}
