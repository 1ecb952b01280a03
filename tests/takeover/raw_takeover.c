// SPDX-License-Identifier: MIT
/*
 * raw_takeover: what the kernel does when one FUSE server process hands a
 * live mount to another, measured with a raw server (no fring runtime):
 * mount(2) on a temp dir, INIT answered here, a one-file filesystem, and a
 * supervisor (this process) that holds the /dev/fuse file and forks the
 * servers and the clients. Each experiment prints one line
 *   EXPERIMENT NAME: RESULT (details)
 * and `#` lines with what was seen on the way. Every wait is bounded; every
 * child is killed by its PID and the mount is detached and removed, also on
 * failure (a global alarm does the same). With --check the results are
 * compared with what was measured on this kernel's protocol minor (the
 * table `expect`) and the exit status has one bit per experiment that
 * differs (README.md in tests/takeover).
 */
#include "raw.h"

/* ---- --check: what was measured, on FUSE 7.45 (Linux 6.18) and 7.46
 * (Linux 7.3, tests/vm); the same on both. E4b and E4c race the kernel
 * (how many requests land in the old ring's entries after its last look)
 * and are reported, not checked. Bit per group in the exit status. */

/* pools: -1 on every kernel, 0 where INIT offers no buffer pools (6.18),
 * 1 where it does (7.3). Bits: 4 a second process joins existing queues
 * (E2b, E5a-c), 32 adoption (E3, E5d-e), 64 handovers (E4a, E6). E4a
 * has two outcomes: the gap request either waits for a kick or went to an
 * entry of the dead A that the kernel had not cancelled yet. */
static const struct {
	const char *name, *res;
	int bit, pools;
} expect[] = {
	{ "E1a-devfuse-resend", "RESENT-AND-ANSWERED", 1, -1 },
	{ "E1b-devfuse-clone-dies", "CLIENT-ERROR", 1, -1 },
	{ "E2a-uring-held-request", "CLIENT-WAITS", 2, -1 },
	{ "E2b-uring-register-again", "ACCEPTED", 4, -1 },
	{ "E2c-uring-backlog", "DRAINS-AT-NEXT-COMMIT", 8, -1 },
	{ "E2d-uring-held-redelivered", "NEVER", 16, -1 },
	{ "E3a-uring-adopt-commit", "ANSWERED-BY-B", 32, -1 },
	{ "E3b-uring-adopted-entry-serves", "SERVES-THROUGH-B", 32, -1 },
	{ "E4a-uring-idle-handover", "SERVED-AFTER-KICK|GAP-CANCELED", 64, -1 },
	{ "E5-bufpool", "NO-BUFPOOL", 4, 0 },
	{ "E5a-bufpool-add-queue-again", "EEXIST", 4, 1 },
	{ "E5b-bufpool-add-pool-again", "EINVAL", 4, 1 },
	{ "E5c-bufpool-register-again", "ACCEPTED", 4, 1 },
	{ "E5d-bufpool-adopt-commit", "ANSWERED-BY-B", 32, 1 },
	{ "E5e-bufpool-serves-after", "SERVES-THROUGH-B", 32, 1 },
	{ "E6a-uring-fill-exit-adopt-load", "ALL-SERVED", 64, -1 },
	{ "E6b-uring-fill-close-exit-adopt-load", "ALL-SERVED", 64, -1 },
	{ "E6c-uring-fill-exit-register-adopt-load", "ALL-SERVED", 64, -1 },
	{ "E6e-uring-fill-exit-adopt-bufpool-load", "NO-BUFPOOL", 64, 0 },
	{ "E6e-uring-fill-exit-adopt-bufpool-load", "ALL-SERVED", 64, 1 },
};

/* Whether res is one of the |-separated results in set. */
static int one_of(const char *res, const char *set)
{
	size_t n = strlen(res);

	for (const char *p = set; p;
	     p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL)
		if (!strncmp(p, res, n) && (p[n] == '|' || !p[n]))
			return 1;
	return 0;
}

static int check(void)
{
	int rc = 0, pools = !!(S.offered & FUSE_HAS_IO_URING_BUFPOOL);

	for (unsigned i = 0; i < nresults; i++)
		for (unsigned j = 0; j < sizeof(expect) / sizeof(expect[0]);
		     j++)
			if (!strcmp(results[i].name, expect[j].name) &&
			    (expect[j].pools < 0 || expect[j].pools == pools) &&
			    !one_of(results[i].res, expect[j].res)) {
				printf("CHECK %s: %s, measured before: %s (FUSE 7.%u now)\n",
				       results[i].name, results[i].res,
				       expect[j].res, S.minor);
				rc |= expect[j].bit;
			}
	for (unsigned i = 0; i < nresults; i++)
		if (!strcmp(results[i].res, "SETUP-FAILED"))
			rc |= 128;
	/* 77 is ctest's skip and 125 the alarm's */
	return rc == 77 || rc == 125 ? rc | 128 : rc;
}

/* ---- main ---- */

static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned lo = 0, hi = 0;

	if (f) {
		if (fscanf(f, "%u-%u", &lo, &hi) < 2)
			hi = lo;
		fclose(f);
	}
	return hi + 1;
}

/* Whether the group c is to run; if so, its own alarm (the load groups
 * take minutes under TCG). */
static int group(const char *only, int c)
{
	if (!strchr(only, c))
		return 0;
	alarm(600);
	return 1;
}

int main(int argc, char **argv)
{
	/* Which experiments: 1 2 3, a (E4a), 5 (E5), l (E4b, E4c), 6 (E6a-c); default all. */
	const char *only = "123a5l6";

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check"))
			check_mode = 1;
		else
			only = argv[i];
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK)) {
		printf("EXPERIMENT ALL: SKIPPED (needs root and /dev/fuse)\n");
		return 77;
	}
	S.nq = possible_cpus();
	if (S.nq * DEPTH > 64) {
		printf("EXPERIMENT ALL: SKIPPED (%u possible CPUs; the slot table is sized for 32)\n",
		       S.nq);
		return 77;
	}
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	if (group(only, '1')) {
		e1(0);
		e1(1);
	}
	if (group(only, '2'))
		e2_e3(0);
	if (group(only, '3'))
		e2_e3(1);
	if (group(only, 'a'))
		e4_gap();
	if (group(only, '5'))
		e5();
	if (group(only, 'l')) {
		e4_load(0, 20);
		e4_load(1, 20);
	}
	if (group(only, '6')) {
		e6_load(0, 0, 0, 0, 20);
		e6_load(0, 1, 0, 0, 20);
		e6_load(1, 0, 0, 0, 20);
		e6_load(0, 0, 1, 0, 20);
		e6_load(0, 0, 0, 1, 20);
	}
	if (group(only, 'k'))
		e_crash();
	return check_mode ? check() : 0;
}
