// SPDX-License-Identifier: MIT
/*
 * Lock-free hand-over of entries from replying threads to the queue thread.
 * Producers push with a CAS loop (Treiber stack); the single consumer takes
 * the whole list with one exchange and reverses it, so there is no pop of a
 * single node and therefore no ABA problem. An entry is on at most one list
 * at a time: it is in userspace, owned by exactly one replier.
 */
#include "uring_internal.h"

void uring_mpsc_init(struct uring_mpsc *m)
{
	atomic_init(&m->head, NULL);
}

int uring_mpsc_push(struct uring_mpsc *m, struct uring_ent *e)
{
	struct uring_ent *old = atomic_load_explicit(&m->head, memory_order_relaxed);

	do
		e->mpsc_next = old;
	while (!atomic_compare_exchange_weak_explicit(&m->head, &old, e,
						      memory_order_release,
						      memory_order_relaxed));
	/* Only the push onto an empty list wakes the consumer: any later push
	 * is taken by the same take() that the first wake-up triggers. */
	return old == NULL;
}

struct uring_ent *uring_mpsc_take(struct uring_mpsc *m)
{
	struct uring_ent *e, *prev = NULL, *next;

	if (!atomic_load_explicit(&m->head, memory_order_relaxed))
		return NULL;
	e = atomic_exchange_explicit(&m->head, NULL, memory_order_acquire);
	for (; e; e = next) {
		next = e->mpsc_next;
		e->mpsc_next = prev;
		prev = e;
	}
	return prev;
}
