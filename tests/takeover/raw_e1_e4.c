// SPDX-License-Identifier: MIT
/* raw_takeover: E1 (/dev/fuse), E2/E3 (a request held by a killed io_uring
 * server, adopted or not), E4 (handovers with little or nothing left). */
#include "raw.h"

/* ---- E1: /dev/fuse ---- */

static pid_t start_dev_server(int gen, int init, int hold, int clone,
			      int resend)
{
	pid_t p = spawn();

	if (p == 0) {
		int fd = S.fd, err = 0;

		if (clone) {
			uint32_t src = (uint32_t)S.fd;

			fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
			if (fd < 0 || ioctl(fd, FUSE_DEV_IOC_CLONE, &src))
				err = -errno;
		}
		if (!err && init)
			err = do_init(fd, 0);
		report_init(gen, err);
		if (err)
			_exit(20);
		if (resend) {
			struct msg m = { .type = M_NOTIFY,
					 .gen = gen,
					 .val = notify_resend(fd) };

			send_msg(S.rep[1], m);
		}
		serve_dev(fd, gen, hold);
	}
	return p;
}

void e1(int clone)
{
	const char *name = clone ? "E1b-devfuse-clone-dies"
				 : "E1a-devfuse-resend";
	struct client c0, c1, c2;
	struct msg *m;
	pid_t a, b;
	char s1[64], s2[64];
	int has_resend;

	if (setup(0))
		return result(name, "SETUP-FAILED", "see above");
	a = start_dev_server(0, 1, 1, clone, 0);
	m = wait_for(5000, M_READY, 0, NULL);
	if (!m || m->val)
		return teardown(), result(name, "SETUP-FAILED", "INIT: %d",
					  m ? m->val : -ETIMEDOUT);
	has_resend = !!(m->unique & FUSE_HAS_RESEND);
	note("%s: kernel FUSE 7.%llu, INIT offers 0x%llx (HAS_RESEND %d, OVER_IO_URING %d, BUFPOOL %d)",
	     name, (unsigned long long)m->cid, (unsigned long long)m->unique,
	     has_resend, !!(m->unique & FUSE_OVER_IO_URING),
	     !!(m->unique & FUSE_HAS_IO_URING_BUFPOOL));
	c0 = client_start("warm");
	client_wait(&c0, 3000);
	note("%s: warm-up client: %s", name, cstate(&c0, s1, sizeof(s1)));
	c1 = client_start("hold1");
	if (!wait_for(3000, M_HELD, 0, "hold1"))
		return teardown(),
		       result(name, "SETUP-FAILED", "server A never got hold1");
	stop_pid(a);
	client_wait(&c1, 2000);
	note("%s: server A (%s) SIGKILLed holding LOOKUP hold1; 2 s later the client: %s",
	     name,
	     clone ? "reading its own FUSE_DEV_IOC_CLONE fd"
		   : "the supervisor's file",
	     cstate(&c1, s1, sizeof(s1)));
	b = start_dev_server(1, 0, 0, 0, has_resend);
	(void)b;
	wait_for(3000, M_READY, 1, NULL);
	if (has_resend) {
		m = wait_for(3000, M_NOTIFY, 1, NULL);
		note("%s: server B wrote FUSE_NOTIFY_RESEND: %s", name,
		     !m       ? "no report"
		     : m->val ? strerror(-m->val)
			      : "accepted");
	}
	{
		struct want w = { M_SEEN, 1, "hold1", 1, -1 };

		m = pump(3000, match, &w);
	}
	client_wait(&c1, 3000);
	c2 = client_start("after");
	client_wait(&c2, 3000);
	note("%s: new client through B: %s", name, cstate(&c2, s2, sizeof(s2)));
	if (!clone) {
		if (!has_resend)
			result(name, "NO-RESEND",
			       "kernel does not offer FUSE_HAS_RESEND; held client %s",
			       s1);
		else if (m && c1.done && !c1.err)
			result(name, "RESENT-AND-ANSWERED",
			       "client waited without error while no server; RESEND re-delivered "
			       "unique 0x%llx with bit 63; B's reply with that unique reached it: %s; new client %s",
			       (unsigned long long)m->unique,
			       cstate(&c1, s1, sizeof(s1)),
			       c2.done && !c2.err ? "ok" : "FAILED");
		else
			result(name, "NOT-RESENT",
			       "held client %s; re-delivered %s",
			       cstate(&c1, s1, sizeof(s1)), m ? "yes" : "no");
	} else {
		int got_err = c1.done && c1.err;

		result(name,
		       got_err   ? "CLIENT-ERROR"
		       : c1.done ? "CLIENT-OK"
				 : "CLIENT-WAITS",
		       "held client %s when A's clone was released; RESEND by B re-delivered it: %s; "
		       "the connection lives on: new client %s",
		       cstate(&c1, s1, sizeof(s1)), m ? "yes" : "no",
		       c2.done && !c2.err ? "ok" : "FAILED");
	}
	teardown();
}

/* ---- E2, E3: io_uring with a request held in the old process ---- */

void e2_e3(int adopt)
{
	const char *n1 = adopt ? "E3-uring-adopt-commit"
			       : "E2a-uring-held-request";
	struct client c0, c1, c2, c3;
	struct msg *m, held;
	pid_t a, b;
	char s[64], s2[64], s3[64];

	if (setup(1))
		return result(n1, "SETUP-FAILED", "see above");
	m = start_first(n1, &a);
	if (!m)
		return;
	note("%s: kernel FUSE 7.%llu, %u queues, %u entries each, REGISTER ok",
	     n1, (unsigned long long)m->cid, S.nq, DEPTH);
	c0 = client_start("warm");
	client_wait(&c0, 5000);
	note("%s: warm-up client: %s", n1, cstate(&c0, s, sizeof(s)));
	c1 = client_start("hold1");
	m = wait_for(3000, M_HELD, 0, "hold1");
	if (!m)
		return teardown(),
		       result(n1, "SETUP-FAILED", "A never got hold1");
	held = *m;
	note("%s: A holds LOOKUP hold1 in slot %d (qid %u, commit_id %llu); SIGKILL A",
	     n1, held.slot, held.qid, (unsigned long long)held.cid);
	stop_pid(a);
	if (!adopt) {
		client_wait(&c1, 5000);
		result("E2a-uring-held-request",
		       c1.done ? (c1.err ? "CLIENT-ERROR" : "CLIENT-OK")
			       : "CLIENT-WAITS",
		       "5 s after A died holding it: %s",
		       cstate(&c1, s, sizeof(s)));
		c2 = client_start("gap");
		client_wait(&c2, 2000);
		note("E2: a request made while no server: after 2 s %s",
		     cstate(&c2, s, sizeof(s)));
		b = start_gen(1, 0, 0, 1);
		m = wait_for(10000, M_READY, 1, NULL);
		result("E2b-uring-register-again",
		       !m       ? "NO-ANSWER"
		       : m->val ? "REFUSED"
				: "ACCEPTED",
		       "B (new process, own ring, the supervisor's file) REGISTERed %u entries on "
		       "every one of the %u existing queues: %s",
		       DEPTH, S.nq,
		       !m       ? "no answer"
		       : m->val ? strerror(-m->val)
				: "no error");
		client_wait(&c2, 3000);
		int gap_done = c2.done;

		snprintf(s2, sizeof(s2), "%s", cstate(&c2, s, sizeof(s)));
		c3 = client_start("new");
		client_wait(&c3, 3000);
		client_wait(&c2, 2000);
		result("E2c-uring-backlog",
		       gap_done  ? "PULLED-AT-REGISTER"
		       : c2.done ? "DRAINS-AT-NEXT-COMMIT"
				 : "STUCK",
		       "the request queued while no server: 3 s after B registered %s; a new client "
		       "then: %s; the queued one after that: %s",
		       s2, cstate(&c3, s3, sizeof(s3)),
		       cstate(&c2, s, sizeof(s)));
		client_wait(&c1, 1000);
		m = wait_for(500, M_SEEN, 1, "hold1");
		result("E2d-uring-held-redelivered",
		       m ? "REDELIVERED" : "NEVER",
		       "the request A held was %s delivered to B; its client %s",
		       m ? "" : "never", cstate(&c1, s, sizeof(s)));
		b = 0;
		(void)b;
		return teardown();
	}
	client_wait(&c1, 2000);
	note("E3: 2 s after A died: held client %s", cstate(&c1, s, sizeof(s)));
	/* B: the same memfd at the same address, its own ring; it answers the
	 * held request by COMMIT_AND_FETCH and registers nothing. */
	b = spawn();
	if (b == 0) {
		static struct gen G;
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { 0, 300000000 };

		adopt_child(&G, 1);
		commit_slot(&G, (unsigned)held.slot, 1);
		io_uring_submit(&G.ring);
		struct msg r = { .type = M_COMMIT,
				 .gen = 1,
				 .slot = held.slot };

		if (!io_uring_wait_cqe_timeout(&G.ring, &cqe, &ts)) {
			r.val = cqe->res < 0 ? cqe->res
					     : 1; /* 1: a request already */
			if (cqe->res < 0)
				io_uring_cqe_seen(&G.ring, cqe);
		}
		send_msg(S.rep[1], r);
		serve_ring(&G);
	}
	m = wait_for(5000, M_COMMIT, 1, NULL);
	note("E3: B's COMMIT_AND_FETCH for commit_id %llu from its own ring: %s",
	     (unsigned long long)held.cid,
	     !m           ? "no report"
	     : m->val < 0 ? strerror(-m->val)
			  : "no error");
	client_wait(&c1, 3000);
	result("E3a-uring-adopt-commit",
	       c1.done && !c1.err && c1.size == ADOPT_SIZE ? "ANSWERED-BY-B"
	       : c1.done                                   ? "CLIENT-ERROR"
							   : "CLIENT-WAITS",
	       "held client %s (B answers size %u)", cstate(&c1, s, sizeof(s)),
	       ADOPT_SIZE);
	c3 = client_start("after");
	client_wait(&c3, 3000);
	{
		struct want w = { M_SEEN, 1, "after", 0, held.slot };

		m = pump(1000, match, &w);
	}
	result("E3b-uring-adopted-entry-serves",
	       m && c3.done && !c3.err ? "SERVES-THROUGH-B"
	       : c3.done               ? "OTHER"
				       : "CLIENT-WAITS",
	       "a new client on CPU 0 (qid 0, where B registered nothing): %s; taken by the adopted "
	       "slot %d on B's ring: %s",
	       cstate(&c3, s, sizeof(s)), held.slot, m ? "yes" : "no");
	teardown();
}

/* ---- E4: io_uring handover with nothing (or little) left in the old process ---- */

void e4_gap(void)
{
	const char *name = "E4a-uring-idle-handover";
	struct client c0, c1, c2;
	struct msg *m;
	pid_t a;
	char s[64], s1[64];
	int done_at_reg;

	if (setup(1))
		return result(name, "SETUP-FAILED", "see above");
	a = start_gen(0, 1, 0, 1);
	m = wait_for(10000, M_READY, 0, NULL);
	if (!m || m->val)
		return teardown(), result(name, "SETUP-FAILED", "A failed");
	c0 = client_start("warm");
	client_wait(&c0, 5000);
	/* A is idle: every request answered, its entries re-armed. */
	kill(a, SIGUSR1);
	waitpid(a, NULL, 0);
	stop_pid(a);
	c1 = client_start("gap");
	client_wait(&c1, 1000);
	note("%s: A drained (nothing in userspace) and exited; a request in the gap: %s",
	     name, cstate(&c1, s, sizeof(s)));
	start_gen(1, 0, 0, 1);
	m = wait_for(10000, M_READY, 1, NULL);
	client_wait(&c1, 3000);
	done_at_reg = c1.done;
	snprintf(s1, sizeof(s1), "%s", cstate(&c1, s, sizeof(s)));
	c2 = client_start("kick");
	client_wait(&c2, 3000);
	client_wait(&c1, 2000);

	{
		char s2[64], s3[64];

		/* GAP-CANCELED: the request went to an entry of A's ring, which
		 * stays armed after A is reaped until the ring's teardown. */
		result(name,
		       c1.done && c1.err ? "GAP-CANCELED"
		       : done_at_reg     ? "SERVED"
		       : c1.done         ? "SERVED-AFTER-KICK"
					 : "STUCK",
		       "B registered (%s); the gap request 3 s later: %s; a new request: %s; "
		       "the gap one then: %s",
		       !m       ? "no answer"
		       : m->val ? strerror(-m->val)
				: "ok",
		       s1, cstate(&c2, s2, sizeof(s2)),
		       cstate(&c1, s3, sizeof(s3)));
	}
	teardown();
}

/* The four load clients' operations and errors (struct load, struct
 * e6load), and a note of the last error one of them saw. */
void sum_clients(const char *name, const volatile long *cops,
		 const volatile long *cerrs, const volatile int *clast,
		 long *ops, long *errs)
{
	int lasterr = 0;

	*ops = *errs = 0;
	for (int i = 0; i < 4; i++) {
		*ops += cops[i];
		*errs += cerrs[i];
		if (cerrs[i])
			lasterr = clast[i];
	}
	if (*errs)
		note("%s: a client's last error: %s", name,
		     strerrorname_np(lasterr));
}

void e4_load(int adopt, int rounds)
{
	const char *name = adopt ? "E4c-uring-drain-adopt-load"
				 : "E4b-uring-drain-load";
	struct load *L = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t cur, next, cl[4];
	long seen[4];
	int stuck[4] = { 0 }, nstuck = 0, leftovers = 0, r;
	struct msg *m;
	unsigned long ncpu = (unsigned long)sysconf(_SC_NPROCESSORS_ONLN);

	if (L == MAP_FAILED || setup(1))
		return result(name, "SETUP-FAILED", "see above");
	memset((void *)L, 0, sizeof(*L));
	cur = start_gen(0, 1, 0, 1);
	m = wait_for(10000, M_READY, 0, NULL);
	if (!m || m->val)
		return teardown(), result(name, "SETUP-FAILED", "A failed");
	for (int i = 0; i < 4; i++) {
		cl[i] = spawn();
		if (cl[i] == 0) {
			char path[128];
			struct stat st;

			close(S.fd);
			pin_cpu((int)(i % ncpu));
			snprintf(path, sizeof(path), "%s/loop%d", S.dir, i);
			while (!L->stop) {
				if (stat(path, &st)) {
					L->errs[i]++;
					L->lasterr[i] = errno;
				} else {
					L->ops[i]++;
				}
			}
			_exit(0);
		}
	}
	usleep(300000);
	for (r = 1; r <= rounds && nstuck < 4; r++) {
		/* The new generation first (overlap), then the old drains. */
		next = start_gen(r, 0, 0, 1);
		m = wait_for(10000, M_READY, r, NULL);
		if (!m || m->val) {
			note("%s: round %d: REGISTER %s", name, r,
			     m ? strerror(-m->val) : "no answer");
			break;
		}
		kill(cur, SIGUSR1);
		waitpid(cur, NULL, 0);
		stop_pid(cur);
		if (adopt) {
			kill(next, SIGUSR2);
			usleep(20000);
		}
		cur = next;
		for (int i = 0; i < 4; i++)
			seen[i] = L->ops[i];
		usleep(1500000);
		for (int i = 0; i < 4; i++)
			if (!stuck[i] && L->ops[i] == seen[i]) {
				stuck[i] = r;
				nstuck++;
				note("%s: round %d: client %d (CPU %lu) made no progress for 1.5 s",
				     name, r, i, i % ncpu);
			}
	}
	pump(200, NULL, NULL);
	for (unsigned i = 0; i < S.nlog; i++)
		leftovers += S.log[i].type == M_ADOPTED;
	L->stop = 1;
	usleep(200000);
	long ops, errs;

	sum_clients(name, L->ops, L->errs, L->lasterr, &ops, &errs);
	result(name,
	       nstuck ? "CLIENTS-STUCK"
	       : errs ? "CLIENT-ERRORS"
		      : "ALL-SERVED",
	       "%d handovers (new generation registers, then the old one answers what it holds and "
	       "exits%s) under 4 looping stat clients: %ld ops, %ld errors, %d of 4 clients stuck, "
	       "%d requests adopted",
	       r - 1,
	       adopt ? ", the new one commits what the old left in the shared entry memory"
		     : "",
	       ops, errs, nstuck, leftovers);
	teardown();
	munmap((void *)L, 4096);
}
