// SPDX-License-Identifier: MIT
/* Client attribution for the placement policy: see fring_place_hops in
 * place.h. */
#include <stdlib.h>

#include "place.h"

static int by_pid(const void *a, const void *b)
{
	const struct fring_place_client *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

void fring_place_hops(struct fring_place_client *c, size_t n,
		      struct fring_place_load *w, uint32_t nr)
{
	if (n < 2) /* one entry is no hop (and qsort wants an array) */
		return;
	qsort(c, n, sizeof(*c), by_pid);
	for (size_t i = 0, end; i < n; i = end) {
		size_t home = n;

		/* One pid's entries: [i, end); home is its busiest qid. */
		for (end = i; end < n && c[end].pid == c[i].pid; end++)
			if (c[end].qid < nr && (home == n ||
						c[end].requests > c[home].requests))
				home = end;
		for (size_t k = i; k < end && home < n; k++) {
			uint32_t q = c[k].qid;

			if (q >= nr || q == c[home].qid)
				continue;
			/* Counted apart from requests: never more than them. */
			w[q].hop += c[k].requests;
			if (w[q].hop > w[q].requests)
				w[q].hop = w[q].requests;
		}
	}
}
