// SPDX-License-Identifier: MIT
/*
 * fring_loader_probe: load a plugin in a forked child first. Its
 * constructors, entry and load() run before the handshake can say anything
 * about it, and any of them may crash, exit or hang; in a child that ends
 * only the child, and the caller (fring plugins, check, run, an embedding
 * program) gets a one-line error naming the signal instead of dying of it.
 * The child sends the descriptor's strings back over a pipe, so listing
 * and looking up by descriptor name never load a plugin in this process.
 *
 * Record, one field after another, each "TAG text\0": R<rc>, then either
 * E<why> or N<name> V<version> D<description> H<help> A<major>.<minor>
 * (absent strings are left out).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "loader/loader_internal.h"

int fring_loader_probe_timeout_ms = 10000;

/* One probed file, kept for the life of the process (a plugin loaded in
 * this process stays loaded too). */
struct probed {
	char *path;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	int rc;
	char *why;                     /* rc < 0: reason, without the name */
	struct fring_plugin_info info; /* rc == 0 */
};

static struct probed **cache; /* pointers: callers keep &p->info */
static size_t ncache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the child ---- */

static void put(char **buf, size_t *len, char tag, const char *s)
{
	size_t n = strlen(s) + 2;
	char *b;

	b = realloc(*buf, *len + n);
	if (!b)
		_exit(125);
	b[*len] = tag;
	memcpy(b + *len + 1, s, n - 1);
	*buf = b;
	*len += n;
}

static void put_opt(char **buf, size_t *len, char tag, const char *s)
{
	if (s)
		put(buf, len, tag, s);
}

static __attribute__((noreturn)) void child(int wfd, const char *path,
					    const struct fring_host_api *host)
{
	struct fring_loaded_plugin *lp = NULL;
	char *err = NULL, *buf = NULL, num[32];
	size_t len = 0, off = 0, plen = strlen(path);
	int rc;

	/* Whatever a plugin prints while loading must not reach our stdout
	 * (the table of `fring plugins`, the ready lines). */
	dup2(STDERR_FILENO, STDOUT_FILENO);
	rc = fring_loader_open_file(path, path, host, &lp, &err);
	snprintf(num, sizeof(num), "%d", rc);
	put(&buf, &len, 'R', num);
	if (rc) {
		const char *why = err ? err : strerror(-rc);

		/* The parent names the plugin as its caller did. */
		if (!strncmp(why, "plugin '", 8) && !strncmp(why + 8, path, plen) &&
		    !strncmp(why + 8 + plen, "': ", 3))
			why += 11 + plen;
		put(&buf, &len, 'E', why);
	} else {
		put_opt(&buf, &len, 'N', lp->desc.name);
		put_opt(&buf, &len, 'V', lp->desc.version);
		put_opt(&buf, &len, 'D', lp->desc.description);
		put_opt(&buf, &len, 'H', lp->desc.config_help);
		snprintf(num, sizeof(num), "%u.%u", lp->desc.abi_major,
			 lp->desc.abi_minor);
		put(&buf, &len, 'A', num);
	}
	while (off < len) {
		ssize_t w = write(wfd, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(126);
		off += (size_t)w;
	}
	/* _exit: no atexit handlers, no flush of stdio copied from the
	 * parent, no plugin destructors that assume it served. */
	_exit(0);
}

/* ---- the parent ---- */

static long ms_left(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (deadline->tv_sec - now.tv_sec) * 1000 +
	       (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

/* Everything the child writes until it closes the pipe; -ETIMEDOUT if it
 * takes longer than the timeout. */
static int read_record(int fd, char **buf, size_t *len)
{
	struct timespec deadline;
	size_t cap = 0;

	*buf = NULL;
	*len = 0;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += fring_loader_probe_timeout_ms / 1000;
	deadline.tv_nsec += (fring_loader_probe_timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long left = ms_left(&deadline);
		ssize_t r;
		int p;

		if (left <= 0)
			return -ETIMEDOUT;
		p = poll(&pfd, 1, (int)left);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			return -errno;
		if (p == 0)
			return -ETIMEDOUT;
		if (*len + 4096 > cap) {
			char *b = realloc(*buf, cap + 8192);

			if (!b)
				return -ENOMEM;
			*buf = b;
			cap += 8192;
		}
		r = read(fd, *buf + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		*len += (size_t)r;
	}
}

/* Fill p from a record; 0 if it was complete. */
static int parse_record(const char *buf, size_t len, struct probed *p)
{
	const char *s = buf, *end = buf + len;
	int have_rc = 0, have_abi = 0;

	while (s < end) {
		const char *nul = memchr(s, '\0', (size_t)(end - s));
		char **slot = NULL;

		if (!nul)
			return -EPROTO; /* the child died mid-write */
		switch (*s) {
		case 'R': p->rc = atoi(s + 1); have_rc = 1; break;
		case 'E': slot = &p->why; break;
		case 'N': slot = &p->info.name; break;
		case 'V': slot = &p->info.version; break;
		case 'D': slot = &p->info.description; break;
		case 'H': slot = &p->info.config_help; break;
		case 'A':
			have_abi = sscanf(s + 1, "%u.%u", &p->info.abi_major,
					  &p->info.abi_minor) == 2;
			break;
		}
		if (slot && !(*slot = strdup(s + 1)))
			return -ENOMEM;
		s = nul + 1;
	}
	if (!have_rc || (p->rc < 0 && !p->why) || (p->rc == 0 && !have_abi))
		return -EPROTO;
	return 0;
}

/* How the child ended, as the reason of a failed probe. */
static char *ended(int status, int got_record)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		const char *abbrev = sigabbrev_np(sig);

		if (abbrev)
			return fring_strf("loading it killed the process (SIG%s)",
					  abbrev);
		return fring_strf("loading it killed the process (signal %d)", sig);
	}
	if (!got_record && WIFEXITED(status))
		return fring_strf("loading it ended the process (exit status %d)",
				  WEXITSTATUS(status));
	return NULL;
}

static void run_probe(const char *path, const struct fring_host_api *host,
		      struct probed *p)
{
	int fds[2], status = 0, rc, waited, t = fring_loader_probe_timeout_ms;
	char *buf = NULL;
	size_t len = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		p->rc = -errno;
		p->why = fring_strf("cannot probe: pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL); /* nothing buffered may be written twice */
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], path, host);
	}
	close(fds[1]);
	if (pid < 0) {
		p->rc = -errno;
		p->why = fring_strf("cannot probe: fork: %s", strerror(errno));
		close(fds[0]);
		return;
	}
	rc = read_record(fds[0], &buf, &len);
	close(fds[0]);
	if (rc)
		kill(pid, SIGKILL); /* our own child, by its pid */
	do
		waited = waitpid(pid, &status, 0);
	while (waited < 0 && errno == EINTR);
	if (rc == -ETIMEDOUT) {
		p->rc = -ETIMEDOUT;
		p->why = fring_strf("loading it did not finish within %d %s "
				    "(killed; a constructor or load() that "
				    "hangs?)", t % 1000 ? t : t / 1000,
				    t % 1000 ? "ms" : "s");
	} else if (rc == 0) {
		int complete = parse_record(buf, len, p) == 0;
		/* Without our status (SIGCHLD ignored by an embedding
		 * program) a complete record is all there is to go by. */
		char *why = waited == pid ? ended(status, complete) : NULL;

		if (!why && !complete)
			why = fring_strf("loading it ended the process before it "
					 "answered");
		if (why) {
			free(p->why);
			p->why = why;
			p->rc = -ENOEXEC;
		}
	} else {
		p->rc = rc;
		p->why = fring_strf("cannot probe: %s", strerror(-rc));
	}
	free(buf);
}

static struct probed *lookup(const char *path, const struct stat *st)
{
	for (size_t i = 0; i < ncache; i++)
		if (!strcmp(cache[i]->path, path) && cache[i]->dev == st->st_dev &&
		    cache[i]->ino == st->st_ino &&
		    cache[i]->mtime.tv_sec == st->st_mtim.tv_sec &&
		    cache[i]->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return cache[i];
	return NULL;
}

static struct probed *probe_cached(const char *path,
				   const struct fring_host_api *host)
{
	struct probed *p, **grown;
	struct stat st;

	if (stat(path, &st) < 0)
		memset(&st, 0, sizeof(st)); /* the load reports why */
	p = lookup(path, &st);
	if (p)
		return p;
	grown = realloc(cache, (ncache + 1) * sizeof(*cache));
	if (!grown)
		return NULL;
	cache = grown;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(path))) {
		free(p);
		return NULL;
	}
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->mtime = st.st_mtim;
	/* In the cache before the fork, so the child holds nothing that
	 * only a register points at (valgrind would call it lost). */
	cache[ncache++] = p;
	run_probe(path, host, p);
	if (p->rc < 0 && !p->why) {
		cache[--ncache] = NULL;
		free(p->path);
		free(p);
		return NULL;
	}
	return p;
}

int fring_loader_probe(const char *name, const char *path,
		       const struct fring_host_api *host,
		       const struct fring_plugin_info **info, char **err)
{
	struct probed *p;
	int rc;

	*info = NULL;
	*err = NULL;
	pthread_mutex_lock(&cache_lock);
	p = probe_cached(path, host);
	rc = p ? p->rc : -ENOMEM;
	if (p && !rc)
		*info = &p->info;
	else if (p)
		*err = fring_strf("plugin '%s': %s", name, p->why);
	else
		*err = fring_strf("plugin '%s': out of memory", name);
	pthread_mutex_unlock(&cache_lock);
	return rc;
}
