// SPDX-License-Identifier: MIT
/*
 * Linux 7.3 buffer pools (FUSE 7.46, INIT flag FUSE_HAS_IO_URING_BUFPOOL).
 *
 * Without a pool every ring entry registers its own max-payload buffer, so
 * pinned memory is queues x queue_depth x max_write. With one, each qid
 * gets one contiguous, NUMA-local pool of pool_bufs buffers of max-payload
 * size (ADD_QUEUE, then ADD_BUFPOOL, then REGISTERs that carry only the
 * entry's header), and the kernel lends a buffer to a request only while it
 * is in userspace and only if it has a payload to move either way: the
 * request's payload is at pool + fuse_uring_ent_in_out.offset, and the
 * reply goes to the same place. When every buffer is lent, the kernel holds
 * further payload requests until a commit frees one, so queue_depth no
 * longer sets the memory.
 *
 * Registered pools (transport.bufpool.registered) are also in the ring's
 * fixed-buffer table, as per-entry regions always are (READ_FIXED and
 * WRITE_FIXED of the data path need that); "registered" tells the kernel
 * so, by IORING_URING_CMD_FIXED + buf_index on ADD_BUFPOOL, which spares it
 * pinning and mapping the buffer per copy. The kernel then refuses (-EINVAL)
 * every REGISTER and COMMIT_AND_FETCH of the queue that lacks them.
 *
 * Order matters on 7.3: a failed REGISTER turns io_uring off for the whole
 * connection, so the ADDs go first and are waited for, and a queue whose
 * ADD the kernel refused registers per-entry buffers carved from its pool
 * instead (fewer entries, same memory) rather than a REGISTER it would
 * refuse.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/log.h"
#include "../config/config.h"
#include "uring_internal.h"

/* A pool-mode header buffer: fuse_uring_req_header (288 bytes) rounded to
 * cache lines. Payloads no longer sit behind it, so no page per entry. */
#define POOL_HDR_SZ 512u
_Static_assert(sizeof(struct fuse_uring_req_header) <= POOL_HDR_SZ,
	       "pool header slot too small");
/* Default pool: as many buffers as entries, at most 8 (see README). */
#define POOL_DEFAULT_BUFS 8u
#define EAGAIN_TRIES 1000

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

int uring_pool_plan(struct fring_uring *u, const struct fring_uring_params *p,
		    char *why, size_t len, char **err)
{
	uint64_t n;

	u->pool_bufs = 0;
	u->test_fault = getenv("FRING_TEST_FIXED_FAULT");
	if (p->cfg->bufpool == FRING_OFF) {
		snprintf(why, len, "transport.bufpool off");
		return 0;
	}
	if (!p->bufpool_offered) {
		if (p->cfg->bufpool == FRING_ON) {
			*err = fring_strf("transport.bufpool on: the kernel has no "
					  "io_uring buffer pools (they need FUSE "
					  "7.46, Linux 7.3)");
			return -EOPNOTSUPP;
		}
		snprintf(why, len, "kernel has no buffer pools");
		return 0;
	}
	/* The kernel's buffer is max(8192, max_write, max_pages * 4096),
	 * which is u->payload_sz: max_pages covers max_write in whole pages. */
	n = p->cfg->bufpool_size ? p->cfg->bufpool_size / u->payload_sz
				 : min_u32(u->depth, POOL_DEFAULT_BUFS);
	if (!n) {
		*err = fring_strf(
			"transport.bufpool.size %llu holds no %u-byte "
			"buffer",
			(unsigned long long)p->cfg->bufpool_size,
			u->payload_sz);
		return -EINVAL;
	}
	/* An entry holds at most one buffer; the pool is one fixed buffer,
	 * which io_uring takes up to 1 GiB (transport.bufpool.size is
	 * validated to that: this only guards a larger payload). */
	if (n > u->depth)
		n = u->depth;
	if (n * u->payload_sz > URING_MAX_BUF_BYTES)
		n = URING_MAX_BUF_BYTES / u->payload_sz;
	u->pool_bufs = (uint32_t)n;
	u->pool_registered = p->cfg->bufpool_registered;
	return 0;
}

static void size_str(uint64_t b, char *buf, size_t len)
{
	if (b % (1u << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(b >> 20));
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)(b >> 10));
}

void uring_pool_describe(const struct fring_uring *u, const char *why,
			 char *buf, size_t len)
{
	char sz[32];

	size_str(u->payload_sz, sz, sizeof(sz));
	if (u->pool_bufs)
		snprintf(buf, len, "bufpool, %s, %u x %s per queue, %u entries "
			 "per queue", u->pool_registered ? "registered"
			 : "not registered", u->pool_bufs, sz, u->depth);
	else
		snprintf(buf, len, "per-entry buffers (%s), %u x %s per queue",
			 why, u->depth, sz);
}

size_t uring_pool_region_sz(uint32_t depth)
{
	return ((size_t)depth * POOL_HDR_SZ + 4095) & ~(size_t)4095;
}

int uring_pool_alloc(struct uring_queue *q, uint32_t depth, uint32_t buf_sz,
		     uint32_t nbufs, uint16_t index, void *at)
{
	int ret;

	q->region_sz = uring_pool_region_sz(depth);
	q->pool_sz = (size_t)nbufs * buf_sz;
	if (at) {
		/* The takeover memfd's slot: headers, then the pool. */
		q->region = at;
		q->pool = (char *)at + q->region_sz;
		q->region_shared = 1;
		if (numa_available() >= 0 && q->node >= 0)
			numa_tonode_memory(at, q->region_sz + q->pool_sz,
					   q->node);
		ret = uring_shm_populate(at, q->region_sz + q->pool_sz);
	} else {
		q->region = uring_map_local(q->region_sz, q->node);
		q->pool = uring_map_local(q->pool_sz, q->node);
		if (!q->region || !q->pool)
			return -ENOMEM; /* uring_region_free unmaps them */
		ret = uring_populate(q->region, q->region_sz);
		if (!ret)
			ret = uring_populate(q->pool, q->pool_sz);
	}
	if (!ret)
		ret = uring_ents_alloc(q, depth);
	if (ret)
		return ret;
	q->pool_bufs = nbufs;
	q->buf_base = index;
	q->nbufs = 1;
	for (uint32_t i = 0; i < depth; i++) {
		struct uring_ent *e = &q->ents[i];

		e->hdr = (struct fuse_uring_req_header *)((char *)q->region +
							  (size_t)i * POOL_HDR_SZ);
		e->buf_index = index;
		e->reg_iov[0].iov_base = e->hdr;
		e->reg_iov[0].iov_len = POOL_HDR_SZ;
		/* payload NULL/0 and reg_iov[1] {NULL, 0}: the kernel wants
		 * no payload buffer on REGISTER in pool mode. */
	}
	return 0;
}

/* One ADD command for queue i of t; ud tells the CQE apart. */
static int prep_add(struct uring_thread *t, uint32_t i, uint32_t cmd_op)
{
	struct uring_queue *q = &t->queues[i];
	struct io_uring_sqe *sqe = uring_prep_fuse_cmd(t, cmd_op, q->qid,
						       UD_ADD_BASE + i);
	struct fuse_uring_cmd_req *req;

	if (!sqe)
		return -EBUSY;
	req = (struct fuse_uring_cmd_req *)sqe->cmd;
	if (cmd_op == FUSE_IO_URING_CMD_ADD_QUEUE)
		req->flags = uring_zc_add_flags(q);
	if (cmd_op == FUSE_IO_URING_CMD_ADD_BUFPOOL) {
		req->bufpool.uaddr = (uint64_t)(uintptr_t)q->pool;
		req->bufpool.len = (uint32_t)q->pool_sz;
		if (t->u->pool_registered) {
			sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
			sqe->buf_index = q->buf_base;
		}
		/* Test-only: reserved must be 0, so the kernel refuses it. */
		if (t->u->test_fault && !strcmp(t->u->test_fault, "addpool") &&
		    q->qid == 0)
			req->bufpool.reserved = 1;
	}
	return 0;
}

/* Send cmd_op for every queue with res[i] == 0 and wait for the answers
 * (res[i] becomes the CQE's result); other CQEs (the polls) are handled
 * as usual. -EAGAIN (INIT not yet processed) is retried. */
static int add_round(struct uring_thread *t, uint32_t cmd_op, int *res)
{
	uint32_t pending = 0;
	int tries = 0;

	for (uint32_t i = 0; i < t->nq; i++) {
		if (res[i])
			continue;
		if (prep_add(t, i, cmd_op))
			return -EBUSY;
		res[i] = 1; /* in flight */
		pending++;
	}
	while (pending && !t->stopping) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_submit_and_wait(&t->ring, 1);

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			return ret;
		while (io_uring_peek_cqe(&t->ring, &cqe) == 0) {
			uint64_t ud = cqe->user_data;
			int r = cqe->res;

			io_uring_cqe_seen(&t->ring, cqe);
			if (ud < UD_ADD_BASE || ud >= UD_ADD_BASE + t->nq) {
				uring_handle_cqe(t, cqe);
				continue;
			}
			if (r == -EAGAIN && ++tries < EAGAIN_TRIES) {
				nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
				if (prep_add(t, (uint32_t)(ud - UD_ADD_BASE), cmd_op))
					return -EBUSY;
				continue;
			}
			res[ud - UD_ADD_BASE] = r;
			pending--;
		}
	}
	return t->stopping ? -ECANCELED : 0;
}

/* The kernel refused the pool: register per-entry buffers made of the
 * pool's buffers, one per entry, for as many entries as it has. */
static void fall_back(struct uring_queue *q, uint32_t buf_sz, const char *what,
		      int err)
{
	uint32_t n = min_u32(q->depth, q->pool_bufs);

	fring_warn("uring: qid %u: %s failed: %s; serving it with %u "
		   "per-entry buffers from its pool instead", q->qid, what,
		   strerror(-err), n);
	for (uint32_t i = 0; i < n; i++) {
		struct uring_ent *e = &q->ents[i];

		e->payload = q->pool + (size_t)i * buf_sz;
		e->payload_cap = buf_sz;
		e->reg_iov[1].iov_base = e->payload;
		e->reg_iov[1].iov_len = buf_sz;
	}
	q->depth = n;
}

/* ADD_QUEUE with zero-copy refused for want of the capability (a user
 * namespace's CAP_SYS_ADMIN is not the kernel's): add those queues again
 * without it. A queue that keeps zero-copy cannot lose its pool later: the
 * kernel takes only pool REGISTERs on it. */
static int add_queues(struct uring_thread *t, int *qres)
{
	int *again = malloc(t->nq * sizeof(*again));
	int ret, n = 0;

	if (!again)
		return -ENOMEM;
	ret = add_round(t, FUSE_IO_URING_CMD_ADD_QUEUE, qres);
	for (uint32_t i = 0; !ret && i < t->nq; i++) {
		again[i] = 1;
		if (qres[i] == -EPERM && t->queues[i].zc) {
			t->queues[i].zc = 0;
			again[i] = 0;
			n++;
		}
	}
	if (!ret && n) {
		fring_warn("uring: the kernel refused zero-copy on %d queue(s) "
			   "(EPERM: CAP_SYS_ADMIN of the initial namespace "
			   "needed); they copy", n);
		ret = add_round(t, FUSE_IO_URING_CMD_ADD_QUEUE, again);
		for (uint32_t i = 0; !ret && i < t->nq; i++)
			if (!t->queues[i].zc && qres[i] == -EPERM)
				qres[i] = again[i];
	}
	free(again);
	return ret;
}

/* A takeover's new server: the kernel has every queue and pool the old
 * one added (ADD_QUEUE would be refused -EEXIST, ADD_BUFPOOL -EINVAL), at
 * the addresses mapped here again; uring_adopt_start registers only the
 * entries an old ring took with it. */
static int pool_adopt(struct uring_thread *t)
{
	for (uint32_t i = 0; i < t->nq; i++) {
		struct uring_queue *q = &t->queues[i];

		q->pool_added = 1;
		q->pool_fixed = (uint8_t)t->u->pool_registered;
		for (uint32_t j = 0; j < q->depth; j++)
			atomic_store(&q->ents[j].state, ENT_KERNEL);
	}
	t->live = t->nents;
	return 0;
}

int uring_pool_add(struct uring_thread *t)
{
	struct fring_uring *u = t->u;
	int *qres, *bres;
	int ret = -ENOMEM;

	if (u->adopting)
		return pool_adopt(t);
	qres = calloc(t->nq, sizeof(*qres));
	bres = calloc(t->nq, sizeof(*bres));
	if (!qres || !bres)
		goto out;
	ret = add_queues(t, qres);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < t->nq; i++)
		bres[i] = qres[i]; /* no pool on a queue that is not there */
	ret = add_round(t, FUSE_IO_URING_CMD_ADD_BUFPOOL, bres);
	if (ret)
		goto out;
	t->live = 0;
	for (uint32_t i = 0; i < t->nq; i++) {
		struct uring_queue *q = &t->queues[i];

		if (qres[i] && qres[i] != -EEXIST) {
			q->zc = 0;
			fall_back(q, u->payload_sz, "ADD_QUEUE", qres[i]);
		} else if (bres[i] && q->zc) {
			fring_err("uring: qid %u: ADD_BUFPOOL failed on a zero-copy "
				  "queue: %s; such a queue cannot serve without its "
				  "pool (transport.zero_copy off avoids this)",
				  q->qid, strerror(-bres[i]));
			ret = -EPROTO;
			goto out;
		} else if (bres[i])
			fall_back(q, u->payload_sz, "ADD_BUFPOOL", bres[i]);
		else {
			q->pool_added = 1;
			q->pool_fixed = (uint8_t)u->pool_registered;
		}
		for (uint32_t j = 0; j < q->depth; j++) {
			atomic_store(&q->ents[j].state, ENT_KERNEL);
			if (uring_prep_register(t, &q->ents[j])) {
				ret = -EBUSY;
				goto out;
			}
			t->live++;
		}
	}
out:
	free(qres);
	free(bres);
	return ret;
}

/* Opcodes whose reply has no body. With neither a request payload nor a
 * reply body the kernel lends no buffer, and then offset 0 means "none",
 * not "buffer 0" (which another request may hold). */
static int no_reply_body(uint32_t opcode)
{
	switch (opcode) {
	case FUSE_FLUSH: case FUSE_RELEASE: case FUSE_RELEASEDIR:
	case FUSE_FSYNC: case FUSE_FSYNCDIR: case FUSE_SETLK: case FUSE_SETLKW:
	case FUSE_ACCESS: case FUSE_FALLOCATE: case FUSE_DESTROY:
	case FUSE_SYNCFS: case FUSE_UNLINK: case FUSE_RMDIR: case FUSE_RENAME:
	case FUSE_RENAME2: case FUSE_SETXATTR: case FUSE_REMOVEXATTR:
	case FUSE_FORGET: case FUSE_BATCH_FORGET: case FUSE_INTERRUPT:
	case FUSE_NOTIFY_REPLY:
		return 1;
	}
	return 0;
}

int uring_pool_locate(struct uring_ent *e, uint32_t opcode, uint32_t psz)
{
	struct uring_queue *q = e->q;
	uint32_t buf_sz = e->th->u->payload_sz;
	uint32_t off = e->hdr->ring_ent_in_out.offset;

	if (!q->pool_added)
		return 0; /* per-entry buffers (after a refused ADD) */
	/* A zero-copied READ moves nothing through the pool either way. */
	if ((!off && !psz && no_reply_body(opcode)) ||
	    (e->zc && opcode == FUSE_READ)) {
		e->payload = NULL;
		e->payload_cap = 0;
		return 0;
	}
	if (off % buf_sz || off / buf_sz >= q->pool_bufs)
		return -EPROTO;
	e->payload = q->pool + off;
	e->payload_cap = buf_sz;
	e->pool_held = 1;
	ctr_inc(&q->ctr.pool_hits);
	if (++q->pool_busy == q->pool_bufs)
		ctr_inc(&q->ctr.pool_full);
	atomic_store_explicit(&q->ctr.pool_in_use, q->pool_busy,
			      memory_order_relaxed);
	return 0;
}

void uring_pool_release(struct uring_ent *e)
{
	if (!e->pool_held)
		return;
	e->pool_held = 0;
	e->q->pool_busy--;
	atomic_store_explicit(&e->q->ctr.pool_in_use, e->q->pool_busy,
			      memory_order_relaxed);
}

/* Test-only (FRING_TEST_FIXED_FAULT=commit|register|addpool): the first
 * such command of qid 0 carries the wrong buf_index (commit) or no
 * IORING_URING_CMD_FIXED (register), or its ADD_BUFPOOL a nonzero reserved
 * field (addpool, in prep_add), to show the kernel's refusal and how fring
 * survives it (tests/vm). */
static void test_fault(struct uring_ent *e, struct io_uring_sqe *sqe)
{
	static int fired;
	const char *f = e->th->u->test_fault;
	uint32_t op = sqe->cmd_op;

	if (!f || fired || e->qid != 0)
		return;
	if (!strcmp(f, "commit") && op == FUSE_IO_URING_CMD_COMMIT_AND_FETCH) {
		sqe->buf_index = (uint16_t)(sqe->buf_index + 1);
		fired = 1;
	} else if (!strcmp(f, "register") && op == FUSE_IO_URING_CMD_REGISTER) {
		sqe->uring_cmd_flags = 0;
		fired = 1;
	}
	if (fired)
		fring_warn("uring: FRING_TEST_FIXED_FAULT=%s: qid 0 sends one "
			   "%s the kernel must refuse", f,
			   op == FUSE_IO_URING_CMD_REGISTER ? "REGISTER"
							    : "COMMIT_AND_FETCH");
}

void uring_pool_sqe(struct uring_ent *e, struct io_uring_sqe *sqe)
{
	if (!e->q->pool_fixed)
		return;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = e->q->buf_base;
	test_fault(e, sqe);
}
