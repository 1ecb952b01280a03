// SPDX-License-Identifier: MIT
/*
 * Abort our FUSE connection when the ring protocol went wrong. A rejected
 * commit strands its caller in uninterruptible sleep (fs/fuse/dev_uring.c
 * fuse_uring_commit_fetch: -ENOENT leaves the request unanswered); only an
 * abort frees it. The connection id was read from OUR mountpoint right
 * after mount(2) (fring_fusectl_id), so other FUSE mounts on the machine
 * are never touched, and nothing here stats the (stuck) mountpoint.
 */
#include <stdatomic.h>
#include <string.h>

#include "../base/log.h"
#include "../mount/fusectl.h"
#include "uring_internal.h"

int uring_abort_connection(struct fring_uring *u, const char *why)
{
	const char *mp = u->mountpoint ? u->mountpoint : "this mount";
	int ret;

	if (atomic_exchange(&u->fatal, 1))
		return 0; /* once is enough */
	if (!u->conn_id) {
		fring_err("uring: %s; connection id of %s unknown, cannot abort "
			  "it: callers may hang", why, mp);
		return -EINVAL;
	}
	fring_err("uring: %s: aborting the FUSE connection of %s", why, mp);
	ret = fring_fusectl_abort(u->conn_id);
	if (ret)
		fring_err("uring: cannot abort the connection through "
			  "fusectl: %s", strerror(-ret));
	return ret;
}
