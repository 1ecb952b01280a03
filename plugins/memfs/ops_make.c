// SPDX-License-Identifier: MIT
/*
 * Operations that make a name or an inode: mknod, mkdir, symlink, create,
 * tmpfile, link.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"

/* The directory `parent` as a place to add a name (write lock held). */
static int dir_for_add(struct memfs *fs, const struct mfs_cred *c,
		       uint64_t parent, const char *name, uint32_t namelen,
		       struct mfs_inode **out)
{
	struct mfs_inode *p = mfs_iget(fs, parent);
	int err;

	if (!p)
		return -ENOENT;
	if (!S_ISDIR(p->mode))
		return -ENOTDIR;
	if (!p->nlink)
		return -ENOENT; /* removed while still open */
	err = mfs_check(fs, p, c, W_OK | X_OK);
	if (err)
		return err;
	if (name) {
		if (namelen > MFS_NAME_MAX)
			return -ENAMETOOLONG;
		if (!namelen)
			return -EINVAL;
		if (mfs_dir_find(&p->dir, name, namelen) ||
		    (namelen == 1 && name[0] == '.') ||
		    (namelen == 2 && !memcmp(name, "..", 2)))
			return -EEXIST;
	}
	*out = p;
	return 0;
}

/*
 * Make an inode of `mode` under `p`, named `name` unless name is NULL
 * (tmpfile). Owner is the caller; the group comes from a setgid parent,
 * which new directories inherit.
 */
static int make_node(struct memfs *fs, const struct mfs_cred *c,
		     struct mfs_inode *p, const char *name, uint32_t namelen,
		     uint32_t mode, uint32_t rdev, const char *target,
		     uint32_t tlen, struct mfs_inode **out)
{
	uint32_t gid = c->gid;
	struct mfs_inode *in;
	int err;

	if (S_ISDIR(mode) && p->nlink >= MFS_DIR_NLINK_MAX)
		return -EMLINK;
	if (p->mode & S_ISGID) {
		gid = p->gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
	}
	if (!S_ISDIR(mode) && (mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
	    c->uid != 0 && !mfs_in_group(c, gid))
		mode &= ~(uint32_t)S_ISGID;
	if (fs->ninodes >= fs->inode_limit)
		return -ENOSPC;
	in = mfs_inew(fs, mode, c->uid, gid);
	if (!in)
		return -ENOMEM;
	in->nlink = 1;
	switch (mode & S_IFMT) {
	case S_IFDIR:
		mfs_dir_init(&in->dir, p);
		in->nlink = 2;
		break;
	case S_IFLNK:
		in->target = malloc(tlen + 1);
		if (!in->target) {
			in->nlink = 0;
			mfs_maybe_free(fs, in);
			return -ENOMEM;
		}
		memcpy(in->target, target, tlen);
		in->target[tlen] = '\0';
		in->size = tlen;
		break;
	case S_IFCHR:
	case S_IFBLK:
		in->rdev = rdev;
		break;
	}
	if (!name) {
		in->nlink = 0;
		in->tmpfile = true;
		*out = in;
		return 0;
	}
	err = mfs_dir_add(&p->dir, name, namelen, in);
	if (err < 0) {
		/* Undo: a dir's payload is freed as a dir, so keep its type. */
		in->nlink = 0;
		mfs_maybe_free(fs, in);
		return err;
	}
	if (S_ISDIR(mode))
		p->nlink++;
	p->mtime = p->ctime = in->ctime;
	*out = in;
	return 0;
}

static void make_and_reply(struct memfs *fs, fring_req *r,
			   const struct fring_make_args *a, uint32_t mode)
{
	struct mfs_inode *p, *in;
	struct mfs_cred c;
	int err;

	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	err = dir_for_add(fs, &c, a->parent, a->name, a->namelen, &p);
	if (!err)
		err = make_node(fs, &c, p, a->name, a->namelen, mode, a->rdev,
				a->link_target, a->link_target_len, &in);
	if (err)
		mfs_err(r, err);
	else
		mfs_reply_entry(fs, r, in);
	pthread_rwlock_unlock(&fs->lock);
}

void mfs_op_mknod(void *inst, fring_req *r, const struct fring_make_args *a)
{
	uint32_t type = a->mode & S_IFMT;

	if (!type)
		type = S_IFREG; /* mknod(2): a zero type means regular */
	if (type != S_IFREG && type != S_IFCHR && type != S_IFBLK &&
	    type != S_IFIFO && type != S_IFSOCK) {
		mfs_err(r, -EINVAL);
		return;
	}
	make_and_reply(inst, r, a, type | (a->mode & 07777));
}

void mfs_op_mkdir(void *inst, fring_req *r, const struct fring_make_args *a)
{
	make_and_reply(inst, r, a, S_IFDIR | (a->mode & 07777));
}

void mfs_op_symlink(void *inst, fring_req *r, const struct fring_make_args *a)
{
	if (!a->link_target || !a->link_target_len) {
		mfs_err(r, -ENOENT);
		return;
	}
	if (a->link_target_len >= 4096) {
		mfs_err(r, -ENAMETOOLONG);
		return;
	}
	make_and_reply(inst, r, a, S_IFLNK | 0777);
}

/* CREATE/TMPFILE reply: one kernel reference and one open handle. */
static void reply_create(struct memfs *fs, fring_req *r, struct mfs_inode *in)
{
	struct fring_entry e;
	struct fring_open_out o = { .fh = in->ino,
				    .open_flags = FRING_FOPEN_KEEP_CACHE };

	mfs_fill_entry(fs, in, &e);
	in->nlookup++;
	in->nopen++;
	if (fring_host->reply_create(r, &e, &o) < 0) {
		in->nlookup--;
		in->nopen--;
		mfs_maybe_free(fs, in);
	}
}

void mfs_op_create(void *inst, fring_req *r, const struct fring_make_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *p, *in = NULL;
	struct mfs_dirent *de;
	struct mfs_cred c;
	int err;

	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	err = dir_for_add(fs, &c, a->parent, NULL, 0, &p);
	if (!err && !mfs_name_ok(a->namelen))
		err = a->namelen ? -ENAMETOOLONG : -EINVAL;
	if (err)
		goto out;
	de = mfs_dir_find(&p->dir, a->name, a->namelen);
	if (de) {
		/* The kernel's cache missed a name we have: plain open. */
		in = de->inode;
		if (a->flags & O_EXCL)
			err = -EEXIST;
		else if (S_ISDIR(in->mode))
			err = -EISDIR;
		else
			err = mfs_check(fs, in, &c, mfs_open_mask(a->flags));
		if (!err && S_ISREG(in->mode) && (a->flags & O_TRUNC)) {
			mfs_data_truncate(fs, &in->data, in->size, 0);
			in->size = 0;
			mfs_touch(in, true);
		}
	} else {
		err = make_node(fs, &c, p, a->name, a->namelen,
				S_IFREG | (a->mode & 07777), 0, NULL, 0, &in);
	}
	if (!err)
		reply_create(fs, r, in);
out:
	if (err)
		mfs_err(r, err);
	pthread_rwlock_unlock(&fs->lock);
}

void mfs_op_tmpfile(void *inst, fring_req *r, const struct fring_make_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *p, *in;
	struct mfs_cred c;
	int err;

	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	err = dir_for_add(fs, &c, a->parent, NULL, 0, &p);
	if (!err)
		err = make_node(fs, &c, p, NULL, 0,
				S_IFREG | (a->mode & 07777), 0, NULL, 0, &in);
	if (err)
		mfs_err(r, err);
	else
		reply_create(fs, r, in);
	pthread_rwlock_unlock(&fs->lock);
}

void mfs_op_link(void *inst, fring_req *r, const struct fring_link_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *p, *in;
	struct mfs_cred c;
	int err;

	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in)
		err = -ENOENT;
	else if (S_ISDIR(in->mode))
		err = -EPERM;
	else if (!in->nlink && !in->tmpfile)
		err = -ENOENT; /* only O_TMPFILE files may get a name back */
	else if (in->nlink >= MFS_LINK_MAX)
		err = -EMLINK;
	else
		err = dir_for_add(fs, &c, a->newparent, a->newname,
				  a->newnamelen, &p);
	if (!err)
		err = mfs_dir_add(&p->dir, a->newname, a->newnamelen, in);
	if (err) {
		mfs_err(r, err);
	} else {
		in->nlink++;
		in->tmpfile = false;
		mfs_touch(in, false);
		p->mtime = p->ctime = in->ctime;
		mfs_reply_entry(fs, r, in);
	}
	pthread_rwlock_unlock(&fs->lock);
}
