// SPDX-License-Identifier: MIT
/*
 * The kernel mount (kmount): mount and unmount through libfuse3 (mount(2)
 * as root, fusermount3 otherwise). Only the mount(2) plumbing: the
 * protocol on the returned fd is ours, and the mount it serves (config
 * entry, session, the plugins' fring_mount) is the runtime's.
 * Kept apart from the protocol headers because <fuse_lowlevel.h> clashes
 * with core/proto/fring_uapi.h.
 */
#ifndef FRING_MOUNT_H
#define FRING_MOUNT_H

struct fring_kmount;

/* What mount(2) gets, in libfuse's option words (fuse(8)). The mount
 * option table (config/config_mount.c) names each; the runtime's own
 * options (trust_plugin_permissions, blksize) are not here. */
struct fring_kmount_opts {
	int default_permissions, allow_other, ro;
	/* 1: the no-word (nosuid...), -1: the word (suid...), 0: unsaid,
	 * libfuse's default stands (nosuid, nodev, exec, relatime) */
	int nosuid, nodev, noexec, noatime;
	unsigned max_read; /* bytes per READ, >= 4096; 0: the kernel's (none) */
	/* fusermount3 unmounts once the mounting process is gone */
	int auto_unmount;
	char *fsname;  /* source shown in /proc/mounts; NULL: none */
	char *subtype; /* fstype becomes fuse.<subtype>; NULL: none */
};

/* Mount. Returns 0, the /dev/fuse fd (owned by the handle, close-on-exec)
 * and the handle; or -errno and a one-line *err, with nothing mounted. */
int fring_kmount_open(const char *mountpoint, const struct fring_kmount_opts *o,
		      int *fd, struct fring_kmount **h, char **err);

/* Takeover: a handle for the mount on mountpoint that another process
 * made, served through fd (owned by the handle from now on); unmounted
 * as fring_kmount_unmount does. 0 or -ENOMEM. */
int fring_kmount_adopt(const char *mountpoint, int fd, struct fring_kmount **h);

/* Unmount (lazily, as libfuse does) and close the fd. Idempotent. Reads on
 * the connection then fail with ENODEV once the kernel drops the mount. */
void fring_kmount_unmount(struct fring_kmount *h);

/* Unmount connection conn_id (fring_fusectl_id) from mountpoint, lazily,
 * if it is mounted there with nothing over it (umount2, or fusermount3
 * -u -z without the right): 1 unmounted, 0 not there, or -errno. For a
 * process that holds no handle (the supervisor). */
int fring_kmount_detach(unsigned conn_id, const char *mountpoint);

/* Unmount if still mounted, and free the handle. */
void fring_kmount_close(struct fring_kmount *h);
/* Never unmount by path from now on (another mount covers ours: umount
 * would take that one); the fd still closes at fring_kmount_close. */
void fring_kmount_disown(struct fring_kmount *h);

#endif /* FRING_MOUNT_H */
