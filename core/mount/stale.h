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

/* In a takeover's new server (`fring restart`): a serving FUSE root is
 * the mount it takes over, not one to refuse. */
void fring_kmount_allow_live(void);

#endif /* FRING_MOUNT_STALE_H */
