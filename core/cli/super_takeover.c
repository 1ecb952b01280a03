// SPDX-License-Identifier: MIT
/*
 * `fring restart` in the supervisor: the sequence of takeover.h, each
 * step bounded. Up to the point of no return (EXIT to the old server) any
 * refusal, death or timeout of the new server leaves the old one serving
 * (RESUME). After it, a new server that dies before it serves is replaced
 * once by another, from the state the supervisor still holds; if that
 * fails too, every connection is aborted (ENOTCONN), never left hanging.
 * If the old server dies mid-way, a takeover that has its state goes on;
 * one that has not aborts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "super.h"

#define PREPARE_MS 3000
#define HELLO_MS 15000 /* exec, config, plugin load and create */
#define STATE_MS 10000 /* the old's drain (2 s) and state_save */
#define LOAD_MS 15000  /* state_load */
#define EXIT_MS 2000   /* then SIGKILL */
#define FILL_MS 5000   /* io_uring: every entry of the old holds a request */
#define SERVE_MS 10000
#define RESUME_MS 5000

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Reap pid within ms, else SIGKILL it and reap. 1 if it exited 0. */
static int wait_gone(pid_t pid, int ms)
{
	struct timespec ts = { 0, 2 * 1000000L };
	int status;

	for (int waited = 0; waited < ms; waited += 2) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			return WIFEXITED(status) && !WEXITSTATUS(status);
		if (w < 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 0;
}

void super_kill_gen(struct super_gen *g)
{
	if (g->pid > 0) {
		kill(g->pid, SIGKILL);
		wait_gone(g->pid, 1000);
	}
	if (g->chan >= 0)
		close(g->chan);
	g->pid = -1;
	g->chan = -1;
}

/* The fring binary on disk now, with the same command line. */
static int spawn(struct super *S, int test_die, struct super_gen *g)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (pid == 0) {
		sigset_t chld;
		char num[16];
		int fd = fcntl(sv[1], F_DUPFD, 3); /* without FD_CLOEXEC */

		snprintf(num, sizeof(num), "%d", fd);
		setenv(TKO_ENV_FD, num, 1);
		if (!test_die)
			unsetenv("FRING_TEST_TAKEOVER_DIE");
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execv(S->exe, S->argv);
		fprintf(stderr, "fring: restart: exec %s: %s\n", S->exe,
			strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	g->pid = pid;
	g->chan = sv[0];
	return 0;
}

/* Wait for a message; OK/HELLO → 0, ERR → -1 with its text, gone or
 * timeout → -1 with a sentence. */
static int expect(int chan, uint32_t type, int ms, const char *who, char **why,
		  struct tko_msg *out, int *fds, unsigned *nfds)
{
	struct tko_msg m;
	unsigned n = 0;
	int dummy[TKO_MAX_FDS];
	int rc = tko_recv(chan, &m, fds ? fds : dummy, TKO_MAX_FDS, &n, ms);

	if (!fds)
		tko_close_fds(dummy, n);
	if (nfds)
		*nfds = n;
	if (rc == 1 && m.type == type) {
		if (out)
			*out = m;
		return 0;
	}
	if (fds)
		tko_close_fds(fds, n);
	if (rc == 1 && m.type == TKO_ERR)
		*why = fring_strf("%s", m.text);
	else if (rc == 1)
		*why = fring_strf("%s: unexpected message %u", who, m.type);
	else if (rc == -ETIMEDOUT)
		*why = fring_strf("%s did not answer within %d ms", who, ms);
	else
		*why = fring_strf("%s died", who);
	return -1;
}

/* Start a new server: 0 once it loaded the config and created the
 * plugins (HELLO). */
int super_new_hello(struct super *S, int test_die, struct super_gen *g,
		    char **why)
{
	int rc = spawn(S, test_die, g);

	if (rc) {
		*why = fring_strf("cannot start the new server: %s",
				  strerror(-rc));
		return -1;
	}
	return expect(g->chan, TKO_HELLO, HELLO_MS, "the new server", why, NULL,
		      NULL, NULL);
}

/* Hand it every mount and its state: 0 once it has loaded them. */
int super_new_adopts(struct super *S, const struct super_state *st, int crash,
		     struct super_gen *g, char **why)
{
	for (size_t i = 0; i < S->n; i++) {
		struct tko_msg m = { .type = TKO_ADOPT };
		int fds[TKO_MAX_FDS];

		snprintf(m.mountpoint, sizeof(m.mountpoint), "%s",
			 S->m[i].mountpoint);
		m.conn_id = S->m[i].conn_id;
		m.transport = S->m[i].transport;
		m.init = S->m[i].init;
		m.version = st[i].version;
		m.live = (uint32_t)crash;
		memcpy(fds, S->m[i].fds, S->m[i].nfds * sizeof(int));
		fds[S->m[i].nfds] = st[i].fd;
		if (tko_send(g->chan, &m, fds, S->m[i].nfds + 1)) {
			*why = fring_strf("the new server died");
			return -1;
		}
	}
	tko_send_type(g->chan, TKO_OK, NULL);
	return expect(g->chan, TKO_OK, LOAD_MS, "the new server", why, NULL,
		      NULL, NULL);
}

/* GO, then every mount's MOUNT: the new server serves them all. */
int super_new_serves(struct super *S, struct super_gen *g, char **why)
{
	struct super next = { .m = NULL, .n = 0 };

	if (tko_send_type(g->chan, TKO_GO, NULL)) {
		*why = fring_strf("the new server died");
		return -1;
	}
	while (next.n < S->n) {
		struct tko_msg m;
		int fds[TKO_MAX_FDS];
		unsigned nfds;

		if (expect(g->chan, TKO_MOUNT, SERVE_MS, "the new server", why,
			   &m, fds, &nfds)) {
			for (size_t i = 0; i < next.n; i++) {
				tko_close_fds(next.m[i].fds, next.m[i].nfds);
				tko_close_fds(&next.m[i].live_fd, 1);
			}
			free(next.m);
			return -1;
		}
		super_take_mount(&next, &m, fds, nfds);
	}
	/* Hold the new records before the old ones close: the same files. */
	for (size_t i = 0; i < S->n; i++) {
		tko_close_fds(S->m[i].fds, S->m[i].nfds);
		tko_close_fds(&S->m[i].live_fd, 1);
	}
	free(S->m);
	S->m = next.m;
	S->n = next.n;
	return 0;
}

/* The old server serves again; its state copies are dropped. */
static void resume_old(struct super *S)
{
	char *why = NULL;

	if (S->chan < 0)
		return;
	tko_send_type(S->chan, TKO_RESUME, NULL);
	if (expect(S->chan, TKO_OK, RESUME_MS, "the old server", &why, NULL,
		   NULL, NULL))
		fring_err("restart: resuming the old server: %s", why);
	free(why);
}

static int collect_states(struct super *S, struct super_state *st, size_t *got,
			  char **why)
{
	*got = 0;
	tko_send_type(S->chan, TKO_STOP, NULL);
	for (;;) {
		struct tko_msg m;
		int fds[TKO_MAX_FDS];
		unsigned nfds = 0;
		int rc = tko_recv(S->chan, &m, fds, TKO_MAX_FDS, &nfds,
				  STATE_MS);

		if (rc == 1 && m.type == TKO_STATE && nfds == 1 &&
		    *got < S->n) {
			for (size_t i = 0; i < S->n; i++) {
				if (strcmp(S->m[i].mountpoint, m.mountpoint))
					continue;
				snprintf(st[i].mountpoint,
					 sizeof(st[i].mountpoint), "%s",
					 m.mountpoint);
				st[i].version = m.version;
				st[i].fd = fds[0];
				fds[0] = -1;
				++*got;
			}
			tko_close_fds(fds, nfds);
			continue;
		}
		tko_close_fds(fds, nfds);
		if (rc == 1 && m.type == TKO_OK)
			return 0;
		if (rc == 1 && m.type == TKO_ERR) {
			*why = fring_strf("%s", m.text);
			return -1; /* it serves again */
		}
		*why = fring_strf(rc == -ETIMEDOUT
					  ? "the old server did not save "
					    "its state within %d ms"
					  : "the old server died "
					    "while saving its state",
				  STATE_MS);
		return -2; /* gone, or killed below */
	}
}

/* After the point of no return: a second new server, else the abort. */
static int retry_or_abort(struct super *S, const struct super_state *st,
			  struct super_gen *g, char **why)
{
	char *first = *why, *second = NULL;

	super_kill_gen(g);
	fring_warn("restart: %s; starting another new server", first);
	if (!super_new_hello(S, 0, g, &second) &&
	    !super_new_adopts(S, st, 0, g, &second) &&
	    !super_new_serves(S, g, &second)) {
		free(first);
		free(second);
		*why = NULL;
		return 0;
	}
	super_kill_gen(g);
	super_abort_all(S);
	*why = fring_strf("%s; a second new server failed too (%s): the "
			  "connections are aborted (ENOTCONN)",
			  first, second ? second : "?");
	free(first);
	free(second);
	return -1;
}

int super_takeover(struct super *S, char **msg)
{
	struct super_gen g = { -1, -1 };
	struct super_state *st;
	char *why = NULL;
	long t0 = now_ms();
	size_t got = 0;
	pid_t old = S->server;
	int rc;

	*msg = NULL;
	if (!S->n || S->chan < 0) {
		*msg = fring_strf("refused: nothing is served yet");
		return -1;
	}
	tko_send_type(S->chan, TKO_PREPARE, NULL);
	if (expect(S->chan, TKO_OK, PREPARE_MS, "the old server", &why, NULL,
		   NULL, NULL)) {
		*msg = fring_strf("refused: %s; pid %d still serves", why,
				  (int)old);
		free(why);
		return -1;
	}
	st = calloc(S->n, sizeof(*st));
	if (!st) {
		*msg = fring_strf("refused: out of memory");
		return -1;
	}
	for (size_t i = 0; i < S->n; i++)
		st[i].fd = -1;
	if (super_new_hello(S, 1, &g, &why))
		goto refused;
	rc = collect_states(S, st, &got, &why);
	if (rc == -1)
		goto refused; /* the old one serves again */
	if (rc == -2) {
		kill(old, SIGKILL);
		wait_gone(old, 1000);
		close(S->chan);
		S->chan = -1;
		if (got < S->n)
			goto aborted;
		fring_warn(
			"restart: %s after it handed its state over; going on",
			why);
		free(why);
		why = NULL;
	}
	if (super_new_adopts(S, st, 0, &g, &why)) {
		if (S->chan < 0)
			goto no_return;
		resume_old(S);
		goto refused;
	}
	/* The point of no return, once the old one is gone. Over io_uring
	 * it first waits until its entries are full, or says why not and
	 * serves again (the new one's fillers are answered by it then). */
	if (S->chan >= 0) {
		struct tko_msg m;
		int fds[TKO_MAX_FDS];
		unsigned nfds = 0;

		tko_send_type(S->chan, TKO_EXIT, NULL);
		if (tko_recv(S->chan, &m, fds, TKO_MAX_FDS, &nfds,
			     FILL_MS + EXIT_MS) == 1 &&
		    m.type == TKO_ERR) {
			tko_close_fds(fds, nfds);
			why = fring_strf("%s", m.text);
			goto refused;
		}
		tko_close_fds(fds, nfds);
		wait_gone(old, EXIT_MS);
		close(S->chan);
		S->chan = -1;
	}
	if (super_new_serves(S, &g, &why))
		goto no_return;
served:
	S->server = g.pid;
	S->chan = g.chan;
	*msg = fring_strf("pid %d took over %zu mount(s) from pid %d in %ld ms",
			  (int)g.pid, S->n, (int)old, now_ms() - t0);
	for (size_t i = 0; i < S->n; i++)
		close(st[i].fd);
	free(st);
	return 0;

no_return:
	if (!retry_or_abort(S, st, &g, &why))
		goto served;
	S->server = -1;
	*msg = fring_strf("failed: %s", why);
	free(why);
	goto out_err;
refused:
	super_kill_gen(&g);
	*msg = fring_strf("refused: %s; pid %d still serves", why, (int)old);
	free(why);
	goto out_err;
aborted:
	super_kill_gen(&g);
	super_abort_all(S);
	*msg = fring_strf("failed: %s before it handed its state over: the "
			  "connections are aborted (ENOTCONN)",
			  why);
	free(why);
	S->server = -1;
out_err:
	for (size_t i = 0; i < S->n; i++)
		if (st[i].fd >= 0)
			close(st[i].fd);
	free(st);
	return -1;
}
