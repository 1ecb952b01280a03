// SPDX-License-Identifier: MIT
/*
 * unlink and rmdir.
 */
#include <string.h>
#include <unistd.h>

#include "ops.h"

void mfs_unlink_entry(struct memfs *fs, struct mfs_inode *p,
		      struct mfs_dirent *de, const struct timespec *now)
{
	struct mfs_inode *in = de->inode;

	mfs_dir_remove(&p->dir, de);
	if (S_ISDIR(in->mode)) {
		/* An empty dir has just "." and its name: both go. */
		in->nlink = 0;
		in->dir.parent = NULL;
		p->nlink--;
	} else {
		in->nlink--;
	}
	in->ctime = *now;
	p->mtime = p->ctime = *now;
	mfs_maybe_free(fs, in);
}

/* Find `name` in dir `parent` for removal (write lock held). */
static int find_victim(struct memfs *fs, const struct fring_name_args *a,
		       const struct mfs_cred *c, struct mfs_inode **pp,
		       struct mfs_dirent **dep)
{
	struct mfs_inode *p = mfs_iget(fs, a->parent);
	int err;

	if (!p)
		return -ENOENT;
	if (!S_ISDIR(p->mode))
		return -ENOTDIR;
	if (a->namelen > MFS_NAME_MAX)
		return -ENAMETOOLONG;
	err = mfs_check(fs, p, c, W_OK | X_OK);
	if (err)
		return err;
	*dep = mfs_dir_find(&p->dir, a->name, a->namelen);
	if (!*dep)
		return -ENOENT;
	err = mfs_sticky_ok(p, (*dep)->inode, c);
	*pp = p;
	return err;
}

void mfs_op_unlink(void *inst, fring_req *r, const struct fring_name_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *p;
	struct mfs_dirent *de;
	struct timespec now;
	struct mfs_cred c;
	int err;

	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	err = find_victim(fs, a, &c, &p, &de);
	if (!err && S_ISDIR(de->inode->mode))
		err = -EISDIR;
	if (!err) {
		mfs_now(&now);
		mfs_unlink_entry(fs, p, de, &now);
	}
	pthread_rwlock_unlock(&fs->lock);
	mfs_err(r, err);
}

void mfs_op_rmdir(void *inst, fring_req *r, const struct fring_name_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *p;
	struct mfs_dirent *de;
	struct timespec now;
	struct mfs_cred c;
	int err;

	if (a->namelen == 1 && a->name[0] == '.') {
		mfs_err(r, -EINVAL);
		return;
	}
	if (a->namelen == 2 && !memcmp(a->name, "..", 2)) {
		mfs_err(r, -ENOTEMPTY);
		return;
	}
	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	err = find_victim(fs, a, &c, &p, &de);
	if (!err && !S_ISDIR(de->inode->mode))
		err = -ENOTDIR;
	else if (!err && de->inode->dir.nlive)
		err = -ENOTEMPTY;
	if (!err) {
		mfs_now(&now);
		mfs_unlink_entry(fs, p, de, &now);
	}
	pthread_rwlock_unlock(&fs->lock);
	mfs_err(r, err);
}
