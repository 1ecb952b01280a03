// SPDX-License-Identifier: MIT
/*
 * fring's queue placement (fring_place_pick_cpus) under the kernel's
 * reduced-queue selection rules (core/transport/README.md "Reduced
 * queues"), as modelled in kmodel.c.
 *
 * First the model's own rules on an 8-CPU, 2-node machine (CPUs 0-3 node
 * 0, 4-7 node 1), then the placement on a simulated 64-CPU, 4-node machine
 * for 1, 2, 4, 8, 16 and 64 queues, checked by check_map():
 *   (a) locality: a request from a CPU whose node has a registered queue
 *       is served on that node (foreground and background, idle and under
 *       load); and with at least as many queues as nodes, every node has
 *       one (else all of its requests leave it);
 *   (b) balance: the busiest queue serves at most 1.5x the mean share of
 *       CPUs in the static foreground map, and each node holds its share
 *       of queues (n / nodes, rounded either way: for n = 1, 2 at most one
 *       queue per node);
 *   (c) no request is ever sent to an unregistered queue.
 * A node-blind placement (CPUs 0..n-1) must fail (a) or (b).
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "kmodel.h"
#include "transport/place.h"

/* ---- the model's rules ---- */

static const int node8[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };

static void model8(struct kmodel *m, const int *qids, int n)
{
	cr_assert_eq(kmodel_init(m, 8, node8), 0);
	for (int i = 0; i < n; i++)
		cr_assert_eq(kmodel_register(m, qids[i]), 0);
}

Test(kmodel, no_queue_until_the_first_registration)
{
	struct kmodel m;

	model8(&m, NULL, 0);
	cr_expect_not(m.ready);
	cr_expect_eq(kmodel_select(&m, 3, 0), -1);
	cr_expect_eq(kmodel_register(&m, 8), -1, "qid out of range");
	cr_expect_eq(kmodel_register(&m, 6), 0);
	cr_expect(m.ready, "one queue makes the ring ready");
	for (int c = 0; c < 8; c++) {
		cr_expect_eq(kmodel_select(&m, c, 0), 6, "cpu %d", c);
		cr_expect_eq(kmodel_select(&m, c, 1), 6, "cpu %d bg", c);
	}
}

Test(kmodel, own_queue_first_then_round_robin_in_cpu_order)
{
	struct kmodel m;
	const int fwd[] = { 0, 2 }, rev[] = { 2, 0 };
	const int want[8] = { 0, 0, 2, 2, /* node 1 has none: global */ 0, 2, 0, 2 };
	struct kmodel r;

	model8(&m, fwd, 2);
	model8(&r, rev, 2);
	for (int c = 0; c < 8; c++) {
		cr_expect_eq(kmodel_select(&m, c, 0), want[c], "cpu %d", c);
		cr_expect_eq(kmodel_select(&r, c, 0), want[c], "cpu %d (reverse order)", c);
	}
	/* Patch 7: CPUs with their own queue do not advance the deal, so
	 * with qids 1 and 3 CPU 0 gets 1 and CPU 2 gets 3. */
	const int odd[] = { 1, 3 };

	model8(&m, odd, 2);
	cr_expect_eq(kmodel_select(&m, 0, 0), 1);
	cr_expect_eq(kmodel_select(&m, 1, 0), 1);
	cr_expect_eq(kmodel_select(&m, 2, 0), 3);
	cr_expect_eq(kmodel_select(&m, 3, 0), 3);
}

Test(kmodel, background_leaves_the_issuers_own_queue)
{
	struct kmodel m;
	const int two[] = { 0, 2, 5 }, one[] = { 0 };

	model8(&m, two, 3);
	cr_expect_eq(kmodel_select(&m, 0, 1), 2, "next queue of the node");
	cr_expect_eq(kmodel_select(&m, 2, 1), 0, "wraps within the node");
	cr_expect_eq(kmodel_select(&m, 1, 1), 0, "not its own queue: kept");
	cr_expect_eq(kmodel_select(&m, 5, 1), 5, "only queue of node 1");
	model8(&m, one, 1);
	cr_expect_eq(kmodel_select(&m, 0, 1), 0);
	cr_expect_eq(kmodel_select(&m, 4, 1), 0, "global table: no move");
}

Test(kmodel, busy_queues_are_passed_over_within_the_node)
{
	struct kmodel m;
	const int q[] = { 0, 1, 2, 3, 4 };

	model8(&m, q, 5);
	kmodel_queue_req(&m, 1);
	cr_expect_eq(kmodel_select(&m, 1, 0), 1, "1 request: under threshold");
	kmodel_queue_req(&m, 1);
	cr_expect_eq(kmodel_select(&m, 1, 0), 2);
	kmodel_queue_req(&m, 2);
	kmodel_queue_req(&m, 2);
	cr_expect_eq(kmodel_select(&m, 1, 0), 3);
	kmodel_queue_req(&m, 3);
	kmodel_queue_req(&m, 3);
	cr_expect_eq(kmodel_select(&m, 1, 0), 1, "2 retries, all busy: first choice");
	cr_expect_eq(kmodel_select(&m, 3, 0), 0, "wraps to the node's first");
	cr_expect_eq(kmodel_select(&m, 0, 1), 1, "bg moved to 1; 1-3 busy: 1, never back to 0");
	m.retries = 3;
	cr_expect_eq(kmodel_select(&m, 1, 0), 0, "a third retry reaches 0");
	m.retries = 2;
	m.threshold = 3;
	cr_expect_eq(kmodel_select(&m, 1, 0), 1);
	m.threshold = 2;
	kmodel_done(&m, 2);
	cr_expect_eq(kmodel_select(&m, 1, 0), 2, "done() frees the queue");
	cr_expect_gt(m.moves, 0);
}

Test(kmodel, zero_retries_fall_through_to_the_global_table)
{
	struct kmodel m;
	const int q[] = { 0, 1, 2, 3, 4 };

	model8(&m, q, 5);
	m.retries = 0;
	/* CPU 5's node table says 4; globally 0-4 are own-CPU queues and 5
	 * is the first CPU dealt, to qid 0. */
	cr_expect_eq(kmodel_select(&m, 5, 0), 4);
	kmodel_queue_req(&m, 4);
	kmodel_queue_req(&m, 4);
	cr_expect_eq(kmodel_select(&m, 5, 0), 0, "busy, no retry: leaves node 1");
	m.retries = 2;
	cr_expect_eq(kmodel_select(&m, 5, 0), 4, "with retries the first choice");
}

/* ---- fring's placement on 64 CPUs, 4 nodes ---- */

#define NCPU 64
#define NNODE 4

enum {
	V_STRAY = 1 << 0,      /* (a) left a node that has a queue */
	V_UNCOVERED = 1 << 1,  /* (a) n >= nodes but a node has none */
	V_QUEUE_LOAD = 1 << 2, /* (b) busiest queue > 1.5x mean CPUs */
	V_NODE_SHARE = 1 << 3, /* (b) a node's queues off n / nodes */
	V_UNREG = 1 << 4,      /* (c) unregistered queue (or none) */
	V_LOCALITY = V_STRAY | V_UNCOVERED,
	V_BALANCE = V_QUEUE_LOAD | V_NODE_SHARE,
};

struct map_stats {
	int queues_on[NNODE];
	int min, max;          /* CPUs per queue, static foreground map */
	int local;             /* of NCPU foreground requests, idle */
	unsigned long moves;   /* busy queues passed over under load */
};

static int pick_fring(const int *node, int n, int *qids)
{
	struct fring_topo t = { .nr_cpus = NCPU, .node = node, .usable = NULL };
	int got = fring_place_pick_cpus(&t, (uint32_t)n, qids);

	cr_assert_eq(got, n, "fring_place_pick_cpus(%d) = %d", n, got);
	return got;
}

static int pick_blind(int n, int *qids)
{
	for (int i = 0; i < n; i++)
		qids[i] = i;
	return n;
}

/* One request from cpu: record what it breaks. */
static unsigned check_one(struct kmodel *m, const struct map_stats *st,
			  int cpu, int q)
{
	unsigned v = 0;

	if (q < 0 || !((m->all.reg[q / 64] >> (q % 64)) & 1))
		return V_UNREG;
	if (m->node_of[q] != m->node_of[cpu] && st->queues_on[m->node_of[cpu]])
		v |= V_STRAY;
	return v;
}

/* Every CPU issues a foreground and a background request. */
static unsigned check_all_cpus(struct kmodel *m, const struct map_stats *st)
{
	unsigned v = 0;

	for (int c = 0; c < NCPU; c++)
		for (int bg = 0; bg < 2; bg++)
			v |= check_one(m, st, c, kmodel_select(m, c, bg));
	return v;
}

/* The checks (a)-(c) on the layout node[] with queues qids[0..n-1]. */
static unsigned check_map(const int *node, const int *qids, int n,
			  struct map_stats *st)
{
	struct kmodel m;
	int per_q[NCPU] = { 0 };
	unsigned v = 0;

	memset(st, 0, sizeof(*st));
	cr_assert_eq(kmodel_init(&m, NCPU, node), 0);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(kmodel_register(&m, qids[i]), 0);
		st->queues_on[node[qids[i]]]++;
	}

	/* Idle: the static foreground map, and background moves. */
	for (int c = 0; c < NCPU; c++) {
		int q = kmodel_select(&m, c, 0);

		v |= check_one(&m, st, c, q);
		if (q >= 0) {
			per_q[q]++;
			st->local += node[q] == node[c];
		}
	}
	v |= check_all_cpus(&m, st);

	/* (a) coverage, (b) balance. */
	st->min = NCPU;
	for (int i = 0; i < n; i++) {
		if (per_q[qids[i]] < st->min)
			st->min = per_q[qids[i]];
		if (per_q[qids[i]] > st->max)
			st->max = per_q[qids[i]];
	}
	if (2 * st->max * n > 3 * NCPU)
		v |= V_QUEUE_LOAD;
	for (int k = 0; k < NNODE; k++) {
		if (n >= NNODE && !st->queues_on[k])
			v |= V_UNCOVERED;
		if (st->queues_on[k] < n / NNODE ||
		    st->queues_on[k] > (n + NNODE - 1) / NNODE)
			v |= V_NODE_SHARE;
	}

	/* Loaded: every other queue at the threshold, then every queue over
	 * it (retries run out: first choices), each checked from every CPU. */
	for (int i = 0; i < n; i += 2)
		for (int r = 0; r < m.threshold; r++)
			kmodel_queue_req(&m, qids[i]);
	v |= check_all_cpus(&m, st);
	for (int i = 0; i < n; i++)
		while (m.nr_reqs[qids[i]] <= (unsigned)m.threshold)
			kmodel_queue_req(&m, qids[i]);
	v |= check_all_cpus(&m, st);
	for (int i = 0; i < n; i++)
		while (m.nr_reqs[qids[i]])
			kmodel_done(&m, qids[i]);

	/* Load that builds up: four rounds of every CPU queueing a
	 * foreground and a background request, none completing. */
	for (int round = 0; round < 4; round++)
		for (int c = 0; c < NCPU; c++)
			for (int bg = 0; bg < 2; bg++) {
				int q = kmodel_select(&m, c, bg);

				v |= check_one(&m, st, c, q);
				if (q >= 0)
					kmodel_queue_req(&m, q);
			}
	st->moves = m.moves;
	return v;
}

static const char *what(unsigned v)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s%s%s%s%s", v & V_STRAY ? " stray" : "",
		 v & V_UNCOVERED ? " uncovered-node" : "",
		 v & V_QUEUE_LOAD ? " queue-load" : "",
		 v & V_NODE_SHARE ? " node-share" : "", v & V_UNREG ? " unregistered" : "");
	return buf;
}

static const int sizes[] = { 1, 2, 4, 8, 16, 64 };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static void check_fring(const int *node, const char *layout)
{
	for (int i = 0; i < NSIZES; i++) {
		int qids[NCPU];
		struct map_stats st;
		int n = pick_fring(node, sizes[i], qids);
		unsigned v = check_map(node, qids, n, &st);

		cr_expect_eq(v, 0, "%s, n=%d:%s", layout, n, what(v));
		cr_expect_gt(st.moves, 0, "%s, n=%d: load never took a retry", layout, n);
		if (n >= NNODE)
			cr_expect_eq(st.local, NCPU, "%s, n=%d: all local", layout, n);
	}
}

Test(queue_map, fring_placement_contiguous_nodes)
{
	int node[NCPU];

	kmodel_nodes_contiguous(node, NCPU, NNODE);
	check_fring(node, "contiguous");
}

Test(queue_map, fring_placement_interleaved_nodes)
{
	int node[NCPU];

	kmodel_nodes_interleaved(node, NCPU, NNODE);
	check_fring(node, "interleaved");
}

Test(queue_map, node_blind_placement_is_caught)
{
	int node[NCPU], qids[NCPU];
	struct map_stats st;

	kmodel_nodes_contiguous(node, NCPU, NNODE);
	for (int n = 2; n <= 4; n += 2) {
		unsigned v = check_map(node, qids, pick_blind(n, qids), &st);

		cr_expect(v & (V_LOCALITY | V_BALANCE), "n=%d: CPUs 0..%d passed", n, n - 1);
		/* The global table deals the other nodes' CPUs evenly over
		 * node 0's queues, so the per-queue CPU count alone cannot
		 * tell: the node checks are what catch it. */
		cr_expect_not(v & V_QUEUE_LOAD, "n=%d:%s", n, what(v));
		cr_expect_eq(st.local, NCPU / NNODE, "n=%d: only node 0 local", n);
	}
}

/* The table in tests/README.md ("Kernel queue-map model"). */
static void table_row(const int *node, const int *qids, int n, const char *label)
{
	struct map_stats st;
	char per_node[32];

	check_map(node, qids, n, &st);
	snprintf(per_node, sizeof(per_node), "%d / %d / %d / %d", st.queues_on[0],
		 st.queues_on[1], st.queues_on[2], st.queues_on[3]);
	printf("| %s | %s | %d / %.1f / %d | %d%% |\n", label, per_node, st.min,
	       (double)NCPU / n, st.max, 100 * st.local / NCPU);
}

Test(queue_map, distribution_table)
{
	int node[NCPU], qids[NCPU];
	char label[32];

	kmodel_nodes_contiguous(node, NCPU, NNODE);
	printf("| queues | per node 0/1/2/3 | CPUs per queue min / mean / max |"
	       " foreground on the issuer's node |\n|---|---|---|---|\n");
	for (int i = 0; i < NSIZES; i++) {
		snprintf(label, sizeof(label), "%d", sizes[i]);
		table_row(node, qids, pick_fring(node, sizes[i], qids), label);
	}
	for (int n = 2; n <= 4; n += 2) {
		snprintf(label, sizeof(label), "%d, node-blind (CPUs 0-%d)", n, n - 1);
		table_row(node, qids, pick_blind(n, qids), label);
	}
	fflush(stdout);
}
