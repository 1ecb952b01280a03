// SPDX-License-Identifier: MIT
/*
 * The transport object: qids, threads, and the set-up hand-shake that makes
 * the INIT reply safe (core/transport/README.md, "Linux 6.18 (FUSE 7.45):
 * the baseline"). Every qid of every possible CPU gets its
 * entries, and every thread must report a working ring before the caller
 * may offer FUSE_OVER_IO_URING; anything less would leave the mount hanging
 * on 6.18 instead of falling back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "uring_internal.h"

#define STOP_WAIT_S 5

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void destroy(struct fring_uring *u)
{
	for (uint32_t i = 0; u->threads && i < u->nr_threads; i++)
		close_fd(&u->threads[i].wake_fd);
	for (uint32_t q = 0; u->queues && q < u->nr_qids; q++)
		uring_region_free(&u->queues[q]);
	uring_shm_free(u);
	close_fd(&u->stop_fd);
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->lock);
	uring_place_free(u);
	free(u->threads);
	free(u->queues);
	free(u->cpus);
	free(u->usable);
	free(u->node);
	free(u->mountpoint);
	free(u);
}

static void flags_name(unsigned f, char *buf, size_t len)
{
	snprintf(buf, len, "SQE128|CQSIZE|SUBMIT_ALL%s%s%s",
		 f & IORING_SETUP_SINGLE_ISSUER ? "|SINGLE_ISSUER" : "",
		 f & IORING_SETUP_DEFER_TASKRUN ? "|DEFER_TASKRUN" : "",
		 f & IORING_SETUP_COOP_TASKRUN ? "|COOP_TASKRUN" : "");
}

/* Start every thread (signals blocked: they belong to the main thread)
 * and wait for all reports. Returns the first failure. */
static int spawn(struct fring_uring *u, char **err)
{
	sigset_t all, old;
	uint32_t started = 0;
	int ret = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (uint32_t i = 0; i < u->nr_threads && !ret; i++) {
		ret = -pthread_create(&u->threads[i].tid, NULL, uring_thread_main,
				      &u->threads[i]);
		if (!ret) {
			u->threads[i].started = 1;
			started++;
		} else {
			*err = fring_strf("ring setup failed: starting queue "
					  "thread %u: %s", i, strerror(-ret));
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	pthread_mutex_lock(&u->lock);
	while (u->reported < started)
		pthread_cond_wait(&u->cond, &u->lock);
	pthread_mutex_unlock(&u->lock);
	for (uint32_t i = 0; i < u->nr_threads && !ret; i++) {
		struct uring_thread *t = &u->threads[i];

		if (t->setup_err) {
			ret = t->setup_err;
			*err = fring_strf("ring setup failed: %s (queue thread "
					  "%u): %s", t->setup_what, i,
					  strerror(-ret));
		}
	}
	return ret;
}

/* Release the threads with go (> 0 serve, < 0 tear down). */
static void release(struct fring_uring *u, int go)
{
	pthread_mutex_lock(&u->lock);
	if (!u->go)
		u->go = go;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->lock);
}

static void join_all(struct fring_uring *u)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += STOP_WAIT_S;
	for (uint32_t i = 0; i < u->nr_threads; i++) {
		struct uring_thread *t = &u->threads[i];

		if (!t->started)
			continue;
		if (pthread_timedjoin_np(t->tid, NULL, &dl) != 0) {
			fring_err("uring: queue thread %u did not stop within "
				  "%d s; leaving it", i, STOP_WAIT_S);
			continue;
		}
		t->started = 0;
	}
}

static const struct fring_transport_ops uring_transport_ops;

int fring_uring_setup(const struct fring_uring_params *p,
		      struct fring_uring **out, char **err)
{
	struct fring_uring *u = calloc(1, sizeof(*u));
	char why[96], desc[192];
	int n, ret;

	*out = NULL;
	if (!u) {
		*err = fring_strf("ring setup failed: out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	u->stop_fd = -1;
	u->shm_fd = -1;
	u->tp.ops = &uring_transport_ops;
	u->sv = p->sv;
	u->fuse_fd = p->fuse_fd;
	u->conn_id = p->conn_id;
	u->ring_pref = p->ring_mode <= FRING_URING_RING_PLAIN ? p->ring_mode : 0;
	u->mountpoint = p->mountpoint ? strdup(p->mountpoint) : NULL;
	n = uring_possible_cpu_list(&u->cpus);
	if (n <= 0 || n > 65535) {
		ret = n <= 0 ? n : -E2BIG;
		*err = fring_strf("ring setup failed: reading "
				  "/sys/devices/system/cpu/possible: %s",
				  strerror(-ret));
		destroy(u);
		return ret;
	}
	/* Every possible CPU's qid (6.18, 7.3), until a layout with reduced
	 * queues says fewer. */
	u->nr_cpus = u->nr_qids = (uint32_t)n;
	u->reduced_offered = p->reduced_offered;
	snprintf(u->reduced_why, sizeof(u->reduced_why), "%s",
		 p->reduced_why ? p->reduced_why
		 : p->reduced_offered ? "the kernel offers them"
				      : "the kernel does not offer them");
	u->depth = p->cfg->queue_depth ? p->cfg->queue_depth
				       : FRING_URING_DEFAULT_DEPTH;
	u->poll_ns = (uint64_t)p->cfg->poll_us * 1000;
	u->payload_sz = fring_uring_max_payload(p->max_write, p->max_pages);
	/* Keep payloads page multiples: READ_FIXED into them may be O_DIRECT. */
	u->payload_sz = (u->payload_sz + 4095u) & ~4095u;
	ret = uring_pool_plan(u, p, why, sizeof(why), err);
	if (!ret)
		ret = uring_zc_plan(u, p, err);
	if (!ret && (ret = uring_budget_check(u->nr_qids, u->depth, u->payload_sz,
					      u->pool_bufs, desc, sizeof(desc))))
		*err = fring_strf("ring setup failed: %s", desc);
	if (ret) {
		destroy(u);
		return ret;
	}

	ret = uring_layout(u, p, err);
	if (ret) {
		if (!*err)
			*err = fring_strf("ring setup failed: %s", strerror(-ret));
		destroy(u);
		return ret;
	}
	/* Every index fring narrows to uint16_t (buf_index, zc_slot) is below
	 * the table's 16,384 once this holds. */
	ret = uring_zc_fit(u, p, err);
	if (ret) {
		destroy(u);
		return ret;
	}
	ret = uring_shm_setup(u, p, err);
	if (ret) {
		destroy(u);
		return ret;
	}
	uring_poll_init(u);
	ret = uring_place_init(u, (int)p->cfg->placement);
	if (ret) {
		*err = fring_strf("ring setup failed: %s", strerror(-ret));
		destroy(u);
		return ret;
	}
	ret = spawn(u, err);
	if (ret) {
		release(u, -1);
		join_all(u);
		destroy(u);
		return ret;
	}
	flags_name(u->threads[0].ring_flags, u->ring_mode, sizeof(u->ring_mode));
	uring_pool_describe(u, why, desc, sizeof(desc));
	fring_info("%s: payload: %s", u->mountpoint ? u->mountpoint : "?", desc);
	uring_zc_describe(u, desc, sizeof(desc));
	fring_info("%s: zero-copy: %s", u->mountpoint ? u->mountpoint : "?", desc);
	{
		char map[768];

		uring_layout_describe(u, map, sizeof(map));
		fring_info("%s: queues: %s", u->mountpoint ? u->mountpoint : "?",
			   map);
	}
	uring_place_describe(u, desc, sizeof(desc));
	fring_info("%s: queue placement: %s", u->mountpoint ? u->mountpoint : "?",
		   desc);
	fring_dbg("uring: %u qids on %u threads, %u entries per qid, %u-byte "
		  "payloads, ring %s, busy-poll %llu us", u->nr_qids,
		  u->nr_threads, u->depth, u->payload_sz, u->ring_mode,
		  (unsigned long long)(u->poll_ns / 1000));
	*out = u;
	return 0;
}

void fring_uring_start(struct fring_uring *u)
{
	release(u, 1);
}

void fring_uring_stop(struct fring_uring *u)
{
	static const uint64_t one = 1;

	if (!u || u->stopped)
		return;
	u->stopped = 1;
	atomic_store(&u->closed, 1);
	release(u, -1); /* never started: tear down instead */
	if (write(u->stop_fd, &one, sizeof(one)) != sizeof(one))
		fring_err("uring: signalling stop: %s", strerror(errno));
	join_all(u);
}

static int xrefs_held(const struct fring_uring *u)
{
	for (uint32_t q = 0; q < u->nr_qids; q++)
		for (uint32_t i = 0; u->queues[q].ents && i < u->queues[q].depth; i++)
			if (atomic_load(&u->queues[q].ents[i].req.xrefs))
				return 1;
	return 0;
}

void fring_uring_free(struct fring_uring *u)
{
	if (!u)
		return;
	fring_uring_stop(u);
	for (uint32_t i = 0; i < u->nr_threads; i++)
		if (u->threads[i].started)
			return; /* a stuck thread may still use the memory */
	/* A replier may be between its MPSC push and its eventfd write, or
	 * inside a claim (its reference in xrefs). */
	for (int i = 0; (atomic_load(&u->handing_over) || xrefs_held(u)) &&
			i < 1000; i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (atomic_load(&u->handing_over) || xrefs_held(u)) {
		fring_err("uring: a replying thread never left the hand-over; "
			  "leaking the queues");
		return;
	}
	destroy(u);
}

uint32_t fring_uring_nr_qids(const struct fring_uring *u)
{
	return u->nr_qids;
}

uint32_t fring_uring_nr_threads(const struct fring_uring *u)
{
	return u->nr_threads;
}

uint32_t fring_uring_depth(const struct fring_uring *u)
{
	return u->depth;
}

uint32_t fring_uring_pool_bufs(const struct fring_uring *u)
{
	return u->pool_bufs;
}

const char *fring_uring_ring_mode(const struct fring_uring *u)
{
	return u->ring_mode;
}

static void add(struct fring_uring_stats *s, const struct uring_counters *c)
{
	s->requests += atomic_load_explicit(&c->requests, memory_order_relaxed);
	s->commits += atomic_load_explicit(&c->commits, memory_order_relaxed);
	s->remote += atomic_load_explicit(&c->remote, memory_order_relaxed);
	s->fixed_reads += atomic_load_explicit(&c->fixed_reads, memory_order_relaxed);
	s->fixed_writes += atomic_load_explicit(&c->fixed_writes, memory_order_relaxed);
	s->inline_reads += atomic_load_explicit(&c->inline_reads, memory_order_relaxed);
	s->inline_writes += atomic_load_explicit(&c->inline_writes, memory_order_relaxed);
	s->io_errors += atomic_load_explicit(&c->io_errors, memory_order_relaxed);
	s->entries += atomic_load_explicit(&c->entries, memory_order_relaxed);
	s->wakeups += atomic_load_explicit(&c->wakeups, memory_order_relaxed);
	s->pool_hits += atomic_load_explicit(&c->pool_hits, memory_order_relaxed);
	s->pool_full += atomic_load_explicit(&c->pool_full, memory_order_relaxed);
	s->zc_reads += atomic_load_explicit(&c->zc_reads, memory_order_relaxed);
	s->zc_writes += atomic_load_explicit(&c->zc_writes, memory_order_relaxed);
	s->zc_copied += atomic_load_explicit(&c->zc_copied, memory_order_relaxed);
	s->zc_refused += atomic_load_explicit(&c->zc_refused, memory_order_relaxed);
	s->zc_owner_plain += atomic_load_explicit(&c->zc_owner_plain, memory_order_relaxed);
	s->zc_owner_rmw += atomic_load_explicit(&c->zc_owner_rmw, memory_order_relaxed);
	s->polls += atomic_load_explicit(&c->polls, memory_order_relaxed);
	s->polls_cut += atomic_load_explicit(&c->polls_cut, memory_order_relaxed);
	s->poll_ns += atomic_load_explicit(&c->poll_ns, memory_order_relaxed);
	s->pool_in_use += atomic_load_explicit(&c->pool_in_use,
					       memory_order_relaxed);
}

int fring_uring_stats(const struct fring_uring *u, uint32_t qid,
		      struct fring_uring_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!u)
		return -EINVAL;
	if (qid != UINT32_MAX) {
		/* u->queues is in thread order (uring_layout.c), not qid order. */
		for (uint32_t q = 0; q < u->nr_qids; q++)
			if (u->queues[q].qid == qid) {
				add(out, &u->queues[q].ctr);
				return 0;
			}
		return -EINVAL;
	}
	for (uint32_t q = 0; q < u->nr_qids; q++)
		add(out, &u->queues[q].ctr);
	return 0;
}

void fring_uring_log_stats(const struct fring_uring *u, const char *name)
{
	struct fring_uring_stats t, q;
	char per[512];
	size_t len = 0;

	if (!u || !fring_log_enabled(FRING_LOG_DEBUG))
		return;
	per[0] = 0;
	for (uint32_t i = 0; i < u->nr_qids && len < sizeof(per) - 32; i++) {
		fring_uring_stats(u, u->queues[i].qid, &q);
		len += (size_t)snprintf(per + len, sizeof(per) - len, "%sqid %u: %llu",
					i ? ", " : "", u->queues[i].qid,
					(unsigned long long)q.requests);
	}
	fring_uring_stats(u, UINT32_MAX, &t);
	fring_dbg("%s: uring: %llu requests over the ring (%s), %llu commits, "
		  "%llu off-thread, %llu fixed reads, %llu fixed writes, %llu "
		  "I/O errors; %u threads, %u entries per qid, ring %s; %llu "
		  "inline reads, %llu inline writes", name,
		  (unsigned long long)t.requests, per,
		  (unsigned long long)t.commits, (unsigned long long)t.remote,
		  (unsigned long long)t.fixed_reads,
		  (unsigned long long)t.fixed_writes,
		  (unsigned long long)t.io_errors, u->nr_threads, u->depth,
		  u->ring_mode, (unsigned long long)t.inline_reads,
		  (unsigned long long)t.inline_writes);
	if (u->poll_ns)
		fring_dbg("%s: uring: busy-poll: %llu polls, %llu given up "
			  "because another task wanted the CPU; %.3f s polling",
			  name, (unsigned long long)t.polls,
			  (unsigned long long)t.polls_cut,
			  (double)t.poll_ns / 1e9);
	if (u->pool_bufs)
		fring_dbg("%s: uring: bufpool: %llu requests in pool buffers, "
			  "pool full %llu times (%u buffers per qid)", name,
			  (unsigned long long)t.pool_hits,
			  (unsigned long long)t.pool_full, u->pool_bufs);
	if (u->zc)
		fring_dbg("%s: uring: zero-copy: %llu reads, %llu writes; "
			  "fallbacks: %llu READ/WRITE copied by the kernel (file "
			  "not opted in, or no pages), %llu replies refused (bytes "
			  "in memory); on the owner thread %llu without an atomic "
			  "read-modify-write for the handle, %llu with one", name,
			  (unsigned long long)t.zc_reads,
			  (unsigned long long)t.zc_writes,
			  (unsigned long long)t.zc_copied,
			  (unsigned long long)t.zc_refused,
			  (unsigned long long)t.zc_owner_plain,
			  (unsigned long long)t.zc_owner_rmw);
	uring_place_log(u, name);
	uring_poll_log(u, name);
}

/* The session's view (transport.h): stopping is bounded and leaves no
 * thread to cancel. */
static unsigned ut_join(struct fring_transport *tp, unsigned timeout_ms)
{
	(void)timeout_ms;
	fring_uring_stop((struct fring_uring *)tp);
	return 0;
}

static void ut_log_stats(struct fring_transport *tp, const char *name)
{
	fring_uring_log_stats((struct fring_uring *)tp, name);
}

static unsigned ut_stats(struct fring_transport *tp, struct fring_tq_stats *q,
			 unsigned max, uint64_t *placement_changes)
{
	struct fring_uring *u = (struct fring_uring *)tp;
	struct fring_uring_stats s;
	unsigned n = 0;

	*placement_changes = atomic_load_explicit(&u->place.changes,
						  memory_order_relaxed);
	for (uint32_t i = 0; i < u->nr_qids && n < max; i++, n++) {
		fring_uring_stats(u, u->queues[i].qid, &s);
		q[n] = (struct fring_tq_stats){
			.qid = u->queues[i].qid,
			.requests = s.requests,
			.pool_bufs = u->pool_bufs,
			.pool_in_use = s.pool_in_use,
			.pool_waits = s.pool_full,
			.zc_reads = s.zc_reads,
			.zc_writes = s.zc_writes,
			.zc_fallbacks = s.zc_copied + s.zc_refused,
			.polls = s.polls,
			.poll_ns = s.poll_ns,
		};
	}
	return n;
}

static void ut_free(struct fring_transport *tp)
{
	fring_uring_free((struct fring_uring *)tp);
}

static const struct fring_transport_ops uring_transport_ops = {
	.name = "uring",
	.join = ut_join,
	.log_stats = ut_log_stats,
	.stats = ut_stats,
	.free = ut_free,
};

struct fring_transport *fring_uring_transport(struct fring_uring *u)
{
	return u ? &u->tp : NULL;
}
