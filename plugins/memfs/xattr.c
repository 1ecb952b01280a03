// SPDX-License-Identifier: MIT
/*
 * Extended attributes: a small array per inode (files rarely have more
 * than a handful). user.* is only allowed on regular files and
 * directories, as on Linux.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ops.h"

void mfs_xattr_free(struct mfs_inode *in)
{
	for (uint32_t i = 0; i < in->nxattrs; i++) {
		free(in->xattrs[i].name);
		free(in->xattrs[i].value);
	}
	free(in->xattrs);
	in->xattrs = NULL;
	in->nxattrs = 0;
}

static struct mfs_xattr *xattr_find(const struct mfs_inode *in,
				    const char *name, uint32_t namelen)
{
	for (uint32_t i = 0; i < in->nxattrs; i++)
		if (in->xattrs[i].namelen == namelen &&
		    !memcmp(in->xattrs[i].name, name, namelen))
			return &in->xattrs[i];
	return NULL;
}

static bool is_user(const char *name)
{
	return !strncmp(name, "user.", 5);
}

/* The namespaces Linux knows; others are EOPNOTSUPP, as on tmpfs. */
static bool known_ns(const char *name)
{
	return is_user(name) || !strncmp(name, "trusted.", 8) ||
	       !strncmp(name, "security.", 9);
}

/* trusted.* is visible to privileged callers only. */
static bool listed(const struct mfs_xattr *x, const struct mfs_cred *c)
{
	return c->uid == 0 || strncmp(x->name, "trusted.", 8);
}

static bool user_ns_denied(const struct mfs_inode *in, const char *name)
{
	return is_user(name) && !S_ISREG(in->mode) && !S_ISDIR(in->mode);
}

static int xattr_set(struct mfs_inode *in, const struct fring_xattr_args *a)
{
	struct mfs_xattr *x = xattr_find(in, a->name, a->namelen);
	void *v;

	if (x && (a->flags & XATTR_CREATE))
		return -EEXIST;
	if (!x && (a->flags & XATTR_REPLACE))
		return -ENODATA;
	v = malloc(a->value_len ? a->value_len : 1);
	if (!v)
		return -ENOMEM;
	if (a->value_len)
		memcpy(v, a->value, a->value_len);
	if (!x) {
		struct mfs_xattr *arr = realloc(
			in->xattrs, (in->nxattrs + 1) * sizeof(*arr));
		char *name = malloc(a->namelen + 1);

		if (arr)
			in->xattrs = arr;
		if (!arr || !name) {
			free(name);
			free(v);
			return -ENOMEM;
		}
		memcpy(name, a->name, a->namelen);
		name[a->namelen] = '\0';
		x = &in->xattrs[in->nxattrs++];
		x->name = name;
		x->namelen = a->namelen;
	} else {
		free(x->value);
	}
	x->value = v;
	x->len = a->value_len;
	return 0;
}

void mfs_op_setxattr(void *inst, fring_req *r, const struct fring_xattr_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	struct mfs_cred c;
	int err;

	if (a->flags & ~(uint32_t)(XATTR_CREATE | XATTR_REPLACE)) {
		mfs_err(r, -EINVAL);
		return;
	}
	if (!a->namelen || a->namelen > MFS_XATTR_NAME_MAX) {
		mfs_err(r, -ERANGE);
		return;
	}
	if (!known_ns(a->name)) {
		mfs_err(r, -EOPNOTSUPP);
		return;
	}
	if (a->value_len > MFS_XATTR_SIZE_MAX) {
		mfs_err(r, -E2BIG);
		return;
	}
	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in)
		err = -ENOENT;
	else if (user_ns_denied(in, a->name))
		err = -EPERM;
	else if (!(err = is_user(a->name) ? mfs_check(fs, in, &c, W_OK) : 0))
		err = xattr_set(in, a);
	if (!err)
		mfs_touch(in, false);
	pthread_rwlock_unlock(&fs->lock);
	mfs_err(r, err);
}

void mfs_op_getxattr(void *inst, fring_req *r, const struct fring_xattr_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	struct mfs_xattr *x = NULL;
	struct mfs_cred c;
	int err = 0;

	mfs_cred(r, &c);
	pthread_rwlock_rdlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in)
		err = -ENOENT;
	else if (a->namelen > MFS_XATTR_NAME_MAX)
		err = -ERANGE;
	else if (!known_ns(a->name))
		err = -EOPNOTSUPP;
	else if (is_user(a->name))
		err = mfs_check(fs, in, &c, R_OK);
	if (!err && !(x = xattr_find(in, a->name, a->namelen)))
		err = -ENODATA;
	else if (!err && a->max && x->len > a->max)
		err = -ERANGE;
	if (err)
		mfs_err(r, err);
	else if (!a->max)
		fring_host->reply_xattr_size(r, x->len);
	else
		fring_host->reply_data(r, x->value, x->len);
	pthread_rwlock_unlock(&fs->lock);
}

void mfs_op_listxattr(void *inst, fring_req *r,
		      const struct fring_xattr_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	struct mfs_cred c;
	uint64_t total = 0;
	char *buf, *p;

	mfs_cred(r, &c);
	pthread_rwlock_rdlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in) {
		pthread_rwlock_unlock(&fs->lock);
		mfs_err(r, -ENOENT);
		return;
	}
	for (uint32_t i = 0; i < in->nxattrs; i++)
		if (listed(&in->xattrs[i], &c))
			total += in->xattrs[i].namelen + 1;
	if (!a->max || total > a->max || !total) {
		pthread_rwlock_unlock(&fs->lock);
		if (!a->max)
			fring_host->reply_xattr_size(r, (uint32_t)total);
		else if (total > a->max)
			mfs_err(r, -ERANGE);
		else
			fring_host->reply_data(r, NULL, 0);
		return;
	}
	buf = p = malloc(total);
	for (uint32_t i = 0; buf && i < in->nxattrs; i++) {
		if (!listed(&in->xattrs[i], &c))
			continue;
		memcpy(p, in->xattrs[i].name, in->xattrs[i].namelen + 1);
		p += in->xattrs[i].namelen + 1;
	}
	pthread_rwlock_unlock(&fs->lock);
	if (!buf)
		mfs_err(r, -ENOMEM);
	else
		fring_host->reply_data(r, buf, (uint32_t)total);
	free(buf);
}

void mfs_op_removexattr(void *inst, fring_req *r,
			const struct fring_xattr_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	struct mfs_xattr *x = NULL;
	struct mfs_cred c;
	int err = 0;

	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in)
		err = -ENOENT;
	else if (!known_ns(a->name))
		err = -EOPNOTSUPP;
	else if (is_user(a->name))
		err = mfs_check(fs, in, &c, W_OK);
	if (!err && !(x = xattr_find(in, a->name, a->namelen)))
		err = -ENODATA;
	if (!err) {
		free(x->name);
		free(x->value);
		*x = in->xattrs[--in->nxattrs];
		mfs_touch(in, false);
	}
	pthread_rwlock_unlock(&fs->lock);
	mfs_err(r, err);
}
