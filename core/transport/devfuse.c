// SPDX-License-Identifier: MIT
/* Classic /dev/fuse transport: worker pool; see devfuse.h. */
#define _GNU_SOURCE
#include "devfuse.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../base/heartbeat.h"
#include "../base/log.h"
#include "../request/request.h"

/* A read buffer and the request read into it. The request owns the buffer
 * until its reply: refs is 2 while the worker still runs dispatch (worker +
 * pending reply) and whoever drops the last ref recycles it. */
struct dbuf {
	struct fring_request req;
	atomic_int refs;
	struct fring_devfuse *t;
	struct dbuf *next; /* free list */
	_Alignas(64) unsigned char data[];
};

struct worker {
	struct fring_devfuse *t;
	pthread_t tid;
	unsigned idx;
	int fd;
	int running; /* thread created and not yet joined/abandoned */
	struct dbuf *cur;
};

struct fring_devfuse {
	struct fring_transport tp; /* first: the session's handle */
	struct fring_serve sv;
	struct fring_devfuse_params p;
	unsigned n;
	struct worker *w;
	atomic_uint live;

	pthread_mutex_t pool_lock;
	struct dbuf *pool;
	unsigned pool_n, pool_max;
	/* Buffers beyond pool_max, their data pages given back to the kernel.
	 * A buffer is never freed before the transport: a plugin may still
	 * use the handle of a request it answered, and the check that
	 * refuses it reads the request's memory (request.h, handles). */
	struct dbuf *cold;
	unsigned abandoned; /* workers detached while stuck: never free t */
	atomic_int paused; /* fring_devfuse_pause: workers end, not the mount */
};

unsigned fring_devfuse_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (unsigned)(2 * n) : 2;
}

unsigned fring_devfuse_nr_threads(const struct fring_devfuse *t)
{
	return t->n;
}

static struct dbuf *buf_get(struct fring_devfuse *t)
{
	struct dbuf *b;

	pthread_mutex_lock(&t->pool_lock);
	b = t->pool;
	if (b) {
		t->pool = b->next;
		t->pool_n--;
	} else if ((b = t->cold)) {
		t->cold = b->next;
	}
	pthread_mutex_unlock(&t->pool_lock);
	if (b)
		return b;
	if (posix_memalign((void **)&b, 64, sizeof(*b) + t->p.bufsize))
		return NULL;
	memset(&b->req, 0, sizeof(b->req));
	b->t = t;
	b->next = NULL;
	return b;
}

/* One buffer per worker, allocated and touched now: running out of memory
 * fails the mount at start, never a request later. Buffers beyond these
 * (requests the plugin holds) are allocated on demand, before a read. */
static int pool_fill(struct fring_devfuse *t)
{
	for (unsigned i = 0; i < t->n; i++) {
		struct dbuf *b;

		if (posix_memalign((void **)&b, 64, sizeof(*b) + t->p.bufsize))
			return -ENOMEM;
		memset(b, 0, sizeof(*b) + t->p.bufsize);
		b->t = t;
		b->next = t->pool;
		t->pool = b;
		t->pool_n++;
	}
	return 0;
}

static void free_list(struct dbuf *b)
{
	while (b) {
		struct dbuf *next = b->next;

		free(b);
		b = next;
	}
}

static void pool_empty(struct fring_devfuse *t)
{
	free_list(t->pool);
	free_list(t->cold);
	t->pool = t->cold = NULL;
	t->pool_n = 0;
}

/* Give the whole pages of b's data area back (they read as zeros later;
 * read() overwrites them before any use). */
static void buf_chill(struct fring_devfuse *t, struct dbuf *b)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)b->data + pg - 1) & ~(pg - 1);
	uintptr_t hi = ((uintptr_t)b->data + t->p.bufsize) & ~(pg - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

static void buf_put(struct fring_devfuse *t, struct dbuf *b)
{
	int hot;

	pthread_mutex_lock(&t->pool_lock);
	hot = t->pool_n < t->pool_max;
	if (hot) {
		b->next = t->pool;
		t->pool = b;
		t->pool_n++;
	}
	pthread_mutex_unlock(&t->pool_lock);
	if (hot)
		return;
	buf_chill(t, b);
	pthread_mutex_lock(&t->pool_lock);
	b->next = t->cold;
	t->cold = b;
	pthread_mutex_unlock(&t->pool_lock);
}

/* Transport hooks for struct fring_request. The reply must go to the fd that
 * read the request: each cloned fd has its own processing list. */
static int df_send(struct fring_request *r, const struct iovec *iov, int iovcnt)
{
	ssize_t n;

	do
		n = writev(r->fd, iov, iovcnt);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		return 0;
	n = -errno;
	if (n == -ENOENT || n == -ENODEV || n == -ECONNABORTED)
		/* Interrupted and gone, or the mount is gone: routine. */
		fring_dbg("reply to %s (unique %llu): %s",
			  fring_opcode_name(r->opcode),
			  (unsigned long long)r->unique, strerror((int)-n));
	else
		fring_log_ratelimited("devfuse-write", FRING_LOG_WARN,
				      "writing reply to %s (unique %llu): %s",
				      fring_opcode_name(r->opcode),
				      (unsigned long long)r->unique,
				      strerror((int)-n));
	return (int)n;
}

static void df_release(struct fring_request *r)
{
	struct dbuf *b = r->tdata;

	if (atomic_fetch_sub(&b->refs, 1) == 1)
		buf_put(b->t, b);
}

static const struct fring_req_ops df_req_ops = {
	.send = df_send,
	.release = df_release,
};

/* One request read whole into buf: header, then its arguments. */
static void arrived(struct fring_devfuse *t, struct fring_request *r,
		    const void *buf, size_t len)
{
	const struct fuse_in_header *in = buf;

	if (len < sizeof(*in)) {
		/* Not even a header: nothing to reply to. The kernel never
		 * does this; count it and move on. */
		FRING_STAT_INC(t->sv.rq, r->queue, malformed);
		fring_log_ratelimited("malformed", FRING_LOG_WARN,
				      "short read of %zu bytes from /dev/fuse: "
				      "dropped",
				      len);
		fring_req_drop(r);
		return;
	}
	t->sv.arrived(r, in, (const char *)buf + sizeof(*in), len - sizeof(*in),
		      NULL, 0);
}

static void worker_cleanup(void *arg)
{
	struct worker *w = arg;
	struct fring_devfuse *t = w->t;

	fring_hb_leave();
	if (w->cur) {
		buf_put(t, w->cur);
		w->cur = NULL;
	}
	if (atomic_fetch_sub(&t->live, 1) == 1 && t->p.on_all_exited &&
	    !atomic_load(&t->paused))
		t->p.on_all_exited(t->p.ud);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct fring_devfuse *t = w->t;
	size_t cap = t->p.bufsize;
	char name[16];

	snprintf(name, sizeof(name), "fring-dev-%u", w->idx);
	pthread_setname_np(pthread_self(), name);
	/* Cancellation is allowed only while blocked in read(), so a
	 * give-up at stop never interrupts plugin code. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	fring_hb_enter();
	pthread_cleanup_push(worker_cleanup, w);
	for (;;) {
		struct dbuf *b = w->cur;
		size_t skip;
		ssize_t n;

		if (!b) {
			b = w->cur = buf_get(t);
			if (!b) {
				fring_log_ratelimited("devfuse-oom", FRING_LOG_ERROR,
						      "out of memory for a %zu-byte "
						      "request buffer; retrying", cap);
				usleep(10000);
				continue;
			}
		}
		/* No late caller of b's last request may read it (or the
		 * bytes its decoded fields point at) from here. */
		fring_req_quiesce(&b->req);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		fring_hb_idle();
		n = read(w->fd, b->data, cap);
		fring_hb_busy();
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (n < 0) {
			int e = errno;

			if (e == EINTR || e == EAGAIN || e == ENOENT)
				continue; /* ENOENT: request interrupted before we read it */
			if (e != ENODEV && e != ECONNABORTED)
				fring_err("%s: worker %u: read /dev/fuse: %s",
					  t->sv.rq->name, w->idx, strerror(e));
			break;
		}
		fring_req_init(&b->req, t->sv.rq, &df_req_ops, b, w->fd,
			       w->idx);
		/* The tail of the buffer can hold a READDIR reply. */
		skip = ((size_t)n + 7) & ~(size_t)7;
		if (skip < cap) {
			b->req.scratch = b->data + skip;
			b->req.scratch_cap = cap - skip;
		}
		atomic_store(&b->refs, 2);
		arrived(t, &b->req, b->data, (size_t)n);
		if (atomic_fetch_sub(&b->refs, 1) != 1)
			w->cur = NULL; /* still awaiting its reply: it owns b now */
	}
	pthread_cleanup_pop(1);
	return NULL;
}

/* A per-worker fd on the same connection: a clone has its own read queue
 * and processing list. A dup of the session fd is the fallback, so every
 * worker owns its fd whatever happens to the session's. */
static int worker_fd(int session_fd, int *cloned)
{
	uint32_t src = (uint32_t)session_fd;
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	*cloned = 0;
	if (fd >= 0) {
		if (ioctl(fd, FUSE_DEV_IOC_CLONE, &src) == 0) {
			*cloned = 1;
			return fd;
		}
		close(fd);
	}
	return fcntl(session_fd, F_DUPFD_CLOEXEC, 0);
}

static unsigned df_join(struct fring_transport *tp, unsigned timeout_ms)
{
	return fring_devfuse_join((struct fring_devfuse *)tp, timeout_ms);
}

static unsigned df_cancel(struct fring_transport *tp)
{
	return fring_devfuse_cancel((struct fring_devfuse *)tp);
}

static void df_free(struct fring_transport *tp)
{
	fring_devfuse_free((struct fring_devfuse *)tp);
}

static const struct fring_transport_ops df_transport_ops = {
	.name = "devfuse",
	.join = df_join,
	.cancel = df_cancel,
	.free = df_free,
};

int fring_devfuse_start(const struct fring_serve *sv,
			const struct fring_devfuse_params *p,
			struct fring_devfuse **out, char **err)
{
	struct fring_devfuse *t = calloc(1, sizeof(*t));
	sigset_t all, old;
	int nclone = 0, ret = 0;

	*out = NULL;
	if (!t)
		goto oom;
	t->tp.ops = &df_transport_ops;
	t->sv = *sv;
	t->p = *p;
	if (t->p.bufsize < FUSE_MIN_READ_BUFFER)
		t->p.bufsize = FUSE_MIN_READ_BUFFER;
	t->n = p->nr_threads ? p->nr_threads : fring_devfuse_default_threads();
	t->pool_max = t->n;
	pthread_mutex_init(&t->pool_lock, NULL);
	t->w = calloc(t->n, sizeof(*t->w));
	if (!t->w)
		goto oom;
	for (unsigned i = 0; i < t->n; i++)
		t->w[i].fd = -1;
	if (pool_fill(t)) {
		ret = -ENOMEM;
		*err = fring_strf("out of memory for the request buffers (%u x "
				  "%zu KiB)", t->n, t->p.bufsize / 1024);
		goto fail;
	}
	for (unsigned i = 0; i < t->n; i++) {
		int cloned;

		t->w[i].t = t;
		t->w[i].idx = i;
		if (p->fds) { /* adopted: the takeover's fds, already clones */
			t->w[i].fd = p->fds[i];
			nclone++;
			continue;
		}
		t->w[i].fd = worker_fd(p->session_fd, &cloned);
		if (t->w[i].fd < 0) {
			ret = -errno;
			*err = fring_strf("opening a /dev/fuse fd for worker %u: %s",
					  i, strerror(errno));
			goto fail;
		}
		nclone += cloned;
	}
	if (nclone < (int)t->n)
		fring_warn(
			"%s: FUSE_DEV_IOC_CLONE failed for %u of %u workers; "
			"they share the session's queue",
			sv->rq->name, t->n - nclone, t->n);

	/* Workers inherit a full signal mask: signals go to the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&t->live, t->n);
	for (unsigned i = 0; i < t->n; i++) {
		ret = -pthread_create(&t->w[i].tid, NULL, worker_main, &t->w[i]);
		if (ret) {
			/* Never started workers will not decrement. */
			atomic_fetch_sub(&t->live, t->n - i);
			*err = fring_strf("starting worker %u: %s", i, strerror(-ret));
			break;
		}
		t->w[i].running = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		/* The caller unmounts, which ends the started workers. */
		*out = t;
		return ret;
	}
	*out = t;
	return 0;

oom:
	ret = -ENOMEM;
	*err = fring_strf("out of memory starting the /dev/fuse workers");
fail:
	if (t) {
		for (unsigned i = 0; t->w && i < t->n; i++)
			if (t->w[i].fd >= 0 && !p->fds)
				close(t->w[i].fd);
		pool_empty(t);
		free(t->w);
		pthread_mutex_destroy(&t->pool_lock);
		free(t);
	}
	return ret;
}

static void deadline_after(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

unsigned fring_devfuse_join(struct fring_devfuse *t, unsigned timeout_ms)
{
	struct timespec dl;
	unsigned left = 0;

	if (!t)
		return 0;
	deadline_after(&dl, timeout_ms);
	for (unsigned i = 0; i < t->n; i++) {
		if (t->w[i].running && !pthread_timedjoin_np(t->w[i].tid, NULL, &dl))
			t->w[i].running = 0;
		left += t->w[i].running;
	}
	return left;
}

unsigned fring_devfuse_cancel(struct fring_devfuse *t)
{
	struct timespec dl;
	unsigned cancelled = 0;

	if (!t)
		return 0;
	/* Takes effect only in read(): workers keep it disabled elsewhere. */
	for (unsigned i = 0; i < t->n; i++)
		if (t->w[i].running)
			pthread_cancel(t->w[i].tid);
	deadline_after(&dl, 500);
	for (unsigned i = 0; i < t->n; i++) {
		struct worker *w = &t->w[i];

		if (!w->running)
			continue;
		w->running = 0;
		if (!pthread_timedjoin_np(w->tid, NULL, &dl)) {
			cancelled++;
			continue;
		}
		fring_warn("%s: worker %u did not stop (busy in the plugin); "
			   "abandoned it",
			   t->sv.rq->name, i);
		pthread_detach(w->tid);
		t->abandoned++;
	}
	if (cancelled)
		fring_warn(
			"%s: %u idle worker(s) did not stop (files still open "
			"on the lazily unmounted fs?); cancelled them",
			t->sv.rq->name, cancelled);
	return t->abandoned;
}

void fring_devfuse_free(struct fring_devfuse *t)
{
	if (!t)
		return;
	if (t->abandoned) {
		/* A stuck worker still uses t, its fd and its buffer. */
		fring_warn(
			"%s: leaking the /dev/fuse workers' state (%u stuck)",
			t->sv.rq->name, t->abandoned);
		return;
	}
	for (unsigned i = 0; i < t->n; i++)
		if (t->w[i].fd >= 0)
			close(t->w[i].fd);
	pool_empty(t);
	free(t->w);
	pthread_mutex_destroy(&t->pool_lock);
	free(t);
}

struct fring_transport *fring_devfuse_transport(struct fring_devfuse *t)
{
	return t ? &t->tp : NULL;
}

unsigned fring_devfuse_fds(const struct fring_devfuse *t, int *fds,
			   unsigned cap)
{
	unsigned n = 0;

	for (unsigned i = 0; t && i < t->n && n < cap; i++)
		fds[n++] = t->w[i].fd;
	return n;
}

unsigned fring_devfuse_pause(struct fring_devfuse *t, unsigned timeout_ms)
{
	struct timespec dl;
	unsigned left = 0;

	if (!t)
		return 0;
	atomic_store(&t->paused, 1);
	/* Idle workers end in read(); a busy one ends at its next read,
	 * after it answered what it holds. */
	for (unsigned i = 0; i < t->n; i++)
		if (t->w[i].running)
			pthread_cancel(t->w[i].tid);
	deadline_after(&dl, timeout_ms);
	for (unsigned i = 0; i < t->n; i++) {
		if (t->w[i].running &&
		    !pthread_timedjoin_np(t->w[i].tid, NULL, &dl))
			t->w[i].running = 0;
		left += t->w[i].running;
	}
	return left;
}
