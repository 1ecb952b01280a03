/* Dead-mountpoint detection; see stale.h. */
#define _GNU_SOURCE
#include "stale.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "../runtime/log.h"

int fring_mount_check_stale(const char *mountpoint, char **err)
{
	struct stat st;
	int e;

	if (stat(mountpoint, &st) == 0)
		return 0;
	e = errno;
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
