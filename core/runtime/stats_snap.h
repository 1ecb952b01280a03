// SPDX-License-Identifier: MIT
/*
 * A mount's statistics at one moment: the request layer's counters and
 * latency histograms (request/stats.h, request/latency.h) and each
 * transport's queue counters (transport.h), read without stopping any
 * queue thread. The log at stop, the control socket (`fring stats`) and
 * the Prometheus endpoint all print one of these (stats_format.c).
 */
#ifndef FRING_RUNTIME_STATS_SNAP_H
#define FRING_RUNTIME_STATS_SNAP_H

#include <stdint.h>
#include <stdio.h>

#include "../request/request.h"
#include "../transport/transport.h"

#define FRING_SNAP_QUEUES 64

struct fring_snap_queue {
	uint32_t queue;
	/* The request counters of shard queue % FRING_STAT_SHARDS (with more
	 * queues than shards, several queues share one). */
	int has_req;
	struct fring_stats req;
	int has_tq; /* a transport queue of this qid */
	struct fring_tq_stats tq;
};

struct fring_snapshot {
	const char *mountpoint, *transport;
	int latency; /* histograms kept (stats.enabled) */
	struct fring_stats total;
	struct fring_lat_sum lat[FRING_LAT_OPS];
	long in_flight;
	uint64_t oldest_ns; /* age of the oldest request in flight; 0: none */
	uint64_t placement_changes;
	struct fring_tq_stats tq_total; /* its queues summed (qid unused) */
	unsigned nq;
	struct fring_snap_queue q[FRING_SNAP_QUEUES];
};

struct fring_session;
/* Take a snapshot of session s (malloc'ed; NULL when out of memory). */
struct fring_snapshot *fring_session_snapshot(const struct fring_session *s);

/* Printers (stats_format.c). JSON: one object, the schema of fring(1)'s
 * STATISTICS. The Prometheus text format's samples, labelled mount=. */
void fring_snap_text(FILE *out, const struct fring_snapshot *sn);
void fring_snap_json(FILE *out, const struct fring_snapshot *sn);
void fring_snap_prom(FILE *out, const struct fring_snapshot *sn);
/* The two FRING_LOG=debug lines at stop. */
void fring_snap_log(const struct fring_snapshot *sn);

#endif /* FRING_RUNTIME_STATS_SNAP_H */
