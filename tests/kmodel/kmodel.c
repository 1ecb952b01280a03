// SPDX-License-Identifier: MIT
/* The seed-003 queue-selection model: see kmodel.h. */
#include <string.h>

#include "kmodel.h"

static int has(const struct kmodel_map *mp, int q)
{
	return (mp->reg[q / 64] >> (q % 64)) & 1;
}

/* The k-th registered qid (k < mp->nr), lowest first. */
static int nth(const struct kmodel_map *mp, int nr_cpus, int k)
{
	for (int q = 0; q < nr_cpus; q++)
		if (has(mp, q) && k-- == 0)
			return q;
	return -1;
}

/* The registered qid after q, wrapping to the lowest; q itself when it is
 * the only one. The series steps through a node's queues this way both to
 * move background work off the issuer and to pass over busy queues. */
static int after(const struct kmodel_map *mp, int nr_cpus, int q)
{
	for (int i = 1; i <= nr_cpus; i++)
		if (has(mp, (q + i) % nr_cpus))
			return (q + i) % nr_cpus;
	return -1;
}

/* Rebuild a table over the CPUs of node (or all CPUs, node -1). The whole
 * table is recomputed from the bitmap, so it does not depend on the order
 * the queues were registered in. The round-robin position advances only
 * for CPUs without a queue of their own (patch 7 skips the others before
 * counting), but deals over every registered qid, those serving their own
 * CPU included. */
static void rebuild(struct kmodel *m, struct kmodel_map *mp, int node)
{
	int dealt = 0;

	for (int c = 0; c < m->nr_cpus; c++) {
		if (node >= 0 && m->node_of[c] != node)
			continue;
		if (has(mp, c))
			mp->cpu_to_qid[c] = c;
		else
			mp->cpu_to_qid[c] = nth(mp, m->nr_cpus, dealt++ % mp->nr);
	}
}

static void add(struct kmodel *m, struct kmodel_map *mp, int node, int qid)
{
	if (has(mp, qid))
		return;
	mp->reg[qid / 64] |= 1ULL << (qid % 64);
	mp->nr++;
	rebuild(m, mp, node);
}

int kmodel_init(struct kmodel *m, int nr_cpus, const int *node_of)
{
	if (nr_cpus < 1 || nr_cpus > KMODEL_MAX_CPUS)
		return -1;
	memset(m, 0, sizeof(*m));
	m->nr_cpus = nr_cpus;
	m->threshold = KMODEL_THRESHOLD;
	m->retries = KMODEL_RETRIES;
	for (int c = 0; c < nr_cpus; c++) {
		int n = node_of ? node_of[c] : 0;

		if (n < 0 || n >= KMODEL_MAX_NODES)
			return -1;
		m->node_of[c] = n;
		if (n + 1 > m->nr_nodes)
			m->nr_nodes = n + 1;
	}
	return 0;
}

int kmodel_register(struct kmodel *m, int qid)
{
	if (qid < 0 || qid >= m->nr_cpus)
		return -1;
	add(m, &m->node[m->node_of[qid]], m->node_of[qid], qid);
	add(m, &m->all, -1, qid);
	/* One registered queue is enough for the ring to take requests
	 * (before the series every CPU's queue had to be there). */
	m->ready = 1;
	return 0;
}

int kmodel_select(struct kmodel *m, int cpu, int background)
{
	struct kmodel_map *nm;
	int q, first = -1;

	cpu %= m->nr_cpus; /* the kernel folds CPU ids into the qid range */
	nm = &m->node[m->node_of[cpu]];
	if (nm->nr) {
		q = nm->cpu_to_qid[cpu];
		/* Async work does better on a core other than the one
		 * submitting it (patch 5): only a CPU with its own queue maps
		 * to itself, so only those are moved. */
		if (background && q == cpu)
			q = after(nm, m->nr_cpus, q);
		/* Pass over a busy queue for the next ones of the node; the
		 * counter is read without a lock in the kernel, so being off
		 * by one there is harmless. */
		for (int tried = 0;; tried++) {
			if (m->nr_reqs[q] < (unsigned)m->threshold)
				return q;
			if (tried == m->retries)
				break;
			if (!tried)
				first = q;
			q = after(nm, m->nr_cpus, q);
			m->moves++;
		}
		/* All tried queues busy: keep the first choice. It is only
		 * remembered once a retry is taken, so with retries = 0 a
		 * busy queue falls through to the machine-wide table below,
		 * as the series' code does. */
		if (first >= 0)
			return first;
	}
	/* No queue on this node: any registered queue, by the global
	 * table (no background move, no retries there). */
	return m->all.nr ? m->all.cpu_to_qid[cpu] : -1;
}

void kmodel_queue_req(struct kmodel *m, int qid)
{
	/* Counted from the moment the request is put on the queue, whether
	 * it waits or goes straight to a ring entry (patch 1). */
	m->nr_reqs[qid]++;
}

void kmodel_done(struct kmodel *m, int qid)
{
	/* The request ended (reply committed) or was taken back before
	 * userspace got it. */
	if (m->nr_reqs[qid])
		m->nr_reqs[qid]--;
}

void kmodel_nodes_contiguous(int *node_of, int nr_cpus, int nodes)
{
	int per = (nr_cpus + nodes - 1) / nodes;

	for (int c = 0; c < nr_cpus; c++)
		node_of[c] = c / per;
}

void kmodel_nodes_interleaved(int *node_of, int nr_cpus, int nodes)
{
	for (int c = 0; c < nr_cpus; c++)
		node_of[c] = c % nodes;
}
