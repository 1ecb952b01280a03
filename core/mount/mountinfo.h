// SPDX-License-Identifier: MIT
/*
 * Where a FUSE connection is mounted, read from /proc/self/mountinfo.
 *
 * Only the namespace's own record is exact at every moment: an unmount
 * takes the mount out of it at once, while the connection's fusectl
 * directory stays until the superblock is torn down (a few ms later, after
 * the workers already saw the connection end), and a stat of the
 * mountpoint cannot tell "ours is gone" from "another mount covers ours"
 * (and fails with EIO once the kernel marked our root inode bad).
 */
#ifndef FRING_MOUNTINFO_H
#define FRING_MOUNTINFO_H

enum fring_kmount_where {
	FRING_KMOUNT_GONE,    /* no mount of the connection in this namespace */
	FRING_KMOUNT_TOP,     /* mounted on path, nothing mounted over it */
	FRING_KMOUNT_COVERED, /* a mount covers ours on path, or ours moved */
};

/* Where connection conn_id is mounted (fring_fusectl_id: major << 20 | minor)
 * relative to the absolute path, or -errno if mountinfo cannot be read. */
int fring_kmount_where(unsigned conn_id, const char *path);

#endif /* FRING_MOUNTINFO_H */
