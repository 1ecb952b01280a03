// SPDX-License-Identifier: MIT
/*
 * How many queues to register where the kernel offers reduced queues
 * (FUSE_URING_REDUCED_Q, core/transport/README.md "Reduced queues"; in no
 * released kernel, so checked
 * against tests/kmodel's model of its queue map).
 *
 * With reduced queues a CPU without a registered qid has its requests put
 * on a registered qid of its node (dealt round-robin in CPU order, its own
 * qid first where registered). Each registered qid costs its entries'
 * buffers (queue_depth x payload), so fring starts with one qid per NUMA
 * node and registers more only where the load shows they help: a qid that
 * serves several clients (issuing tasks, fuse_in_header.pid) in the same
 * window makes them take turns on one thread, as two psync clients on
 * one queue thread did on the AMD EPYC VM (0.31x of a thread each,
 * bench/results/amd-epyc-2026-12-01/RESULTS.md). One deep client alone on
 * a qid is not a reason: a qid registered elsewhere already serves it from
 * beside.
 *
 * The kernel cannot unregister a qid before the connection ends, so this
 * only grows; a registration that takes no client of its own (the clients
 * share one CPU, which no other qid can split) holds further growth from
 * the qid that asked for FRING_PLACE_HOLD_MAX windows.
 *
 * This file is the decision only, no threads and no clock; uring_place.c
 * feeds it windows and registers the qids it names.
 */
#ifndef FRING_TRANSPORT_PLACE_GROW_H
#define FRING_TRANSPORT_PLACE_GROW_H

#include <stddef.h>
#include <stdint.h>

#include "place.h"

/* Decisive windows a new qid has to serve a client of its own before it
 * counts as a success; until then nothing else is registered. */
#define FRING_PLACE_GROW_WAIT 8

struct fring_place_grow {
	uint32_t nr;           /* CPUs 0..nr-1, qid i is CPU i (the kernel's) */
	const uint8_t *usable; /* nr flags: fring may register qid i */
	const int *node;       /* nr NUMA nodes, or NULL (one node) */
	uint32_t nr_usable;
	uint8_t *reg;          /* nr: registered, or asked for */
	uint32_t *hold;        /* nr: windows before qid i may ask again */
	int next;              /* the qid being confirmed, -1: none */
	uint32_t agree;        /* windows in a row that proposed next */
	int pending;           /* the last qid asked for, until it serves a
				* client of its own or WAIT windows pass */
	int pending_for;       /* the shared qid that asked for it */
	uint32_t waited;
	uint32_t grown;        /* qids registered after the first ones */
	uint32_t held;         /* registrations that took no client */
};

/* initial: the qids registered at start (n of them). usable and node are
 * borrowed. 0, or -ENOMEM / -EINVAL (a qid out of range or not usable). */
int fring_place_grow_init(struct fring_place_grow *g, uint32_t nr,
			  const uint8_t *usable, const int *node,
			  const int *initial, uint32_t n);
void fring_place_grow_fini(struct fring_place_grow *g);

/* The qids registered at start: one per NUMA node that has usable CPUs
 * (fring_place_pick_cpus), into out (nr entries). The count, or -errno. */
int fring_place_grow_first(const struct fring_topo *t, int *out);

/* Feed one window: w (nr loads by qid; only requests is read) and the
 * clients seen (c, n entries, qid and pid; fring_place_hops may have
 * reordered them). Returns a qid to register now (it is marked
 * registered), or -1. A window with fewer than FRING_PLACE_MIN_REQUESTS
 * requests decides nothing and counts for nothing. A qid is shared when
 * at least two clients each sent it 1 / (FRING_PLACE_LOADED_DIV x usable
 * CPUs) of the window's requests; the busiest shared qid asks for the
 * next unregistered usable CPU of its node after it (wrapping), and that
 * qid is registered once FRING_PLACE_AGREE windows in a row agree. */
int fring_place_grow_step(struct fring_place_grow *g,
			  const struct fring_place_load *w,
			  const struct fring_place_client *c, size_t n);

#endif /* FRING_TRANSPORT_PLACE_GROW_H */
