// SPDX-License-Identifier: MIT
/* The fake ring and queue of fakering.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "runtime/host.h"
#include "runtime/init.h"
#include "fakering.h"

void (*fakering_kernel)(struct io_uring *ring, struct fake_sqe *sqe);

/* What the kernel would share with us: heads, tails, flags. */
struct fake_mem {
	unsigned sq_head, sq_tail, sq_flags, sq_dropped, sq_mask, sq_entries;
	unsigned cq_head, cq_tail, cq_flags, cq_overflow, cq_mask, cq_entries;
	unsigned *array;
	struct fake_sqe *sqes;
	struct io_uring_cqe *cqes;
};

void fakering_init(struct io_uring *ring, unsigned entries)
{
	struct fake_mem *m = calloc(1, sizeof(*m));
	unsigned n = 1;

	while (n < entries)
		n <<= 1;
	cr_assert(m);
	m->array = calloc(n, sizeof(*m->array));
	m->sqes = calloc(n, sizeof(*m->sqes));
	m->cqes = calloc(2 * n, sizeof(*m->cqes));
	cr_assert(m->array && m->sqes && m->cqes);
	m->sq_mask = n - 1;
	m->sq_entries = n;
	m->cq_mask = 2 * n - 1;
	m->cq_entries = 2 * n;
	memset(ring, 0, sizeof(*ring));
	ring->flags = IORING_SETUP_SQE128;
	ring->features = IORING_FEAT_EXT_ARG;
	ring->ring_fd = -1;
	ring->sq = (struct io_uring_sq){
		.khead = &m->sq_head, .ktail = &m->sq_tail,
		.kring_mask = &m->sq_mask, .kring_entries = &m->sq_entries,
		.kflags = &m->sq_flags, .kdropped = &m->sq_dropped,
		.array = m->array, .sqes = &m->sqes[0].sqe,
		.ring_ptr = m, .ring_mask = n - 1, .ring_entries = n,
	};
	ring->cq = (struct io_uring_cq){
		.khead = &m->cq_head, .ktail = &m->cq_tail,
		.kring_mask = &m->cq_mask, .kring_entries = &m->cq_entries,
		.kflags = &m->cq_flags, .koverflow = &m->cq_overflow,
		.cqes = m->cqes, .ring_mask = 2 * n - 1, .ring_entries = 2 * n,
	};
}

void fakering_free(struct io_uring *ring)
{
	struct fake_mem *m = ring->sq.ring_ptr;

	if (!m)
		return;
	free(m->array);
	free(m->sqes);
	free(m->cqes);
	free(m);
	ring->sq.ring_ptr = NULL;
}

unsigned fakering_take(struct io_uring *ring, struct fake_sqe *out, unsigned max)
{
	struct io_uring_sq *sq = &ring->sq;
	struct fake_sqe *sqes = (struct fake_sqe *)sq->sqes;
	unsigned n = 0;

	for (; sq->sqe_head != sq->sqe_tail; sq->sqe_head++) {
		cr_assert_lt(n, max, "more SQEs prepared than the test expects");
		out[n++] = sqes[sq->sqe_head & sq->ring_mask];
	}
	*sq->khead = sq->sqe_head; /* consumed: the slots are free */
	return n;
}

void fakering_post(struct io_uring *ring, uint64_t user_data, int32_t res)
{
	struct io_uring_cq *cq = &ring->cq;
	unsigned tail = *cq->ktail;

	cr_assert_lt(tail - *cq->khead, cq->ring_entries, "CQ overflow");
	cq->cqes[tail & cq->ring_mask] = (struct io_uring_cqe){
		.user_data = user_data, .res = res };
	*cq->ktail = tail + 1;
}

/* io_uring_submit*: the kernel takes every prepared SQE. */
static int submit(struct io_uring *ring, unsigned wait_nr)
{
	struct fake_sqe s[64];
	unsigned n = fakering_take(ring, s, 64);

	for (unsigned i = 0; i < n; i++)
		if (fakering_kernel)
			fakering_kernel(ring, &s[i]);
	if (wait_nr && *ring->cq.ktail == *ring->cq.khead)
		return -ETIME; /* nothing would ever complete: fail, not hang */
	return (int)n;
}

int __wrap_io_uring_submit(struct io_uring *ring);
int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);

int __wrap_io_uring_submit(struct io_uring *ring)
{
	return submit(ring, 0);
}

int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	return submit(ring, wait_nr);
}

/* ---- the plugin ---- */

struct fake_plugin fake_plugin;
char fake_data[FAKE_PAYLOAD_SZ];

static const struct fring_host_api *host(void)
{
	return fring_host_table();
}

/* Held or answered, as fake_plugin.answer says; reply() answers. */
static void answer(fring_req *r, int32_t (*reply)(fring_req *r))
{
	fake_plugin.calls++;
	if (fake_plugin.answer == FA_HOLD) {
		fake_plugin.held = r;
		return;
	}
	fake_plugin.ret = reply(r);
	if (fake_plugin.answer == FA_TWICE)
		fake_plugin.second = reply(r);
}

static int32_t attr_reply(fring_req *r)
{
	struct fring_attr a = { .ino = fake_plugin.nodeid, .mode = 0100644,
				.nlink = 1, .size = 4096 };

	return host()->reply_attr(r, &a, 0);
}

static void p_getattr(void *inst, fring_req *r, const struct fring_getattr_args *a)
{
	fake_plugin.nodeid = a->nodeid;
	answer(r, attr_reply);
}

static int32_t read_reply(fring_req *r)
{
	if (fake_plugin.answer == FA_FD) {
		fake_plugin.held = r;
		return host()->req_read_fd(r, fake_plugin.fd, 0, fake_plugin.len, 0);
	}
	return host()->reply_data(r, fake_data, fake_plugin.len);
}

static void p_read(void *inst, fring_req *r, const struct fring_read_args *a)
{
	fake_plugin.nodeid = a->nodeid;
	fake_plugin.len = a->len;
	answer(r, read_reply);
}

static int32_t write_reply(fring_req *r)
{
	if (fake_plugin.answer == FA_FD) {
		fake_plugin.held = r;
		return host()->req_write_fd(r, fake_plugin.fd, 0, 0);
	}
	return host()->reply_write(r, fake_plugin.len);
}

static void p_write(void *inst, fring_req *r, const struct fring_write_args *a)
{
	fake_plugin.nodeid = a->nodeid;
	fake_plugin.len = a->len;
	memset(fake_plugin.data, 0, sizeof(fake_plugin.data));
	if (a->data)
		memcpy(fake_plugin.data, a->data,
		       a->len < sizeof(fake_plugin.data) ? a->len
							 : sizeof(fake_plugin.data));
	answer(r, write_reply);
}

static int32_t ok_reply(fring_req *r)
{
	return host()->reply_err(r, 0);
}

static void p_flush(void *inst, fring_req *r, const struct fring_release_args *a)
{
	fake_plugin.nodeid = a->nodeid;
	answer(r, ok_reply);
}

static void p_forget(void *inst, const struct fring_forget_one *items,
		     uint32_t count)
{
	fake_plugin.forgets += count;
}

const struct fring_fs_ops fake_plugin_ops = {
	.size = sizeof(struct fring_fs_ops),
	.getattr = p_getattr,
	.read = p_read,
	.write = p_write,
	.flush = p_flush,
	.forget = p_forget,
};

/* ---- the queue ---- */

static const struct fring_plugin desc = {
	.size = sizeof(struct fring_plugin), .magic = FRING_PLUGIN_MAGIC,
	.abi_major = FRING_ABI_MAJOR, .abi_minor = FRING_ABI_MINOR,
	.thread_model = FRING_THREAD_PARALLEL, .name = "fakering",
};

int fake_queue_init(struct fake_queue *fq, const struct fake_queue_cfg *cfg,
		    const struct fring_fs_ops *ops)
{
	struct fring_uring *u = &fq->u;
	struct uring_thread *t = &fq->t;
	struct uring_queue *q = &fq->q;
	int ret;

	memset(fq, 0, sizeof(*fq));
	cr_assert_eq(fring_dispatch_init(&fq->dx, &desc, ops, "/fake-ring"), 0);
	fq->dx.conn = (struct fring_proto_conn){ .minor = FRING_PROTO_MINOR,
		.max_write = FAKE_PAYLOAD_SZ };
	u->sv = (struct fring_serve){ .rq = &fq->dx.rq,
				     .arrived = fring_dispatch_arrived };
	u->fuse_fd = -1;
	u->mountpoint = "/fake-ring";
	u->nr_qids = 1;
	u->nr_threads = 1;
	u->depth = cfg->depth;
	u->payload_sz = FAKE_PAYLOAD_SZ;
	u->pool_bufs = cfg->pool_bufs;
	u->pool_registered = cfg->registered;
	u->zc = cfg->zc;
	u->queues = q;
	u->threads = t;
	u->stop_fd = -1;
	u->shm_fd = -1;
	t->u = u;
	t->queues = q;
	t->nq = 1;
	t->nents = cfg->depth;
	t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	cr_assert_geq(t->wake_fd, 0);
	for (unsigned i = 0; i < URING_MEMFD_SLOTS; i++)
		t->memfd[i].fd = -1;
	uring_mpsc_init(&t->mpsc);
	fakering_init(&t->ring, cfg->depth + URING_SQ_EXTRA);
	t->ring_ok = 1;
	q->node = -1;
	ret = u->pool_bufs
		      ? uring_pool_alloc(q, u->depth, u->payload_sz,
					 u->pool_bufs, 0, NULL)
		      : uring_region_alloc(q, u->depth, u->payload_sz, 0, NULL);
	cr_assert_eq(ret, 0, "allocating the queue's buffers: %d", ret);
	uring_zc_slots(t, q->nbufs);
	for (uint32_t j = 0; j < q->depth; j++)
		q->ents[j].th = t;
	/* The test thread is the queue thread. */
	uring_self = t;
	fring_req_thread = t;
	if (u->pool_bufs)
		return uring_pool_add(t);
	for (uint32_t j = 0; j < q->depth; j++) {
		atomic_store(&q->ents[j].state, ENT_KERNEL);
		cr_assert_eq(uring_prep_register(t, &q->ents[j]), 0);
	}
	t->live = t->nents;
	return 0;
}

void fake_queue_free(struct fake_queue *fq)
{
	if (!fq->u.sv.rq)
		return; /* init failed before the queue existed */
	uring_self = NULL;
	fring_req_thread = NULL;
	uring_region_free(&fq->q);
	fakering_free(&fq->t.ring);
	close(fq->t.wake_fd);
	fring_dispatch_destroy(&fq->dx);
}

struct uring_ent *fakering_arrive(struct fake_queue *fq, uint32_t i,
				  const struct fake_req *r)
{
	struct uring_ent *e = &fq->q.ents[i];
	struct fuse_uring_req_header *h = e->hdr;
	struct fuse_in_header in = {
		.len = (uint32_t)(sizeof(in) + r->arglen + r->payload_sz),
		.opcode = r->opcode, .unique = r->unique, .nodeid = r->nodeid,
		.uid = 0, .gid = 0, .pid = 4242,
	};

	cr_assert_lt(i, fq->q.depth);
	cr_assert_leq(r->arglen, sizeof(h->op_in));
	memset(h, 0, sizeof(*h));
	memcpy(h->in_out, &in, sizeof(in));
	if (r->arglen)
		memcpy(h->op_in, r->arg, r->arglen);
	h->ring_ent_in_out.flags = r->flags;
	h->ring_ent_in_out.commit_id = r->commit_id;
	h->ring_ent_in_out.offset = r->offset;
	h->ring_ent_in_out.payload_sz = r->payload_sz;
	fakering_complete(fq, e, UD_TAG_CMD, 0);
	return e;
}

void fakering_complete(struct fake_queue *fq, struct uring_ent *e,
		       unsigned tag, int32_t res)
{
	struct io_uring_cqe cqe = {
		.user_data = (uint64_t)(uintptr_t)e | tag, .res = res };

	uring_handle_cqe(&fq->t, &cqe);
}

struct fuse_out_header fake_out_header(const struct uring_ent *e)
{
	struct fuse_out_header oh;

	memcpy(&oh, e->hdr->in_out, sizeof(oh));
	return oh;
}
