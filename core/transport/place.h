/*
 * Queue-thread placement policy (transport.placement: auto).
 *
 * The kernel puts a request on the qid of the CPU that issued it (Linux
 * 6.18 and 7.3: one queue per CPU). Where that queue's thread should run
 * depends on the client:
 *   - a synchronous client (psync, metadata calls) sleeps while its request
 *     is served, so the thread on the client's own CPU ("local") serves it
 *     without a cross-CPU wake-up either way;
 *   - a client that keeps several requests in flight (io_uring or libaio
 *     at a queue depth, a writeback flush) keeps running while they are
 *     served, so a thread sharing its CPU takes turns with it while another
 *     CPU idles: its thread belongs on a CPU nobody issues from ("beside").
 * Measured on the 2-CPU AMD EPYC VM (fio 5 s, 4k, passthrough on tmpfs):
 * one client at iodepth 8 gained 1.3-1.6x beside; one psync client and the
 * metadata loop lost 2x beside, two psync clients lost 3x.
 *
 * This file is the decision only, with no threads and no clock, so tests
 * feed it recorded loads (tests/unit/test_place.c); uring_place.c samples
 * the counters and moves the threads.
 */
#ifndef FRING_TRANSPORT_PLACE_H
#define FRING_TRANSPORT_PLACE_H

#include <stdint.h>

/* One qid's load over a window (differences of its counters). */
struct fring_place_load {
	uint64_t requests;  /* requests that arrived on the qid */
	uint64_t depth_sum; /* sum over those arrivals of the qid's requests
			     * then held in userspace, the new one included:
			     * depth_sum / requests is 1.0 for one sync client */
};

enum fring_place_kind {
	FRING_PLACE_LOCAL,  /* every qid's thread on the qid's CPU */
	FRING_PLACE_BESIDE, /* some threads on CPUs whose qids are idle */
};

/* A window decides only with at least this many requests over all qids:
 * below it the load is too light for placement to matter, and the
 * placement is kept (no change after idleness: no wake-up penalty). */
#define FRING_PLACE_MIN_REQUESTS 256
/* A qid is loaded (its CPU issues requests) with at least 1/4 of an even
 * share of the window's requests. */
#define FRING_PLACE_LOADED_DIV 4
/* Mean depth (x100) at which a loaded qid's client counts as keeping
 * several requests in flight; once beside, it stays there down to the
 * lower mark (hysteresis against flapping). */
#define FRING_PLACE_DEEP_ENTER 150
#define FRING_PLACE_DEEP_STAY 125
/* Windows in a row that must propose the same placement before it is
 * applied. */
#define FRING_PLACE_AGREE 2

struct fring_place {
	uint32_t nr;          /* qids; qid i is CPU i */
	const uint8_t *usable;/* nr flags: CPU i may run queue threads */
	const int *node;      /* nr NUMA nodes of the CPUs, or NULL (one node) */
	int *cpu;             /* nr: applied CPU of each qid's thread */
	int kind;             /* enum fring_place_kind of cpu[] */
	int *next;            /* nr: the proposal being confirmed */
	int next_kind;
	uint32_t agree;       /* windows in a row that proposed next[] */
};

/* Start local: cpu[i] = i where usable (else the first usable CPU).
 * usable and node are borrowed. 0 or -ENOMEM / -EINVAL (no usable CPU). */
int fring_place_init(struct fring_place *p, uint32_t nr, const uint8_t *usable,
		     const int *node);
void fring_place_fini(struct fring_place *p);

/* The placement one window's load (nr entries) asks for, into out (nr
 * CPUs); returns its kind, or -1 if the window is too light to decide.
 * Beside: the loaded qids with deep clients, busiest first, each get a
 * usable CPU no loaded qid has (same NUMA node first; the CPU it already
 * has if still free); every other qid stays local. */
int fring_place_propose(const struct fring_place *p,
			const struct fring_place_load *w, int *out);

/* Feed one window: 1 if the applied placement changed (read p->cpu and
 * p->kind), else 0. */
int fring_place_step(struct fring_place *p, const struct fring_place_load *w);

const char *fring_place_kind_name(int kind); /* "local", "beside" */

#endif /* FRING_TRANSPORT_PLACE_H */
