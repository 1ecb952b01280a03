// SPDX-License-Identifier: MIT
/*
 * Passthrough backing files (ABI 1.3): FUSE_DEV_IOC_BACKING_OPEN and
 * FUSE_DEV_IOC_BACKING_CLOSE on the mount's /dev/fuse fd.
 */
#include "host.h"
#include "host_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/ioctl.h>

#include "dispatch_state.h"

int32_t fring_host_backing_open(fring_mount *m, int32_t fd, uint32_t flags)
{
	struct fuse_backing_map map = { .fd = fd };
	int id;

	if (!m || !atomic_load(&m->passthrough))
		return -EOPNOTSUPP;
	if (flags)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	id = ioctl(m->fuse_fd, FUSE_DEV_IOC_BACKING_OPEN, &map);
	return id < 0 ? -errno : id;
}

int32_t fring_host_backing_close(fring_mount *m, int32_t backing_id)
{
	uint32_t id = (uint32_t)backing_id;

	if (!m || !atomic_load(&m->passthrough))
		return -EOPNOTSUPP;
	if (backing_id <= 0)
		return -EINVAL;
	return ioctl(m->fuse_fd, FUSE_DEV_IOC_BACKING_CLOSE, &id) < 0 ? -errno
								       : 0;
}
