// SPDX-License-Identifier: MIT
/* raw_takeover: E6: fill, exit, adopt under load (and its control). */
#include "raw.h"

/* ---- E6: fill, exit, adopt: the old generation leaves no entry available ---- */

#define E6_ROUNDS_MAX 32
#define FILL_MAX 64 /* filler threads per CPU */

struct e6load {
	volatile int stop, round;
	volatile long ops[4], errs[4];
	volatile int lasterr[4];
	volatile uint32_t gap_us[E6_ROUNDS_MAX + 1]
				[4]; /* longest gap per round */
	volatile int fill_ok, fill_err, fill_lasterr, fill_done;
};

static struct e6load *E6L;
static char fill_path[FILL_MAX][128];

static void *filler(void *arg)
{
	struct stat st;
	int err = stat(arg, &st) ? errno : 0;

	if (err == ENOENT)
		__atomic_add_fetch(&E6L->fill_ok, 1, __ATOMIC_SEQ_CST);
	else {
		__atomic_add_fetch(&E6L->fill_err, 1, __ATOMIC_SEQ_CST);
		E6L->fill_lasterr = err ? err : -1;
	}
	__atomic_add_fetch(&E6L->fill_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* n threads pinned to cpu, each one LOOKUP of a name of its own (ENOENT):
 * requests on that CPU's queue until every entry there holds one. */
static pid_t fillers_start(int cpu, int n, int round)
{
	pid_t p = spawn();

	if (p == 0) {
		pthread_t t[FILL_MAX];

		close(S.fd);
		pin_cpu(cpu);
		n = n < FILL_MAX ? n : FILL_MAX;
		for (int i = 0; i < n; i++) {
			snprintf(fill_path[i], sizeof(fill_path[i]),
				 "%s/nofill%d_%d_%d", S.dir, round, cpu, i);
			if (pthread_create(&t[i], NULL, filler, fill_path[i]))
				_exit(30);
		}
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		_exit(0);
	}
	return p;
}

static void forget_pid(pid_t p)
{
	for (unsigned i = 0; i < S.nkids; i++)
		if (S.kids[i] == p)
			S.kids[i] = -1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* rounds handovers under 4 looping stat clients: the next generation maps
 * the memfd and sets up its ring (registers nothing), the old one holds
 * every request until all its entries hold one (fillers on each CPU make
 * sure) and exits, then the next one (registers its own entries if reg and)
 * commits every held entry, whose commits fetch what queued meanwhile. */
void e6_load(int reg, int close_ring, int no_fill, int pools, int rounds)
{
	const char *name = pools     ? "E6e-uring-fill-exit-adopt-bufpool-load"
			   : no_fill ? "E6d-uring-hold-exit-unfilled-load"
			   : reg     ? "E6c-uring-fill-exit-register-adopt-load"
			   : close_ring ? "E6b-uring-fill-close-exit-adopt-load"
					: "E6a-uring-fill-exit-adopt-load";
	struct e6load *L = mmap(NULL, sizeof(*L), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned long ncpu = (unsigned long)sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t stall[E6_ROUNDS_MAX + 1] = { 0 }, fill_ms_max = 0;
	int owned = (int)(S.nq * DEPTH), nstuck = 0, unfilled = 0, adopted = 0,
	    r;
	int fill_sent = 0, cqe_errs = 0;
	pid_t cur, next, cl[4], fp[64];
	struct msg *m;
	char list[E6_ROUNDS_MAX * 8] = "", ents[64];

	if (rounds > E6_ROUNDS_MAX)
		rounds = E6_ROUNDS_MAX;
	if (reg && rounds > (int)MAX_GENS - 1)
		rounds = (int)MAX_GENS - 1;
	if (pools && !(S.offered & FUSE_HAS_IO_URING_BUFPOOL))
		return result(name, "NO-BUFPOOL",
			      "FUSE 7.%u offers no buffer pools", S.minor);
	if (L == MAP_FAILED || setup(1))
		return result(name, "SETUP-FAILED", "see above");
	memset((void *)L, 0, sizeof(*L));
	E6L = L;
	pool_mode = pools;
	E6.on = 1;
	E6.reg = reg;
	E6.close_ring = close_ring;
	E6.no_fill = no_fill;
	cur = start_gen(0, 1, 0, 1);
	m = wait_for(10000, M_READY, 0, NULL);
	if (!m || m->val) {
		E6.on = pool_mode = 0;
		return teardown(), result(name, "SETUP-FAILED", "A failed");
	}
	for (int i = 0; i < 4; i++) {
		cl[i] = spawn();
		if (cl[i] == 0) {
			char path[128];
			struct stat st;
			uint64_t last = now_us();

			close(S.fd);
			pin_cpu((int)(i % ncpu));
			snprintf(path, sizeof(path), "%s/loop%d", S.dir, i);
			while (!L->stop) {
				int err = stat(path, &st) ? errno : 0;
				uint64_t t = now_us();
				uint32_t gap = (uint32_t)(t - last);
				int rd = L->round;

				last = t;
				if (gap > L->gap_us[rd][i])
					L->gap_us[rd][i] = gap;
				if (err) {
					L->errs[i]++;
					L->lasterr[i] = err;
				} else {
					L->ops[i]++;
				}
			}
			_exit(0);
		}
	}
	usleep(300000);
	for (r = 1; r <= rounds; r++) {
		long seen[4];
		int nf = 0, per_q = owned / (int)S.nq, stuck_now = 0;
		uint64_t t0, t_full;

		next = start_gen(r, 0, 0,
				 0); /* maps and sets up its ring only */
		m = wait_for(10000, M_READY, r, NULL);
		if (!m || m->val) {
			note("%s: round %d: B setup %s", name, r,
			     m ? strerror(-m->val) : "no answer");
			break;
		}
		L->round = r;
		L->fill_ok = L->fill_err = L->fill_done = 0;
		t0 = now_us();
		kill(cur, SIGUSR1);
		for (unsigned long c = 0; c < ncpu && nf < 64; c++)
			fp[nf++] = fillers_start((int)c, per_q, r);
		fill_sent = (int)ncpu * (per_q < FILL_MAX ? per_q : FILL_MAX);
		m = wait_for(5000, M_ALLHELD, r - 1, NULL);
		t_full = now_us();
		if (!m) {
			unfilled++;
			note("%s: round %d: the old generation did not get a request in each of its %d "
			     "entries within 5 s; killed",
			     name, r, owned);
			kill(cur, SIGKILL);
		} else if ((uint32_t)((t_full - t0) / 1000) > fill_ms_max) {
			fill_ms_max = (uint32_t)((t_full - t0) / 1000);
		}
		waitpid(cur, NULL, 0);
		forget_pid(cur);
		for (int i = 0; i < 4; i++)
			seen[i] = L->ops[i];
		kill(next, SIGUSR2);
		/* every client moves again and every filler is answered */
		for (int w = 0; w < 300; w++) {
			int moving = 0;

			for (int i = 0; i < 4; i++)
				moving += L->ops[i] != seen[i] || L->errs[i];
			if (moving == 4 && L->fill_done >= fill_sent)
				break;
			usleep(10000);
		}
		for (int i = 0; i < 4; i++)
			if (L->ops[i] == seen[i]) {
				note("%s: round %d: client %d (CPU %lu) made no progress for 3 s after "
				     "the adoption",
				     name, r, i, i % ncpu);
				stuck_now++;
			}
		if (L->fill_done < fill_sent)
			note("%s: round %d: %d of %d fillers unanswered 3 s after the adoption",
			     name, r, fill_sent - L->fill_done, fill_sent);
		if (L->fill_err)
			note("%s: round %d: %d fillers got %s (want ENOENT)",
			     name, r, L->fill_err,
			     L->fill_lasterr > 0
				     ? strerrorname_np(L->fill_lasterr)
				     : "success");
		for (int i = 0; i < nf; i++) {
			if (waitpid(fp[i], NULL, WNOHANG) == fp[i])
				forget_pid(fp[i]);
		}
		cur = next;
		owned = reg ? owned + (int)(S.nq * DEPTH) : owned;
		usleep(200000); /* let the round's gaps settle, then read them */
		for (int i = 0; i < 4; i++)
			if (L->gap_us[r][i] > stall[r])
				stall[r] = L->gap_us[r][i];
		if (stuck_now || L->fill_done < fill_sent) {
			nstuck += stuck_now ? stuck_now : 1;
			r++;
			break;
		}
	}
	pump(200, NULL, NULL);
	for (unsigned i = 0; i < S.nlog; i++) {
		adopted += S.log[i].type == M_ADOPTED;
		cqe_errs += S.log[i].type == M_CQE_ERR;
	}
	L->stop = 1;
	usleep(200000);
	long ops, errs;

	sum_clients(name, L->ops, L->errs, L->lasterr, &ops, &errs);
	if (cqe_errs)
		note("%s: %d CQEs with an error in the servers' rings", name,
		     cqe_errs);
	for (int i = 1; i < r; i++) {
		size_t l = strlen(list);

		snprintf(list + l, sizeof(list) - l, "%s%.1f", i > 1 ? " " : "",
			 stall[i] / 1000.0);
	}
	note("%s: longest gap a client saw per handover (ms): %s", name, list);
	qsort(stall + 1, (size_t)(r - 1), sizeof(stall[0]), cmp_u32);
	snprintf(ents, sizeof(ents),
		 reg ? "%u per queue, %u more each handover" : "%u per queue",
		 DEPTH, DEPTH);
	result(name,
	       nstuck     ? "CLIENTS-STUCK"
	       : errs     ? "CLIENT-ERRORS"
	       : unfilled ? "NOT-FILLED"
			  : "ALL-SERVED",
	       "%d handovers (the old generation holds every request %s (%s), %s; the new one "
	       "%scommits them) under 4 looping stat clients: "
	       "%ld ops, %ld errors, %d stuck, %d rounds not filled, %d requests adopted; stall "
	       "median %.1f ms, max %.1f ms; filling took at most %u ms",
	       r - 1,
	       no_fill ? "but does not wait for its entries to fill"
		       : "until each of its entries holds one",
	       ents, close_ring ? "closes its ring, exits" : "exits",
	       reg ? "registers its own entries, then " : "", ops, errs, nstuck,
	       unfilled, adopted, r > 1 ? stall[1 + (r - 2) / 2] / 1000.0 : 0.0,
	       r > 1 ? stall[r - 1] / 1000.0 : 0.0, fill_ms_max);
	E6.on = pool_mode = 0;
	teardown();
	munmap((void *)L, sizeof(*L));
}
