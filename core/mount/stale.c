// SPDX-License-Identifier: MIT
/* Dead-mountpoint detection; see stale.h. */
#define _GNU_SOURCE
#include "stale.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "../base/log.h"

#define FUSE_SUPER_MAGIC 0x65735546

/* A takeover's new server: the mountpoints are live mounts it takes
 * over, which nobody serves until it does, so it must not send them a
 * request (a stat past the attribute cache would wait for ever). */
static int allow_live;

void fring_kmount_allow_live(void)
{
	allow_live = 1;
}

char *fring_kmount_realpath(const char *mountpoint)
{
	char *copy, *slash, *dir, *real;

	if (!allow_live)
		return realpath(mountpoint, NULL);
	/* The parent only: resolving the mountpoint itself would stat it. */
	copy = strdup(mountpoint);
	slash = copy ? strrchr(copy, '/') : NULL;
	if (!slash || !slash[1]) {
		free(copy);
		return realpath(mountpoint, NULL);
	}
	*slash = '\0';
	dir = realpath(slash == copy ? "/" : copy, NULL);
	real = dir ? fring_strf("%s/%s", strcmp(dir, "/") ? dir : "", slash + 1)
		   : NULL;
	free(dir);
	free(copy);
	return real;
}

/* A serving FUSE mount's root: mounting over it would hide its files and
 * leave a dead mount behind when the lower server stops. (A directory
 * inside a FUSE file system is fine: its parent is on the same device.) */
static int live_fuse_root(const char *mountpoint, const struct stat *st,
			  char **err)
{
	struct statfs sf;
	struct stat up;
	char *parent;
	int root;

	if (statfs(mountpoint, &sf) != 0 || sf.f_type != FUSE_SUPER_MAGIC)
		return 0;
	parent = fring_strf("%s/..", mountpoint);
	root = parent && stat(parent, &up) == 0 && up.st_dev != st->st_dev;
	free(parent);
	if (!root)
		return 0;
	if (err)
		*err = fring_strf("%s is already a FUSE mountpoint that serves; "
				  "mounting over it would hide its files (stop "
				  "that server or unmount it first: fusermount3 "
				  "-u %s)", mountpoint, mountpoint);
	return -EBUSY;
}

int fring_kmount_check_stale(const char *mountpoint, char **err)
{
	struct stat st;
	int e;

	if (allow_live)
		return 0;
	if (stat(mountpoint, &st) != 0)
		e = errno;
	else if (!S_ISDIR(st.st_mode))
		e = ENOTDIR; /* else mount(2) says so, after earlier mounts */
	else
		return live_fuse_root(mountpoint, &st, err);
	if (e == ENOTCONN) {
		if (err)
			*err = fring_strf(
				"%s is a dead FUSE mount left by a server that died "
				"(Transport endpoint is not connected); clear it with: "
				"fusermount3 -u %s  (or as root: umount -l %s)",
				mountpoint, mountpoint, mountpoint);
		return -ENOTCONN;
	}
	if (err)
		*err = fring_strf("%s: cannot use as mountpoint: %s", mountpoint,
				  strerror(e));
	return -e;
}
