// SPDX-License-Identifier: MIT
/* The supervisor's control socket: $FRING_RUNTIME_DIR (default /run/fring)
 * /<FNV-1a of the absolute config path>.sock, mode 0600; a peer that is
 * neither root nor our uid is refused and logged (SO_PEERCRED). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../base/log.h"
#include "super.h"

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

char *super_ctl_path(const char *key)
{
	const char *dir = getenv("FRING_RUNTIME_DIR");
	char abs[PATH_MAX];

	if (!key || !realpath(key, abs))
		return NULL;
	if (!dir || !*dir)
		dir = "/run/fring";
	return fring_strf("%s/%016llx.sock", dir,
			  (unsigned long long)fnv1a(abs));
}

static int addr_of(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	strcpy(a->sun_path, path);
	return 0;
}

int super_ctl_connect(const char *path)
{
	struct sockaddr_un a;
	int fd, ret = addr_of(path, &a);

	if (ret)
		return ret;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int super_ctl_listen(const char *path)
{
	char *dir = strdup(path), *slash;
	struct sockaddr_un a;
	mode_t old;
	int fd, ret = addr_of(path, &a);

	if (ret || !dir) {
		free(dir);
		return ret ? ret : -ENOMEM;
	}
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755); /* exists already, or the bind says why */
	}
	free(dir);
	fd = super_ctl_connect(path);
	if (fd >= 0) {
		close(fd);
		return -EADDRINUSE; /* a live supervisor of the same config */
	}
	unlink(path); /* a stale one: its supervisor died */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	old = umask(0177);
	ret = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (ret == 0)
		ret = chmod(path, 0600);
	if (ret == 0)
		ret = listen(fd, 4);
	if (ret < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int super_ctl_accept(int lfd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
	    (cr.uid != 0 && cr.uid != geteuid())) {
		fring_warn("control socket: refused a connection from uid %d "
			   "(pid %d): only root or uid %d may restart",
			   len == sizeof(cr) ? (int)cr.uid : -1,
			   len == sizeof(cr) ? (int)cr.pid : -1, (int)geteuid());
		close(fd);
		return -EPERM;
	}
	return fd;
}
