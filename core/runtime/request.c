/* Request lifetime and the exactly-once reply path; see request.h. */
#define _GNU_SOURCE
#include "request.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dispatch.h"
#include "log.h"

static unsigned bucket_of(uint64_t unique)
{
	/* uniques step by 2; mix so consecutive ones spread over buckets */
	uint64_t h = (unique >> 1) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 58) % FRING_INFLIGHT_BUCKETS;
}

void fring_inflight_init(struct fring_inflight *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < FRING_INFLIGHT_BUCKETS; i++)
		pthread_mutex_init(&t->b[i].lock, NULL);
	pthread_mutex_init(&t->pending_lock, NULL);
	atomic_init(&t->npending, 0);
}

void fring_inflight_destroy(struct fring_inflight *t)
{
	for (unsigned i = 0; i < FRING_INFLIGHT_BUCKETS; i++)
		pthread_mutex_destroy(&t->b[i].lock);
	pthread_mutex_destroy(&t->pending_lock);
}

static void inflight_add(struct fring_inflight *t, struct fring_req *r)
{
	unsigned i = bucket_of(r->unique);

	pthread_mutex_lock(&t->b[i].lock);
	r->hnext = t->b[i].head;
	t->b[i].head = r;
	pthread_mutex_unlock(&t->b[i].lock);
}

static void inflight_del(struct fring_inflight *t, struct fring_req *r)
{
	unsigned i = bucket_of(r->unique);
	struct fring_req **pp;

	pthread_mutex_lock(&t->b[i].lock);
	for (pp = &t->b[i].head; *pp; pp = &(*pp)->hnext) {
		if (*pp == r) {
			*pp = r->hnext;
			break;
		}
	}
	pthread_mutex_unlock(&t->b[i].lock);
	r->hnext = NULL;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
}

/* Find `unique` in its bucket and flag it. Returns 1 if found. */
static int bucket_interrupt(struct fring_inflight *t, uint64_t unique)
{
	unsigned i = bucket_of(unique);
	struct fring_req *r;
	int found = 0;

	pthread_mutex_lock(&t->b[i].lock);
	for (r = t->b[i].head; r; r = r->hnext) {
		if (r->unique == unique) {
			atomic_store(&r->interrupted, 1);
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&t->b[i].lock);
	return found;
}

/* Claim the pending-interrupt slot of `unique` if any (pending_lock held). */
static int pending_take(struct fring_inflight *t, uint64_t unique)
{
	for (unsigned i = 0; i < FRING_PENDING_INTERRUPTS; i++) {
		if (t->pending[i].when_ms && t->pending[i].unique == unique) {
			t->pending[i].when_ms = 0;
			atomic_fetch_sub(&t->npending, 1);
			return 1;
		}
	}
	return 0;
}

int fring_inflight_interrupt(struct fring_inflight *t, uint64_t unique)
{
	int64_t now = now_ms();
	unsigned slot = 0;
	int ret = 1;

	if (bucket_interrupt(t, unique))
		return 0;
	pthread_mutex_lock(&t->pending_lock);
	/* Reuse a free or expired slot, else the oldest. Expired entries are
	 * interrupts whose target was answered before they arrived. */
	for (unsigned i = 0; i < FRING_PENDING_INTERRUPTS; i++) {
		int64_t w = t->pending[i].when_ms;

		if (w && now - w > 2000) {
			t->pending[i].when_ms = 0;
			atomic_fetch_sub(&t->npending, 1);
			w = 0;
		}
		if (!w || (t->pending[slot].when_ms && w < t->pending[slot].when_ms))
			slot = i;
	}
	if (!t->pending[slot].when_ms)
		atomic_fetch_add(&t->npending, 1);
	t->pending[slot].unique = unique;
	t->pending[slot].when_ms = now;
	/* Re-check after publishing npending: a worker that entered the
	 * target meanwhile either saw npending > 0 or is visible here. */
	if (bucket_interrupt(t, unique)) {
		pending_take(t, unique);
		ret = 0;
	}
	pthread_mutex_unlock(&t->pending_lock);
	return ret;
}

struct fring_req *fring_inflight_pop(struct fring_inflight *t)
{
	for (unsigned i = 0; i < FRING_INFLIGHT_BUCKETS; i++) {
		struct fring_req *r;

		pthread_mutex_lock(&t->b[i].lock);
		r = t->b[i].head;
		if (r)
			t->b[i].head = r->hnext;
		pthread_mutex_unlock(&t->b[i].lock);
		if (r) {
			r->hnext = NULL;
			return r;
		}
	}
	return NULL;
}

/* The generation (24 bits) of a state word, and the next one for a
 * recycled request: never 0 in its low 16 bits, the handle's share. */
#define GEN_OF(s) ((unsigned)(s) >> 8)
#define WITH_ST(s, st) (((unsigned)(s) & ~0xffu) | (st))

static unsigned next_gen(unsigned gen)
{
	gen = (gen + 1) & 0xffffffu;
	return gen & 0xffffu ? gen : gen + 1;
}

void fring_req_init(struct fring_req *r, struct fring_dispatch *dx,
		    fring_send_fn send, fring_release_fn release, void *tdata,
		    int fd, uint32_t queue)
{
	/* Transports hand in zeroed or recycled memory; the generation lives
	 * on across the memset. */
	unsigned gen = next_gen(GEN_OF(atomic_load_explicit(&r->state,
							    memory_order_relaxed)));

	memset(r, 0, sizeof(*r));
	r->dx = dx;
	r->send = send;
	r->release = release;
	r->tdata = tdata;
	r->fd = fd;
	r->queue = queue;
	atomic_init(&r->interrupted, 0);
	/* Last, with release order: a stale handle that sees the new
	 * generation sees a fully initialised request. */
	atomic_store_explicit(&r->state, gen << 8 | FRING_REQ_PENDING,
			      memory_order_release);
}

fring_req *fring_req_handle(struct fring_req *r)
{
	uintptr_t a = (uintptr_t)r;

	/* An address above 48 bits (not seen on Linux without an explicit
	 * high mmap hint) goes untagged: unchecked, never misread. */
	if (a & ~(uintptr_t)FRING_REQ_ADDR_MASK)
		return r;
	return (fring_req *)(a | (uintptr_t)(GEN_OF(atomic_load_explicit(
			     &r->state, memory_order_relaxed)) & 0xffffu)
			     << FRING_REQ_HANDLE_SHIFT);
}

static int stale(struct fring_req *r, uint32_t hgen, unsigned s)
{
	if (!hgen || (GEN_OF(s) & 0xffffu) == hgen)
		return 0;
	FRING_STAT_INC(r->dx, r->queue, misuse);
	fring_log_ratelimited("stale-handle", FRING_LOG_WARN,
			      "%s: plugin used the handle of a request it had "
			      "answered (the slot now holds %s, unique %llu); "
			      "refused", r->dx->mount.name,
			      fring_opcode_name(r->opcode),
			      (unsigned long long)r->unique);
	return 1;
}

struct fring_req *fring_req_get(fring_req *h)
{
	struct fring_req *r = fring_req_ptr(h);

	if (!r)
		return NULL;
	return stale(r, fring_req_hgen(h),
		     atomic_load_explicit(&r->state, memory_order_acquire))
		       ? NULL : r;
}

void fring_req_track(struct fring_req *r)
{
	struct fring_inflight *t = &r->dx->inflight;

	r->tracked = 1;
	FRING_STAT_INC(r->dx, r->queue, outstanding);
	inflight_add(t, r);
	if (atomic_load(&t->npending) > 0) {
		pthread_mutex_lock(&t->pending_lock);
		if (pending_take(t, r->unique))
			atomic_store(&r->interrupted, 1);
		pthread_mutex_unlock(&t->pending_lock);
	}
}

/* After the reply or drop: leave the table, free the dir buffer, give the
 * memory back to the transport. Nothing may touch r afterwards. */
static void req_finish(struct fring_req *r)
{
	struct fring_dispatch *dx = r->dx;
	uint32_t queue = r->queue; /* r may be reused once released */
	int tracked = r->tracked;

	if (tracked)
		inflight_del(&dx->inflight, r);
	if (r->dir_malloced)
		free(r->dirbuf);
	r->dirbuf = NULL;
	r->release(r);
	/* Counted last so that "outstanding == 0" means every release ran. */
	if (tracked)
		atomic_fetch_sub(&fring_stats_of(dx, queue)->outstanding, 1);
}

int fring_req_claim(fring_req *h)
{
	struct fring_req *r = fring_req_ptr(h);
	uint32_t hgen = fring_req_hgen(h);
	unsigned s = atomic_load(&r->state);

	/* Every CAS below compares the whole word, generation included: a
	 * request recycled meanwhile fails it and is re-checked here. */
	for (;;) {
		if (stale(r, hgen, s))
			return -EALREADY;
		if (FRING_REQ_ST(s) != FRING_REQ_PENDING)
			break;
		if (atomic_compare_exchange_strong(&r->state, &s,
						   WITH_ST(s, FRING_REQ_REPLIED)))
			return 0;
	}
	while (FRING_REQ_ST(s) == FRING_REQ_EXPIRING ||
	       FRING_REQ_ST(s) == FRING_REQ_EXPIRED) {
		if (stale(r, hgen, s))
			return -EALREADY;
		if (FRING_REQ_ST(s) == FRING_REQ_EXPIRING &&
		    atomic_compare_exchange_strong(&r->state, &s,
						   WITH_ST(s, FRING_REQ_LATE)))
			return -EALREADY; /* the expiring thread finishes r */
		if (FRING_REQ_ST(s) == FRING_REQ_EXPIRED &&
		    atomic_compare_exchange_strong(&r->state, &s,
						   WITH_ST(s, FRING_REQ_REPLIED))) {
			fring_dbg("%s: late reply to %s (unique %llu) after its "
				  "interrupt deadline: dropped",
				  r->dx->mount.name, fring_opcode_name(r->opcode),
				  (unsigned long long)r->unique);
			req_finish(r);
			return -EALREADY;
		}
	}
	fring_log_ratelimited("double-reply", FRING_LOG_WARN,
			      "%s: plugin replied twice to %s (unique %llu); "
			      "second reply ignored",
			      r->dx->mount.name, fring_opcode_name(r->opcode),
			      (unsigned long long)r->unique);
	return -EALREADY;
}

/* Hand the reply to the transport, without finishing r. */
static int send_reply(struct fring_req *r, int32_t error,
		      const struct iovec *body, int nbody)
{
	struct fring_dispatch *dx = r->dx;
	struct iovec iov[4];
	struct fuse_out_header oh;
	size_t len = sizeof(oh);
	int n = 1, ret;

	if (error != 0)
		nbody = 0;
	for (int i = 0; i < nbody && n < 4; i++) {
		if (!body[i].iov_len)
			continue;
		iov[n++] = body[i];
		len += body[i].iov_len;
	}
	oh.len = (uint32_t)len;
	oh.error = error;
	oh.unique = r->unique;
	iov[0].iov_base = &oh;
	iov[0].iov_len = sizeof(oh);

	ret = r->send(r, iov, n);
	FRING_STAT_INC(dx, r->queue, replies);
	if (error)
		FRING_STAT_INC(dx, r->queue, errors);
	if (ret < 0 && ret != -ENOENT)
		FRING_STAT_INC(dx, r->queue, send_failures);
	return ret;
}

int fring_req_send(struct fring_req *r, int32_t error, const struct iovec *body,
		   int nbody)
{
	int ret = send_reply(r, error, body, nbody);

	req_finish(r);
	return ret;
}

/* Find `unique` and move it PENDING -> EXPIRING, under the bucket lock so
 * r cannot be finished meanwhile. Returns r; or NULL with *ring set if it
 * is unanswered but cannot be answered for the plugin (fd < 0). */
static struct fring_req *expire_claim(struct fring_inflight *t,
				      uint64_t unique, int *ring)
{
	unsigned i = bucket_of(unique);
	struct fring_req *r;
	unsigned s;

	*ring = 0;
	pthread_mutex_lock(&t->b[i].lock);
	for (r = t->b[i].head; r && r->unique != unique; r = r->hnext)
		;
	if (r) {
		s = atomic_load(&r->state);
		if (r->fd < 0) {
			*ring = FRING_REQ_ST(s) == FRING_REQ_PENDING;
			r = NULL;
		} else if (FRING_REQ_ST(s) != FRING_REQ_PENDING ||
			   !atomic_compare_exchange_strong(
				   &r->state, &s, WITH_ST(s, FRING_REQ_EXPIRING))) {
			r = NULL;
		}
	}
	pthread_mutex_unlock(&t->b[i].lock);
	return r;
}

void fring_req_expire(struct fring_dispatch *dx, uint64_t unique,
		      unsigned waited_ms)
{
	int ring;
	unsigned s;
	struct fring_req *r = expire_claim(&dx->inflight, unique, &ring);

	if (!r) {
		if (ring)
			fring_log_ratelimited("expire-uring", FRING_LOG_WARN,
					      "%s: plugin did not answer the "
					      "interrupted request %llu within %u ms; "
					      "io_uring requests can only be "
					      "answered by the plugin: the caller "
					      "waits", dx->mount.name,
					      (unsigned long long)unique, waited_ms);
		return;
	}
	fring_log_ratelimited("expire", FRING_LOG_WARN,
			      "%s: plugin did not answer the interrupted %s "
			      "(unique %llu) within %u ms; answered EINTR for it",
			      dx->mount.name, fring_opcode_name(r->opcode),
			      (unsigned long long)unique, waited_ms);
	send_reply(r, -EINTR, NULL, 0);
	/* Only this thread or a LATE claim move it out of EXPIRING. */
	s = WITH_ST(atomic_load(&r->state), FRING_REQ_EXPIRING);
	if (!atomic_compare_exchange_strong(&r->state, &s,
					    WITH_ST(s, FRING_REQ_EXPIRED)))
		req_finish(r); /* LATE: the plugin replied meanwhile */
}

/* Bad errno values already logged. Each distinct one is logged once: a
 * time-based rate limit would swallow a different one that follows within
 * its window. Past the table, the rate limit. 0 marks a free slot (0 is
 * never bad). */
#define BAD_ERRNO_SLOTS 32
static _Atomic int32_t bad_errno_seen[BAD_ERRNO_SLOTS];

/* 1 the first time v is seen, 0 after, -1 when the table is full. */
static int bad_errno_first(int32_t v)
{
	for (int i = 0; i < BAD_ERRNO_SLOTS; i++) {
		int32_t cur = atomic_load(&bad_errno_seen[i]);

		if (!cur && atomic_compare_exchange_strong(&bad_errno_seen[i],
							   &cur, v))
			return 1;
		if (cur == v)
			return 0;
	}
	return -1;
}

int fring_req_reply_error(fring_req *h, int32_t neg_errno)
{
	struct fring_req *r = fring_req_ptr(h);
	int bad = 0, ret;
	int32_t e = fring_proto_sanitize_error(neg_errno, &bad);

	ret = fring_req_claim(h);
	if (ret)
		return ret;
	if (bad) {
		int first = bad_errno_first(neg_errno);
		char msg[256];

		FRING_STAT_INC(r->dx, r->queue, misuse);
		snprintf(msg, sizeof(msg), "%s: plugin replied %d to %s (unique "
			 "%llu): not a negative errno, sent EIO",
			 r->dx->mount.name, (int)neg_errno,
			 fring_opcode_name(r->opcode),
			 (unsigned long long)r->unique);
		if (first > 0)
			fring_warn("%s", msg);
		else if (first < 0)
			fring_log_ratelimited("bad-errno", FRING_LOG_WARN, "%s", msg);
		fring_req_send(r, e, NULL, 0);
		return -EINVAL;
	}
	return fring_req_send(r, e, NULL, 0);
}

int fring_req_reply_misuse(fring_req *h, const char *what)
{
	struct fring_req *r = fring_req_ptr(h);
	int ret = fring_req_claim(h);

	if (ret)
		return ret;
	FRING_STAT_INC(r->dx, r->queue, misuse);
	fring_log_ratelimited("reply-misuse", FRING_LOG_WARN,
			      "%s: plugin answered %s (unique %llu) with %s; "
			      "sent EIO",
			      r->dx->mount.name, fring_opcode_name(r->opcode),
			      (unsigned long long)r->unique, what);
	fring_req_send(r, -EIO, NULL, 0);
	return -EINVAL;
}

static void set_replied(struct fring_req *r)
{
	atomic_store(&r->state, WITH_ST(atomic_load(&r->state),
					FRING_REQ_REPLIED));
}

void fring_req_drop(struct fring_req *r)
{
	set_replied(r);
	req_finish(r);
}

void fring_req_abandon(struct fring_req *r)
{
	struct fring_dispatch *dx = r->dx;
	uint32_t queue = r->queue;

	/* Already out of the table (fring_inflight_pop). */
	set_replied(r);
	if (r->dir_malloced)
		free(r->dirbuf);
	r->dirbuf = NULL;
	r->release(r);
	atomic_fetch_sub(&fring_stats_of(dx, queue)->outstanding, 1);
}

/* ---- data-path services, synchronous (/dev/fuse) ---- */

/* Synchronous fallback: read into the request's scratch memory (the unused
 * tail of its read buffer) or a temporary buffer, then reply. */
void fring_req_read_fd_sync(struct fring_req *r, int fd, uint64_t off, uint32_t len)
{
	int own = !(r->scratch && r->scratch_cap >= len);
	char *buf = own ? malloc(len ? len : 1) : r->scratch;
	size_t got = 0;
	int32_t err = 0;

	if (!buf) {
		fring_req_send(r, -ENOMEM, NULL, 0);
		return;
	}
	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = fring_proto_sanitize_error(-errno, NULL);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (err && got == 0) {
		fring_req_send(r, err, NULL, 0);
	} else {
		struct iovec iov = { buf, got };

		fring_req_send(r, 0, &iov, 1);
	}
	if (own) /* r may be gone after the send: decided before */
		free(buf);
}

void fring_req_write_fd_sync(struct fring_req *r, int fd, uint64_t off)
{
	const struct fring_write_args *a = &r->d.a.write;
	const char *data = a->data;
	size_t done = 0;
	int32_t err = 0;

	while (done < a->len) {
		ssize_t n = pwrite(fd, data + done, a->len - done,
				   (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = fring_proto_sanitize_error(-errno, NULL);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (err && done == 0) {
		fring_req_send(r, err, NULL, 0);
	} else {
		/* Like write(2): a partial count beats losing what was written. */
		struct fuse_write_out wo = { .size = (uint32_t)done };
		struct iovec iov = { &wo, sizeof(wo) };

		fring_req_send(r, 0, &iov, 1);
	}
}
