/* Queue-thread placement policy: see place.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"

static int first_usable(const struct fring_place *p)
{
	for (uint32_t i = 0; i < p->nr; i++)
		if (p->usable[i])
			return (int)i;
	return -1;
}

static int local_cpu(const struct fring_place *p, uint32_t q)
{
	return p->usable[q] ? (int)q : first_usable(p);
}

int fring_place_init(struct fring_place *p, uint32_t nr, const uint8_t *usable,
		     const int *node)
{
	memset(p, 0, sizeof(*p));
	p->nr = nr;
	p->usable = usable;
	p->node = node;
	if (!nr || first_usable(p) < 0)
		return -EINVAL;
	p->cpu = calloc(nr, sizeof(*p->cpu));
	p->next = calloc(nr, sizeof(*p->next));
	if (!p->cpu || !p->next) {
		fring_place_fini(p);
		return -ENOMEM;
	}
	for (uint32_t q = 0; q < nr; q++)
		p->cpu[q] = p->next[q] = local_cpu(p, q);
	p->kind = p->next_kind = FRING_PLACE_LOCAL;
	return 0;
}

void fring_place_fini(struct fring_place *p)
{
	free(p->cpu);
	free(p->next);
	p->cpu = p->next = NULL;
}

static int same_node(const struct fring_place *p, uint32_t a, uint32_t b)
{
	return !p->node || p->node[a] == p->node[b];
}

/* A free CPU for qid q: the one it has if free, else one on q's node,
 * else any; taken[] marks CPUs given out. -1 if none is left. */
static int pick_free(const struct fring_place *p, uint32_t q,
		     const uint8_t *loaded, uint8_t *taken)
{
	int c = p->cpu[q], any = -1;

	if (c >= 0 && (uint32_t)c != q && p->usable[c] && !loaded[c] && !taken[c])
		return c;
	for (uint32_t i = 0; i < p->nr; i++) {
		if (!p->usable[i] || loaded[i] || taken[i])
			continue;
		if (same_node(p, q, i))
			return (int)i;
		if (any < 0)
			any = (int)i;
	}
	return any;
}

int fring_place_propose(const struct fring_place *p,
			const struct fring_place_load *w, int *out)
{
	uint64_t total = 0;
	uint8_t *loaded, *deep, *taken;
	int kind = FRING_PLACE_LOCAL;

	for (uint32_t q = 0; q < p->nr; q++)
		total += w[q].requests;
	if (total < FRING_PLACE_MIN_REQUESTS)
		return -1;
	loaded = calloc(3 * (size_t)p->nr, 1);
	if (!loaded)
		return -1;
	deep = loaded + p->nr;
	taken = deep + p->nr;
	for (uint32_t q = 0; q < p->nr; q++) {
		/* requests / total >= 1 / (DIV * nr), without division */
		uint64_t mark = (uint32_t)q != (uint32_t)p->cpu[q]
					? FRING_PLACE_DEEP_STAY : FRING_PLACE_DEEP_ENTER;

		loaded[q] = w[q].requests &&
			    w[q].requests * FRING_PLACE_LOADED_DIV * p->nr >= total;
		deep[q] = loaded[q] && w[q].depth_sum * 100 >= w[q].requests * mark;
		out[q] = local_cpu(p, q);
	}
	/* Busiest deep qid first: when free CPUs run short, they go where
	 * most requests are. */
	for (;;) {
		int best = -1, c;

		for (uint32_t q = 0; q < p->nr; q++)
			if (deep[q] && (best < 0 || w[q].requests > w[best].requests))
				best = (int)q;
		if (best < 0)
			break;
		deep[best] = 0;
		c = pick_free(p, (uint32_t)best, loaded, taken);
		if (c < 0)
			break;
		taken[c] = 1;
		out[best] = c;
		/* Swap: c's own qid is idle, so its thread takes best's CPU.
		 * A client that hops between the two CPUs (the scheduler
		 * moves it, or io-wq issues for it) then finds its queue's
		 * thread on the other CPU either way. */
		if (!deep[c] && out[c] == local_cpu(p, (uint32_t)c) &&
		    p->usable[best])
			out[c] = best;
		kind = FRING_PLACE_BESIDE;
	}
	free(loaded);
	return kind;
}

int fring_place_step(struct fring_place *p, const struct fring_place_load *w)
{
	int *cand = calloc(p->nr, sizeof(*cand));
	int kind;

	if (!cand)
		return 0;
	kind = fring_place_propose(p, w, cand);
	if (kind < 0 || !memcmp(cand, p->cpu, p->nr * sizeof(*cand))) {
		/* Too light to learn from, or what is applied: nothing pends. */
		if (kind >= 0)
			p->agree = 0;
		free(cand);
		return 0;
	}
	if (p->agree && !memcmp(cand, p->next, p->nr * sizeof(*cand)))
		p->agree++;
	else {
		memcpy(p->next, cand, p->nr * sizeof(*cand));
		p->next_kind = kind;
		p->agree = 1;
	}
	free(cand);
	if (p->agree < FRING_PLACE_AGREE)
		return 0;
	memcpy(p->cpu, p->next, p->nr * sizeof(*p->cpu));
	p->kind = p->next_kind;
	p->agree = 0;
	return 1;
}

const char *fring_place_kind_name(int kind)
{
	return kind == FRING_PLACE_BESIDE ? "beside" : "local";
}
