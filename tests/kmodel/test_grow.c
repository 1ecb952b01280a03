// SPDX-License-Identifier: MIT
/*
 * How many reduced queues fring registers (fring_place_grow, place_grow.h)
 * when the kernel's queue map is the seed-003 model of kmodel.c: clients
 * pinned to CPUs send their requests where kmodel_select puts them, each
 * window's load goes to the policy, and the qids it asks for are
 * registered in the model, which re-deals its CPUs at once.
 *
 * Asserted, with synchronous clients (one request in flight each):
 *   - clients that share a qid get qids of their own, on their node only;
 *   - one client, deep or not, never adds a qid (a qid elsewhere already
 *     serves it from beside, and memory is what reduced queues save);
 *   - clients that share one CPU cost at most one qid, then growth from
 *     that qid is held;
 *   - light windows and unusable CPUs never register anything.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "kmodel.h"
#include "transport/place_grow.h"

#define MAXC 64

struct sim_client {
	int cpu;
	uint32_t pid;
	uint64_t rate; /* requests per window */
};

struct sim {
	struct kmodel m;
	struct fring_place_grow g;
	uint8_t usable[MAXC];
	int node[MAXC];
	int nr;
	int registered[MAXC]; /* in order, the first ones included */
	int nreg;
};

/* CPUs in nodes blocks, or with interleaved CPU c on node c % nodes. */
static void sim_init(struct sim *s, int nr, int nodes, int interleaved,
		     const uint8_t *usable)
{
	struct fring_topo t;
	int first[MAXC], n;

	memset(s, 0, sizeof(*s));
	s->nr = nr;
	if (interleaved)
		kmodel_nodes_interleaved(s->node, nr, nodes);
	else
		kmodel_nodes_contiguous(s->node, nr, nodes);
	for (int c = 0; c < nr; c++)
		s->usable[c] = usable ? usable[c] : 1;
	cr_assert_eq(kmodel_init(&s->m, nr, s->node), 0);
	t = (struct fring_topo){ (uint32_t)nr, s->node, s->usable };
	n = fring_place_grow_first(&t, first);
	cr_assert_eq(n, nodes, "one qid per node at start");
	cr_assert_eq(fring_place_grow_init(&s->g, (uint32_t)nr, s->usable,
					   s->node, first, (uint32_t)n), 0);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(kmodel_register(&s->m, first[i]), 0);
		s->registered[s->nreg++] = first[i];
	}
}

/* One window of the clients through the model and into the policy. */
static int sim_window(struct sim *s, const struct sim_client *cl, int ncl)
{
	struct fring_place_load w[MAXC];
	struct fring_place_client c[MAXC];
	size_t n = 0;
	int q;

	memset(w, 0, sizeof(w));
	for (int i = 0; i < ncl; i++) {
		q = kmodel_select(&s->m, cl[i].cpu, 0);
		cr_assert(q >= 0 && q < s->nr);
		w[q].requests += cl[i].rate;
		w[q].depth_sum += cl[i].rate;
		c[n++] = (struct fring_place_client){ (uint32_t)q, cl[i].pid, cl[i].rate };
	}
	q = fring_place_grow_step(&s->g, w, c, n);
	if (q >= 0) {
		cr_assert(s->usable[q], "qid %d of an unusable CPU", q);
		cr_assert_eq(kmodel_register(&s->m, q), 0);
		s->registered[s->nreg++] = q;
	}
	return q;
}

static void sim_run(struct sim *s, const struct sim_client *cl, int ncl, int windows)
{
	for (int i = 0; i < windows; i++)
		sim_window(s, cl, ncl);
}

/* No two clients on one qid. */
static void expect_apart(struct sim *s, const struct sim_client *cl, int ncl)
{
	for (int i = 0; i < ncl; i++)
		for (int j = i + 1; j < ncl; j++)
			cr_expect_neq(kmodel_select(&s->m, cl[i].cpu, 0),
				      kmodel_select(&s->m, cl[j].cpu, 0),
				      "clients on CPUs %d and %d share a qid",
				      cl[i].cpu, cl[j].cpu);
}

static int is_registered(const struct sim *s, int q)
{
	for (int i = 0; i < s->nreg; i++)
		if (s->registered[i] == q)
			return 1;
	return 0;
}

Test(grow, two_sync_clients_on_two_cpus_get_a_qid_each)
{
	struct sim s;
	const struct sim_client cl[] = { { 0, 100, 2000 }, { 1, 101, 2000 } };

	sim_init(&s, 2, 1, 0, NULL);
	cr_assert_eq(s.nreg, 1);
	cr_expect_eq(sim_window(&s, cl, 2), -1, "one window is not agreement");
	cr_expect_eq(sim_window(&s, cl, 2), s.registered[0] ? 0 : 1);
	sim_run(&s, cl, 2, 200);
	cr_expect_eq(s.nreg, 2);
	expect_apart(&s, cl, 2);
	cr_expect_eq(s.g.grown, 1);
	cr_expect_eq(s.g.held, 0);
	fring_place_grow_fini(&s.g);
}

Test(grow, one_client_never_adds_a_qid)
{
	struct sim s;
	/* A deep client (iodepth 8) on the CPU without a qid, then on the
	 * CPU with one. */
	struct sim_client cl[] = { { 1, 100, 9000 } };

	sim_init(&s, 2, 1, 0, NULL);
	sim_run(&s, cl, 1, 100);
	cl[0].cpu = 0;
	sim_run(&s, cl, 1, 100);
	cr_expect_eq(s.nreg, 1);
	fring_place_grow_fini(&s.g);
}

Test(grow, clients_sharing_a_qid_spread_within_their_node)
{
	struct sim s;
	/* 8 CPUs, nodes 0 (CPUs 0-3) and 1 (4-7): three clients on node 0
	 * CPUs without a qid at start, one alone on node 1. */
	const struct sim_client cl[] = {
		{ 1, 100, 1500 }, { 2, 101, 1500 }, { 3, 102, 1500 }, { 5, 103, 1500 },
	};
	int node1 = 0;

	sim_init(&s, 8, 2, 0, NULL);
	sim_run(&s, cl, 4, 400);
	expect_apart(&s, cl, 4);
	for (int i = 0; i < s.nreg; i++)
		node1 += s.node[s.registered[i]] == 1;
	cr_expect_eq(node1, 1, "node 1's lone client needs no second qid");
	cr_expect_leq(s.nreg, 5, "at most a qid per client plus the first ones");
	cr_expect_eq(s.g.held, 0);
	fring_place_grow_fini(&s.g);
}

Test(grow, a_new_qid_is_on_the_node_of_the_clients)
{
	struct sim s;
	/* Interleaved nodes (CPU c on node c % 2): the clients on CPUs 3
	 * and 5 share node 1's first qid; CPU 2 (node 0) comes right after
	 * qid 1 but would serve neither. */
	const struct sim_client cl[] = { { 3, 100, 2000 }, { 5, 101, 2000 } };

	sim_init(&s, 8, 2, 1, NULL);
	cr_assert(s.registered[0] == 0 && s.registered[1] == 1);
	sim_run(&s, cl, 2, 200);
	expect_apart(&s, cl, 2);
	for (int i = 2; i < s.nreg; i++)
		cr_expect_eq(s.node[s.registered[i]], 1, "qid %d is on node 0",
			     s.registered[i]);
	cr_expect_eq(s.g.held, 0);
	fring_place_grow_fini(&s.g);
}

Test(grow, clients_on_one_cpu_cost_one_qid_then_hold)
{
	struct sim s;
	/* Two clients on CPU 0, which has the first qid: no other qid can
	 * take either (the kernel prefers the issuer's own qid). */
	const struct sim_client cl[] = { { 0, 100, 2000 }, { 0, 101, 2000 } };

	sim_init(&s, 8, 1, 0, NULL);
	cr_assert_eq(s.registered[0], 0);
	sim_run(&s, cl, 2, 600);
	cr_expect_eq(s.nreg, 2, "one try, then held (not a qid per window)");
	cr_expect_eq(s.g.held, 1);
	fring_place_grow_fini(&s.g);
}

Test(grow, light_windows_register_nothing)
{
	struct sim s;
	const struct sim_client cl[] = { { 0, 100, 60 }, { 1, 101, 60 } };

	sim_init(&s, 4, 1, 0, NULL);
	sim_run(&s, cl, 2, 500);
	cr_expect_eq(s.nreg, 1);
	fring_place_grow_fini(&s.g);
}

Test(grow, unusable_cpus_are_never_registered)
{
	struct sim s;
	const uint8_t usable[4] = { 1, 0, 1, 1 };
	const struct sim_client cl[] = {
		{ 0, 100, 1000 }, { 1, 101, 1000 }, { 2, 102, 1000 }, { 3, 103, 1000 },
	};

	sim_init(&s, 4, 1, 0, usable);
	sim_run(&s, cl, 4, 600);
	cr_expect_not(is_registered(&s, 1));
	cr_expect(is_registered(&s, 2) && is_registered(&s, 3),
		  "the clients on usable CPUs get their qids");
	fring_place_grow_fini(&s.g);
}

Test(grow, first_qids_and_bad_input)
{
	struct fring_place_grow g;
	const uint8_t usable[4] = { 0, 1, 1, 1 };
	const int bad[] = { 0 }, out_of_range[] = { 4 };
	int node[8], first[8];
	struct fring_topo t;

	cr_expect_eq(fring_place_grow_init(&g, 4, usable, NULL, bad, 1), -EINVAL,
		     "an unusable first qid");
	cr_expect_eq(fring_place_grow_init(&g, 4, usable, NULL, out_of_range, 1),
		     -EINVAL);
	kmodel_nodes_interleaved(node, 8, 4);
	t = (struct fring_topo){ 8, node, NULL };
	cr_expect_eq(fring_place_grow_first(&t, first), 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(node[first[i]], i, "qid %d is node %d's", first[i], i);
}
