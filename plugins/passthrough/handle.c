// SPDX-License-Identifier: MIT
/*
 * O_PATH descriptors for known inodes: a bounded LRU cache in front of
 * open_by_handle_at() (or, in path mode, openat() walking down from the
 * nearest cached ancestor). A descriptor in use by an operation is never
 * evicted; the cache may then briefly exceed its bound.
 */
#include "pt.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pt_lru_remove(struct pt_fs *fs, struct pt_inode *ino)
{
	if (ino->lru_prev)
		ino->lru_prev->lru_next = ino->lru_next;
	else
		fs->lru_head = ino->lru_next;
	if (ino->lru_next)
		ino->lru_next->lru_prev = ino->lru_prev;
	else
		fs->lru_tail = ino->lru_prev;
	ino->lru_prev = ino->lru_next = NULL;
	fs->lru_count--;
}

static void lru_push(struct pt_fs *fs, struct pt_inode *ino)
{
	ino->lru_prev = NULL;
	ino->lru_next = fs->lru_head;
	if (fs->lru_head)
		fs->lru_head->lru_prev = ino;
	else
		fs->lru_tail = ino;
	fs->lru_head = ino;
	fs->lru_count++;
}

static void lru_touch(struct pt_fs *fs, struct pt_inode *ino)
{
	if (ino->pinned || fs->lru_head == ino)
		return;
	pt_lru_remove(fs, ino);
	lru_push(fs, ino);
}

static void lru_evict(struct pt_fs *fs)
{
	struct pt_inode *v = fs->lru_tail;

	while (fs->lru_count > fs->fd_cache_max && v) {
		struct pt_inode *prev = v->lru_prev;

		if (!v->fd_users) {
			pt_lru_remove(fs, v);
			close(v->fd);
			v->fd = -1;
		}
		v = prev;
	}
}

/* Install fd as ino's cached descriptor (lock held). Returns the fd the
 * caller must close: its own if one was already cached, else -1. */
static int cache_install(struct pt_fs *fs, struct pt_inode *ino, int fd)
{
	if (ino->fd >= 0 || ino == &fs->root)
		return fd;
	ino->fd = fd;
	lru_push(fs, ino);
	return -1;
}

int pt_cache_offer_locked(struct pt_fs *fs, struct pt_inode *ino, int fd)
{
	int extra = cache_install(fs, ino, fd);

	lru_evict(fs);
	return extra;
}

/* An O_TMPFILE inode has no name to be reopened by in path mode, and a
 * file system need not decode a handle of an inode with no links: keep its O_PATH fd outside the LRU until the inode is freed.
 * Counted in pinned_count, but not bounded by it: the kernel holds one
 * lookup per such file it still uses, each for an open file or a name. */
int pt_cache_pin_locked(struct pt_fs *fs, struct pt_inode *ino, int fd)
{
	int extra = cache_install(fs, ino, fd);

	if (ino->fd >= 0 && !ino->pinned && ino != &fs->root) {
		pt_lru_remove(fs, ino);
		ino->pinned = true;
		fs->pinned_count++;
	}
	return extra;
}

void pt_pin(struct pt_fs *fs, struct pt_inode *ino)
{
	pthread_mutex_lock(&fs->lock);
	if (ino->fd >= 0 && !ino->pinned && ino != &fs->root &&
	    fs->pinned_count < fs->fd_cache_max) {
		pt_lru_remove(fs, ino);
		ino->pinned = true;
		fs->pinned_count++;
	}
	pthread_mutex_unlock(&fs->lock);
}

void pt_tmpfile_named(struct pt_fs *fs, uint64_t nodeid)
{
	struct pt_inode *ino;

	pthread_mutex_lock(&fs->lock);
	ino = pt_inode_by_id(fs, nodeid);
	/* Reopenable now by its handle, or in path mode by the name LINK
	 * just recorded (no name: keep the pin, the fd is all there is). */
	if (ino && ino->tmpfile && (ino->handle || ino->parent)) {
		ino->tmpfile = false;
		pt_live_inode(fs, ino);
		if (ino->pinned) {
			ino->pinned = false;
			fs->pinned_count--;
			lru_push(fs, ino);
			if (!ino->fd_users)
				lru_evict(fs);
		}
	}
	pthread_mutex_unlock(&fs->lock);
}

/* Path mode: reopen ino as its parent's child, checking that the name
 * still leads to the same inode. The caller holds path_lock for reading,
 * so a rename through the mount cannot fall between the two. */
static int open_by_path(struct pt_fs *fs, struct pt_inode *ino)
{
	char name[256];
	struct pt_inode *parent;
	struct pt_ref pref;
	struct stat st;
	int fd, err;

	pthread_mutex_lock(&fs->lock);
	parent = ino->parent;
	if (parent) {
		parent->refs++;
		snprintf(name, sizeof(name), "%s", ino->name);
	}
	pthread_mutex_unlock(&fs->lock);
	if (!parent)
		return -ESTALE;

	err = pt_ref_get_inode(fs, parent, &pref);
	if (!err) {
		fd = openat(pref.fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		err = fd < 0 ? -errno : 0;
		pt_ref_put(fs, &pref);
	}
	pthread_mutex_lock(&fs->lock);
	pt_inode_unref(fs, parent, 0, 1);
	pthread_mutex_unlock(&fs->lock);
	if (err)
		return err == -ENOENT ? -ESTALE : err;

	if (fstat(fd, &st) || st.st_ino != ino->ino || st.st_dev != ino->dev) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static int open_inode(struct pt_fs *fs, struct pt_inode *ino)
{
	int fd;

	/* The walk to the root re-enters here for uncached ancestors; only
	 * the outermost call takes the lock. */
	static __thread int depth;

	if (!ino->handle) {
		if (depth++ == 0)
			pthread_rwlock_rdlock(&fs->path_lock);
		fd = open_by_path(fs, ino);
		if (--depth == 0)
			pthread_rwlock_unlock(&fs->path_lock);
		return fd;
	}
	fd = open_by_handle_at(fs->root_fd, ino->handle, O_PATH | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Lock held on entry and exit; ino must be alive and already counted in
 * ino->refs for this reference. */
static int acquire_locked(struct pt_fs *fs, struct pt_inode *ino,
			  struct pt_ref *ref)
{
	int fd, extra;

	ref->ino = ino;
	if (ino == &fs->root) {
		ref->fd = fs->root_fd;
		return 0;
	}
	if (ino->fd < 0) {
		pthread_mutex_unlock(&fs->lock);
		fd = open_inode(fs, ino);
		pthread_mutex_lock(&fs->lock);
		if (fd < 0) {
			pt_inode_unref(fs, ino, 0, 1);
			return fd;
		}
		extra = cache_install(fs, ino, fd);
		ino->fd_users++;
		lru_evict(fs);
		if (extra >= 0)
			close(extra);
	} else {
		ino->fd_users++;
		lru_touch(fs, ino);
	}
	ref->fd = ino->fd;
	return 0;
}

int pt_ref_get_inode(struct pt_fs *fs, struct pt_inode *ino,
		     struct pt_ref *ref)
{
	int err;

	pthread_mutex_lock(&fs->lock);
	ino->refs++;
	err = acquire_locked(fs, ino, ref);
	pthread_mutex_unlock(&fs->lock);
	return err;
}

int pt_ref_get(struct pt_fs *fs, uint64_t nodeid, struct pt_ref *ref)
{
	struct pt_inode *ino;
	int err;

	pthread_mutex_lock(&fs->lock);
	ino = pt_inode_by_id(fs, nodeid);
	if (!ino) {
		pthread_mutex_unlock(&fs->lock);
		return -ESTALE;
	}
	ino->refs++;
	err = acquire_locked(fs, ino, ref);
	pthread_mutex_unlock(&fs->lock);
	return err;
}

void pt_ref_put(struct pt_fs *fs, struct pt_ref *ref)
{
	struct pt_inode *ino = ref->ino;

	pthread_mutex_lock(&fs->lock);
	if (ino != &fs->root) {
		ino->fd_users--;
		if (!ino->fd_users && !ino->pinned)
			lru_evict(fs);
	}
	pt_inode_unref(fs, ino, 0, 1);
	pthread_mutex_unlock(&fs->lock);
}

/* A handle for fd, or -EXDEV when it lives on another mount than the
 * source (open_by_handle_at resolves handles against root_fd's mount). */
int pt_get_handle(struct pt_fs *fs, int fd, struct file_handle **out)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	int mount_id;
	size_t len;

	u.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", &u.fh, &mount_id, AT_EMPTY_PATH))
		return -errno;
	if (mount_id != fs->root_mount_id)
		return -EXDEV;
	len = sizeof(struct file_handle) + u.fh.handle_bytes;
	*out = malloc(len);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, &u.fh, len);
	return 0;
}

/* Decide at start whether file handles work here (the file system must
 * export them and we need CAP_DAC_READ_SEARCH for open_by_handle_at). */
int pt_probe_handles(struct pt_fs *fs)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	int fd;

	u.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fs->root_fd, "", &u.fh, &fs->root_mount_id,
			      AT_EMPTY_PATH)) {
		fring_logf(fs->mount, FRING_LOG_WARN,
			   "passthrough: %s: no file handles (%s), using paths",
			   fs->source, strerror(errno));
		return 0;
	}
	fd = open_by_handle_at(fs->root_fd, &u.fh, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		fring_logf(fs->mount, FRING_LOG_WARN,
			   "passthrough: open_by_handle_at: %s, using paths",
			   strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}
