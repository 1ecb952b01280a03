// SPDX-License-Identifier: MIT
/* raw_takeover: an io_uring server generation: entry memory at a fixed address
 * in a memfd, REGISTER, serving, holding and adopting requests. */
#include "raw.h"

/* ---- an io_uring server generation ---- */

/* Slot s: header at BASE + s * SLOT_SZ, payload a page later. Generation
 * g owns slots [g * nq * DEPTH, (g + 1) * nq * DEPTH), qid = index / DEPTH. */
struct fuse_uring_req_header *hdr_of(unsigned s)
{
	return (void *)((char *)BASE + (size_t)s * SLOT_SZ);
}

static char *pl_of(unsigned s)
{
	return (char *)BASE + (size_t)s * SLOT_SZ + HDR_SZ;
}

uint16_t qid_of(unsigned s)
{
	return (uint16_t)((s % (S.nq * DEPTH)) / DEPTH);
}

int pool_mode;

static char *pool_of(uint16_t qid)
{
	return (char *)BASE + SLOTS_LEN + (size_t)qid * POOL_LEN;
}

static char *payload_of(unsigned s)
{
	if (!pool_mode)
		return pl_of(s);
	return pool_of(qid_of(s)) + hdr_of(s)->ring_ent_in_out.offset;
}

static volatile sig_atomic_t drain_now, adopt_now;

struct raw_e6 E6;
static void on_usr1(int s)
{
	(void)s;
	drain_now = 1;
}
static void on_usr2(int s)
{
	(void)s;
	adopt_now = 1;
}

int map_entries(void)
{
	size_t len = SLOTS_LEN + S.nq * POOL_LEN;
	void *p = mmap(BASE, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, S.memfd, 0);

	return p == BASE ? 0 : -EADDRINUSE;
}

struct io_uring_sqe *cmd_sqe(struct gen *G, uint32_t op, uint16_t qid,
			     uint64_t cid, uint64_t ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&G->ring);
	struct fuse_uring_cmd_req *c;

	if (!sqe) {
		io_uring_submit(&G->ring);
		sqe = io_uring_get_sqe(&G->ring);
		if (!sqe)
			_exit(91);
	}
	memset((void *)sqe, 0, 128); /* SQE128: liburing does not clear slots */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = S.fd;
	sqe->cmd_op = op;
	sqe->user_data = ud;
	c = (void *)sqe->cmd;
	c->qid = qid;
	c->commit_id = cid;
	return sqe;
}

int ring_up(struct gen *G)
{
	struct io_uring_params p = { 0 };

	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE;
	p.cq_entries = 1024;
	return io_uring_queue_init_params(256, &G->ring, &p);
}

/* Queue a REGISTER for every entry of generation g on every queue. */
void register_sqes(struct gen *G)
{
	unsigned first = G->g * S.nq * DEPTH, n = S.nq * DEPTH;

	for (unsigned s = first; s < first + n; s++) {
		struct io_uring_sqe *sqe;

		G->iov[s][0] = (struct iovec){
			hdr_of(s), sizeof(struct fuse_uring_req_header)
		};
		/* a queue with a pool takes no payload buffer at REGISTER */
		G->iov[s][1] = pool_mode ? (struct iovec){ NULL, 0 }
					 : (struct iovec){ pl_of(s), PAYLOAD };
		sqe = cmd_sqe(G, FUSE_IO_URING_CMD_REGISTER, qid_of(s), 0, s);
		sqe->addr = (uint64_t)(uintptr_t)G->iov[s];
		sqe->len = 2;
	}
	G->owned += (int)n;
}

/* REGISTER every entry of generation g on every queue; the answer of a
 * good REGISTER is the first request, so errors are what comes back at
 * once. Returns 0 or the first error. */
int register_all(struct gen *G)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { 0, 200000000 };
	int err = 0;

	register_sqes(G);
	io_uring_submit(&G->ring);
	while (!io_uring_wait_cqe_timeout(&G->ring, &cqe, &ts)) {
		if (cqe->res < 0 && !err)
			err = cqe->res;
		if (cqe->res < 0)
			io_uring_cqe_seen(&G->ring, cqe);
		else
			break; /* a request already: leave it to serve() */
	}
	return err;
}

/* Answer the request in slot s and send COMMIT_AND_FETCH from this ring. */
void commit_slot(struct gen *G, unsigned s, int adopted)
{
	struct fuse_uring_req_header *h = hdr_of(s);
	struct fuse_in_header *in = (void *)h->in_out;
	struct fuse_out_header *oh = (void *)h->in_out;
	uint64_t cid = h->ring_ent_in_out.commit_id;
	struct msg m = { .type = adopted ? M_ADOPTED : M_SEEN,
			 .gen = G->g,
			 .slot = (int)s,
			 .cid = cid,
			 .qid = qid_of(s) };
	char *pl = payload_of(s);
	uint32_t olen = 0;
	int r;

	m.unique = in->unique;

	name_of(m.name, in, pl);
	if (G->hold && is_hold(in, pl)) {
		m.type = M_HELD;
		m.val = (int)h->ring_ent_in_out.offset;
		send_msg(S.rep[1], m);
		for (;;)
			pause();
	}
	if (adopted ||
	    (strncmp(m.name, "loop", 4) && strncmp(m.name, "nofill", 6)))
		send_msg(S.rep[1], m);
	r = answer(in, h->op_in, pl, pl, &olen, adopted ? G->adopt_size : 4096);
	if (r > 0) /* not expected over the ring: answer ENOSYS */
		r = -ENOSYS;
	oh->len = sizeof(*oh) + (r ? 0 : olen);
	oh->error = r;
	oh->unique = m.unique;
	h->ring_ent_in_out.payload_sz = r ? 0 : olen;
	/* Marks the slot answered for a later adopter; the kernel does not
	 * read commit_id from the header, only from the SQE. */
	h->ring_ent_in_out.commit_id = 0;
	cmd_sqe(G, FUSE_IO_URING_CMD_COMMIT_AND_FETCH, qid_of(s), cid, s);
}

/* Commit every request an earlier generation left unanswered in the
 * shared entry memory (a nonzero commit_id). */
static int adopt_leftovers(struct gen *G)
{
	unsigned end = G->g * S.nq * DEPTH;
	int n = 0;

	for (unsigned s = 0; s < end; s++)
		if (hdr_of(s)->ring_ent_in_out.commit_id) {
			commit_slot(G, s, 1);
			n++;
		}
	io_uring_submit(&G->ring);
	G->owned += n;
	return n;
}

void serve_ring(struct gen *G)
{
	struct __kernel_timespec ts = { 0, 20000000 };
	int held = 0, reported = 0;

	for (;;) {
		struct io_uring_cqe *cqe;
		int got = 0;

		if (adopt_now) {
			adopt_now = 0;
			if (E6.on && E6.reg)
				register_sqes(
					G); /* submitted before the commits */
			adopt_leftovers(G);
		}
		io_uring_submit(&G->ring);
		if (io_uring_wait_cqe_timeout(&G->ring, &cqe, &ts) == 0) {
			do {
				unsigned s = (unsigned)cqe->user_data;
				int res = cqe->res;

				io_uring_cqe_seen(&G->ring, cqe);
				got++;
				if (res < 0) {
					struct msg m = { .type = M_CQE_ERR,
							 .gen = G->g,
							 .val = res,
							 .slot = (int)s };

					send_msg(S.rep[1], m);
					G->owned--; /* that entry has no SQE here now */
					continue;
				}
				if (E6.on && drain_now) {
					held++; /* it stays in the shared entry memory */
					continue;
				}
				commit_slot(G, s, 0);
			} while (io_uring_peek_cqe(&G->ring, &cqe) == 0);
		}
		if (E6.on && drain_now) {
			/* No commit in hold mode, so once every entry holds a
			 * request none is available: nothing for the kernel to
			 * hand to this ring while it goes. */
			if ((E6.no_fill || held >= G->owned) && !reported) {
				struct msg m = { .type = M_ALLHELD,
						 .gen = G->g,
						 .val = held };

				reported = 1;
				if (E6.close_ring)
					io_uring_queue_exit(&G->ring);
				send_msg(S.rep[1], m);
				_exit(0);
			}
			continue;
		}
		if (drain_now) {
			/* Everything seen is answered; the commits re-arm the
			 * entries (there is no commit without fetch), so a
			 * request may land in them before the ring goes. */
			io_uring_submit(&G->ring);
			_exit(0);
		}
		(void)got;
	}
}

/* In a child: become generation g by adopting the entries (maps them and
 * sets a ring up, no INIT, no REGISTER), reported to the supervisor;
 * exits 20 if that fails. */
void adopt_child(struct gen *G, int g)
{
	int err;

	G->g = g;
	G->adopt_size = ADOPT_SIZE;
	err = map_entries();
	if (!err)
		err = ring_up(G);
	report_init(g, err);
	if (err)
		_exit(20);
}

/* Start generation 0 (INIT, REGISTER, holding) and wait for it to be
 * ready: its READY message, or NULL with the result reported as name's
 * SETUP-FAILED and everything torn down. */
struct msg *start_first(const char *name, pid_t *a)
{
	struct msg *m;

	*a = start_gen(0, 1, 1, 1);
	m = wait_for(10000, M_READY, 0, NULL);
	if (!m || m->val) {
		teardown();
		result(name, "SETUP-FAILED", "A: INIT/REGISTER %s",
		       m ? strerror(-m->val) : "timed out");
		return NULL;
	}
	return m;
}

/* A server generation as a child: INIT (generation 0 only), ring, REGISTER
 * (unless it only adopts), serve. */
pid_t start_gen(int g, int init, int hold, int reg)
{
	pid_t p = spawn();

	if (p == 0) {
		static struct gen G;
		int err = 0;

		signal(SIGUSR1, on_usr1);
		signal(SIGUSR2, on_usr2);
		G.g = g;
		G.hold = hold;
		G.adopt_size = ADOPT_SIZE;
		if (init)
			err = do_init(S.fd, 1);
		if (!err)
			err = map_entries();
		if (!err)
			err = ring_up(&G);
		for (unsigned i = 0; !err && pool_mode && init && i < S.nq;
		     i++) {
			err = add_cmd(&G, FUSE_IO_URING_CMD_ADD_QUEUE,
				      (uint16_t)i);
			if (!err)
				err = add_cmd(&G, FUSE_IO_URING_CMD_ADD_BUFPOOL,
					      (uint16_t)i);
		}
		if (!err && reg)
			err = register_all(&G);
		report_init(g, err);
		if (err)
			_exit(20);
		serve_ring(&G);
	}
	return p;
}

/* ADD_QUEUE or ADD_BUFPOOL for qid from G's ring; the CQE's result (or
 * -ETIMEDOUT). Nothing else is in flight on the ring when it is called. */
int add_cmd(struct gen *G, uint32_t op, uint16_t qid)
{
	struct __kernel_timespec ts = { 1, 0 };
	struct io_uring_cqe *cqe;
	int res = -ETIMEDOUT;

	for (int tries = 0; tries < 100; tries++) {
		struct io_uring_sqe *sqe = cmd_sqe(G, op, qid, 0, 0xadd);
		struct fuse_uring_cmd_req *c = (void *)sqe->cmd;

		if (op == FUSE_IO_URING_CMD_ADD_BUFPOOL) {
			c->bufpool.uaddr = (uint64_t)(uintptr_t)pool_of(qid);
			c->bufpool.len = (uint32_t)POOL_LEN;
		}
		io_uring_submit(&G->ring);
		if (io_uring_wait_cqe_timeout(&G->ring, &cqe, &ts))
			return -ETIMEDOUT;
		res = cqe->res;
		io_uring_cqe_seen(&G->ring, cqe);
		if (res != -EAGAIN) /* INIT not processed yet */
			break;
		usleep(10000);
	}
	return res;
}

const char *errname(int res)
{
	return res ? strerrorname_np(-res) : "0";
}
