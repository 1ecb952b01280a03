// SPDX-License-Identifier: MIT
/*
 * `fring run` / `fring mount` supervise their serving process. A server
 * that dies while it owns a request does not get its connection aborted by
 * the kernel (observed on Linux 6.18: its callers then hang, even against
 * SIGKILL, until a fusectl abort; core/transport/README.md), so the
 * serving work runs in a child and this parent, which holds no /dev/fuse
 * fd, aborts the child's connections through fusectl if it dies by a
 * signal: clients get ENOTCONN at once and the mount stays detectably dead.
 *
 * The child reports "ID MOUNTPOINT" on a pipe for each mount once it
 * serves, so only connections fring made are ever aborted.
 *
 * Signals (serve.c has the list): SIGINT/SIGTERM are passed on; SIGHUP,
 * SIGUSR1 and SIGUSR2 are logged here and not passed on, since by default
 * they would end this process and, through PR_SET_PDEATHSIG, the server.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../mount/fusectl.h"
#include "cli.h"

static int report_fd = -1;

void cli_report_mount(const char *mountpoint)
{
	unsigned id;

	if (report_fd < 0)
		return;
	id = fring_fusectl_id(mountpoint);
	if (id)
		dprintf(report_fd, "%u %s\n", id, mountpoint);
}

/* After the child died by a signal: abort what it reported. */
static void abort_reported(int rfd)
{
	FILE *f = fdopen(rfd, "r");
	char *line = NULL, mp[4096];
	size_t cap = 0;
	unsigned id;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		int rc;

		if (sscanf(line, "%u %4095[^\n]", &id, mp) != 2)
			continue;
		rc = fring_fusectl_abort(id);
		if (rc)
			fprintf(stderr, "fring: could not abort the connection of %s "
				"(fusectl: %s); callers may hang until it is aborted\n",
				mp, strerror(-rc));
		else
			fprintf(stderr, "fring: aborted the connection of %s: callers "
				"now get ENOTCONN; clear the mountpoint with: "
				"fusermount3 -u %s  (or as root: umount -l %s)\n",
				mp, mp, mp);
	}
	free(line);
	fclose(f);
}

int cli_supervise(void)
{
	sigset_t set;
	int p[2];
	pid_t parent = getpid(), child;

	if (getenv("FRING_NO_SUPERVISOR"))
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	/* The serving signals are already blocked (cli_block_signals);
	 * SIGCHLD too, so the parent takes them all with sigwaitinfo. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fflush(NULL);
	child = fork();
	if (child < 0)
		return -errno;
	if (child == 0) {
		close(p[0]);
		report_fd = p[1];
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		/* If the supervisor goes, unmount cleanly rather than linger. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			raise(SIGTERM);
		return 0;
	}
	close(p[1]);
	cli_serving_signals(&set);
	sigaddset(&set, SIGCHLD);
	for (;;) {
		int status, sig = sigwaitinfo(&set, NULL);
		pid_t w;

		if (sig == SIGINT || sig == SIGTERM) {
			kill(child, sig);
			continue;
		}
		/* Not passed on: one log line, from the process that got it. */
		if (sig == SIGHUP || sig == SIGUSR1 || sig == SIGUSR2) {
			cli_log_ignored(sig, "supervisor");
			continue;
		}
		w = waitpid(child, &status, WNOHANG);
		if (w != child)
			continue;
		if (WIFEXITED(status))
			exit(WEXITSTATUS(status));
		fprintf(stderr, "fring: the serving process (pid %d) died: %s\n",
			child, strsignal(WTERMSIG(status)));
		abort_reported(p[0]);
		exit(CLI_EXIT_ERR);
	}
}
