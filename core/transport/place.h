// SPDX-License-Identifier: MIT
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
 *     CPU idles: its thread belongs on a CPU nobody issues from ("beside"),
 *     if that serves it faster there (a trial decides: FRING_PLACE_TRIAL_*).
 * Such a client is also moved between CPUs by the scheduler, so its
 * requests arrive on several qids; each request's pid tells whose they are
 * (fring_place_hops).
 * In one bench run on the 2-CPU AMD EPYC VM (medians,
 * bench/results/amd-epyc-2026-12-01/RESULTS.md) a thread beside (queues: 1)
 * served one client at iodepth 8
 * 1.69x (reads) / 1.82x (writes) as fast as threads on their own CPUs,
 * two psync clients 0.31x and metadata creates 0.59x.
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
	uint64_t hop;       /* of requests, those from clients based on another
			     * qid (fring_place_hops): they do not make the
			     * qid's CPU busy with a client of its own */
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
 * share of the window's requests, not counting hops (fring_place_hops):
 * a CPU that only sees a client based elsewhere now and then is free. */
#define FRING_PLACE_LOADED_DIV 4
/* Mean depth (x100) at which a loaded qid's client counts as keeping
 * several requests in flight; once beside, it stays there down to the
 * lower mark (hysteresis against flapping). Recorded: one client at
 * iodepth 8 gave 2.4-2.7 (local and beside alike); psync gave 1.0, and two
 * psync clients sharing a CPU up to 1.7, which must not count as deep:
 * moving their thread away slows them. */
#define FRING_PLACE_DEEP_ENTER 200
#define FRING_PLACE_DEEP_STAY 160
/* Windows in a row that must propose the same placement before it is
 * applied; a move beside (a trial) waits for TRIAL_AGREE, so that the
 * rate it is measured against (the last BASE_WINDOWS) comes from windows
 * that asked for it, not the first of them, which the load may have begun
 * inside, nor the load before (on the Intel Xeon VM J5's first trial,
 * measured against windows that still held J4's, was kept at 115-150% of
 * a rate J5 beats by far: its check undid it a second later). */
#define FRING_PLACE_AGREE 2
#define FRING_PLACE_TRIAL_AGREE (FRING_PLACE_BASE_WINDOWS + 1)
/* A move beside is a trial: whether a thread serves a deep client better
 * from another CPU depends on the machine and on the client (on the AMD
 * EPYC VM fio at iodepth 8 went 1.6x-1.8x faster, while a lighter client
 * that reaps each completion, tests/integration/hop_client.c, went 0.85x).
 * After SETTLE windows, the requests of MEASURE windows are compared with
 * the last BASE_WINDOWS before it (all of them windows that asked for
 * the move: TRIAL_AGREE); the trial's placement stays if it served at
 * least KEEP_PCT % of their rate, else the threads go back and the same
 * move waits HOLD windows, doubling from HOLD_MIN (1 s) to HOLD_MAX
 * (32 s) with each failure in a row. A trial undone before its verdict (the load it moved
 * for went away with the move) is a failure too. After a lost trial the
 * placement gone back to is measured as the trial was; unless it serves
 * at least RECHECK_PCT % of the trial's rate, the whole machine slowed
 * down (on the AMD EPYC VM a noisy neighbour cut beside trials to 27-68%
 * of the rate before them), so the hold is lifted and the doubling undone.
 * hop_client's loss beside stands: local served it 125% of beside.
 * A kept trial is checked once, CONFIRM_AFTER loaded windows later, the
 * other way round: the threads go back for a trial of the placement before
 * it, measured against the kept placement's last windows; if that serves
 * at least KEEP_PCT % of their rate, it stays and the kept placement is
 * held off as if it had lost (on an Intel Xeon VM a beside trial on one
 * deep writer was kept at 103% of a rate measured while the machine was
 * slow, then served 75% of local for the 9.6 s left of the job). */
#define FRING_PLACE_TRIAL_SETTLE 1
#define FRING_PLACE_TRIAL_MEASURE 4
#define FRING_PLACE_BASE_WINDOWS 4
#define FRING_PLACE_TRIAL_KEEP_PCT 100
#define FRING_PLACE_RECHECK_PCT 110
#define FRING_PLACE_HOLD_MIN 20
#define FRING_PLACE_HOLD_MAX 640
#define FRING_PLACE_CONFIRM_AFTER 20

/* What the last fring_place_step did, for the caller's log. */
enum fring_place_event {
	FRING_PLACE_EV_NONE,
	FRING_PLACE_EV_MOVED,    /* applied a placement (not a trial) */
	FRING_PLACE_EV_TRIAL,    /* applied a beside placement on trial */
	FRING_PLACE_EV_KEPT,     /* the trial served rate_pct %: kept */
	FRING_PLACE_EV_REVERTED, /* the trial served rate_pct %: went back */
	FRING_PLACE_EV_UNDONE,   /* the trial's own windows asked to go back */
	FRING_PLACE_EV_RECHECKED,/* after going back the rate fell to the
				  * trial's (rate_pct % of it): the loss was the
				  * machine's, the hold is lifted */
	FRING_PLACE_EV_CONFIRM,  /* went back to the placement before a kept
				  * trial, on trial against it */
	FRING_PLACE_EV_CONFIRMED,/* that served rate_pct % of the kept one's
				  * rate: the kept placement is back */
	FRING_PLACE_EV_OVERTURNED,/* it served rate_pct %: it stays, the kept
				   * placement is held off */
};

struct fring_place {
	uint32_t nr;          /* qids; qid i is CPU i */
	const uint8_t *usable;/* nr flags: CPU i may run queue threads */
	const int *node;      /* nr NUMA nodes of the CPUs, or NULL (one node) */
	int *cpu;             /* nr: applied CPU of each qid's thread */
	int kind;             /* enum fring_place_kind of cpu[] */
	int *next;            /* nr: the proposal being confirmed */
	int next_kind;
	uint32_t agree;       /* windows in a row that proposed next[] */
	uint64_t hist[FRING_PLACE_BASE_WINDOWS]; /* requests of the applied
			       * placement's last windows (a ring) */
	uint32_t nhist;       /* windows pushed since it was applied */
	int *cand;            /* nr: scratch for the window's proposal */
	/* The running trial (trial > 0: 1 + the windows it has seen). */
	uint32_t trial;
	int confirming;       /* the trial is a kept trial's check: it went
			       * back to from[]'s predecessor */
	uint32_t confirm_in;  /* > 0: loaded windows before a kept trial's
			       * check */
	int *from;            /* nr: the placement before it */
	int from_kind;
	uint64_t base_rate;   /* requests per window before it */
	uint64_t trial_sum;   /* requests of its measured windows */
	/* After a lost trial the placement gone back to is measured the
	 * same way: if it serves no more than the trial did, the trial lost
	 * to the machine (a neighbour took CPU time), not to its placement. */
	uint32_t recheck;     /* > 0: 1 + the windows it has seen */
	uint64_t trial_rate;  /* the lost trial's requests per window */
	uint64_t recheck_sum;
	int *failed;          /* nr: the last placement that lost its trial */
	uint32_t hold;        /* windows before failed[] may be tried again */
	uint32_t backoff;     /* the next hold */
	int event;            /* enum fring_place_event of the last step */
	uint32_t rate_pct;    /* the last trial's rate, % of its base */
	uint32_t trials, trials_kept, overturned;
	int verdict;          /* tests only: 1 keep every trial, -1 revert
			       * every one, 0 (default) measure */
};

/* One client (the issuing task: fuse_in_header.pid) on one qid over a
 * window: how many of its requests arrived there. */
struct fring_place_client {
	uint32_t qid;
	uint32_t pid;
	uint64_t requests;
};

/* A client whose requests arrive on several qids within a window is one
 * task the scheduler moved between CPUs (a deep client sharing its CPU with
 * the queue thread is pushed to the other CPU now and then). Its home is
 * the qid with most of its requests; its requests on every other qid are
 * added to that qid's w[].hop. c (n entries, reordered) is what the qids
 * saw; entries with qid >= nr are ignored. */
void fring_place_hops(struct fring_place_client *c, size_t n,
		      struct fring_place_load *w, uint32_t nr);

/* Start local: cpu[i] = i where usable (else the first usable CPU).
 * usable and node are borrowed. 0 or -ENOMEM / -EINVAL (no usable CPU). */
int fring_place_init(struct fring_place *p, uint32_t nr, const uint8_t *usable,
		     const int *node);
void fring_place_fini(struct fring_place *p);

/* The placement one window's load (nr entries) asks for, into out (nr
 * CPUs); returns its kind, or -1 if the window is too light to decide.
 * Beside: the loaded qids with deep clients, busiest first, each get a
 * usable CPU no loaded qid has (the CPU it already has if still free, else
 * on the same NUMA node first, the least used first); every other qid
 * stays local, but for the idle qid of each CPU given out, whose thread
 * takes the deep qid's CPU (a swap). */
int fring_place_propose(const struct fring_place *p,
			const struct fring_place_load *w, int *out);

/* Feed one window: 1 if the applied placement changed (read p->cpu and
 * p->kind), else 0; p->event says what happened. A light window changes
 * nothing and does not count for agreement, trials or holds. */
int fring_place_step(struct fring_place *p, const struct fring_place_load *w);

const char *fring_place_kind_name(int kind); /* "local", "beside" */

/*
 * NUMA spread (place_numa.c): which CPUs get a queue (with the kernel's
 * reduced queues: core/transport/README.md) or a queue thread (N threads
 * for every qid),
 * so that each node has its share and queue memory stays on its node.
 */
struct fring_topo {
	uint32_t nr_cpus;       /* CPUs 0..nr_cpus-1 (the possible CPUs) */
	const int *node;        /* nr_cpus NUMA nodes (>= 0), or NULL: one node */
	const uint8_t *usable;  /* nr_cpus flags (online, allowed, transport.cpus),
				 * or NULL: all */
};

/* Choose n usable CPUs, ascending, into out: with n >= the nodes that have
 * usable CPUs every such node gets one, the rest is split over nodes in
 * proportion to their usable CPUs (largest remainder), and each node's
 * share is spread evenly over its CPUs; with fewer, the nodes with the
 * most usable CPUs get one each (lower node first on ties). n above the
 * usable CPUs is cut to them. Returns the count chosen, or -EINVAL (n 0
 * or nothing usable), -ENOMEM. */
int fring_place_pick_cpus(const struct fring_topo *t, uint32_t n, int *out);

/* Serve every qid 0..nr_cpus-1 with nthreads threads: thread i runs on
 * home[i] (from fring_place_pick_cpus); qid q goes to the thread whose home
 * is q, else round-robin to the threads on q's node, else to all threads.
 * thread_of: nr_cpus thread indexes. Returns nthreads used (<= asked), or
 * -errno. */
int fring_place_threads(const struct fring_topo *t, uint32_t nthreads,
			int *home, uint32_t *thread_of);

/* The queue layout of a mount: which qids are registered and which thread
 * serves each. */
struct fring_place_plan {
	uint32_t nr_reg;      /* qids registered */
	int *reg;             /* nr_reg qids (CPUs), ascending */
	uint32_t *thread_of;  /* nr_reg: the thread serving reg[i] */
	uint32_t nr_threads;
	int *home;            /* nr_threads: the CPU each thread starts on */
	int reduced;          /* fewer qids than t->nr_cpus (kernel REDUCED_Q) */
};

/* queues: transport.queues (0 = auto). With reduced (the kernel offers
 * FUSE_URING_REDUCED_Q), register queues qids (auto: every usable CPU)
 * spread by fring_place_pick_cpus, a thread each. Without it every qid
 * 0..nr_cpus-1 is registered (fewer hang the kernel's I/O) and served by
 * queues threads (auto: one per usable CPU) from fring_place_threads.
 * 0 or -errno; free with fring_place_plan_free. */
int fring_place_plan(const struct fring_topo *t, uint32_t queues, int reduced,
		     struct fring_place_plan *out);
void fring_place_plan_free(struct fring_place_plan *p);

#endif /* FRING_TRANSPORT_PLACE_H */
