// SPDX-License-Identifier: MIT
/*
 * Turning a name in a directory into a counted entry: stat it, find or
 * create its inode (checking the file handle, so a recycled inode number
 * gets a new node), add one lookup.
 */
#include "pt.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pt_proc_path(char buf[32], int fd)
{
	snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

int pt_stat_ref(struct pt_ref *ref, struct stat *st)
{
	if (fstatat(ref->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return -errno;
	return 0;
}

/* Is the known inode the file we just opened? Only differing handles or
 * types prove otherwise (the inode number was reused after deletion). */
static bool same_file(const struct pt_inode *ino, const struct stat *st,
		      const struct file_handle *h)
{
	if (ino->type != (st->st_mode & S_IFMT))
		return false;
	if (!h || !ino->handle)
		return true;
	return ino->handle->handle_type == h->handle_type &&
	       ino->handle->handle_bytes == h->handle_bytes &&
	       memcmp(ino->handle->f_handle, h->f_handle, h->handle_bytes) == 0;
}

int pt_make_entry(struct pt_fs *fs, struct pt_inode *parent, const char *name,
		  int fd, bool opath, struct fring_entry *e)
{
	struct file_handle *h = NULL;
	struct pt_inode *ino;
	struct stat st;
	int extra = -1;

	if (fstat(fd, &st)) {
		int err = -errno;

		if (opath)
			close(fd);
		return err;
	}
	/* Failure (no support, other mount) leaves the inode in path mode. */
	if (fs->handles)
		pt_get_handle(fs, fd, &h);

	pthread_mutex_lock(&fs->lock);
	ino = pt_inode_find(fs, st.st_dev, st.st_ino);
	if (ino && ino != &fs->root && !same_file(ino, &st, h)) {
		pt_inode_unhash(fs, ino);
		ino = NULL;
	}
	if (!ino) {
		ino = pt_inode_new(fs, &st);
		if (!ino) {
			pthread_mutex_unlock(&fs->lock);
			free(h);
			if (opath)
				close(fd);
			return -ENOMEM;
		}
		ino->handle = h;
		h = NULL;
	}
	if (!ino->handle)
		pt_inode_set_path(fs, ino, parent, name);
	ino->nlookup++;
	pt_live_inode(fs, ino);
	if (opath)
		extra = pt_cache_offer_locked(fs, ino, fd);
	memset(e, 0, sizeof(*e));
	e->ino = ino->nodeid;
	e->generation = ino->generation;
	pthread_mutex_unlock(&fs->lock);

	if (extra >= 0)
		close(extra);
	free(h);
	e->entry_timeout_ns = fs->entry_timeout_ns;
	e->attr_timeout_ns = fs->attr_timeout_ns;
	fring_attr_from_stat(&st, &e->attr);
	return 0;
}

int pt_make_tmpfile_entry(struct pt_fs *fs, int fd, int opath_fd,
			  struct fring_entry *e)
{
	struct file_handle *h = NULL;
	struct pt_inode *ino;
	struct stat st;
	int extra;

	if (fstat(fd, &st)) {
		int err = -errno;

		close(opath_fd);
		return err;
	}
	if (fs->handles)
		pt_get_handle(fs, opath_fd, &h);

	pthread_mutex_lock(&fs->lock);
	/* The inode was just made: a known one of this number is a deleted
	 * file's, whatever its handle says. */
	ino = pt_inode_find(fs, st.st_dev, st.st_ino);
	if (ino && ino != &fs->root)
		pt_inode_unhash(fs, ino);
	ino = pt_inode_new(fs, &st);
	if (!ino) {
		pthread_mutex_unlock(&fs->lock);
		free(h);
		close(opath_fd);
		return -ENOMEM;
	}
	ino->handle = h;
	ino->tmpfile = true;
	ino->nlookup++;
	pt_live_inode(fs, ino);
	extra = pt_cache_pin_locked(fs, ino, opath_fd);
	memset(e, 0, sizeof(*e));
	e->ino = ino->nodeid;
	e->generation = ino->generation;
	pthread_mutex_unlock(&fs->lock);

	if (extra >= 0)
		close(extra);
	e->entry_timeout_ns = fs->entry_timeout_ns;
	e->attr_timeout_ns = fs->attr_timeout_ns;
	fring_attr_from_stat(&st, &e->attr);
	return 0;
}

int pt_lookup_at(struct pt_fs *fs, struct pt_ref *parent, const char *name,
		 struct fring_entry *e)
{
	int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return pt_make_entry(fs, parent->ino, name, fd, true, e);
}
