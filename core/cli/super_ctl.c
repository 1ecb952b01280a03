// SPDX-License-Identifier: MIT
/* The supervisor's control socket, a core/base/ctl_sock socket of kind
 * "supervisor" keyed by the absolute path of the config file (`run`) or
 * of the mountpoint (`mount`): $FRING_RUNTIME_DIR (default /run/fring)
 * /supervisor-<hash>.sock, 0600, root or our uid only. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../base/ctl_sock.h"
#include "../base/log.h"
#include "super.h"

char *super_ctl_path(const char *key, int create)
{
	char abs[PATH_MAX], path[108];

	if (!key || !realpath(key, abs))
		return NULL;
	if (fring_ctl_path(path, sizeof(path), "supervisor", abs, create) < 0)
		return NULL;
	return fring_strf("%s", path);
}

int super_ctl_call(const char *path, int timeout_ms, char **reply)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	size_t n;
	int fd = fring_ctl_connect(path), ret;

	*reply = NULL;
	if (fd < 0)
		return fd;
	/* A takeover outlasts ctl_sock's default wait. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ret = fring_ctl_write_all(fd, "restart\n", 8);
	if (ret >= 0)
		ret = fring_ctl_read_all(fd, reply, &n);
	close(fd);
	return ret < 0 ? ret : 0;
}
