// SPDX-License-Identifier: MIT
/* raw_takeover: E5 (buffer pools, 7.3): a second server on queues that have one. */
#include "raw.h"

/* ---- E5: buffer pools (7.3): a second server on queues that have one ---- */

/* A: ADD_QUEUE and ADD_BUFPOOL on every queue, REGISTER (headers only),
 * holds hold1 and is killed. B: the same memfd at the same address, sends
 * ADD_QUEUE, ADD_BUFPOOL and REGISTER on the existing queues, then commits
 * the held request (its reply at pool + offset) and serves a new one. */
void e5(void)
{
	const char *n = "E5-bufpool";
	struct client c0, c1, c2;
	struct msg *m, held;
	pid_t a, b;
	char s[64];

	if (setup(1))
		return result(n, "SETUP-FAILED", "see above");
	pool_mode = 1;
	a = spawn();
	if (a == 0) {
		static struct gen G;
		int err = do_init(S.fd, 1);
		int q = 0, p = 0;

		G.g = 0;
		G.hold = 1;
		if (!err && !(S.offered & FUSE_HAS_IO_URING_BUFPOOL))
			err = -EOPNOTSUPP;
		if (!err)
			err = map_entries();
		if (!err)
			err = ring_up(&G);
		for (unsigned i = 0; !err && i < S.nq; i++) {
			q = add_cmd(&G, FUSE_IO_URING_CMD_ADD_QUEUE,
				    (uint16_t)i);
			p = q ? q
			      : add_cmd(&G, FUSE_IO_URING_CMD_ADD_BUFPOOL,
					(uint16_t)i);
			err = q ? q : p;
		}
		if (!err)
			err = register_all(&G);
		report_init(0, err);
		if (err)
			_exit(20);
		serve_ring(&G);
	}
	m = wait_for(10000, M_READY, 0, NULL);
	if (m && !(m->unique & FUSE_HAS_IO_URING_BUFPOOL)) {
		pool_mode = 0;
		teardown();
		return result("E5-bufpool", "NO-BUFPOOL",
			      "FUSE 7.%u offers no buffer pools", S.minor);
	}
	if (!m || m->val) {
		pool_mode = 0;
		return teardown(),
		       result(n, "SETUP-FAILED",
			      "A: ADD_QUEUE/ADD_BUFPOOL/REGISTER %s",
			      m ? strerror(-m->val) : "timed out");
	}
	c0 = client_start("warm");
	client_wait(&c0, 5000);
	note("%s: A added a queue and a pool (%u x %u bytes) on each of %u queues and registered "
	     "%u header-only entries each; warm-up client: %s",
	     n, DEPTH, PAYLOAD, S.nq, DEPTH, cstate(&c0, s, sizeof(s)));
	c1 = client_start("hold1");
	m = wait_for(3000, M_HELD, 0, "hold1");
	if (!m) {
		pool_mode = 0;
		return teardown(),
		       result(n, "SETUP-FAILED", "A never got hold1");
	}
	held = *m;
	note("%s: A holds LOOKUP hold1 in slot %d (qid %u, its name in the pool at offset %d); "
	     "SIGKILL A",
	     n, held.slot, held.qid, held.val);
	stop_pid(a);
	b = spawn();
	if (b == 0) {
		static struct gen G;

		adopt_child(&G, 1);
		struct msg r = { .type = M_COMMIT, .gen = 1 };

		r.val = add_cmd(&G, FUSE_IO_URING_CMD_ADD_QUEUE, held.qid);
		r.slot = add_cmd(&G, FUSE_IO_URING_CMD_ADD_BUFPOOL, held.qid);
		r.cid = (uint64_t)(uint32_t)register_all(&G);
		send_msg(S.rep[1], r);
		commit_slot(&G, (unsigned)held.slot, 1);
		io_uring_submit(&G.ring);
		serve_ring(&G);
	}
	m = wait_for(10000, M_COMMIT, 1, NULL);
	if (!m) {
		pool_mode = 0;
		return teardown(),
		       result(n, "SETUP-FAILED", "B never reported");
	}
	result("E5a-bufpool-add-queue-again", errname(m->val),
	       "B's ADD_QUEUE on the existing qid %u", held.qid);
	result("E5b-bufpool-add-pool-again", errname(m->slot),
	       "B's ADD_BUFPOOL (its own address) on qid %u, which has A's pool",
	       held.qid);
	result("E5c-bufpool-register-again",
	       (int)m->cid ? "REFUSED" : "ACCEPTED",
	       "B REGISTERed %u header-only entries on each of the %u queues that have A's pool: %s",
	       DEPTH, S.nq, (int)m->cid ? strerror(-(int)m->cid) : "no error");
	client_wait(&c1, 3000);
	result("E5d-bufpool-adopt-commit",
	       c1.done && !c1.err && c1.size == ADOPT_SIZE ? "ANSWERED-BY-B"
	       : c1.done                                   ? "CLIENT-ERROR"
							   : "CLIENT-WAITS",
	       "the LOOKUP A held, answered by B at pool + offset and committed from B's ring: "
	       "client %s (B answers size %u)",
	       cstate(&c1, s, sizeof(s)), ADOPT_SIZE);
	c2 = client_start("after");
	client_wait(&c2, 3000);
	m = wait_for(1000, M_SEEN, 1, "after");
	result("E5e-bufpool-serves-after",
	       m && c2.done && !c2.err ? "SERVES-THROUGH-B"
	       : c2.done               ? "OTHER"
				       : "CLIENT-WAITS",
	       "a new client: %s; B read its name from the pool at the offset the kernel gave: %s",
	       cstate(&c2, s, sizeof(s)), m ? "yes" : "no");
	pool_mode = 0;
	teardown();
}
