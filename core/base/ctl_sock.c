// SPDX-License-Identifier: MIT
/* Control sockets; see ctl_sock.h. */
#define _GNU_SOURCE
#include "ctl_sock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

uint64_t fring_ctl_hash(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *key; key++) {
		h ^= (unsigned char)*key;
		h *= 0x100000001b3ull;
	}
	return h;
}

int fring_ctl_dir(char *buf, size_t len, int create)
{
	const char *d = getenv("FRING_RUNTIME_DIR");
	struct stat st;
	int n;

	if (!d || !*d)
		d = FRING_CTL_DIR_DEFAULT;
	n = snprintf(buf, len, "%s", d);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (!create)
		return 0;
	if (mkdir(buf, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(buf, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int fring_ctl_path(char *buf, size_t len, const char *kind, const char *key,
		   int create)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int n, rc;

	rc = fring_ctl_dir(dir, sizeof(dir), create);
	if (rc < 0)
		return rc;
	n = snprintf(buf, len, "%s/%s-%016" PRIx64 ".sock", dir, kind,
		     fring_ctl_hash(key));
	if (n < 0 || (size_t)n >= len ||
	    (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

static int addr_of(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	strcpy(a->sun_path, path);
	return 0;
}

static void set_timeouts(int fd)
{
	struct timeval tv = {
		.tv_sec = FRING_CTL_TIMEOUT_MS / 1000,
		.tv_usec = (FRING_CTL_TIMEOUT_MS % 1000) * 1000,
	};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int fring_ctl_connect(const char *path)
{
	struct sockaddr_un a;
	int fd, rc;

	rc = addr_of(&a, path);
	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	set_timeouts(fd);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

/* A socket file at path that nobody answers on is a dead server's. */
static int clear_stale(const char *path)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = fring_ctl_connect(path);
	if (fd >= 0) {
		close(fd);
		return -EADDRINUSE;
	}
	if (fd != -ECONNREFUSED)
		return fd;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int fring_ctl_listen(struct fring_ctl_server *s, const char *path)
{
	struct sockaddr_un a;
	int rc;

	s->fd = -1;
	s->owner = geteuid();
	rc = addr_of(&a, path);
	if (rc < 0)
		return rc;
	rc = clear_stale(path);
	if (rc < 0)
		return rc;
	strcpy(s->path, path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	/* The directory is 0700: nobody reaches the socket before the chmod. */
	if (bind(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    chmod(path, 0600) < 0 || listen(s->fd, 16) < 0) {
		rc = -errno;
		close(s->fd);
		s->fd = -1;
		unlink(path);
		return rc;
	}
	return 0;
}

int fring_ctl_accept(struct fring_ctl_server *s)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);
	char msg[96];
	int fd;

	fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	set_timeouts(fd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	if (cr.uid == 0 || cr.uid == s->owner)
		return fd;
	snprintf(msg, sizeof(msg), "%suid %u is neither root nor uid %u\n",
		 FRING_CTL_REFUSED, (unsigned)cr.uid, (unsigned)s->owner);
	fring_ctl_write_all(fd, msg, strlen(msg));
	/* Unread bytes at close reset the peer: take its request first. */
	while (recv(fd, msg, sizeof(msg), MSG_DONTWAIT) > 0)
		;
	close(fd);
	fring_log_ratelimited("ctl_sock refused", FRING_LOG_WARN,
			      "%s: refused a connection from pid %d uid %u "
			      "(only root and uid %u may ask)",
			      s->path, (int)cr.pid, (unsigned)cr.uid,
			      (unsigned)s->owner);
	return -EACCES;
}

void fring_ctl_close(struct fring_ctl_server *s)
{
	if (s->fd < 0)
		return;
	close(s->fd);
	s->fd = -1;
	unlink(s->path);
}

int fring_ctl_read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	/* Requests are a few bytes: one read per byte keeps what follows
	 * the line in the socket for the caller. */
	for (;;) {
		char c;
		ssize_t r = read(fd, &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (r == 0) {
			if (!n)
				return -ENODATA;
			break;
		}
		if (c == '\n')
			break;
		if (n + 1 >= len)
			return -EMSGSIZE;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return (int)n;
}

int fring_ctl_write_all(int fd, const char *data, size_t n)
{
	while (n) {
		ssize_t w = send(fd, data, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

int fring_ctl_read_all(int fd, char **out, size_t *n)
{
	size_t cap = 4096, len = 0;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (cap - len < 1024) {
			char *g = realloc(b, cap * 2);

			if (!g) {
				free(b);
				return -ENOMEM;
			}
			b = g;
			cap *= 2;
		}
		r = read(fd, b + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == ECONNRESET && len)
			break; /* what it sent before it went is the answer */
		if (r < 0) {
			int rc = errno == EAGAIN ? -ETIMEDOUT : -errno;

			free(b);
			return rc;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	b[len] = '\0';
	*out = b;
	if (n)
		*n = len;
	return 0;
}

int fring_ctl_call(const char *path, const char *request, char **reply)
{
	int fd, rc;

	*reply = NULL;
	fd = fring_ctl_connect(path);
	if (fd < 0)
		return fd;
	rc = fring_ctl_write_all(fd, request, strlen(request));
	if (!rc)
		rc = fring_ctl_write_all(fd, "\n", 1);
	/* A refused peer may be closed before it wrote: still read why. */
	if (rc == -EPIPE || rc == -ECONNRESET)
		rc = 0;
	if (!rc)
		rc = fring_ctl_read_all(fd, reply, NULL);
	close(fd);
	if (!rc &&
	    !strncmp(*reply, FRING_CTL_REFUSED, strlen(FRING_CTL_REFUSED)))
		rc = -EACCES;
	return rc;
}
