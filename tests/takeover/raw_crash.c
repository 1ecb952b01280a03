// SPDX-License-Identifier: MIT
/* raw_takeover: group k, K1-K3: an unplanned death (SIGKILL) of an io_uring
 * server (what restart: on_crash would need over io_uring; fring does
 * not restart over io_uring, core/transport/README.md). */
#include "raw.h"

/* ---- K: an unplanned death (SIGKILL) of an io_uring server ---- */

/* Fail the request held in slot s with EIO, by COMMIT_AND_FETCH. */
static void commit_eio(struct gen *G, unsigned s)
{
	struct fuse_uring_req_header *h = hdr_of(s);
	struct fuse_out_header *oh = (void *)h->in_out;
	uint64_t cid = h->ring_ent_in_out.commit_id;

	oh->unique = ((struct fuse_in_header *)h->in_out)->unique;
	oh->len = sizeof(*oh);
	oh->error = -EIO;
	h->ring_ent_in_out.payload_sz = 0;
	h->ring_ent_in_out.commit_id = 0;
	cmd_sqe(G, FUSE_IO_URING_CMD_COMMIT_AND_FETCH, qid_of(s), cid, s);
}

#define K_ROUNDS 5
#define K_GAP 3
#define K_STALE_UD 999

/* A (every entry registered) holds LOOKUP hold1 in one entry of qid 0
 * and is SIGKILLed; at once K_GAP clients on CPU 0 (the other entry of
 * qid 0 was armed in A's ring). After 1 s, B (same memfd and address,
 * own ring) fails the held request with EIO by its commit_id, registers
 * entries of its own on every queue, and serves; then a kick (one new
 * client on CPU 0), then FUSE_NOTIFY_RESEND on the device. Per round:
 * what each gap client got, and when. */
void e_crash(void)
{
	const char *n1 = "K1-uring-crash-held-eio", *n2 = "K2-uring-crash-gap";
	unsigned eio = 0, cancel = 0, other_err = 0, served_reg = 0,
		 served_kick = 0, served_resend = 0, stuck = 0, rounds = 0;
	int stale = 0, stale_all = 0;
	char s[64];

	for (int r = 0; r < K_ROUNDS; r++) {
		struct client c0, c1, gap[K_GAP], kick;
		struct msg *m, held;
		unsigned before[K_GAP] = { 0 };
		pid_t a, b;

		if (setup(1))
			return result(n1, "SETUP-FAILED", "see above");
		if (!start_first(n1, &a))
			return;
		c0 = client_start("warm");
		client_wait(&c0, 5000);
		c1 = client_start("hold1");
		m = wait_for(3000, M_HELD, 0, "hold1");
		if (!m)
			return teardown(),
			       result(n1, "SETUP-FAILED", "A never got hold1");
		held = *m;
		stop_pid(a);
		for (int i = 0; i < K_GAP; i++) {
			char name[16];

			snprintf(name, sizeof(name), "gap%d", i);
			gap[i] = client_start(name);
		}
		for (int i = 0; i < K_GAP; i++) {
			client_wait(&gap[i], i ? 10 : 1000);
			before[i] = gap[i].done;
			note("K round %d: gap client %d, 1 s after A died: %s",
			     r, i, cstate(&gap[i], s, sizeof(s)));
		}
		b = spawn();
		if (b == 0) {
			static struct gen G;
			struct msg rep = { .type = M_COMMIT,
					   .gen = 1,
					   .slot = held.slot };

			G.g = 1;
			if (map_entries() || ring_up(&G))
				_exit(20);
			commit_eio(&G, (unsigned)held.slot);
			/* A commit_id the kernel no longer holds (a commit the
			 * dead server may or may not have sent). */
			cmd_sqe(&G, FUSE_IO_URING_CMD_COMMIT_AND_FETCH, 0,
				held.cid + 1000, K_STALE_UD);
			register_sqes(&G);
			rep.val = io_uring_submit(&G.ring);
			send_msg(S.rep[1], rep);
			serve_ring(&G);
		}
		m = wait_for(5000, M_COMMIT, 1, NULL);
		client_wait(&c1, 2000);
		{
			struct want w = { M_CQE_ERR, 1, NULL, 0, K_STALE_UD };
			struct msg *st = pump(1000, match, &w);

			stale = st ? st->val : 1;
		}
		eio += c1.done && c1.err == EIO;
		note("K round %d: B committed the held slot %d (commit_id %llu) with EIO and "
		     "registered (submit %d): held client %s",
		     r, held.slot, (unsigned long long)held.cid,
		     m ? m->val : -1, cstate(&c1, s, sizeof(s)));
		for (int i = 0; i < K_GAP; i++)
			if (client_wait(&gap[i], i ? 10 : 1000) && !before[i] &&
			    !gap[i].err)
				before[i] =
					2; /* served after B registered, no kick */
		kick = client_start("kick");
		client_wait(&kick, 2000);
		for (int i = 0; i < K_GAP; i++)
			if (client_wait(&gap[i], i ? 10 : 1000) && !before[i] &&
			    !gap[i].err)
				before[i] = 3; /* served after the kick */
		notify_resend(S.fd);
		for (int i = 0; i < K_GAP; i++) {
			if (client_wait(&gap[i], i ? 10 : 1000) && !before[i] &&
			    !gap[i].err)
				before[i] = 4; /* served after RESEND */
			note("K round %d: gap client %d at the end: %s (%s)", r,
			     i, cstate(&gap[i], s, sizeof(s)),
			     before[i] == 2   ? "after B registered"
			     : before[i] == 3 ? "after the kick"
			     : before[i] == 4 ? "after RESEND"
			     : before[i] == 1 ? "before B"
					      : "never");
			if (!gap[i].done)
				stuck++;
			else if (gap[i].err == ECANCELED)
				cancel++;
			else if (gap[i].err)
				other_err++;
			else if (before[i] == 2)
				served_reg++;
			else if (before[i] == 3)
				served_kick++;
			else if (before[i] == 4)
				served_resend++;
		}
		note("K round %d: kick client %s; B's commit of a stale commit_id: %s",
		     r, cstate(&kick, s, sizeof(s)),
		     stale <= 0 ? strerrorname_np(-stale) : "no error");
		stale_all = stale_all && stale_all != stale ? 1 : stale;
		rounds++;
		teardown();
	}
	result(n1, eio == rounds ? "EIO-BY-COMMIT" : "NOT-ALWAYS",
	       "%u of %u held requests of a SIGKILLed server failed with EIO by a new "
	       "process's COMMIT_AND_FETCH of their commit_id",
	       eio, rounds);
	result("K3-uring-crash-stale-commit",
	       stale_all < 0 ? strerrorname_np(-stale_all) : "OTHER",
	       "a COMMIT_AND_FETCH of a commit_id the kernel does not hold, from the new "
	       "process, in every round: %s; the queues served on",
	       stale_all < 0 ? strerrorname_np(-stale_all)
			     : "mixed or no error");
	result(n2,
	       stuck                 ? "SOME-STUCK"
	       : cancel || other_err ? "ERRORS-NONE-STUCK"
				     : "ALL-SERVED",
	       "%u requests made just after the death, over %u rounds: %u ECANCELED, %u other "
	       "errors, served %u once B registered, %u after a kick, %u after RESEND; %u "
	       "still waiting",
	       rounds * K_GAP, rounds, cancel, other_err, served_reg,
	       served_kick, served_resend, stuck);
}
