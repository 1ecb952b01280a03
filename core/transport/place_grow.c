// SPDX-License-Identifier: MIT
/* Registering more reduced queues where the load asks: see place_grow.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "place_grow.h"

int fring_place_grow_init(struct fring_place_grow *g, uint32_t nr,
			  const uint8_t *usable, const int *node,
			  const int *initial, uint32_t n)
{
	memset(g, 0, sizeof(*g));
	g->nr = nr;
	g->usable = usable;
	g->node = node;
	g->next = g->pending = g->pending_for = -1;
	g->reg = calloc(nr ? nr : 1, 1);
	g->hold = calloc(nr ? nr : 1, sizeof(*g->hold));
	if (!g->reg || !g->hold) {
		fring_place_grow_fini(g);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nr; i++)
		g->nr_usable += !!usable[i];
	for (uint32_t i = 0; i < n; i++) {
		if (initial[i] < 0 || (uint32_t)initial[i] >= nr ||
		    !usable[initial[i]]) {
			fring_place_grow_fini(g);
			return -EINVAL;
		}
		g->reg[initial[i]] = 1;
	}
	return 0;
}

void fring_place_grow_fini(struct fring_place_grow *g)
{
	free(g->reg);
	free(g->hold);
	g->reg = NULL;
	g->hold = NULL;
}

int fring_place_grow_first(const struct fring_topo *t, int *out)
{
	uint32_t nodes = 0;

	/* Count the nodes with a usable CPU: pick_cpus gives each one. */
	for (uint32_t c = 0; c < t->nr_cpus; c++) {
		int k = t->node ? t->node[c] : 0, seen = 0;

		if (t->usable && !t->usable[c])
			continue;
		for (uint32_t d = 0; d < c && !seen; d++)
			seen = (!t->usable || t->usable[d]) &&
			       (t->node ? t->node[d] : 0) == k;
		nodes += !seen;
	}
	return fring_place_pick_cpus(t, nodes ? nodes : 1, out);
}

static int same_node(const struct fring_place_grow *g, uint32_t a, uint32_t b)
{
	return !g->node || g->node[a] == g->node[b];
}

/* Clients of qid q with a sizeable share of the window's total. */
static uint32_t own_clients(const struct fring_place_grow *g, uint32_t q,
			    const struct fring_place_client *c, size_t n,
			    uint64_t total)
{
	uint32_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (c[i].qid == q && c[i].requests * FRING_PLACE_LOADED_DIV *
				     g->nr_usable >= total)
			k++;
	return k;
}

/* The next unregistered usable CPU of q's node after q, or -1. */
static int next_free(const struct fring_place_grow *g, uint32_t q)
{
	for (uint32_t i = 1; i < g->nr; i++) {
		uint32_t c = (q + i) % g->nr;

		if (g->usable[c] && !g->reg[c] && same_node(g, q, c))
			return (int)c;
	}
	return -1;
}

/* The last registration: did it take a client? 1 while still waiting. */
static int pending(struct fring_place_grow *g,
		   const struct fring_place_client *c, size_t n, uint64_t total)
{
	if (g->pending < 0)
		return 0;
	if (own_clients(g, (uint32_t)g->pending, c, n, total)) {
		g->pending = -1;
		return 0;
	}
	if (++g->waited < FRING_PLACE_GROW_WAIT)
		return 1;
	/* Its clients share a CPU: no further qid of the node splits them. */
	g->hold[g->pending_for] = FRING_PLACE_HOLD_MAX;
	g->held++;
	g->pending = -1;
	return 0;
}

int fring_place_grow_step(struct fring_place_grow *g,
			  const struct fring_place_load *w,
			  const struct fring_place_client *c, size_t n)
{
	uint64_t total = 0;
	int asker = -1, want = -1;

	for (uint32_t q = 0; q < g->nr; q++)
		total += w[q].requests;
	if (total < FRING_PLACE_MIN_REQUESTS)
		return -1;
	for (uint32_t q = 0; q < g->nr; q++)
		if (g->hold[q])
			g->hold[q]--;
	if (pending(g, c, n, total))
		return -1;
	for (uint32_t q = 0; q < g->nr; q++) {
		int f;

		if (!g->reg[q] || g->hold[q] || own_clients(g, q, c, n, total) < 2 ||
		    (asker >= 0 && w[q].requests <= w[asker].requests))
			continue;
		if ((f = next_free(g, q)) >= 0) {
			asker = (int)q;
			want = f;
		}
	}
	if (want < 0 || want != g->next) {
		g->next = want;
		g->agree = want >= 0;
		return -1;
	}
	if (++g->agree < FRING_PLACE_AGREE)
		return -1;
	g->reg[want] = 1;
	g->next = -1;
	g->agree = 0;
	g->pending = want;
	g->pending_for = asker;
	g->waited = 0;
	g->grown++;
	return want;
}
