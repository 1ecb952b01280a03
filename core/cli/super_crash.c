// SPDX-License-Identifier: MIT
/*
 * restart: on_crash. When the serving process dies by a signal and every
 * mount it served left its plugin's live state with the supervisor
 * (ABI 1.8 state_live, core/runtime/session_live.c), a new server is
 * started on the same connections instead of aborting them: it gets the
 * /dev/fuse files, the ring memory and the live memfd, has its plugin
 * recover, and serves. What the dead server had read from /dev/fuse comes
 * again (FUSE_NOTIFY_RESEND). A mount served over io_uring is aborted
 * (ENOTCONN at once), as without the key: on 6.18 requests the kernel had
 * given a dead ring's entries can be stranded for good, abort or not
 * (core/transport/README.md, "Restart after a crash"). A crash loop
 * (CRASH_MAX crashes within CRASH_WINDOW_MS) and a restart that fails
 * fall back to the abort too.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../config/config.h"
#include "super.h"

#define CRASH_MAX 3
#define CRASH_WINDOW_MS 10000L

static long crash_ms[CRASH_MAX]; /* the last crashes, oldest first */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Note a crash now: 1 if it makes CRASH_MAX within the window. */
static int crash_loop(void)
{
	memmove(crash_ms, crash_ms + 1, (CRASH_MAX - 1) * sizeof(*crash_ms));
	crash_ms[CRASH_MAX - 1] = now_ms();
	return crash_ms[0] &&
	       crash_ms[CRASH_MAX - 1] - crash_ms[0] < CRASH_WINDOW_MS;
}

/* The mount that keeps a restart from happening, or NULL; *asked: some
 * mount has the key (so the refusal is worth a line). A mount served
 * over io_uring comes first: its reason is the one to say. */
static const struct super_mount *not_restartable(const struct super *S,
						 int *asked)
{
	const struct super_mount *sm = NULL;

	*asked = 0;
	for (size_t i = 0; i < S->n; i++) {
		const struct super_mount *m = &S->m[i];
		int on = m->restart == FRING_RESTART_ON_CRASH;

		*asked |= on || m->live_fd >= 0;
		if (on && m->transport == TKO_TRANSPORT_URING)
			return m;
		if (m->live_fd < 0 && !sm)
			sm = m;
	}
	return sm;
}

int super_crash_restart(struct super *S, int sig)
{
	struct super_gen g = { -1, -1 };
	struct super_state *st;
	const struct super_mount *sm;
	char *why = NULL;
	long t0 = now_ms();
	int rc, asked;

	if (!S->n)
		return -1;
	sm = not_restartable(S, &asked);
	if (sm && sm->restart == FRING_RESTART_ON_CRASH &&
	    sm->transport == TKO_TRANSPORT_URING)
		fprintf(stderr,
			"fring: restart: on_crash: %s is served over io_uring: "
			"aborting, as without the key (a dead ring's requests "
			"can be stranded for good on Linux 6.18)\n",
			sm->mountpoint);
	else if (sm && asked)
		fprintf(stderr,
			"fring: restart: on_crash: %s has no restartable state "
			"(no `restart: on_crash`, or its plugin has no "
			"state_live); not restarting\n",
			sm->mountpoint);
	if (sm)
		return -1;
	if (crash_loop()) {
		fprintf(stderr,
			"fring: restart: on_crash: %d crashes within %ld s: a "
			"crash loop; not restarting again\n",
			CRASH_MAX, CRASH_WINDOW_MS / 1000);
		return -1;
	}
	if (S->chan >= 0)
		close(S->chan);
	S->chan = -1;
	st = calloc(S->n, sizeof(*st));
	if (!st)
		return -1;
	for (size_t i = 0; i < S->n; i++) {
		snprintf(st[i].mountpoint, sizeof(st[i].mountpoint), "%s",
			 S->m[i].mountpoint);
		st[i].fd = S->m[i].live_fd;
	}
	fprintf(stderr,
		"fring: restart: on_crash: starting a new serving process "
		"after %s\n",
		strsignal(sig));
	rc = super_new_hello(S, 0, &g, &why) ||
	     super_new_adopts(S, st, 1, &g, &why) ||
	     super_new_serves(S, &g, &why);
	free(st);
	if (rc) {
		super_kill_gen(&g);
		fprintf(stderr,
			"fring: restart: on_crash: the new serving process "
			"failed: %s\n",
			why ? why : "out of memory");
		free(why);
		return -1;
	}
	S->server = g.pid;
	S->chan = g.chan;
	fprintf(stderr,
		"fring: restart: on_crash: pid %d serves %zu mount(s) again, "
		"%ld ms after the crash\n",
		(int)g.pid, S->n, now_ms() - t0);
	return 0;
}
