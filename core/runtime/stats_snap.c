// SPDX-License-Identifier: MIT
/* A session's statistics snapshot; see stats_snap.h. */
#include "stats_snap.h"

#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

static struct fring_snap_queue *queue_of(struct fring_snapshot *sn, uint32_t q)
{
	for (unsigned i = 0; i < sn->nq; i++)
		if (sn->q[i].queue == q)
			return &sn->q[i];
	if (sn->nq == FRING_SNAP_QUEUES)
		return NULL;
	sn->q[sn->nq].queue = q;
	return &sn->q[sn->nq++];
}

static void add_tq(struct fring_tq_stats *t, const struct fring_tq_stats *q)
{
	t->requests += q->requests;
	t->pool_bufs += q->pool_bufs;
	t->pool_in_use += q->pool_in_use;
	t->pool_waits += q->pool_waits;
	t->zc_reads += q->zc_reads;
	t->zc_writes += q->zc_writes;
	t->zc_fallbacks += q->zc_fallbacks;
	t->polls += q->polls;
	t->poll_ns += q->poll_ns;
}

static void transports(struct fring_snapshot *sn, const struct fring_session *s)
{
	struct fring_tq_stats tq[FRING_SNAP_QUEUES];

	for (int i = 0; i < FRING_TRANSPORTS_MAX; i++) {
		struct fring_transport *t = s->ts.t[i];
		uint64_t moved = 0;
		unsigned n;

		if (!t || !t->ops->stats)
			continue;
		n = t->ops->stats(t, tq, FRING_SNAP_QUEUES, &moved);
		sn->placement_changes += moved;
		for (unsigned j = 0; j < n; j++) {
			struct fring_snap_queue *q = queue_of(sn, tq[j].qid);

			add_tq(&sn->tq_total, &tq[j]);
			if (q) {
				q->has_tq = 1;
				q->tq = tq[j];
			}
		}
	}
}

static int by_queue(const void *a, const void *b)
{
	const struct fring_snap_queue *x = a, *y = b;

	return x->queue < y->queue ? -1 : x->queue > y->queue;
}

struct fring_snapshot *fring_session_snapshot(const struct fring_session *s)
{
	const struct fring_reqs *rq = &s->dx.rq;
	struct fring_snapshot *sn = calloc(1, sizeof(*sn));
	uint64_t oldest;

	if (!sn)
		return NULL;
	sn->mountpoint = s->mountpoint;
	sn->transport = fring_transports_name(&s->ts);
	for (unsigned i = 0; i < FRING_STAT_SHARDS; i++) {
		struct fring_stats one = { 0 };
		struct fring_snap_queue *q;

		fring_stats_add(&one, &rq->stats[i]);
		fring_stats_add(&sn->total, &rq->stats[i]);
		if (!fring_stats_requests(&one))
			continue; /* a shard no queue counted in */
		q = queue_of(sn, i);
		if (q) {
			q->has_req = 1;
			q->req = one;
		}
	}
	sn->in_flight = sn->total.outstanding;
	sn->latency = rq->lat != NULL;
	if (rq->lat) {
		for (unsigned op = 0; op < FRING_LAT_OPS; op++)
			fring_lat_sum_op(rq->lat, FRING_STAT_SHARDS, op,
					 &sn->lat[op]);
		/* The table's locks are the writers': a cast, not a change. */
		oldest = fring_inflight_oldest(
			(struct fring_inflight *)&rq->inflight);
		if (oldest) {
			uint64_t now = fring_lat_now();

			sn->oldest_ns = now > oldest ? now - oldest : 1;
		}
	}
	transports(sn, s);
	qsort(sn->q, sn->nq, sizeof(sn->q[0]), by_queue);
	return sn;
}
