// SPDX-License-Identifier: MIT
/*
 * Control sockets (core/base/ctl_sock.c) on real AF_UNIX sockets in a
 * temporary runtime directory: the path, the round trip, the 0600 mode,
 * stale sockets, and a peer of another uid refused and logged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "base/ctl_sock.h"

static char tmp[64], run[128];

static void setup(void)
{
	strcpy(tmp, "/tmp/fring-ctl-XXXXXX");
	cr_assert(mkdtemp(tmp));
	snprintf(run, sizeof(run), "%s/run", tmp);
	setenv("FRING_RUNTIME_DIR", run, 1);
}

static void teardown(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(ctl_sock, .init = setup, .fini = teardown);

/* Wait for a connection and take it. */
static int accept_one(struct fring_ctl_server *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	cr_assert_eq(poll(&p, 1, 5000), 1, "no connection within 5 s");
	return fring_ctl_accept(s);
}

Test(ctl_sock, path_is_kind_and_key_hash_in_a_0700_dir)
{
	char path[108], want[160];
	struct stat st;

	/* FNV-1a 64's published values. */
	cr_assert_eq(fring_ctl_hash(""), 0xcbf29ce484222325ull);
	cr_assert_eq(fring_ctl_hash("a"), 0xaf63dc4c8601ec8cull);
	cr_assert_eq(fring_ctl_path(path, sizeof(path), "stats", "/mnt/a", 1),
		     0);
	snprintf(want, sizeof(want), "%s/stats-%016llx.sock", run,
		 (unsigned long long)fring_ctl_hash("/mnt/a"));
	cr_assert_str_eq(path, want);
	cr_assert_eq(stat(run, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);
	/* Different keys, different sockets. */
	cr_assert_eq(fring_ctl_path(want, sizeof(want), "stats", "/mnt/b", 0),
		     0);
	cr_assert_str_neq(path, want);
	/* Too long for sun_path. */
	setenv("FRING_RUNTIME_DIR",
	       "/tmp/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	       1);
	cr_assert_eq(fring_ctl_path(path, sizeof(path), "stats", "/m", 0),
		     -ENAMETOOLONG);
}

static void *client(void *arg)
{
	char *reply = NULL;
	int rc = fring_ctl_call(arg, "ping 42", &reply);

	if (rc < 0)
		return NULL;
	return reply;
}

Test(ctl_sock, round_trip_and_0600)
{
	struct fring_ctl_server s;
	char path[108], line[64];
	pthread_t t;
	struct stat st;
	void *reply;
	int fd;

	cr_assert_eq(fring_ctl_path(path, sizeof(path), "test", "k", 1), 0);
	cr_assert_eq(fring_ctl_listen(&s, path), 0);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_assert_eq(fring_ctl_accept(&s), -EAGAIN);

	cr_assert_eq(pthread_create(&t, NULL, client, path), 0);
	fd = accept_one(&s);
	cr_assert_geq(fd, 0, "accept: %s", strerror(-fd));
	cr_assert_eq(fring_ctl_read_line(fd, line, sizeof(line)), 7);
	cr_assert_str_eq(line, "ping 42");
	cr_assert_eq(fring_ctl_write_all(fd, "pong\nline 2\n", 12), 0);
	close(fd);
	pthread_join(t, &reply);
	cr_assert_not_null(reply);
	cr_assert_str_eq(reply, "pong\nline 2\n");
	free(reply);

	fring_ctl_close(&s);
	cr_assert_eq(access(path, F_OK), -1, "close leaves the socket file");
	cr_assert_eq(fring_ctl_connect(path), -ENOENT);
}

Test(ctl_sock, stale_socket_replaced_live_one_kept)
{
	struct fring_ctl_server a, b;
	char path[108], file[160];
	int fd;

	cr_assert_eq(fring_ctl_path(path, sizeof(path), "test", "stale", 1), 0);
	cr_assert_eq(fring_ctl_listen(&a, path), 0);
	/* Someone answers: the second server must not take the path. */
	cr_assert_eq(fring_ctl_listen(&b, path), -EADDRINUSE);
	/* A dead server's socket (closed, never unlinked): nobody answers. */
	close(a.fd);
	cr_assert_eq(access(path, F_OK), 0);
	cr_assert_eq(fring_ctl_connect(path), -ECONNREFUSED);
	cr_assert_eq(fring_ctl_listen(&b, path), 0);
	fd = fring_ctl_connect(path);
	cr_assert_geq(fd, 0);
	close(fd);
	fring_ctl_close(&b);

	/* Not a socket: left alone. */
	snprintf(file, sizeof(file), "%s/plain", run);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(fring_ctl_listen(&b, file), -EEXIST);
	cr_assert_eq(access(file, F_OK), 0);
}

Test(ctl_sock, other_uid_refused_and_logged)
{
	struct fring_ctl_server s;
	char path[108], logf[160], log[1024], want[64];
	struct passwd *nobody = getpwnam("nobody");
	int saved, lfd, fd, status;
	ssize_t n;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("needs root to setuid() a child to nobody");
	cr_assert_not_null(nobody);
	cr_assert_eq(fring_ctl_path(path, sizeof(path), "test", "peer", 1), 0);
	cr_assert_eq(fring_ctl_listen(&s, path), 0);
	/* Open the file modes, so only the SO_PEERCRED check stands in the
	 * way (with 0700/0600 the kernel refuses nobody's connect itself). */
	cr_assert_eq(chmod(tmp, 0755), 0);
	cr_assert_eq(chmod(run, 0755), 0);
	cr_assert_eq(chmod(path, 0666), 0);

	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *reply = NULL;
		int rc;

		if (setgid(nobody->pw_gid) || setuid(nobody->pw_uid))
			_exit(10);
		rc = fring_ctl_call(path, "stats", &reply);
		if (rc != -EACCES)
			_exit(11);
		if (!reply || strncmp(reply, FRING_CTL_REFUSED,
				      strlen(FRING_CTL_REFUSED)))
			_exit(12);
		_exit(0);
	}

	snprintf(logf, sizeof(logf), "%s/log", tmp);
	lfd = open(logf, O_CREAT | O_RDWR | O_TRUNC, 0600);
	cr_assert_geq(lfd, 0);
	fflush(stderr);
	saved = dup(2);
	dup2(lfd, 2);
	fd = accept_one(&s);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	cr_assert_eq(fd, -EACCES);

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "client exit %d",
		     WEXITSTATUS(status));

	n = pread(lfd, log, sizeof(log) - 1, 0);
	cr_assert_gt(n, 0, "nothing logged for a refused peer");
	log[n] = '\0';
	snprintf(want, sizeof(want), "pid %d uid %u", (int)pid,
		 (unsigned)nobody->pw_uid);
	cr_assert(strstr(log, want), "log lacks \"%s\": %s", want, log);
	cr_assert(strstr(log, path), "log lacks the socket: %s", log);
	close(lfd);

	/* The owner still gets in. */
	fd = fring_ctl_connect(path);
	cr_assert_geq(fd, 0);
	close(fd);
	fd = accept_one(&s);
	cr_assert_geq(fd, 0);
	close(fd);
	fring_ctl_close(&s);
}
