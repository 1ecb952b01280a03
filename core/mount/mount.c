// SPDX-License-Identifier: MIT
/* Mount plumbing through libfuse3; see mount.h. */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 35
#include "mount.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdlib.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/log.h"
#include "mountinfo.h"

struct fring_kmount {
	struct fuse_session *se; /* NULL: adopted (fring_kmount_adopt) */
	char *adopted_mp;
	int adopted_fd;
	int mounted;
	pthread_mutex_t lock;
};

/* libfuse insists on an ops table; we never run its loop, so it is empty. */
static const struct fuse_lowlevel_ops empty_ops;

static int add_opt(char **opts, const char *key, const char *val)
{
	char *kv;
	int ret;

	if (!val)
		return fuse_opt_add_opt(opts, key);
	kv = fring_strf("%s=%s", key, val);
	if (!kv)
		return -1;
	/* Escapes ',' and '\' so names cannot smuggle in options. */
	ret = fuse_opt_add_opt_escaped(opts, kv);
	free(kv);
	return ret;
}

static char *build_opts(const struct fring_kmount_opts *o)
{
	char *opts = NULL;
	int bad = 0;

	if (o->default_permissions)
		bad |= add_opt(&opts, "default_permissions", NULL);
	if (o->allow_other)
		bad |= add_opt(&opts, "allow_other", NULL);
	if (o->ro)
		bad |= add_opt(&opts, "ro", NULL);
	/* 0: unsaid, libfuse's default stands */
	if (o->nosuid)
		bad |= add_opt(&opts, o->nosuid > 0 ? "nosuid" : "suid", NULL);
	if (o->nodev)
		bad |= add_opt(&opts, o->nodev > 0 ? "nodev" : "dev", NULL);
	if (o->noexec)
		bad |= add_opt(&opts, o->noexec > 0 ? "noexec" : "exec", NULL);
	if (o->noatime)
		bad |= add_opt(&opts, o->noatime > 0 ? "noatime" : "atime",
			       NULL);
	if (o->max_read) {
		char n[16];

		snprintf(n, sizeof(n), "%u", o->max_read);
		bad |= add_opt(&opts, "max_read", n);
	}
	if (o->auto_unmount)
		bad |= add_opt(&opts, "auto_unmount", NULL);
	if (o->fsname && *o->fsname)
		bad |= add_opt(&opts, "fsname", o->fsname);
	if (o->subtype && *o->subtype)
		bad |= add_opt(&opts, "subtype", o->subtype);
	if (bad) {
		free(opts);
		return NULL;
	}
	return opts ? opts : strdup("");
}

int fring_kmount_open(const char *mountpoint, const struct fring_kmount_opts *o,
		      int *fd, struct fring_kmount **h, char **err)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fring_kmount *km;
	char *opts = build_opts(o);
	int ret = -ENOMEM, e;

	*h = NULL;
	*fd = -1;
	if (!opts)
		goto fail_msg;
	if (fuse_opt_add_arg(&args, "fring") || (*opts &&
	    (fuse_opt_add_arg(&args, "-o") || fuse_opt_add_arg(&args, opts))))
		goto fail_msg;
	km = calloc(1, sizeof(*km));
	if (!km)
		goto fail_msg;
	pthread_mutex_init(&km->lock, NULL);

	km->se = fuse_session_new(&args, &empty_ops, sizeof(empty_ops), NULL);
	if (!km->se) {
		*err = fring_strf("%s: invalid mount options '%s' (see messages "
				  "above)", mountpoint, opts);
		ret = -EINVAL;
		goto fail_free;
	}
	errno = 0;
	if (fuse_session_mount(km->se, mountpoint) != 0) {
		e = errno ? errno : EIO;
		*err = fring_strf("%s: mount failed: %s (see messages above)",
				  mountpoint, strerror(e));
		ret = -e;
		fuse_session_destroy(km->se);
		goto fail_free;
	}
	km->mounted = 1;
	*fd = fuse_session_fd(km->se);
	/* Children must never hold the connection: the kernel aborts it only
	 * when its last fd closes (fs/fuse/dev.c fuse_dev_release). */
	fcntl(*fd, F_SETFD, FD_CLOEXEC);
	*h = km;
	fuse_opt_free_args(&args);
	free(opts);
	return 0;

fail_free:
	pthread_mutex_destroy(&km->lock);
	free(km);
	fuse_opt_free_args(&args);
	free(opts);
	return ret;
fail_msg:
	fuse_opt_free_args(&args);
	free(opts);
	*err = fring_strf("%s: out of memory building mount options", mountpoint);
	return ret;
}

/* Detach mountpoint as libfuse's unmount does: umount2 as root, else
 * fusermount3 -u -z. 0 or -errno. */
static int detach(const char *mountpoint)
{
	char *argv[] = { "fusermount3",      "-u", "-z", "--",
			 (char *)mountpoint, NULL };
	pid_t pid;
	int st;

	if (umount2(mountpoint, MNT_DETACH) == 0)
		return 0;
	if (errno != EPERM)
		return -errno;
	if (posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ))
		return -EPERM;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -EPERM;
	return 0;
}

/* What libfuse's unmount does for a mount it did not make: close the fd,
 * then detach. */
static void unmount_adopted(struct fring_kmount *h)
{
	close(h->adopted_fd);
	h->adopted_fd = -1;
	detach(h->adopted_mp);
}

int fring_kmount_detach(unsigned conn_id, const char *mountpoint)
{
	int where = fring_kmount_where(conn_id, mountpoint), rc;

	if (where < 0)
		return where;
	if (where != FRING_KMOUNT_TOP)
		return 0;
	rc = detach(mountpoint);
	return rc ? rc : 1;
}

int fring_kmount_adopt(const char *mountpoint, int fd, struct fring_kmount **h)
{
	struct fring_kmount *km = calloc(1, sizeof(*km));

	*h = NULL;
	if (!km || !(km->adopted_mp = strdup(mountpoint))) {
		free(km);
		return -ENOMEM;
	}
	pthread_mutex_init(&km->lock, NULL);
	km->adopted_fd = fd;
	km->mounted = 1;
	*h = km;
	return 0;
}

void fring_kmount_unmount(struct fring_kmount *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	if (h->mounted && !h->se) {
		unmount_adopted(h);
		h->mounted = 0;
	} else if (h->mounted) {
		/* Closes the session fd first, then umount2(MNT_DETACH) (or
		 * fusermount3 -u -z): no FUSE request is needed, so this cannot
		 * wait on our own workers. */
		fuse_session_unmount(h->se);
		h->mounted = 0;
	}
	pthread_mutex_unlock(&h->lock);
}

void fring_kmount_disown(struct fring_kmount *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->mounted = 0;
	pthread_mutex_unlock(&h->lock);
}

void fring_kmount_close(struct fring_kmount *h)
{
	if (!h)
		return;
	fring_kmount_unmount(h);
	/* The fd is already closed (-1 in the session), so destroy only
	 * frees; our ops table has no destroy callback to run. */
	if (h->se)
		fuse_session_destroy(h->se);
	else if (h->adopted_fd >= 0)
		close(h->adopted_fd); /* disowned: never unmounted by path */
	free(h->adopted_mp);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
