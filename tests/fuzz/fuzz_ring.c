// SPDX-License-Identifier: MIT
/*
 * fuzz_ring: the io_uring request arrival. Each input is a queue set-up
 * and a series of ring entries as the kernel would hand them over: the
 * entry's header buffer (fuse_in_header, the op header, and
 * fuse_uring_ent_in_out with flags, commit_id, payload_sz and the pool
 * offset) and the bytes the kernel put into the payload. Each goes in as a
 * completed REGISTER / COMMIT_AND_FETCH through uring_handle_cqe, so the
 * real code runs: cmd_done, request_arrived (commit id, zero-copy flag,
 * uring_pool_locate, the payload size clamp), the request set-up and
 * dispatch, the plugin's reply into the entry (ent_send) and its release.
 * No ring: the queue thread is marked gone, so every commit and backing
 * I/O the entry hands over finishes at once (finish_dead) instead of
 * becoming an SQE, and the harness puts the entry back in the kernel.
 *
 * Checked after each arrival and at the end (FUZZ_ASSERT aborts, so do the
 * sanitizers): commit_id 0 or a pool offset outside the pool ends the
 * entry (GONE) and aborts the connection; an accepted request's reply
 * header names its unique, its length is the out header plus payload_sz,
 * which fits the entry's buffer (0 without one, and with an error); a
 * pool buffer is held exactly while its request is in userspace and
 * counted once; no reference (xrefs) is left behind; the dispatcher has
 * nothing outstanding once every held request was answered.
 *
 * Input framing (gen_corpus.py writes the same):
 *   byte 0   queue flags, R_* below
 *   byte 1   pool buffers (low 3 bits + 1), buffer size (bits 3-4:
 *            8, 16, 64 or 128 KiB)
 *   then records, each:
 *     byte 0      entry index (low 3 bits), plugin behaviour (bits 3-5,
 *                 P_* below), the CQE's result (bits 6-7: 0, 0,
 *                 -ENOTCONN, -ECANCELED)
 *     bytes 1-2   payload bytes that follow (LE)
 *     288 bytes   struct fuse_uring_req_header
 *     payload     copied where the header says the kernel put it (the
 *                 pool buffer at offset, if inside the pool; else the
 *                 entry's own buffer), truncated to that buffer
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/dispatch.h"
#include "runtime/host.h"
#include "runtime/init.h"
#include "transport/uring_internal.h"

#define R_POOL 0x01      /* the queue has a pool (7.3) */
#define R_REFUSED 0x02   /* ...which the kernel refused: per-entry buffers */
#define R_ZC 0x04        /* zero-copy queue */
#define R_PARALLEL 0x08  /* plugin thread model PARALLEL */
#define R_CLOSED 0x10    /* the rings stopped: data-path calls refused */
#define R_DEFAULTS 0x20  /* no op slots: host defaults for every op */

enum {
	P_REPLY,  /* the reply the op calls for (data of the READ's size) */
	P_ERR,    /* reply_err(-EIO) */
	P_HOLD,   /* held; answered (EIO) after the last record */
	P_FD,     /* req_read_fd / req_write_fd on /dev/zero, /dev/null */
	P_TWICE,  /* reply, then reply again */
	P_SHORT,  /* READ: fewer bytes than asked; others as P_REPLY */
	P_BIG,    /* READ: more bytes than the buffer holds; READDIR: many */
	P_LATE    /* reply, then reply again through the handle later */
};

#define DEPTH 8
#define HDR_SZ ((size_t)sizeof(struct fuse_uring_req_header))

#define FUZZ_TARGET "fuzz_ring"
#include "fuzz_assert.h"

static const struct fring_host_api *H;
static int zero_fd = -1, null_fd = -1;
static uint8_t behaviour; /* of the record being dispatched */
static fring_req *held[DEPTH], *stale[DEPTH];
static int nheld, nstale;
static char data_src[256 << 10];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the plugin ---- */

static int32_t reply_any(fring_req *r, uint32_t opcode_hint);

static void answer(fring_req *r, uint32_t op)
{
	switch (behaviour) {
	case P_ERR:
		H->reply_err(r, -EIO);
		return;
	case P_HOLD:
		if (nheld < DEPTH) {
			held[nheld++] = r;
			return;
		}
		break;
	case P_TWICE:
		reply_any(r, op);
		FUZZ_ASSERT(H->reply_err(r, -EIO) == -EALREADY, "second reply");
		return;
	case P_LATE:
		/* A stale handle, used once the entry holds another request. */
		if (nstale < DEPTH)
			stale[nstale++] = r;
		break;
	}
	reply_any(r, op);
}

static void p_getattr(void *inst, fring_req *r, const struct fring_getattr_args *a)
{
	answer(r, FUSE_GETATTR);
}

static void p_lookup(void *inst, fring_req *r, const struct fring_name_args *a)
{
	answer(r, FUSE_LOOKUP);
}

static uint32_t read_len;

static void p_read(void *inst, fring_req *r, const struct fring_read_args *a)
{
	read_len = a->len;
	if (behaviour == P_FD) {
		int32_t ret = H->req_read_fd(r, zero_fd, a->offset, a->len, 0);

		if (ret)
			H->reply_err(r, ret < 0 && ret > -512 ? ret : -EIO);
		return;
	}
	answer(r, FUSE_READ);
}

static void p_write(void *inst, fring_req *r, const struct fring_write_args *a)
{
	read_len = a->len;
	if (behaviour == P_FD) {
		int32_t ret = H->req_write_fd(r, null_fd, a->offset, 0);

		if (ret)
			H->reply_err(r, ret < 0 && ret > -512 ? ret : -EIO);
		return;
	}
	answer(r, FUSE_WRITE);
}

static void p_readdir(void *inst, fring_req *r, const struct fring_read_args *a)
{
	if (behaviour == P_REPLY || behaviour == P_BIG) {
		for (int i = 0; i < (behaviour == P_BIG ? 4096 : 3); i++)
			if (H->dir_add(r, "entry", 5, 2 + i, 0100000, i + 1) != 1)
				break;
		H->reply_dir(r);
		return;
	}
	answer(r, FUSE_READDIR);
}

static int32_t reply_any(fring_req *r, uint32_t op)
{
	struct fring_attr attr = { .ino = 2, .mode = 0100644, .nlink = 1 };
	struct fring_entry e = { .ino = 2, .attr = attr };
	uint32_t n = read_len;

	switch (op) {
	case FUSE_GETATTR:
		return H->reply_attr(r, &attr, 0);
	case FUSE_LOOKUP:
		return H->reply_entry(r, &e);
	case FUSE_READ:
		if (behaviour == P_SHORT)
			n /= 2;
		if (behaviour == P_BIG)
			n = sizeof(data_src);
		return H->reply_data(r, data_src, n < sizeof(data_src) ? n
							 : sizeof(data_src));
	case FUSE_WRITE:
		return H->reply_write(r, n);
	}
	return H->reply_err(r, -EIO);
}

static const struct fring_fs_ops ops = {
	.size = sizeof(struct fring_fs_ops),
	.lookup = p_lookup,
	.getattr = p_getattr,
	.read = p_read,
	.write = p_write,
	.readdir = p_readdir,
};
static const struct fring_fs_ops no_ops = { .size = sizeof(struct fring_fs_ops) };

static const struct fring_plugin desc = {
	.size = sizeof(struct fring_plugin), .magic = FRING_PLUGIN_MAGIC,
	.abi_major = FRING_ABI_MAJOR, .abi_minor = FRING_ABI_MINOR,
	.thread_model = FRING_THREAD_SERIALIZE, .name = "fuzz_ring",
	.ops = &ops,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	/* Protocol errors and plugin misuse are logged: expected here. */
	setenv("FRING_LOG", "error", 0);
	H = fring_host_table();
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	memset(data_src, 'd', sizeof(data_src));
	return 0;
}

/* ---- the queue, without a ring ---- */

struct rig {
	struct fring_dispatch dx;
	struct fring_uring u;
	struct uring_thread t;
	struct uring_queue q;
	uint32_t buf_sz;
	int pool;  /* pool mode, the kernel took ADD_BUFPOOL */
};

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p)
		abort();
	return p;
}

static void rig_init(struct rig *g, uint8_t flags, uint8_t geo)
{
	static const uint32_t sizes[4] = { 8192, 16384, 65536, 131072 };
	uint32_t nbufs = (geo & 7) + 1;

	g->buf_sz = sizes[(geo >> 3) & 3];
	if (fring_dispatch_init(&g->dx, &desc, flags & R_DEFAULTS ? &no_ops
								  : &ops, "/fuzz-ring"))
		abort();
	g->dx.serialize = !(flags & R_PARALLEL);
	g->dx.conn = (struct fring_proto_conn){ .minor = FRING_PROTO_MINOR,
		.max_write = g->buf_sz - 4096 };
	g->u.sv = (struct fring_serve){.rq = &g->dx.rq,
				       .arrived = fring_dispatch_arrived};
	g->u.depth = DEPTH;
	g->u.payload_sz = g->buf_sz;
	g->u.mountpoint = "/fuzz-ring";
	atomic_store(&g->u.closed, !!(flags & R_CLOSED));
	g->t.u = &g->u;
	g->t.queues = &g->q;
	g->t.nq = 1;
	g->t.nents = DEPTH;
	g->t.live = DEPTH;
	atomic_store(&g->t.gone, 1); /* hand-overs finish at once */
	g->q.depth = DEPTH;
	g->q.ents = aligned_alloc(64, DEPTH * sizeof(struct uring_ent));
	if (!g->q.ents)
		abort();
	memset(g->q.ents, 0, DEPTH * sizeof(struct uring_ent));
	g->pool = (flags & R_POOL) && !(flags & R_REFUSED);
	g->q.zc = g->pool && (flags & R_ZC);
	if (flags & R_POOL) {
		g->q.pool_sz = (size_t)nbufs * g->buf_sz;
		g->q.pool = xcalloc(1, g->q.pool_sz);
		g->q.pool_bufs = nbufs;
		g->q.pool_added = (uint8_t)g->pool;
		g->u.pool_bufs = nbufs;
	}
	for (uint32_t i = 0; i < DEPTH; i++) {
		struct uring_ent *e = &g->q.ents[i];

		e->th = &g->t;
		e->q = &g->q;
		e->qid = 0;
		e->hdr = xcalloc(1, HDR_SZ); /* exactly the header: ASan-bounded */
		if (!g->pool) {
			/* Per-entry buffers: each its own exact-size block (a
			 * refused pool's entries are carved from it). */
			e->payload = xcalloc(1, g->buf_sz);
			e->payload_cap = g->buf_sz;
		}
		fring_req_init(&e->req, &g->dx.rq, NULL, e, -1, 0);
		atomic_store(&e->state, ENT_KERNEL);
	}
}

static void rig_free(struct rig *g)
{
	for (uint32_t i = 0; i < DEPTH; i++) {
		free(g->q.ents[i].hdr);
		if (!g->pool)
			free(g->q.ents[i].payload);
	}
	free(g->q.ents);
	free(g->q.pool);
	fring_dispatch_destroy(&g->dx);
}

/* Where the kernel put the payload: the pool buffer at offset, if it is
 * one, else the entry's own buffer; NULL if neither. */
static char *payload_dst(struct rig *g, struct uring_ent *e, size_t *cap)
{
	uint32_t off = e->hdr->ring_ent_in_out.offset;

	*cap = g->buf_sz;
	if (!g->pool)
		return e->payload;
	if (off % g->buf_sz || off / g->buf_sz >= g->q.pool_bufs)
		return NULL;
	return g->q.pool + off;
}

/* A finished entry: its reply (or the runtime's answer for it) is in the
 * header; put it back in the kernel. */
static void check_committed(struct rig *g, struct uring_ent *e, uint64_t unique,
			    int dropped_op)
{
	struct fuse_out_header oh;
	uint32_t psz = e->hdr->ring_ent_in_out.payload_sz;

	memcpy(&oh, e->hdr->in_out, sizeof(oh));
	FUZZ_ASSERT(oh.unique == unique, "reply unique %llu, request %llu",
		    (unsigned long long)oh.unique, (unsigned long long)unique);
	FUZZ_ASSERT(oh.len == sizeof(oh) + psz, "len %u, payload_sz %u", oh.len, psz);
	FUZZ_ASSERT(oh.error <= 0 && oh.error > -512, "error %d", oh.error);
	FUZZ_ASSERT(!oh.error || !psz, "error %d with %u bytes",
		    oh.error, psz);
	FUZZ_ASSERT(psz <= e->payload_cap || (e->zc && psz <= UINT32_MAX),
		    "payload_sz %u > cap %u", psz, e->payload_cap);
	FUZZ_ASSERT(!dropped_op || (!oh.error && !psz), "no-reply op answered");
	FUZZ_ASSERT(!e->pool_held, "pool buffer kept past the commit");
	FUZZ_ASSERT(atomic_load(&e->req.xrefs) == 0, "xrefs %d",
		    atomic_load(&e->req.xrefs));
	atomic_store(&e->state, ENT_KERNEL);
}

static int no_reply_op(uint32_t op)
{
	return op == FUSE_FORGET || op == FUSE_BATCH_FORGET ||
	       op == FUSE_INTERRUPT || op == FUSE_NOTIFY_REPLY;
}

static uint32_t busy_expected(struct rig *g)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < DEPTH; i++)
		n += g->q.ents[i].pool_held;
	return n;
}

static void arrive(struct rig *g, uint8_t sel, const uint8_t *hdr,
		   const uint8_t *payload, size_t plen)
{
	static const int results[4] = { 0, 0, -ENOTCONN, -ECANCELED };
	struct uring_ent *e = &g->q.ents[sel & 7];
	struct io_uring_cqe cqe = { .user_data = (uint64_t)(uintptr_t)e };
	struct fuse_in_header in;
	uint64_t commit_id;
	int was_fatal = atomic_load(&g->u.fatal), state;
	uint64_t reqs;
	size_t cap;
	char *dst;

	if (atomic_load(&e->state) != ENT_KERNEL)
		return; /* held in userspace, or gone: the kernel sends nothing */
	memcpy(e->hdr, hdr, HDR_SZ);
	memcpy(&in, e->hdr->in_out, sizeof(in));
	commit_id = e->hdr->ring_ent_in_out.commit_id;
	dst = payload_dst(g, e, &cap);
	if (dst && plen)
		memcpy(dst, payload, plen < cap ? plen : cap);
	behaviour = sel >> 3 & 7;
	cqe.res = results[sel >> 6];
	reqs = atomic_load(&g->q.ctr.requests);
	uring_handle_cqe(&g->t, &cqe);
	state = atomic_load(&e->state);

	if (cqe.res) {
		FUZZ_ASSERT(state == ENT_GONE, "teardown result, state %d", state);
		return;
	}
	if (!commit_id) {
		FUZZ_ASSERT(state == ENT_GONE && atomic_load(&g->u.fatal) &&
			    atomic_load(&g->q.ctr.requests) == reqs,
			    "commit_id 0 accepted (state %d)", state);
		return;
	}
	if (atomic_load(&g->q.ctr.requests) == reqs) {
		/* Refused at the pool: an offset no buffer starts at. */
		FUZZ_ASSERT(state == ENT_GONE && atomic_load(&g->u.fatal),
			    "refused, state %d", state);
		FUZZ_ASSERT(g->pool && !dst, "entry refused with a valid offset");
		return;
	}
	(void)was_fatal;
	FUZZ_ASSERT(e->commit_id == commit_id, "commit id %llu kept, %llu sent",
		    (unsigned long long)e->commit_id,
		    (unsigned long long)commit_id);
	FUZZ_ASSERT(!e->payload || !g->pool ||
		    (e->payload >= g->q.pool &&
		     e->payload + e->payload_cap <= g->q.pool + g->q.pool_sz),
		    "payload outside the pool");
	FUZZ_ASSERT(g->q.pool_busy == busy_expected(g), "pool_busy %u, held %u",
		    g->q.pool_busy, busy_expected(g));
	if (state == ENT_USER || state == ENT_IO)
		return; /* held by the plugin */
	FUZZ_ASSERT(state == ENT_GONE, "state %d after the request", state);
	check_committed(g, e, in.unique, no_reply_op(in.opcode));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rig *g;
	size_t pos = 2;

	if (size < 2)
		return 0;
	g = xcalloc(1, sizeof(*g));
	rig_init(g, data[0], data[1]);
	nheld = 0;
	while (pos + 3 + HDR_SZ <= size) {
		uint8_t sel = data[pos];
		size_t plen = (size_t)data[pos + 1] | (size_t)data[pos + 2] << 8;
		const uint8_t *hdr = data + pos + 3;

		pos += 3 + HDR_SZ;
		if (plen > size - pos)
			plen = size - pos;
		arrive(g, sel, hdr, data + pos, plen);
		pos += plen;
	}
	/* The held requests, answered now (from "another thread": the
	 * harness is no queue thread). */
	for (int i = 0; i < nheld; i++) {
		struct fring_request *r = fring_req_ptr(held[i]);
		struct uring_ent *e = uring_ent_of(r);
		uint64_t unique = r->unique;

		H->reply_err(held[i], -EIO);
		FUZZ_ASSERT(atomic_load(&e->state) == ENT_GONE, "held entry in "
			    "state %d after its reply", atomic_load(&e->state));
		check_committed(g, e, unique, 0);
	}
	/* Stale handles: -EALREADY, and the entry they name is left alone. */
	for (int i = 0; i < nstale; i++) {
		struct uring_ent *e = uring_ent_of(fring_req_ptr(stale[i]));
		int st = atomic_load(&e->state);

		FUZZ_ASSERT(H->reply_err(stale[i], -EIO) == -EALREADY,
			    "a reply through a stale handle was taken");
		FUZZ_ASSERT(atomic_load(&e->state) == st, "stale reply moved "
			    "the entry from %d to %d", st, atomic_load(&e->state));
	}
	nstale = 0;
	FUZZ_ASSERT(g->q.pool_busy == 0, "pool_busy %u at the end", g->q.pool_busy);
	FUZZ_ASSERT(fring_dispatch_outstanding(&g->dx) == 0, "outstanding %ld",
		    fring_dispatch_outstanding(&g->dx));
	rig_free(g);
	free(g);
	return 0;
}
