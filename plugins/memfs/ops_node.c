// SPDX-License-Identifier: MIT
/*
 * Operations on an existing node: lookup, forget, getattr, readlink,
 * access.
 */
#include <string.h>
#include <unistd.h>

#include "ops.h"

/* Name `name` in directory p, or NULL. */
static struct mfs_inode *child(struct mfs_inode *p, const char *name,
			       uint32_t len)
{
	struct mfs_dirent *de;

	if (len == 1 && name[0] == '.')
		return p;
	if (len == 2 && !memcmp(name, "..", 2))
		return p->dir.parent;
	de = mfs_dir_find(&p->dir, name, len);
	return de ? de->inode : NULL;
}

void mfs_op_lookup(void *inst, fring_req *r, const struct fring_name_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *p, *in = NULL;
	struct fring_entry e;
	struct mfs_cred c;
	int err = 0;

	if (a->namelen > MFS_NAME_MAX) {
		mfs_err(r, -ENAMETOOLONG);
		return;
	}
	mfs_cred(r, &c);
	pthread_rwlock_rdlock(&fs->lock);
	p = mfs_iget(fs, a->parent);
	if (!p)
		err = -ENOENT;
	else if (!S_ISDIR(p->mode))
		err = -ENOTDIR;
	else
		err = mfs_check(fs, p, &c, X_OK);
	if (!err)
		in = child(p, a->name, a->namelen);
	if (err || !in) {
		pthread_rwlock_unlock(&fs->lock);
		if (err || !fs->negative_ns) {
			mfs_err(r, err ? err : -ENOENT);
			return;
		}
		/* A negative entry lets the kernel cache the miss. */
		memset(&e, 0, sizeof(e));
		e.entry_timeout_ns = fs->negative_ns;
		fring_host->reply_entry(r, &e);
		return;
	}
	mfs_fill_entry(fs, in, &e);
	mfs_lookup_inc(in);
	if (fring_host->reply_entry(r, &e) < 0)
		mfs_lookup_undo(fs, in, false);
	pthread_rwlock_unlock(&fs->lock);
}

void mfs_op_forget(void *inst, const struct fring_forget_one *items,
		   uint32_t count)
{
	struct memfs *fs = inst;

	pthread_rwlock_wrlock(&fs->lock);
	for (uint32_t i = 0; i < count; i++)
		mfs_forget_ino(fs, items[i].nodeid, items[i].nlookup);
	pthread_rwlock_unlock(&fs->lock);
}

void mfs_op_getattr(void *inst, fring_req *r,
		    const struct fring_getattr_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	struct fring_attr attr;

	pthread_rwlock_rdlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (in)
		mfs_fill_attr(in, &attr);
	pthread_rwlock_unlock(&fs->lock);
	if (!in) {
		mfs_err(r, -ENOENT);
		return;
	}
	fring_host->reply_attr(r, &attr, fs->attr_ns);
}

void mfs_op_readlink(void *inst, fring_req *r, const struct fring_node_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;

	pthread_rwlock_rdlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in)
		mfs_err(r, -ENOENT);
	else if (!S_ISLNK(in->mode))
		mfs_err(r, -EINVAL);
	else
		fring_host->reply_readlink(r, in->target, (uint32_t)in->size);
	pthread_rwlock_unlock(&fs->lock);
}

void mfs_op_access(void *inst, fring_req *r, const struct fring_access_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	struct mfs_cred c;
	int err;

	mfs_cred(r, &c);
	pthread_rwlock_rdlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in)
		err = -ENOENT;
	else if (a->mask == F_OK)
		err = 0;
	else
		err = mfs_may(in, &c, (int)a->mask);
	pthread_rwlock_unlock(&fs->lock);
	mfs_err(r, err);
}
