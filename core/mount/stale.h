// SPDX-License-Identifier: MIT
/*
 * Dead-mountpoint detection. A FUSE server that dies without unmounting
 * leaves its mountpoint in place with an aborted connection: every access
 * fails with ENOTCONN and a new mount on top would hide, not fix, it.
 */
#ifndef FRING_MOUNT_STALE_H
#define FRING_MOUNT_STALE_H

/* stat() the mountpoint. Returns 0 if it can be used; -ENOTCONN and a
 * message telling how to clear it if it is a dead FUSE mount; -EBUSY if it
 * is the root of a FUSE mount that still serves (stacking would hide it);
 * -ENOTDIR if it is not a directory; another -errno and a one-line message
 * if it cannot be stat'ed at all. */
int fring_kmount_check_stale(const char *mountpoint, char **err);

/* In a takeover's new server (`fring restart`): the mountpoints are the
 * live mounts it takes over; from now on fring_kmount_check_stale does
 * not look at them (0) and fring_kmount_realpath resolves only their
 * parent, since a request to them would wait until this process serves. */
void fring_kmount_allow_live(void);
/* realpath(3) of a mountpoint (malloc'ed, NULL + errno), as above. */
char *fring_kmount_realpath(const char *mountpoint);

#endif /* FRING_MOUNT_STALE_H */
