// SPDX-License-Identifier: MIT
/*
 * The fill of an io_uring takeover (core/transport/README.md, E6a step
 * 3), made for the new server: the old one may exit only once each of its
 * ring entries holds a request, and on a quiet mount nobody makes them.
 * So, per qid, as many processes as the qid has entries, each pinned to
 * the qid's CPU (the kernel queues a request on the qid of the CPU its
 * caller runs on), LOOKUP a name nobody has. Each blocks in the kernel
 * until the new server, serving, answers it (ENOENT from the plugin; the
 * name is new each time, so no negative dentry answers it instead).
 * Requests of real clients fill entries too: the fillers that then find
 * none wait queued in the kernel and are answered the same way.
 *
 * Processes, not threads, and holding none of the server's files: a caller
 * whose request sits in an entry cannot die until it is answered
 * (fs/fuse/dev.c request_wait_answer waits uninterruptibly once the
 * request was sent), so fillers inside the new server would keep it from
 * dying if it is killed mid-way, and the supervisor from seeing that. One
 * child forks them and reaps them; the server reaps it. Between fork and
 * the child's exit only async-signal-safe calls: the server has threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/log.h"
#include "session_internal.h"

struct filler {
	int cpu;
	char path[PATH_MAX];
};

/* The end of a forked child: exit_group itself, not _exit, which the
 * sanitizers intercept to check for leaks in a child that has none of
 * the threads their registries list ("Unable to get registers"). */
static void child_exit(void)
{
	syscall(SYS_exit_group, 0);
	for (;;)
		;
}

static void fill_one(const struct filler *f)
{
	cpu_set_t set;
	struct stat st;

	prctl(PR_SET_NAME, "fring-fill"); /* tests and ps find them by it */
	CPU_ZERO(&set);
	CPU_SET(f->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) == 0)
		fstatat(AT_FDCWD, f->path, &st, AT_SYMLINK_NOFOLLOW);
	child_exit();
}

static void *reap(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;

	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return NULL;
}

/* The fillers' parent lives until the last is answered, which is after
 * this server serves. */
static void reap_later(pid_t pid)
{
	pthread_attr_t at;
	pthread_t t;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	if (pthread_create(&t, &at, reap, (void *)(intptr_t)pid))
		fring_warn("takeover: the fillers' process %d is left to "
			   "init to reap",
			   (int)pid);
	pthread_attr_destroy(&at);
}

int fring_session_fill(struct fring_session *s, char **err)
{
	struct fring_uring *u = s->ts.uo.u;
	uint32_t nq = fring_uring_nr_qids(u), depth = fring_uring_depth(u);
	size_t n = (size_t)nq * depth;
	struct filler *f = calloc(n, sizeof(*f));
	pid_t pid;

	if (!f) {
		*err = fring_strf("%s: out of memory for the takeover's fill",
				  s->mountpoint);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		f[i].cpu = fring_uring_qid_cpu(u, (uint32_t)(i / depth));
		snprintf(f[i].path, sizeof(f[i].path),
			 "%s/.fring-takeover-fill-%d-%zu", s->mountpoint,
			 (int)getpid(), i);
	}
	pid = fork();
	if (pid == 0) {
		/* None of the server's files: its supervisor channel, rings
		 * and device files must go when it does. */
		close_range(3, ~0u, 0);
		for (size_t i = 0; i < n; i++)
			if (fork() == 0)
				fill_one(&f[i]);
		/* Reap them as they are answered, then go. */
		while (wait(NULL) > 0 || errno == EINTR)
			;
		child_exit();
	}
	if (pid < 0) {
		int e = errno;

		free(f);
		*err = fring_strf("%s: starting the takeover's fillers: %s",
				  s->mountpoint, strerror(e));
		return -e;
	}
	free(f);
	reap_later(pid);
	return 0;
}
