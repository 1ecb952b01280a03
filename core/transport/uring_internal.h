// SPDX-License-Identifier: MIT
/*
 * Internals shared by the uring_*.c files. Ownership rule: a queue thread's
 * ring, its SQ and everything marked "owner" below are touched only by that
 * thread; other threads reach it through the MPSC list + eventfd.
 */
#ifndef FRING_TRANSPORT_URING_INTERNAL_H
#define FRING_TRANSPORT_URING_INTERNAL_H

#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/uio.h>

#include "../request/request.h"
#include "place.h"
#include "place_grow.h"
#include "poll_trial.h"
#include "uring.h"

/* CQE user_data: an entry pointer with a tag in the low bits (entries are
 * 64-byte aligned), or one of the small constants below. */
#define UD_TAG_CMD 0u /* REGISTER / COMMIT_AND_FETCH of the entry */
#define UD_TAG_IO 1u  /* READ_FIXED / WRITE_FIXED of the entry */
#define UD_TAG_MASK 63u
#define UD_WAKE 1ull  /* multishot POLL_ADD on the thread's wake eventfd */
#define UD_STOP 2ull  /* POLL_ADD on the transport's stop eventfd */

/* Entry life cycle. Transitions out of USER/IO happen on any thread (the
 * replier), all others on the owner thread. */
enum ent_state {
	ENT_IDLE,       /* not yet registered */
	ENT_KERNEL,     /* REGISTER or COMMIT_AND_FETCH parked in the kernel */
	ENT_USER,       /* holds a request; the plugin owns it */
	ENT_IO,         /* backing READ/WRITE_FIXED in flight (reply claimed) */
	ENT_REPLIED,    /* reply in the buffers, commit not yet prepared */
	ENT_COMMITTING, /* commit handed to the owner (MPSC or SQ) */
	ENT_GONE,       /* torn down by the kernel */
	ENT_HELD,       /* holds a request a takeover hands over (owner) */
};

/* What the owner thread must do with an entry it pops from the MPSC. */
enum ent_action { ACT_COMMIT = 1, ACT_READ, ACT_WRITE };

struct uring_thread;
struct uring_queue;

struct uring_ent {
	struct fring_request req;      /* handed to dispatch; container_of'ed */
	struct uring_thread *th;
	struct uring_queue *q;
	struct fuse_uring_req_header *hdr; /* header buffer (4 KiB) */
	char *payload;                 /* payload buffer, payload_cap bytes */
	uint32_t payload_cap;
	uint16_t qid;
	uint16_t buf_index;            /* fixed buffer holding the payload */
	uint8_t pool_held;             /* owner: the request holds a pool buffer */
	uint8_t zc;                    /* the request is zero-copied: its data sits
					* at zc_slot (written before ENT_USER) */
	uint16_t zc_slot;              /* its zero-copy slot in the ring's table */
	uint8_t owner_claimed;         /* owner: claimed by its own thread without
					* an atomic read-modify-write (uring_io.c) */
	uint8_t adopt;                 /* holds a request an old server left
					* (uring_handover.c) */
	struct iovec reg_iov[2];       /* REGISTER argument */

	_Atomic int state;             /* enum ent_state */
	uint64_t commit_id;            /* owner: the kernel's id for the request held */
	uint32_t last_cmd;             /* owner: FUSE_IO_URING_CMD_* parked */
	_Atomic int abandoned;         /* released while I/O was in flight */

	/* Hand-over to the owner thread (written before the MPSC push). */
	struct uring_ent *mpsc_next;
	int action;                    /* enum ent_action */
	int io_fd;
	uint64_t io_off;
	uint32_t io_len;
	const void *io_src;            /* WRITE: data inside the payload */
} __attribute__((aligned(64)));

/* Single writer (the owner thread), any reader: relaxed load + store. */
struct uring_counters {
	_Atomic uint64_t requests, commits, remote, fixed_reads, fixed_writes,
		inline_reads, inline_writes, io_errors, entries, wakeups,
		pool_hits, pool_full, zc_reads, zc_writes, zc_copied,
		zc_refused, zc_owner_plain, zc_owner_rmw, polls, polls_cut,
		poll_ns,     /* time spent busy-polling */
		pool_in_use, /* a gauge: pool_busy, published */
		depth_sum; /* per arrival: the qid's requests then held (place.h) */
};

/* One window's issuers (fuse_in_header.pid) of a qid, for placement auto:
 * the first URING_PLACE_PIDS pids with their requests; more are left
 * out (their requests then count as the qid's own). Written by the owner,
 * read by the thread closing the window. */
#define URING_PLACE_PIDS 4
struct uring_pids {
	_Atomic uint32_t epoch;        /* the window these are of */
	_Atomic uint32_t pid[URING_PLACE_PIDS];
	_Atomic uint64_t n[URING_PLACE_PIDS];
};

/* One qid: its CPU, its NUMA-local region and its entries. */
struct uring_queue {
	uint16_t qid;
	int cpu;
	int node;                      /* of cpu: where its memory goes */
	void *region;                  /* depth * (header + payload) */
	size_t region_sz;
	uint8_t region_shared;         /* in the takeover memfd: not unmapped */
	struct uring_ent *ents;        /* depth entries */
	uint32_t depth;
	uint16_t buf_base, nbufs;      /* its fixed buffers in the ring */
	/* Buffer-pool mode (uring_bufpool.c): region holds only the headers,
	 * payloads live in pool. pool NULL: per-entry buffers. */
	char *pool;
	size_t pool_sz;                /* pool_bufs * the payload size */
	uint32_t pool_bufs;
	uint8_t pool_added;            /* the kernel took ADD_BUFPOOL */
	uint8_t pool_fixed;            /* ...with IORING_URING_CMD_FIXED: every
					* REGISTER/COMMIT must carry buf_base */
	uint32_t pool_busy;            /* owner: buffers held in userspace */
	uint8_t zc;                    /* added with FUSE_URING_ZERO_COPY, with a
					* pool: its entries carry zc slots */
	uint32_t held;                 /* owner: requests in userspace */
	uint32_t batch;                /* owner: arrivals in this CQE batch */
	struct uring_counters ctr;
	struct uring_pids pids[2];     /* by window parity (uring_place.c) */
};

/* Lock-free multi-producer, single-consumer list of entries. */
struct uring_mpsc {
	_Atomic(struct uring_ent *) head;
};

struct fring_uring;

/* An fd last found on a memory-backed filesystem (uring_io.c), trusted
 * for `left` more uses before it is checked again. fd -1: empty. */
#define URING_MEMFD_SLOTS 64
#define URING_MEMFD_RECHECK 64
struct uring_memfd {
	int fd;
	uint32_t left;
};

struct uring_thread {
	struct fring_uring *u;
	uint32_t idx;
	int home;                      /* the CPU it starts on (uring_layout.c) */
	pthread_t tid;
	int started;                   /* pthread_create succeeded */
	struct io_uring ring;
	int ring_ok;
	unsigned ring_flags;
	struct uring_queue *queues;    /* nq consecutive qids */
	uint32_t nq;
	uint32_t nents;                /* entries over all its queues */
	uint32_t live;                 /* owner: entries not GONE */
	uint32_t io_inflight;          /* owner: backing I/O in flight */
	uint32_t nheld;                /* owner: entries ENT_HELD */
	int wake_fd;                   /* eventfd: MPSC not empty */
	struct uring_mpsc mpsc;
	int setup_err;                 /* -errno, set before reporting */
	char setup_what[96];           /* which setup step failed */
	int stopping;                  /* owner: the stop eventfd fired */
	uint64_t poll_cur;             /* owner: current busy-poll budget, ns */
	uint64_t idle_since;           /* owner: when the queue ran dry, 0: busy */
	uint32_t poll_misses;          /* owner: long gaps in a row */
	struct uring_memfd memfd[URING_MEMFD_SLOTS]; /* owner */
	int exited;                    /* set (under u->lock) when it returns */
	_Atomic int gone;              /* its ring is closed: hand-overs to it are
					* finished by the caller (uring_serve.c) */
	int dormant;                   /* its qid is not registered yet: no ring
					* until armed (uring_grow.c) */
	_Atomic int arm;               /* register it now (set with a wake_fd
					* write by the thread closing a window) */
};

/* uring_place.c: transport.placement auto. The window fields are written
 * only by the thread holding busy. */
struct uring_place {
	int on;                        /* adapting (else why says what is fixed) */
	char why[96];
	struct fring_place pol;
	uint8_t *usable;               /* CPU i may run queue threads */
	struct fring_place_load *seen; /* counters when the window opened */
	struct fring_place_load *win;
	_Atomic uint64_t next_ns;      /* when the open window closes */
	_Atomic uint32_t epoch;        /* the open window's number */
	struct fring_place_client *clients; /* nr_qids * URING_PLACE_PIDS */
	atomic_flag busy;              /* a thread is closing a window */
	int applied_kind;
	uint64_t since_ns;             /* when the applied placement began */
	uint64_t time_ns[2];           /* per enum fring_place_kind */
	_Atomic uint32_t changes;      /* read by statistics */
	int growing;                   /* reduced queues: registering more
					* (uring_grow.c) instead of moving threads */
	struct fring_place_grow grow;
	uint32_t armed;                /* qids registered under load */
};

/* uring_poll.c: whether the threads busy-poll (poll_trial.h). The window
 * fields are written only by the thread holding busy. */
struct uring_poll {
	_Atomic int on; /* poll when dry (read by every thread) */
	struct fring_poll_trial pol;
	_Atomic uint64_t next_ns; /* when the open window closes */
	atomic_flag busy;         /* a thread is closing a window */
	uint64_t seen;            /* requests when the window opened */
	uint64_t closed_ns;       /* when the last window closed */
	uint64_t since_ns;        /* when the applied setting began */
	uint64_t time_ns[2];      /* not polling, polling */
};

struct fring_uring {
	struct fring_transport tp; /* first: the session's handle */
	struct fring_serve sv;	   /* where requests go (transport.h) */
	int fuse_fd;
	char *mountpoint;              /* for messages */
	uint32_t conn_id;              /* fusectl id, 0 = look it up */
	uint32_t nr_qids, nr_threads, depth, payload_sz; /* nr_qids: registered */
	uint32_t nr_cpus;              /* possible CPUs: the kernel's qid space */
	uint8_t *usable;               /* nr_cpus: may run queue threads */
	int *node;                     /* nr_cpus: NUMA node of each CPU */
	int reduced;                   /* fewer qids than CPUs registered */
	int reduced_offered;           /* INIT offered FUSE_URING_REDUCED_Q and
					* transport.reduced_queues trusts it */
	char reduced_why[160];         /* which applies (the queues: line) */
	int queues_auto;               /* transport.queues not given */
	int cpus_set;                  /* transport.cpus given */
	uint32_t pool_bufs;            /* buffers per qid's pool, 0: per-entry */
	int pool_registered;           /* transport.bufpool.registered */
	int zc;                        /* zero-copy planned (uring_zc.c) */
	char zc_why[256];              /* why not, when zc is 0 */
	const char *test_fault;        /* FRING_TEST_FIXED_FAULT (tests only) */
	uint64_t poll_ns;              /* busy-poll budget before sleeping */
	int *cpus;                     /* possible CPU of each qid */
	struct uring_queue *queues;    /* nr_qids */
	struct uring_thread *threads;  /* nr_threads */
	struct uring_place place;
	struct uring_poll poll;
	int stop_fd;                   /* eventfd: stop every thread */
	uint32_t ring_pref;            /* FRING_URING_RING_* */
	char ring_mode[96];

	/* Setup hand-shake (cold path only). */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t reported, exited;
	int go;                        /* 1 start serving, -1 tear down */
	int stopped;
	_Atomic int fatal;             /* the connection was aborted by us */
	_Atomic int closed;            /* stop began: data-path calls refused */
	/* Other threads between an MPSC push and their eventfd write: the
	 * pushed request may already be finished, so free waits for these. */
	_Atomic int handing_over;

	/* Takeover (uring_handover.c). */
	int shm_fd;               /* entry memory memfd, -1: private */
	void *shm_base;           /* its regions, at the same address in
					* every generation */
	uint64_t shm_slot;        /* bytes per qid */
	int adopting;             /* entries may hold an old server's
					* requests */
	_Atomic int hold;         /* arrivals are held, not dispatched */
	_Atomic uint32_t nr_held; /* entries ENT_HELD, every thread */
};

/* uring_probe.c */
int uring_sysctl_disabled(void);
int uring_possible_cpu_list(int **out);
/* 1 if cap (CAP_*) is in this thread's effective set (capget, not uid). */
int uring_cap_effective(int cap);

/* uring_mpsc.c */
void uring_mpsc_init(struct uring_mpsc *m);
/* Push; returns 1 if the list was empty (the consumer needs a wake-up). */
int uring_mpsc_push(struct uring_mpsc *m, struct uring_ent *e);
/* Take everything, oldest first. */
struct uring_ent *uring_mpsc_take(struct uring_mpsc *m);

/* uring_cmd.c: SQE preparation (owner thread). 0 or -EBUSY (SQ full). */
struct io_uring_sqe *uring_get_sqe(struct uring_thread *t); /* zeroed */
/* A zeroed URING_CMD SQE on /dev/fuse (fixed file 0) for qid, or NULL. */
struct io_uring_sqe *uring_prep_fuse_cmd(struct uring_thread *t, uint32_t cmd_op,
					 uint16_t qid, uint64_t user_data);
int uring_prep_register(struct uring_thread *t, struct uring_ent *e);
int uring_prep_commit(struct uring_thread *t, struct uring_ent *e);
int uring_prep_io(struct uring_thread *t, struct uring_ent *e);
int uring_prep_wake_poll(struct uring_thread *t);
int uring_prep_stop_poll(struct uring_thread *t);

/* uring_mem.c */
/* On NUMA node `node` (-1: the calling thread's), THP-advised; munmap. */
void *uring_map_local(size_t len, int node);
int uring_populate(void *p, size_t len);
/* Map the pages of shared memory another process may have written. */
int uring_shm_populate(void *p, size_t len);
int uring_ents_alloc(struct uring_queue *q, uint32_t depth);
/* at: the memory to carve (the takeover memfd's slot), NULL to map it. */
int uring_region_alloc(struct uring_queue *q, uint32_t depth,
		       uint32_t payload_sz, uint16_t buf_base, void *at);
void uring_region_bufs(const struct uring_queue *q, uint32_t payload_sz,
		       struct iovec *iov);
void uring_region_free(struct uring_queue *q);
uint32_t uring_entries_per_buf(uint32_t payload_sz);

/* uring_bufpool.c: Linux 7.3 buffer pools. */
#define UD_ADD_BASE 16ull  /* ADD_QUEUE/ADD_BUFPOOL: UD_ADD_BASE + 2 * i + cmd */
#define UD_ADD_END 4096ull
/* Decide pool mode for u from p (before layout); 0 or -errno with *err. */
int uring_pool_plan(struct fring_uring *u, const struct fring_uring_params *p,
		    char *why, size_t len, char **err);
/* at: the takeover memfd's slot (headers, then the pool), NULL to map. */
int uring_pool_alloc(struct uring_queue *q, uint32_t depth, uint32_t buf_sz,
		     uint32_t nbufs, uint16_t index, void *at);
/* The bytes of a pool queue's header region. */
size_t uring_pool_region_sz(uint32_t depth);
/* After the INIT reply: ADD_QUEUE + ADD_BUFPOOL for each of t's queues and
 * wait for them; a queue the kernel refused falls back to per-entry
 * buffers carved from its pool. 0, or -errno if the thread must stop. */
int uring_pool_add(struct uring_thread *t);
/* The request just arrived in e: point e->payload at its pool buffer (or
 * at nothing). 0, or -EPROTO for an offset outside the pool. */
int uring_pool_locate(struct uring_ent *e, uint32_t opcode, uint32_t psz);
void uring_pool_release(struct uring_ent *e); /* owner, at commit */
/* The mount's one "payload:" description, why: the per-entry reason. */
void uring_pool_describe(const struct fring_uring *u, const char *why,
			 char *buf, size_t len);
/* Fixed-buffer fields of a REGISTER/COMMIT SQE on a registered pool. */
void uring_pool_sqe(struct uring_ent *e, struct io_uring_sqe *sqe);

/* uring_zc.c: Linux 7.3 zero-copy. */
/* Decide zero-copy for u from p (after uring_pool_plan); 0 or -errno with
 * *err (transport.zero_copy on and a requirement missing). */
int uring_zc_plan(struct fring_uring *u, const struct fring_uring_params *p,
		  char **err);
/* ADD_QUEUE flags for q, and REGISTER's slot field for e. */
uint64_t uring_zc_add_flags(const struct uring_queue *q);
void uring_zc_register_sqe(const struct uring_ent *e, struct io_uring_sqe *sqe);
/* The fixed-buffer table: n zc slots after the first `base`; sets the
 * entries' zc_slot. Returns the number of slots to add. */
uint32_t uring_zc_slots(struct uring_thread *t, uint32_t base);
/* The request just arrived in e with ent_in_out.flags: note zero-copy. */
void uring_zc_arrived(struct uring_ent *e, uint64_t flags, uint32_t opcode);
/* READ_FIXED / WRITE_FIXED of e's action against its zc slot. */
void uring_zc_prep_io(struct uring_ent *e, struct io_uring_sqe *sqe);
/* The body iov a zero-copied READ's reply carries: its bytes are in the
 * client's pages already, only the count travels. */
extern char uring_zc_body[1];
/* io_uring's limits (io_uring/rsrc.c, io_uring.c): fixed buffers in one
 * ring's table (IORING_MAX_REG_BUFFERS), bytes in one of them (SZ_1G),
 * SQ entries (IORING_MAX_ENTRIES); and the SQEs a thread keeps beyond one
 * per entry (uring_queue.c). */
#define URING_MAX_REG_BUFFERS (1u << 14)
#define URING_MAX_BUF_BYTES (1ull << 30)
#define URING_MAX_ENTRIES 32768u
#define URING_SQ_EXTRA 4u
/* The fixed-buffer table a thread serving nq queues of depth entries
 * registers: each queue's buffers (its pool, or its per-entry region in
 * chunks of at most 1 GiB) and, with zc, one empty slot per entry. */
uint64_t uring_table_slots(uint32_t nq, uint32_t depth, uint32_t payload_sz,
			   int pool, int zc);
/* Whether such a thread fits one ring (its table and its SQ): 0, with *zc
 * cleared and the reason in why if only zero-copy's slots do not fit and
 * zero_copy (transport.zero_copy) is not FRING_ON; else -E2BIG with the
 * reason in why. */
int uring_table_fit(uint32_t nq, uint32_t depth, uint32_t payload_sz, int pool,
		    int zero_copy, int *zc, char *why, size_t len);
/* uring_table_fit for the busiest thread of u's layout, before any thread
 * starts (so before any index reaches the kernel): zero-copy turned off
 * with a warning (auto), or -E2BIG with *err. */
int uring_zc_fit(struct fring_uring *u, const struct fring_uring_params *p,
		 char **err);
/* "on (8 slots per queue)" or "off (why)". */
void uring_zc_describe(const struct fring_uring *u, char *buf, size_t len);

/* uring_budget.c: can the ring buffers be pinned? 0, or -ENOMEM with the
 * reason (which limit, how much, what to change) in why. */
void uring_budget_need(uint32_t qids, uint32_t depth, uint32_t payload_sz,
		       uint32_t pool_bufs, uint64_t *pinned, uint64_t *total);
int uring_budget_check(uint32_t qids, uint32_t depth, uint32_t payload_sz,
		       uint32_t pool_bufs, char *why, size_t len);

/* uring_serve.c */
void uring_handle_cqe(struct uring_thread *t, const struct io_uring_cqe *cqe);
void uring_drain_mpsc(struct uring_thread *t);
/* A request is in e (its header and payload): dispatch it. */
void uring_request_arrived(struct uring_thread *t, struct uring_ent *e);
/* The thread's ring closes: finish what is still handed over to it, and
 * let later hand-overs finish themselves. */
void uring_close_handover(struct uring_thread *t);
/* Commit e from the current thread: SQE if owner, else the MPSC. */
void uring_hand_over(struct uring_ent *e, int action);
extern __thread struct uring_thread *uring_self;

/* uring_reply.c: the entry as a request (its fring_req_ops). */
void uring_ent_init_req(struct uring_ent *e);
int uring_is_ent(const struct fring_request *r);
struct uring_ent *uring_ent_of(struct fring_request *r);
/* The reply header in the entry: error, unique, a body of `body` bytes. */
void uring_write_out_header(struct uring_ent *e, int32_t error,
			    uint64_t unique, uint32_t body);

/* uring_queue.c */
void *uring_thread_main(void *arg);

/* uring_layout.c: topology and plan -> u->queues, u->threads (after the
 * pool and zero-copy plans). 0, or -errno (with *err for a bad
 * transport.cpus). */
int uring_layout(struct fring_uring *u, const struct fring_uring_params *p,
		 char **err);
/* The qids the busiest thread of a mount's layout on this machine would
 * serve (transport.queues, transport.cpus; reduced: fring registers
 * reduced queues), as uring_layout builds it; 0 if unknown. */
uint32_t uring_layout_busiest(uint32_t queues, const char *cpus, int reduced);
/* The CPUs t may run on: its queues' usable CPUs, else its home. */
void uring_thread_cpus(const struct uring_thread *t, cpu_set_t *set);
/* "2, a thread each: qid 0 on CPU 0 node 0; qid 1 on CPU 1 node 0". */
void uring_layout_describe(const struct fring_uring *u, char *buf, size_t len);

/* uring_place.c. init after layout (0 or -errno); tick after each CQE
 * batch (cheap unless a window is due). */
int uring_place_init(struct fring_uring *u, int placement);
void uring_place_free(struct fring_uring *u);
void uring_place_tick(struct uring_thread *t);
/* A request from pid arrived on q (owner thread; auto placement only). */
void uring_place_note(struct fring_uring *u, struct uring_queue *q, uint32_t pid);
void uring_place_describe(const struct fring_uring *u, char *buf, size_t len);
void uring_place_log(const struct fring_uring *u, const char *name);

/* uring_poll.c: busy-poll trials (with poll_ns set). init before the
 * threads start; tick after each CQE batch (cheap unless a window is
 * due); log at stop. */
void uring_poll_init(struct fring_uring *u);
void uring_poll_tick(struct uring_thread *t);
void uring_poll_log(const struct fring_uring *u, const char *name);

/* uring_grow.c: with reduced queues offered and queues and placement
 * auto, one qid per NUMA node is registered at start and the other
 * usable CPUs' threads wait, dormant, until fring_place_grow asks for
 * their qid. init after layout: 0 (*on set if growing) or -errno. */
int uring_grow_init(struct fring_uring *u, int *on);
/* One closed window (w by qid, nr_cpus entries; c: n clients by qid). */
void uring_grow_window(struct fring_uring *u, const struct fring_place_load *w,
		       const struct fring_place_client *c, size_t n);
/* A dormant thread, once the connection serves: wait until armed (1) or
 * stopping (0). */
int uring_grow_wait(struct uring_thread *t);
void uring_grow_describe(const struct fring_uring *u, char *buf, size_t len);
void uring_grow_log(const struct fring_uring *u, const char *name);

/* uring_handover.c: the takeover's entry memory, hold and adopt. */
/* At setup: adopt an old server's entry memory (p->adopt), or make it
 * shareable when the mount may be handed over later. 0 or -errno + *err. */
int uring_shm_setup(struct fring_uring *u, const struct fring_uring_params *p,
		    char **err);
/* Set the entry memory up in a memfd (u->shm_*); 0 or -errno. */
int uring_shm_create(struct fring_uring *u);
/* Map the memfd an old server used, checked against u's layout; 0 or
 * -errno with *err. */
int uring_shm_adopt(struct fring_uring *u, int fd, char **err);
/* q's region in it, NULL without one. */
void *uring_shm_region(const struct fring_uring *u,
		       const struct uring_queue *q);
void uring_shm_free(struct fring_uring *u);
/* Owner: after a wake-up, dispatch the held entries once the hold is
 * lifted (a refused takeover). */
void uring_release_held(struct uring_thread *t);
/* A new server's thread, once released: dispatch what its entries hold,
 * REGISTER the empty ones. 0 or -EBUSY (no SQE). */
int uring_adopt_start(struct uring_thread *t);

/* uring_abort.c */
int uring_abort_connection(struct fring_uring *u, const char *why);

/* ThreadSanitizer cannot see the kernel order a commit on one ring before
 * the requests that follow it on any ring of the connection (an OPEN's
 * reply before the RELEASE naming its fh). Model it: release at each
 * commit, acquire at each arrival. Nothing outside TSan builds. */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define URING_TSAN_RELEASE(u) __tsan_release(u)
#define URING_TSAN_ACQUIRE(u) __tsan_acquire(u)
#else
#define URING_TSAN_RELEASE(u) ((void)(u))
#define URING_TSAN_ACQUIRE(u) ((void)(u))
#endif

/* Counter helpers (single writer). */
static inline void ctr_inc(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static inline void ctr_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

#endif /* FRING_TRANSPORT_URING_INTERNAL_H */
