// SPDX-License-Identifier: MIT
/*
 * Reduced queues registered as the load asks (policy: place_grow.h).
 *
 * The layout gives every usable CPU a qid and a thread, as without reduced
 * queues; here all but one qid per NUMA node start dormant: the thread
 * reports at once, builds no ring and allocates no entry buffers, and
 * waits. When a window shows a registered qid serving several clients,
 * the thread closing it arms the dormant thread of the qid the policy
 * names; that thread then sets up as at start (pinned to its CPU, its
 * memory on its node) and submits its REGISTERs, and the kernel deals its
 * CPU (and others of the node) to it from then on. A qid is never
 * unregistered before the connection ends (the kernel has no way to).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../base/log.h"
#include "uring_internal.h"

static const char *mnt(const struct fring_uring *u)
{
	return u->mountpoint ? u->mountpoint : "?";
}

static struct uring_thread *thread_of_qid(struct fring_uring *u, int qid)
{
	for (uint32_t i = 0; i < u->nr_threads; i++)
		if (u->threads[i].nq == 1 && u->threads[i].queues[0].qid == qid)
			return &u->threads[i];
	return NULL;
}

int uring_grow_init(struct fring_uring *u, int *on)
{
	struct uring_place *pl = &u->place;
	struct fring_topo topo = { u->nr_cpus, u->node, u->usable };
	int *first, n, ret;

	*on = 0;
	/* A thread per usable CPU, each on its own qid (uring_layout.c). */
	if (!u->reduced_offered || !u->queues_auto || u->nr_threads != u->nr_qids ||
	    u->nr_qids < 2)
		return 0;
	first = calloc(u->nr_cpus, sizeof(*first));
	if (!first)
		return -ENOMEM;
	n = fring_place_grow_first(&topo, first);
	ret = n < 0 ? n : fring_place_grow_init(&pl->grow, u->nr_cpus, u->usable,
						u->node, first, (uint32_t)n);
	if (ret) {
		free(first);
		return ret;
	}
	for (uint32_t i = 0; i < u->nr_threads; i++)
		u->threads[i].dormant = 1;
	for (int i = 0; i < n; i++) {
		struct uring_thread *t = thread_of_qid(u, first[i]);

		if (t)
			t->dormant = 0;
	}
	free(first);
	pl->growing = *on = 1;
	return 0;
}

void uring_grow_window(struct fring_uring *u, const struct fring_place_load *w,
		       const struct fring_place_client *c, size_t n)
{
	static const uint64_t one = 1;
	struct uring_thread *t;
	int qid = fring_place_grow_step(&u->place.grow, w, c, n);

	if (qid < 0 || !(t = thread_of_qid(u, qid)))
		return;
	u->place.armed++;
	fring_dbg("%s: uring: registering qid %d (CPU %d, node %d): qid %d "
		  "served several clients in %u windows in a row", mnt(u), qid,
		  qid, u->node[qid], u->place.grow.pending_for,
		  (unsigned)FRING_PLACE_AGREE);
	atomic_store_explicit(&t->arm, 1, memory_order_release);
	if (write(t->wake_fd, &one, sizeof(one)) != sizeof(one))
		fring_warn("uring: waking the thread of qid %d: %m", qid);
}

int uring_grow_wait(struct uring_thread *t)
{
	struct pollfd p[2] = { { t->wake_fd, POLLIN, 0 }, { t->u->stop_fd, POLLIN, 0 } };
	uint64_t v;

	for (;;) {
		if (atomic_load(&t->u->closed))
			return 0;
		if (atomic_load_explicit(&t->arm, memory_order_acquire)) {
			/* Its count would fire the first wake-up poll. */
			if (read(t->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				fring_dbg("uring: thread %u: wake-up read: %m", t->idx);
			return 1;
		}
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return 0;
		if (p[1].revents)
			return 0; /* stop_fd is only ever written to stop */
		if (p[0].revents && !atomic_load(&t->arm) &&
		    read(t->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return 0;
	}
}

void uring_grow_describe(const struct fring_uring *u, char *buf, size_t len)
{
	size_t k = 0;
	uint32_t live = 0;

	for (uint32_t i = 0; i < u->nr_threads; i++)
		live += !u->threads[i].dormant;
	k = (size_t)snprintf(buf, len, "auto on reduced queues: %u of %u qids "
			     "registered (one per NUMA node:", live, u->nr_qids);
	for (uint32_t i = 0; i < u->nr_threads && k + 16 < len; i++)
		if (!u->threads[i].dormant)
			k += (size_t)snprintf(buf + k, len - k, " %u",
					      u->threads[i].queues[0].qid);
	if (k + 1 < len)
		snprintf(buf + k, len - k, "); a qid that serves several "
			 "clients gets another of its node registered");
}

void uring_grow_log(const struct fring_uring *u, const char *name)
{
	const struct fring_place_grow *g = &u->place.grow;
	uint32_t reg = 0;

	for (uint32_t q = 0; q < g->nr; q++)
		reg += g->reg[q];
	fring_dbg("%s: uring: reduced queues: %u of %u qids registered, %u "
		  "of them under load (%u took no client of their own: their "
		  "clients shared a CPU)", name, reg, u->nr_qids, u->place.armed,
		  g->held);
}
