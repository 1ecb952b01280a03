// SPDX-License-Identifier: MIT
/* A session's counters at its end (FRING_LOG=debug): the snapshot
 * fring stats reads (stats_snap.h), then each transport's details. */
#include "session.h"
#include "session_internal.h"

#include <stdlib.h>

#include "../base/log.h"
#include "stats_snap.h"

void fring_session_log_stats(const struct fring_session *s)
{
	struct fring_snapshot *sn;

	if (!fring_log_enabled(FRING_LOG_DEBUG))
		return;
	sn = fring_session_snapshot(s);
	if (sn)
		fring_snap_log(sn);
	free(sn);
	for (int i = 0; i < FRING_TRANSPORTS_MAX; i++)
		if (s->ts.t[i] && s->ts.t[i]->ops->log_stats)
			s->ts.t[i]->ops->log_stats(s->ts.t[i], s->mountpoint);
}
