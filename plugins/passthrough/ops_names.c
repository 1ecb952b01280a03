// SPDX-License-Identifier: MIT
/*
 * Operations that remove or move names: unlink, rmdir, rename.
 *
 * In handle mode nothing needs tracking: a handle names the inode wherever
 * it lives. Inodes known by (parent, name) follow renames here, and an
 * unlinked one keeps an O_PATH fd pinned so it stays usable until the
 * kernel forgets it.
 */
#include "pt.h"

#include <stdio.h>
#include <unistd.h>

/* The path-mode inode behind name in dir, held (refs + 1), or NULL. */
static struct pt_inode *hold_path_inode(struct pt_fs *fs, int dirfd,
					const char *name)
{
	struct pt_inode *ino;
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return NULL;
	pthread_mutex_lock(&fs->lock);
	ino = pt_inode_find(fs, st.st_dev, st.st_ino);
	if (ino && (ino->handle || ino == &fs->root))
		ino = NULL;
	if (ino)
		ino->refs++;
	pthread_mutex_unlock(&fs->lock);
	return ino;
}

static void unhold(struct pt_fs *fs, struct pt_inode *ino)
{
	if (!ino)
		return;
	pthread_mutex_lock(&fs->lock);
	pt_inode_unref(fs, ino, 0, 1);
	pthread_mutex_unlock(&fs->lock);
}

/* Before a name of a path-mode non-directory goes away, get its fd so it
 * can be pinned once the removal succeeded. */
static bool victim_prepare(struct pt_fs *fs, int dirfd, const char *name,
			   struct pt_ref *v)
{
	struct pt_inode *ino = hold_path_inode(fs, dirfd, name);
	int err;

	if (!ino)
		return false;
	err = ino->type == S_IFDIR ? -EISDIR : pt_ref_get_inode(fs, ino, v);
	unhold(fs, ino);
	return err == 0;
}

static void victim_finish(struct pt_fs *fs, struct pt_ref *v, bool removed)
{
	if (removed)
		pt_pin(fs, v->ino);
	pt_ref_put(fs, v);
}

static void remove_name(struct pt_fs *fs, fring_req *r,
			const struct fring_name_args *a, int flags)
{
	struct pt_ref p, v;
	bool victim = false;
	int err = pt_ref_get(fs, a->parent, &p);

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	if (!fs->handles && !flags)
		victim = victim_prepare(fs, p.fd, a->name, &v);
	err = unlinkat(p.fd, a->name, flags) ? -errno : 0;
	if (victim)
		victim_finish(fs, &v, !err);
	pt_ref_put(fs, &p);
	fring_host->reply_err(r, err);
}

void pt_unlink(void *inst, fring_req *r, const struct fring_name_args *a)
{
	remove_name(inst, r, a, 0);
}

void pt_rmdir(void *inst, fring_req *r, const struct fring_name_args *a)
{
	remove_name(inst, r, a, AT_REMOVEDIR);
}

static void move_path(struct pt_fs *fs, struct pt_inode *ino,
		      struct pt_inode *parent, const char *name)
{
	if (!ino)
		return;
	pthread_mutex_lock(&fs->lock);
	pt_inode_set_path(fs, ino, parent, name);
	pthread_mutex_unlock(&fs->lock);
}

void pt_rename(void *inst, fring_req *r, const struct fring_rename_args *a)
{
	struct pt_fs *fs = inst;
	struct pt_inode *src = NULL, *dst = NULL;
	struct pt_ref p, np, v;
	bool victim = false;
	int err;

	err = pt_ref_get(fs, a->parent, &p);
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	err = pt_ref_get(fs, a->newparent, &np);
	if (err) {
		pt_ref_put(fs, &p);
		fring_host->reply_err(r, err);
		return;
	}
	if (!fs->handles) {
		src = hold_path_inode(fs, p.fd, a->name);
		if (a->flags & RENAME_EXCHANGE)
			dst = hold_path_inode(fs, np.fd, a->newname);
		else if (!(a->flags & RENAME_NOREPLACE))
			victim = victim_prepare(fs, np.fd, a->newname, &v);
	}
	if (!fs->handles)
		pthread_rwlock_wrlock(&fs->path_lock);
	err = renameat2(p.fd, a->name, np.fd, a->newname, a->flags) ? -errno : 0;
	if (!err) {
		move_path(fs, src, np.ino, a->newname);
		move_path(fs, dst, p.ino, a->name);
	}
	if (!fs->handles)
		pthread_rwlock_unlock(&fs->path_lock);
	if (victim)
		victim_finish(fs, &v, !err);
	unhold(fs, src);
	unhold(fs, dst);
	pt_ref_put(fs, &np);
	pt_ref_put(fs, &p);
	fring_host->reply_err(r, err);
}
