// SPDX-License-Identifier: MIT
/*
 * The supervisor's loop: it passes SIGINT/SIGTERM on to the serving
 * process, holds the /dev/fuse files of every mount the server reports
 * (takeover.h, MOUNT), answers `fring restart` on its control socket, and
 * when the server dies by a signal aborts those connections through
 * fusectl, so clients get ENOTCONN at once (supervise.c has why).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/log.h"
#include "../mount/fusectl.h"
#include "../mount/mount.h"
#include "cli.h"
#include "super.h"

void super_take_mount(struct super *S, const struct tko_msg *m, int *fds,
		      unsigned nfds)
{
	struct super_mount *sm = NULL, *grown;

	for (size_t i = 0; i < S->n; i++)
		if (!strcmp(S->m[i].mountpoint, m->mountpoint))
			sm = &S->m[i];
	if (!sm) {
		grown = realloc(S->m, (S->n + 1) * sizeof(*grown));
		if (!grown) {
			tko_close_fds(fds, nfds);
			return;
		}
		S->m = grown;
		sm = &S->m[S->n++];
	} else {
		tko_close_fds(sm->fds, sm->nfds);
		tko_close_fds(&sm->live_fd, 1);
	}
	memset(sm, 0, sizeof(*sm));
	sm->live_fd = -1;
	if (m->live && nfds > 2)
		sm->live_fd = fds[--nfds];
	snprintf(sm->mountpoint, sizeof(sm->mountpoint), "%s", m->mountpoint);
	sm->conn_id = m->conn_id;
	sm->transport = m->transport;
	sm->auto_unmount = m->auto_unmount;
	sm->restart = m->restart;
	sm->init = m->init;
	memcpy(sm->fds, fds, nfds * sizeof(int));
	sm->nfds = nfds;
}

void super_abort_all(struct super *S)
{
	for (size_t i = 0; i < S->n; i++) {
		const char *mp = S->m[i].mountpoint;
		int rc;

		if (!S->m[i].conn_id)
			continue;
		rc = fring_fusectl_abort(S->m[i].conn_id);
		if (rc)
			fprintf(stderr,
				"fring: could not abort the connection of %s "
				"(fusectl: %s); callers may hang until it is aborted\n",
				mp, strerror(-rc));
		else
			fprintf(stderr,
				"fring: aborted the connection of %s: callers "
				"now get ENOTCONN; clear the mountpoint with: "
				"fusermount3 -u %s  (or as root: umount -l %s)\n",
				mp, mp, mp);
	}
}

static char **read_cmdline(void)
{
	char *buf = NULL, **argv;
	size_t len = 0, cap = 0, n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return NULL;
	do {
		if (len + 4096 > cap) {
			char *g = realloc(buf, cap += 65536);

			if (!g)
				break;
			buf = g;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r > 0)
			len += (size_t)r;
	} while (r > 0);
	close(fd);
	if (!buf)
		return NULL;
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		n += !buf[i];
	argv = calloc(n + 1, sizeof(*argv));
	for (size_t i = 0, k = 0; argv && i < len && k < n; k++) {
		argv[k] = buf + i;
		i += strlen(buf + i) + 1;
	}
	return argv;
}

/* Mount option auto_unmount: the server is gone, so is its mount (the
 * connection aborted first, so nothing waits on it). fusermount3's own
 * watcher cannot do it here: it looks once, when the server exits, and
 * finds the connection alive while these fds hold it. */
static void auto_unmount(struct super *S)
{
	for (size_t i = 0; i < S->n; i++) {
		const char *mp = S->m[i].mountpoint;
		int rc;

		if (!S->m[i].auto_unmount || !S->m[i].conn_id)
			continue;
		rc = fring_kmount_detach(S->m[i].conn_id, mp);
		if (rc < 0)
			fprintf(stderr,
				"fring: auto_unmount: could not unmount %s: %s\n",
				mp, strerror(-rc));
		else if (rc)
			fprintf(stderr, "fring: auto_unmount: unmounted %s\n",
				mp);
	}
}

static void cleanup_exit(struct super *S, int code)
{
	if (S->ctl.fd >= 0)
		fring_ctl_close(&S->ctl);
	exit(code);
}

static void reap(struct super *S)
{
	int status;
	pid_t w;

	while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
		if (w != S->server)
			continue;
		if (WIFEXITED(status))
			cleanup_exit(S, WEXITSTATUS(status));
		fprintf(stderr,
			"fring: the serving process (pid %d) died: %s\n", w,
			strsignal(WTERMSIG(status)));
		if (!super_crash_restart(S, WTERMSIG(status)))
			continue;
		super_abort_all(S);
		auto_unmount(S);
		cleanup_exit(S, CLI_EXIT_ERR);
	}
}

/* One request line ("restart"), one answer line. */
static void on_ctl(struct super *S)
{
	char req[64] = "", *msg = NULL;
	int fd = fring_ctl_accept(&S->ctl), rc;

	if (fd < 0)
		return;
	if (fring_ctl_read_line(fd, req, sizeof(req)) < 0 ||
	    strcmp(req, "restart")) {
		dprintf(fd, "error: unknown request '%s'\n", req);
		close(fd);
		return;
	}
	rc = super_takeover(S, &msg);
	fring_info("restart: %s", msg ? msg : "out of memory");
	dprintf(fd, "%s: %s\n", rc ? "error" : "ok",
		msg ? msg : "out of memory");
	free(msg);
	close(fd);
	if (S->server < 0) /* aborted: nothing serves any more */
		cleanup_exit(S, CLI_EXIT_ERR);
}

static void open_ctl(struct super *S, const char *key)
{
	char *path = super_ctl_path(key, 1);
	int ret;

	S->ctl.fd = -1;
	if (!path)
		return;
	ret = fring_ctl_listen(&S->ctl, path);
	if (ret == -EADDRINUSE)
		fring_warn(
			"%s: another fring serves this configuration; `fring "
			"restart` reaches that one",
			path);
	else if (ret < 0)
		fring_dbg("no control socket at %s: %s (no `fring restart`)",
			  path, strerror(-ret));
	if (ret < 0)
		S->ctl.fd = -1;
	free(path);
}

static void on_chan(struct super *S)
{
	struct tko_msg m;
	int fds[TKO_MAX_FDS];
	unsigned nfds;
	int rc = tko_recv(S->chan, &m, fds, TKO_MAX_FDS, &nfds, 0);

	if (rc == 1 && m.type == TKO_MOUNT) {
		super_take_mount(S, &m, fds, nfds);
		if (S->key) /* something serves now: restart may be asked */
			open_ctl(S, S->key);
		S->key = NULL;
		return;
	}
	tko_close_fds(fds, nfds);
	if (rc == 0) { /* the server is gone; SIGCHLD tells how */
		close(S->chan);
		S->chan = -1;
	}
}

__attribute__((noreturn)) void super_run(pid_t child, int chan, const char *key)
{
	static struct super S;
	sigset_t set;
	ssize_t len;
	int sfd;

	S.server = child;
	S.chan = chan;
	len = readlink("/proc/self/exe", S.exe, sizeof(S.exe) - 1);
	S.exe[len > 0 ? len : 0] = '\0';
	S.argv = read_cmdline();
	S.ctl.fd = -1;
	S.key = key;
	cli_serving_signals(&set);
	sigaddset(&set, SIGCHLD);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = S.chan, .events = POLLIN },
			{ .fd = S.ctl.fd, .events = POLLIN },
		};
		struct signalfd_siginfo si;

		if (poll(pfd, 3, -1) < 0)
			continue;
		if (pfd[1].revents)
			on_chan(&S);
		if (pfd[2].revents)
			on_ctl(&S);
		if (!pfd[0].revents || read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM)
			kill(S.server, (int)si.ssi_signo);
		/* Not passed on: one log line, from the process that got it. */
		else if (si.ssi_signo != SIGCHLD)
			cli_log_ignored((int)si.ssi_signo, "supervisor");
		reap(&S);
	}
}
