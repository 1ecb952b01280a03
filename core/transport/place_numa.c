// SPDX-License-Identifier: MIT
/* NUMA spread of queues and queue threads: see place.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"

static int node_of(const struct fring_topo *t, uint32_t cpu)
{
	return t->node ? t->node[cpu] : 0;
}

static int usable(const struct fring_topo *t, uint32_t cpu)
{
	return !t->usable || t->usable[cpu];
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int fring_place_pick_cpus(const struct fring_topo *t, uint32_t n, int *out)
{
	uint32_t nodes = 0, total = 0, sum = 0, got = 0;
	uint32_t *have, *share;
	int ret = -EINVAL;

	for (uint32_t c = 0; c < t->nr_cpus; c++)
		if (usable(t, c) && (uint32_t)node_of(t, c) + 1 > nodes)
			nodes = (uint32_t)node_of(t, c) + 1;
	have = calloc(2 * (size_t)nodes + 1, sizeof(*have));
	if (!have)
		return -ENOMEM;
	share = have + nodes;
	for (uint32_t c = 0; c < t->nr_cpus; c++)
		if (usable(t, c)) {
			have[node_of(t, c)]++;
			total++;
		}
	if (!n || !total)
		goto out;
	if (n > total)
		n = total;
	/* Proportional floors, at least one for every node with CPUs while
	 * there are queues enough for that. */
	uint32_t with = 0;

	for (uint32_t k = 0; k < nodes; k++)
		with += have[k] > 0;
	for (uint32_t k = 0; k < nodes; k++) {
		share[k] = (uint32_t)((uint64_t)n * have[k] / total);
		if (have[k] && !share[k] && n >= with)
			share[k] = 1;
		sum += share[k];
	}
	/* Too many (the minimum of one pushed it over): take from the node
	 * furthest above its exact share; too few: give to the furthest
	 * below (largest remainder), the larger node first on ties. */
	while (sum != n) {
		int best = -1;
		int64_t bestd = 0;

		for (uint32_t k = 0; k < nodes; k++) {
			/* share*total - n*have: above (>0) or below (<0) */
			int64_t d = (int64_t)share[k] * total - (int64_t)n * have[k];

			if (sum > n ? (share[k] > 1 && (best < 0 || d > bestd))
				    : (share[k] < have[k] &&
				       (best < 0 || d < bestd ||
					(d == bestd && have[k] > have[best])))) {
				best = (int)k;
				bestd = d;
			}
		}
		if (best < 0)
			break;
		if (sum > n) {
			share[best]--;
			sum--;
		} else {
			share[best]++;
			sum++;
		}
	}
	/* Spread each node's share evenly over its usable CPUs. */
	for (uint32_t k = 0; k < nodes; k++) {
		uint32_t idx = 0, next = 0, picked = 0;

		for (uint32_t c = 0; c < t->nr_cpus && picked < share[k]; c++) {
			if (!usable(t, c) || (uint32_t)node_of(t, c) != k)
				continue;
			if (idx++ == next) {
				out[got++] = (int)c;
				picked++;
				next = (uint32_t)((uint64_t)picked * have[k] / share[k]);
			}
		}
	}
	qsort(out, got, sizeof(*out), cmp_int);
	ret = (int)got;
out:
	free(have);
	return ret;
}

int fring_place_threads(const struct fring_topo *t, uint32_t nthreads,
			int *home, uint32_t *thread_of)
{
	int n = fring_place_pick_cpus(t, nthreads, home);
	uint32_t *rr;

	if (n <= 0)
		return n;
	rr = calloc(t->nr_cpus ? t->nr_cpus : 1, sizeof(*rr)); /* per node */
	if (!rr)
		return -ENOMEM;
	for (uint32_t q = 0; q < t->nr_cpus; q++) {
		int mine = -1, on_node = 0, k = 0;

		for (int i = 0; i < n; i++) {
			if (home[i] == (int)q)
				mine = i;
			on_node += node_of(t, (uint32_t)home[i]) == node_of(t, q);
		}
		if (mine >= 0) {
			thread_of[q] = (uint32_t)mine;
			continue;
		}
		/* The rr[node]-th thread of q's node (or of all, if none). */
		uint32_t want = rr[on_node ? node_of(t, q) : 0]++ %
				(uint32_t)(on_node ? on_node : n);

		for (int i = 0; i < n; i++) {
			if (on_node && node_of(t, (uint32_t)home[i]) != node_of(t, q))
				continue;
			if ((uint32_t)k++ == want) {
				thread_of[q] = (uint32_t)i;
				break;
			}
		}
	}
	free(rr);
	return n;
}

void fring_place_plan_free(struct fring_place_plan *p)
{
	free(p->reg);
	free(p->thread_of);
	free(p->home);
	memset(p, 0, sizeof(*p));
}

int fring_place_plan(const struct fring_topo *t, uint32_t queues, int reduced,
		     struct fring_place_plan *out)
{
	uint32_t n = t->nr_cpus;
	int got;

	memset(out, 0, sizeof(*out));
	out->reg = calloc(n ? n : 1, sizeof(*out->reg));
	out->thread_of = calloc(n ? n : 1, sizeof(*out->thread_of));
	out->home = calloc(n ? n : 1, sizeof(*out->home));
	if (!out->reg || !out->thread_of || !out->home)
		goto nomem;
	if (reduced) {
		got = fring_place_pick_cpus(t, queues ? queues : n, out->reg);
		if (got <= 0)
			goto fail;
		out->nr_reg = out->nr_threads = (uint32_t)got;
		for (int i = 0; i < got; i++) {
			out->thread_of[i] = (uint32_t)i;
			out->home[i] = out->reg[i];
		}
		out->reduced = out->nr_reg < n;
		return 0;
	}
	got = fring_place_threads(t, queues ? queues : n, out->home, out->thread_of);
	if (got <= 0)
		goto fail;
	out->nr_threads = (uint32_t)got;
	out->nr_reg = n;
	for (uint32_t q = 0; q < n; q++)
		out->reg[q] = (int)q;
	return 0;
nomem:
	got = -ENOMEM;
fail:
	fring_place_plan_free(out);
	return got ? got : -EINVAL;
}
