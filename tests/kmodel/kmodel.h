// SPDX-License-Identifier: MIT
/*
 * A userspace model of how the kernel would pick a FUSE-over-io_uring queue
 * for a request under the reduced-queues series (Bernd Schubert's "Allow
 * to reduce the
 * number of queues and request distribution", v5; in no released kernel).
 * It is written from the series' description, not from its code, so that
 * fring's queue placement (core/transport/place_numa.c) can be checked
 * against those rules without a kernel that has them. What it keeps:
 *
 *   - a bitmap of registered queues per NUMA node and one for all CPUs;
 *   - per node and machine-wide, a static CPU -> qid table, rebuilt at each
 *     registration: a CPU whose own qid is registered uses it, every other
 *     CPU (in CPU order) is dealt round-robin over the registered qids;
 *   - a count of requests per queue (queued or being served in userspace);
 *   - the selection: the node's table if the node has a registered queue
 *     (a background request moved off the issuer's own queue, a busy queue
 *     passed over for the next ones of the node), else the machine-wide
 *     table, else no queue.
 *
 * qid i belongs to CPU i, as in the kernel.
 */
#ifndef FRING_TESTS_KMODEL_H
#define FRING_TESTS_KMODEL_H

#include <stdint.h>

#define KMODEL_MAX_CPUS 256
#define KMODEL_MAX_NODES 16
#define KMODEL_WORDS (KMODEL_MAX_CPUS / 64)

/* The series' constants: a queue holding this many requests is busy, and
 * this many further queues of the node are tried before giving up. */
#define KMODEL_THRESHOLD 2
#define KMODEL_RETRIES 2

/* One set of registered qids and the table derived from it. */
struct kmodel_map {
	uint64_t reg[KMODEL_WORDS];        /* registered qids */
	int nr;                            /* bits set in reg */
	int cpu_to_qid[KMODEL_MAX_CPUS];   /* only meaningful while nr > 0 */
};

struct kmodel {
	int nr_cpus;                       /* qids and CPUs 0..nr_cpus-1 */
	int nr_nodes;                      /* highest node + 1 */
	int node_of[KMODEL_MAX_CPUS];
	int threshold;                     /* default KMODEL_THRESHOLD */
	int retries;                       /* default KMODEL_RETRIES */
	int ready;                         /* set by the first registration */
	struct kmodel_map node[KMODEL_MAX_NODES];
	struct kmodel_map all;
	unsigned nr_reqs[KMODEL_MAX_CPUS]; /* per qid */
	unsigned long moves;               /* busy queues passed over, total */
};

/* node_of: nr_cpus nodes (0 <= node < KMODEL_MAX_NODES); NULL: one node.
 * 0, or -1 if a size is out of range. */
int kmodel_init(struct kmodel *m, int nr_cpus, const int *node_of);

/* The server registers qid (its first ring entry; more entries of a queue
 * change nothing here). 0, or -1 for a qid out of range. */
int kmodel_register(struct kmodel *m, int qid);

/* The qid a request issued on cpu goes to, or -1 (no queue registered). */
int kmodel_select(struct kmodel *m, int cpu, int background);

/* A request enters qid / ends on qid (drives the busy test). */
void kmodel_queue_req(struct kmodel *m, int qid);
void kmodel_done(struct kmodel *m, int qid);

/* Node layouts for tests: CPUs in nodes blocks of nr_cpus / nodes, or
 * CPU c on node c % nodes. */
void kmodel_nodes_contiguous(int *node_of, int nr_cpus, int nodes);
void kmodel_nodes_interleaved(int *node_of, int nr_cpus, int nodes);

#endif /* FRING_TESTS_KMODEL_H */
