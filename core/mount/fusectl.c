// SPDX-License-Identifier: MIT
/* Abort a FUSE connection through fusectl; see fusectl.h. */
#define _GNU_SOURCE
#include "fusectl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define FUSECTL_DIR "/sys/fs/fuse/connections"
#define FUSECTL_SUPER_MAGIC 0x65735543 /* fs/fuse/control.c */

unsigned fring_fusectl_id(const char *mountpoint)
{
	struct statx stx;

	if (statx(AT_FDCWD, mountpoint, AT_STATX_DONT_SYNC, 0, &stx) < 0)
		return 0;
	return (stx.stx_dev_major << 20) | stx.stx_dev_minor;
}

int fring_fusectl_alive(unsigned id)
{
	char path[64];
	struct statfs fs;
	struct stat st;

	if (statfs(FUSECTL_DIR, &fs) < 0)
		return -errno;
	/* Not mounted by default on Debian: as for an abort, mount it. */
	if (fs.f_type != FUSECTL_SUPER_MAGIC &&
	    mount("fusectl", FUSECTL_DIR, "fusectl", 0, NULL) != 0 &&
	    errno != EBUSY)
		return -errno;
	snprintf(path, sizeof(path), FUSECTL_DIR "/%u", id);
	if (stat(path, &st) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

static int write_abort(unsigned id)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), FUSECTL_DIR "/%u/abort", id);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

int fring_fusectl_abort(unsigned id)
{
	int ret;

	if (!id)
		return -EINVAL;
	ret = write_abort(id);
	if (ret == -ENOENT) {
		/* fusectl is not mounted by default on Debian. */
		if (mount("fusectl", FUSECTL_DIR, "fusectl", 0, NULL) != 0 &&
		    errno != EBUSY)
			return -errno;
		ret = write_abort(id);
	}
	return ret;
}
