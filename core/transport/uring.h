// SPDX-License-Identifier: MIT
/*
 * FUSE-over-io_uring transport for Linux 6.18 and 7.3 (the rules it
 * follows: core/transport/README.md).
 *
 * One ring per queue thread, each thread started on the CPUs of the qids it
 * serves (moved by load with placement auto: place.h); ring entries carved from one NUMA-local region per qid and
 * registered as io_uring fixed buffers, so backing I/O can land straight in
 * an entry's payload buffer (READ_FIXED/WRITE_FIXED).
 *
 * Session use, in this order (the kernel refuses ring commands before the
 * INIT reply, and on 6.18 hangs every request until each qid has an
 * entry: fs/fuse/dev_uring.c fuse_uring_cmd, is_ring_ready):
 *   1. read INIT; fring_uring_unavailable() says whether the kernel offers
 *      io_uring at all (and why not);
 *   2. fring_uring_setup(): every thread, ring, buffer and REGISTER SQE is
 *      ready, or nothing is left behind and the reason comes back (fallback
 *      to /dev/fuse; the INIT reply must then go out WITHOUT the flag);
 *   3. write the INIT reply with FUSE_OVER_IO_URING;
 *   4. fring_uring_start(): the threads submit their REGISTERs;
 *   5. keep serving /dev/fuse (FORGET, INTERRUPT, early requests);
 *   6. after unmount: fring_uring_stop(), then fring_uring_free() once no
 *      request is outstanding.
 */
#ifndef FRING_TRANSPORT_URING_H
#define FRING_TRANSPORT_URING_H

#include <stddef.h>
#include <stdint.h>

#include "../config/config.h"
#include "../proto/init_facts.h"
#include "transport.h"

struct fring_uring;

/* Default ring entries per qid (transport.queue_depth 0). Swept 1..32 on
 * the 2-CPU 6.18 box (memfs-like null server, fio 4k psync/aio-qd16 and
 * 1M aio): no depth beat 8 consistently, and each entry costs one
 * max_payload buffer per possible CPU (every CPU's qid is registered:
 * core/transport/README.md). libfuse uses 8 too. */
#define FRING_URING_DEFAULT_DEPTH 8
/* Header buffer: 288 bytes used, a page so payloads stay page aligned. */
#define FRING_URING_HEADER_SZ 4096u

struct fring_uring_params {
	int fuse_fd;                /* session /dev/fuse fd, open for the session */
	struct fring_serve sv;	    /* where requests go (transport.h) */
	const char *mountpoint;     /* for messages; may be NULL */
	uint32_t conn_id;           /* fusectl connection id if known, else 0 */
	/* The mount's transport keys, read where they apply: queues,
	 * queue_depth, poll_us, bufpool (mode, size, registered), zero_copy,
	 * placement, cpus, reduced_queues. Not owned; outlives the rings. */
	const struct fring_cfg_transport *cfg;
	uint32_t max_write;         /* negotiated in INIT */
	uint32_t max_pages;         /* negotiated in INIT (0 = 32, no MAX_PAGES) */
	uint32_t
		ring_mode; /* FRING_URING_RING_*; 0 = the best the kernel takes */
	int bufpool_offered; /* by the hook: INIT had FUSE_HAS_IO_URING_BUFPOOL */
	/* By the hook, from fring_uring_reduced_queues: register reduced
	 * queues (INIT had FUSE_URING_REDUCED_Q and reduced_queues lets fring
	 * trust it), and why or why not (NULL: from reduced_offered alone). */
	int reduced_offered;
	const char *reduced_why;
	/* Takeover (uring_handover.c): handover 1 puts the entry memory in
	 * a memfd a new server can adopt (per-entry buffers only); adopt 1
	 * maps adopt_fd, an old server's, and registers nothing for the
	 * entries that hold its requests. */
	int handover;
	int adopt;
	int adopt_fd;
};

/* Task-work modes, best first. AUTO tries DEFER, then COOP, then PLAIN
 * (each falls back on EINVAL from io_uring_setup). */
#define FRING_URING_RING_AUTO 0
#define FRING_URING_RING_DEFER 1  /* SINGLE_ISSUER | DEFER_TASKRUN */
#define FRING_URING_RING_COOP 2   /* SINGLE_ISSUER | COOP_TASKRUN */
#define FRING_URING_RING_PLAIN 3

/* NULL if the kernel's INIT offer (flags incl. flags2 << 32) allows io_uring;
 * else a one-line reason in buf: "kernel too old (FUSE 7.40; io_uring needs 7.42)",
 * "/sys/module/fuse/parameters/enable_uring is N", "io_uring disabled by
 * sysctl (kernel.io_uring_disabled = 2)". */
const char *fring_uring_unavailable(uint64_t kernel_flags, uint32_t kernel_minor,
				    char *buf, size_t len);

/* Whether fring registers reduced queues (FUSE_URING_REDUCED_Q, the
 * provisional bit 44 of core/transport/README.md "Reduced queues", in no
 * released kernel): mode is
 * transport.reduced_queues (FRING_AUTO/ON/OFF), capable and minor what
 * INIT offers. off never; on whenever the bit is offered; auto only with
 * the bit at a protocol minor fring knows to carry it (none yet: auto is
 * off on 6.18 and 7.3). 1 or 0, and which applies in why ("the kernel
 * does not offer them", "transport.reduced_queues on trusts INIT bit
 * 44", ...). */
int fring_uring_reduced_queues(int mode, uint64_t capable, uint32_t minor,
			       char *why, size_t len);

/* Why a mount would not serve zero-copy: zero_copy is transport.zero_copy,
 * bufpool_offered whether INIT offers pools (and so zero-copy), pool
 * whether the queue gets one; NULL when it would. */
const char *fring_uring_zc_why_not(int zero_copy, int bufpool_offered,
				   int pool, int cap_sys_admin);

/* The largest request/reply body: max(8192, max_write, max_pages * 4096). */
uint32_t fring_uring_max_payload(uint32_t max_write, uint32_t max_pages);

/* Number of possible CPUs (/sys/devices/system/cpu/possible), which is the
 * number of qids the 6.18 kernel waits for. -errno on failure. */
int fring_uring_possible_cpus(void);

/* Set up every queue before the INIT reply. 0, or -errno and a one-line
 * *err ("ring setup failed: ...") with everything torn down again. */
int fring_uring_setup(const struct fring_uring_params *p,
		      struct fring_uring **out, char **err);

/* Before mounting: can cfg's ring buffers be pinned (RLIMIT_MEMLOCK without
 * CAP_IPC_LOCK, available memory)? Pools are assumed where the kernel is
 * 7.3+ and bufpool is not off. 0, or -ENOMEM with a one-line reason in why
 * ("the ring buffers pin 16 MiB (2 queues x ...) but RLIMIT_MEMLOCK is 8 MiB:
 * lower transport.queue_depth ..., or raise the limit ..."). */
int fring_uring_precheck(const struct fring_cfg_transport *cfg, char *why,
			 size_t len);

/* After the INIT reply (with FUSE_OVER_IO_URING) went out: submit the
 * REGISTERs. */
void fring_uring_start(struct fring_uring *u);

/* Stop every queue thread and join it (bounded). Safe before start (the
 * INIT reply failed) and idempotent. */
void fring_uring_stop(struct fring_uring *u);

/* u as the session drives it (transport.h: join = stop, free). */
struct fring_transport *fring_uring_transport(struct fring_uring *u);

/* Free rings and buffers. Only after stop, and once no request served over
 * the rings is still held by the plugin. */
void fring_uring_free(struct fring_uring *u);

uint32_t fring_uring_nr_qids(const struct fring_uring *u);
uint32_t fring_uring_nr_threads(const struct fring_uring *u);
uint32_t fring_uring_depth(const struct fring_uring *u);
/* 1 if the rings serve zero-copy (uring_zc.c). */
int fring_uring_zero_copy(const struct fring_uring *u);
/* Buffers in each qid's pool; 0: per-entry buffers. */
uint32_t fring_uring_pool_bufs(const struct fring_uring *u);
/* Ring flags each thread ended up with, e.g. "SQE128|SINGLE_ISSUER|DEFER_TASKRUN". */
const char *fring_uring_ring_mode(const struct fring_uring *u);

/* Per-qid counters (qid < nr_qids) or totals (qid = UINT32_MAX). */
struct fring_uring_stats {
	uint64_t requests;      /* requests received in ring entries */
	uint64_t commits;       /* COMMIT_AND_FETCH submitted */
	uint64_t remote;        /* replies/I/O handed over by other threads */
	uint64_t fixed_reads;   /* READ_FIXED completed */
	uint64_t fixed_writes;  /* WRITE_FIXED completed */
	uint64_t inline_reads;  /* done at once with RWF_NOWAIT on the owner */
	uint64_t inline_writes;
	uint64_t io_errors;     /* backing I/O that failed */
	uint64_t entries;       /* ring entries registered with the kernel */
	uint64_t wakeups;       /* eventfd wake-ups of the queue thread */
	uint64_t pool_hits;     /* requests whose payload was in a pool buffer */
	uint64_t zc_reads;      /* zero-copied READs served (READ_FIXED into the slot) */
	uint64_t zc_writes;     /* zero-copied WRITEs served */
	uint64_t zc_copied;     /* READ/WRITE the kernel copied on a zero-copy queue */
	uint64_t zc_refused;    /* replies with bytes to a zero-copied request: EIO */
	uint64_t zc_owner_plain;/* zero-copied requests the owner thread claimed and
				 * committed without an atomic read-modify-write */
	uint64_t zc_owner_rmw;  /* ...the owner handled with one (a caller off the
				 * thread was inside, or a fallback) */
	uint64_t pool_full;     /* times a request took the pool's last free buffer
				 * (payload requests then wait in the kernel) */
	uint64_t polls;         /* busy-polls begun (the queue ran dry) */
	uint64_t polls_cut;     /* ...ended early: a yield let another task run */
	uint64_t poll_ns;       /* time spent busy-polling */
	uint64_t pool_in_use;   /* pool buffers held now */
};
int fring_uring_stats(const struct fring_uring *u, uint32_t qid,
		      struct fring_uring_stats *out);

/* Whether r was received over a ring (so the services below apply). */
int fring_uring_owns(const struct fring_request *r);

/* ABI 1.1 data-path services for a ring request (any thread), given the
 * plugin's handle h (request.h). On 0 the request is answered by the
 * runtime when the I/O completes; a negative errno means not accepted and
 * the request is still unanswered:
 *   -EOPNOTSUPP  not a ring request (use the synchronous path);
 *   -EINVAL      wrong opcode, or len above the READ's size;
 *   -EBADF       fd < 0;
 *   -EALREADY    answered already (or h is stale). */
int fring_uring_read_fd(fring_req *h, int fd, uint64_t offset, uint32_t len);
int fring_uring_write_fd(fring_req *h, int fd, uint64_t offset);

/* ---- INIT-time selection, for the session (uring_init.c) ---- */

/* The session's fring_init_params.before_reply state. */
struct fring_uring_offer {
	int mode;                    /* the mount's transport.mode (FRING_MODE_*) */
	struct fring_uring_params p; /* by the session; max_write/max_pages by the hook */
	struct fring_uring *u;       /* out: set up, to start after the reply */
	char reason[256];            /* out: why io_uring is not used */
	char reduced_why[160];       /* out: p.reduced_why's text */
};

/* before_reply hook (ud = struct fring_uring_offer *): devfuse mode does
 * nothing; otherwise set the rings up and add FUSE_OVER_IO_URING, or log
 * the reason and fall back (auto), or fail INIT with it (uring). */
int fring_uring_init_hook(void *ud, const struct fring_init_result *res,
			  struct fuse_init_out *out, char **err);

/* Whether io_uring is expected to work (enable_uring = Y, not disabled by
 * sysctl): what the plugin is told in fring_conn.transport before INIT. */
int fring_uring_enabled(void);

/* ---- Takeover without unmount (uring_handover.c) ---- */

/* The memfd of the entry memory a new server adopts; -1 without one (the
 * mount was not set up for a handover: pools, zero-copy, reduced queues,
 * or no plugin state hooks). */
int fring_uring_shm_fd(const struct fring_uring *u);
/* Old server: from now on requests that arrive stay in their entries. */
void fring_uring_hold(struct fring_uring *u);
/* Wait until every entry holds a request, so the process may exit with
 * nothing armed in its rings. 0 or -ETIMEDOUT. */
int fring_uring_wait_full(struct fring_uring *u, unsigned timeout_ms);
/* The CPU whose requests the kernel queues on qid. */
int fring_uring_qid_cpu(const struct fring_uring *u, uint32_t qid);
/* Entries holding a request now. */
uint32_t fring_uring_held(const struct fring_uring *u);
/* A refused takeover: serve again, the held requests first. */
void fring_uring_unhold(struct fring_uring *u);

/* One FRING_LOG=debug line of the counters above, prefixed with name:
 * "NAME: uring: N requests over the ring (qid 0: a, qid 1: b), ...". */
void fring_uring_log_stats(const struct fring_uring *u, const char *name);

#endif /* FRING_TRANSPORT_URING_H */
