// SPDX-License-Identifier: MIT
/*
 * The queue thread: pins itself to its qids' CPUs, builds its ring and
 * NUMA-local buffers there (both must come from this thread: SINGLE_ISSUER
 * rings belong to their creator, and first-touch placement follows the
 * CPU), prepares one REGISTER per entry without submitting, reports, and
 * waits. Only after the session sent the INIT reply does it submit (the
 * kernel answers -EAGAIN before that) and start serving. It lives as long
 * as the connection: the kernel delivers requests as task work in the
 * thread that submitted the entry (fs/fuse/dev_uring.c
 * fuse_uring_send_in_task: once that task is gone the requests of its
 * entries end with ECANCELED).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/clock.h"
#include "../base/heartbeat.h"
#include "../base/log.h"
#include "uring_internal.h"

/* One slot per entry (an entry has at most one SQE: commit or I/O), plus
 * the wake-up and stop polls and a re-arm; at most IORING_MAX_ENTRIES
 * (uring_zc_fit checked that before the threads started). */
#define SQ_EXTRA URING_SQ_EXTRA
#define SQ_MAX URING_MAX_ENTRIES

/* liburing maps a ring with raw system calls, which ThreadSanitizer does
 * not see: a ring mapped where an exited thread's ring was would look, to
 * it, like memory that thread still writes. Order every ring's teardown
 * before every later ring's first use. Nothing outside TSan builds. */
static char ring_lifetimes;

static int fail(struct uring_thread *t, int err, const char *what)
{
	t->setup_err = err < 0 ? err : -EINVAL;
	snprintf(t->setup_what, sizeof(t->setup_what), "%s", what);
	return t->setup_err;
}

static void pin(struct uring_thread *t)
{
	cpu_set_t set;

	uring_thread_cpus(t, &set);
	/* An offline CPU cannot be pinned to; its qid still needs entries,
	 * served from wherever the scheduler puts us. */
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		fring_warn("uring: thread %u: cannot pin to CPU %d: %s", t->idx,
			   t->home, strerror(errno));
}

static const unsigned ring_modes[] = {
	[FRING_URING_RING_DEFER] = IORING_SETUP_SINGLE_ISSUER |
				   IORING_SETUP_DEFER_TASKRUN,
	[FRING_URING_RING_COOP] = IORING_SETUP_SINGLE_ISSUER |
				  IORING_SETUP_COOP_TASKRUN,
	[FRING_URING_RING_PLAIN] = 0,
};

static int ring_init(struct uring_thread *t)
{
	struct io_uring_params prm;
	unsigned sq = t->nents + SQ_EXTRA;
	unsigned first = t->u->ring_pref ? t->u->ring_pref : FRING_URING_RING_DEFER;
	unsigned last = t->u->ring_pref ? t->u->ring_pref : FRING_URING_RING_PLAIN;
	int ret = -EINVAL;

	if (sq > SQ_MAX)
		return fail(t, -E2BIG, "more ring entries than one ring holds");
	for (unsigned m = first; m <= last; m++) {
		memset(&prm, 0, sizeof(prm));
		/* SQE128: FUSE commands need the 80-byte command area; CQ at
		 * twice the SQ so completions never overflow; SUBMIT_ALL so a
		 * bad SQE does not strand the commits queued after it. */
		prm.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE |
			    IORING_SETUP_SUBMIT_ALL | ring_modes[m];
		prm.cq_entries = 2 * sq;
		ret = io_uring_queue_init_params(sq, &t->ring, &prm);
		if (ret != -EINVAL)
			break;
	}
	if (ret == -EPERM && uring_sysctl_disabled())
		return fail(t, ret, "io_uring disabled by sysctl");
	if (ret < 0)
		return fail(t, ret, "io_uring_setup");
	URING_TSAN_ACQUIRE(&ring_lifetimes);
	t->ring_ok = 1;
	t->ring_flags = prm.flags;
	return 0;
}

static int thread_setup(struct uring_thread *t)
{
	struct fring_uring *u = t->u;
	struct iovec *bufs;
	uint32_t nbufs = 0, zslots;
	uint16_t base = 0;
	int ret;

	pin(t);
	for (unsigned i = 0; i < URING_MEMFD_SLOTS; i++)
		t->memfd[i].fd = -1;
	ret = ring_init(t);
	if (ret)
		return ret;
	/* /dev/fuse as fixed file 0: no fd lookup per command. */
	ret = io_uring_register_files(&t->ring, &u->fuse_fd, 1);
	if (ret)
		return fail(t, ret, "registering /dev/fuse as a fixed file");
	for (uint32_t i = 0; i < t->nq; i++) {
		struct uring_queue *q = &t->queues[i];

		ret = u->pool_bufs
			      ? uring_pool_alloc(q, u->depth, u->payload_sz,
						 u->pool_bufs, base,
						 uring_shm_region(u, q))
			      : uring_region_alloc(q, u->depth, u->payload_sz,
						   base,
						   uring_shm_region(u, q));
		if (ret)
			return fail(t, ret, u->pool_bufs ? "allocating the buffer pool"
							 : "allocating entry buffers");
		/* Where each queue's memory is (tests/vm/test_numa.py asks
		 * the kernel which node holds those pages). */
		if (u->pool_bufs)
			fring_dbg("%s: uring: qid %u (thread %u, CPU %d): headers "
				  "%p %zu KiB, pool %p %zu KiB",
				  u->mountpoint ? u->mountpoint : "?", q->qid, t->idx,
				  sched_getcpu(), q->region, q->region_sz >> 10,
				  (void *)q->pool, q->pool_sz >> 10);
		else
			fring_dbg("%s: uring: qid %u (thread %u, CPU %d): entry "
				  "buffers %p %zu KiB",
				  u->mountpoint ? u->mountpoint : "?", q->qid, t->idx,
				  sched_getcpu(), q->region, q->region_sz >> 10);
		base += q->nbufs;
		nbufs += q->nbufs;
	}
	/* Zero-copy slots: empty table entries the kernel fills per request. */
	zslots = uring_zc_slots(t, nbufs);
	bufs = calloc(nbufs + zslots, sizeof(*bufs));
	if (!bufs)
		return fail(t, -ENOMEM, "allocating entry buffers");
	for (uint32_t i = 0, b = 0; i < t->nq; b += t->queues[i].nbufs, i++) {
		if (u->pool_bufs)
			bufs[b] = (struct iovec){ t->queues[i].pool, t->queues[i].pool_sz };
		else
			uring_region_bufs(&t->queues[i], u->payload_sz, bufs + b);
	}
	ret = io_uring_register_buffers(&t->ring, bufs, nbufs + zslots);
	free(bufs);
	if (ret)
		return fail(t, ret, "registering fixed buffers");

	for (uint32_t i = 0; i < t->nq; i++) {
		struct uring_queue *q = &t->queues[i];

		for (uint32_t j = 0; j < q->depth; j++) {
			struct uring_ent *e = &q->ents[j];

			e->th = t;
			/* Pool mode registers after its ADDs (uring_pool_add). */
			if (u->pool_bufs)
				continue;
			atomic_store(&e->state, ENT_KERNEL);
			if (u->adopting)
				continue; /* uring_adopt_start, once released */
			if (uring_prep_register(t, e))
				return fail(t, -EBUSY, "preparing REGISTER");
		}
	}
	t->live = u->pool_bufs ? 0 : t->nents;
	if (uring_prep_wake_poll(t) || uring_prep_stop_poll(t))
		return fail(t, -EBUSY, "preparing the wake-up polls");
	return 0;
}

/* Busy-poll (transport.poll_us, default 1000 us): when the queue runs dry,
 * submit what was prepared and keep running the ring's task work for a
 * while before sleeping. A queue thread that stays runnable gets the next
 * request without a wake-up, and its CPU is not idle: the scheduler then
 * wakes a synchronous client on its own CPU (where it preempts the poller)
 * instead of moving it to the idle CPU, whose wake-up from halt cost 30-40 us
 * per request on the Intel Xeon VM (2 CPUs, the guest's haltpoll off). A
 * scandir loop bounced between the CPUs that way at 0.9x /dev/fuse; polling
 * 1000 us listed at 1.06x-1.19x of it, and fio 4k randread qd8 gained
 * 17-19% over a 20 us budget (bench/results/HISTORY.md, run 8).
 *
 * The poller spins POLL_SPIN_NS without yielding (a continuing burst is
 * served at once), then yields the CPU on each turn, and gives up as soon
 * as a yield let another task run (POLL_BUSY_NS): it polls only a CPU that
 * has nothing else to do, and never takes a share of it from a client.
 * Spinning a whole budget cost a single-threaded create/unlink loop
 * 12%/38% (sync, 10,000 files); yielding from the start cost 2 fio psync
 * jobs 4% of their 4k reads.
 *
 * The budget adapts to the gaps between requests: after POLL_MISSES
 * gaps in a row longer than poll_us (polling would not have caught the
 * next request) it is halved, down to 0 (then the thread just sleeps); each
 * gap within poll_us doubles it back, up to poll_us.
 *
 * Whether to poll at all is tried on the rate (uring_poll.c,
 * poll_trial.h): polling stays only where it served 3% more. */
#define POLL_MISSES 4
#define POLL_SPIN_NS 5000  /* the part that does not yield */
#define POLL_BUSY_NS 10000 /* a yield this long: another task had the CPU */

static void poll_briefly(struct uring_thread *t)
{
	uint64_t end, spin, now;

	if (!t->u->poll_ns || io_uring_cq_ready(&t->ring) ||
	    !atomic_load_explicit(&t->u->poll.on, memory_order_relaxed))
		return;
	io_uring_submit_and_get_events(&t->ring);
	t->idle_since = fring_clock_ns();
	if (!t->poll_cur)
		return;
	end = t->idle_since + t->poll_cur;
	spin = t->idle_since + (t->poll_cur / 4 < POLL_SPIN_NS ? t->poll_cur / 4
							       : POLL_SPIN_NS);
	ctr_inc(&t->queues[0].ctr.polls);
	while (!io_uring_cq_ready(&t->ring) && (now = fring_clock_ns()) < end) {
		if (now >= spin) {
			sched_yield();
			if (fring_clock_ns() - now > POLL_BUSY_NS) {
				ctr_inc(&t->queues[0].ctr.polls_cut);
				break;
			}
		}
		io_uring_get_events(&t->ring);
	}
	ctr_add(&t->queues[0].ctr.poll_ns, fring_clock_ns() - t->idle_since);
}

/* A CQE ended the idle time that began at idle_since: adapt the budget. */
static void poll_learn(struct uring_thread *t)
{
	uint64_t gap;

	if (!t->idle_since)
		return;
	gap = fring_clock_ns() - t->idle_since;
	t->idle_since = 0;
	if (gap <= t->u->poll_ns) {
		uint64_t up = t->poll_cur ? 2 * t->poll_cur : t->u->poll_ns / 16;

		t->poll_cur = up < t->u->poll_ns ? up : t->u->poll_ns;
		t->poll_misses = 0;
	} else if (++t->poll_misses >= POLL_MISSES) {
		t->poll_misses = 0;
		if ((t->poll_cur >>= 1) < 1000)
			t->poll_cur = 0;
	}
}

static void serve(struct uring_thread *t)
{
	t->poll_cur = t->u->poll_ns;
	for (uint32_t i = 0; i < t->nq; i++)
		atomic_store_explicit(&t->queues[i].ctr.entries,
				      t->queues[i].depth, memory_order_relaxed);
	while (!t->stopping && t->live > 0) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		int ret;

		fring_hb_idle();
		poll_briefly(t);
		/* Submits what was prepared, then sleeps for one CQE; with
		 * DEFER_TASKRUN this is also where request delivery runs. */
		ret = io_uring_submit_and_wait(&t->ring, 1);
		fring_hb_busy();
		poll_learn(t);

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			fring_err("uring: thread %u: io_uring_enter: %s", t->idx,
				  strerror(-ret));
			uring_abort_connection(t->u, "the queue ring failed");
			break;
		}
		for (uint32_t i = 0; i < t->nq; i++)
			t->queues[i].batch = 0;
		io_uring_for_each_cqe(&t->ring, head, cqe) {
			uring_handle_cqe(t, cqe);
			n++;
		}
		io_uring_cq_advance(&t->ring, n);
		uring_place_tick(t);
		uring_poll_tick(t);
	}
	if (t->live > 0)
		fring_dbg("uring: thread %u: stopped with %u entries live",
			  t->idx, t->live);
}

/* A dormant qid (reduced queues, uring_grow.c) once armed: set up as at
 * start; the REGISTERs go out with serve's first submit. A failure leaves
 * the qid unregistered (its CPUs stay dealt to the others). 1 to serve. */
static int wake(struct uring_thread *t)
{
	if (!uring_grow_wait(t))
		return -1;
	if (thread_setup(t)) {
		fring_warn("%s: uring: registering qid %u under load failed: %s: "
			   "%s; its CPU's requests stay on the registered qids",
			   t->u->mountpoint ? t->u->mountpoint : "?",
			   t->queues[0].qid, t->setup_what, strerror(-t->setup_err));
		return -1;
	}
	t->dormant = 0;
	return 1;
}

void *uring_thread_main(void *arg)
{
	struct uring_thread *t = arg;
	struct fring_uring *u = t->u;
	char name[16];
	int go;

	uring_self = t;
	fring_req_thread = t;
	snprintf(name, sizeof(name), "fring-uring-%u", t->idx);
	pthread_setname_np(pthread_self(), name);

	if (!t->dormant)
		thread_setup(t);
	pthread_mutex_lock(&u->lock);
	u->reported++;
	pthread_cond_broadcast(&u->cond);
	while (!u->go)
		pthread_cond_wait(&u->cond, &u->lock);
	go = u->go;
	pthread_mutex_unlock(&u->lock);
	if (go > 0 && t->dormant)
		go = wake(t);

	if (go > 0 && !t->setup_err && u->pool_bufs) {
		int ret = uring_pool_add(t);

		if (ret && ret != -ECANCELED) {
			fring_err("uring: thread %u: adding queues and buffer "
				  "pools: %s", t->idx, strerror(-ret));
			uring_abort_connection(u, "queue set-up failed");
			go = -1;
		}
	}
	fring_hb_enter();
	if (go > 0 && !t->setup_err && uring_adopt_start(t)) {
		uring_abort_connection(u, "SQ exhausted adopting the entries");
		go = -1;
	}
	if (go > 0 && !t->setup_err)
		serve(t);
	fring_hb_leave();
	/* Cancels whatever is still parked and drops the fixed file and
	 * buffers. The regions stay until fring_uring_free: the plugin may
	 * still hold requests that point into them. */
	uring_close_handover(t);
	if (t->ring_ok) {
		URING_TSAN_RELEASE(&ring_lifetimes);
		io_uring_queue_exit(&t->ring);
	}
	t->ring_ok = 0;

	pthread_mutex_lock(&u->lock);
	t->exited = 1;
	u->exited++;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}
