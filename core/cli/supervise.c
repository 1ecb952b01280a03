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
 * The child reports each mount once it serves, with its /dev/fuse fds
 * (takeover.h, MOUNT), so only connections fring made are ever aborted
 * and the supervisor holds every file a `fring restart` hands over
 * (super.c is the parent's loop).
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../mount/stale.h"
#include "cli.h"
#include "super.h"

int cli_supervise(const char *key)
{
	sigset_t set;
	const char *tko = getenv(TKO_ENV_FD);
	int p[2];
	pid_t parent = getpid(), child;

	if (tko) { /* a new server of a takeover: the supervisor is our parent */
		tko_server_set_chan(atoi(tko), 1);
		fring_kmount_allow_live();
		fcntl(atoi(tko), F_SETFD, FD_CLOEXEC);
		unsetenv(TKO_ENV_FD);
		return 0;
	}
	if (getenv("FRING_NO_SUPERVISOR"))
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) < 0)
		return -errno;
	/* The serving signals are already blocked (cli_block_signals);
	 * SIGCHLD too, so the parent takes them all from a signalfd. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fflush(NULL);
	child = fork();
	if (child < 0)
		return -errno;
	if (child == 0) {
		close(p[0]);
		tko_server_set_chan(p[1], 0);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		/* If the supervisor goes, unmount cleanly rather than linger. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			raise(SIGTERM);
		return 0;
	}
	close(p[1]);
	super_run(child, p[0], key);
}
