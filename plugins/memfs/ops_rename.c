// SPDX-License-Identifier: MIT
/*
 * rename(2) and renameat2(2) with RENAME_NOREPLACE / RENAME_EXCHANGE.
 *
 * A replaced target keeps its directory entry (and so its readdir cookie),
 * which then points at the moved inode: no allocation after the checks, so
 * a rename either happens completely or not at all.
 */
#include <string.h>
#include <unistd.h>

#include "ops.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static bool is_dot(const char *name, uint32_t len)
{
	return (len == 1 && name[0] == '.') ||
	       (len == 2 && !memcmp(name, "..", 2));
}

/* Is `dir` equal to or below directory `a`? */
static bool in_subtree(const struct memfs *fs, const struct mfs_inode *a,
		       const struct mfs_inode *dir)
{
	for (const struct mfs_inode *x = dir; x; x = x->dir.parent) {
		if (x == a)
			return true;
		if (x == fs->root)
			break;
	}
	return false;
}

/* Directory `d` moves from `from` to `to`: fix ".." and link counts. */
static void move_dir(struct mfs_inode *d, struct mfs_inode *from,
		     struct mfs_inode *to)
{
	if (!S_ISDIR(d->mode) || from == to)
		return;
	d->dir.parent = to;
	from->nlink--;
	to->nlink++;
}

struct rename_ctx {
	struct mfs_inode *op, *np, *src, *dst;
	struct mfs_dirent *sde, *dde;
};

static int rename_check(struct memfs *fs, const struct fring_rename_args *a,
			const struct mfs_cred *c, struct rename_ctx *x)
{
	int err;

	x->op = mfs_iget(fs, a->parent);
	x->np = mfs_iget(fs, a->newparent);
	if (!x->op || !x->np)
		return -ENOENT;
	if (!S_ISDIR(x->op->mode) || !S_ISDIR(x->np->mode))
		return -ENOTDIR;
	if (!x->np->nlink)
		return -ENOENT;
	err = mfs_check(fs, x->op, c, W_OK | X_OK);
	if (!err)
		err = mfs_check(fs, x->np, c, W_OK | X_OK);
	if (err)
		return err;
	x->sde = mfs_dir_find(&x->op->dir, a->name, a->namelen);
	if (!x->sde)
		return -ENOENT;
	x->src = x->sde->inode;
	x->dde = mfs_dir_find(&x->np->dir, a->newname, a->newnamelen);
	x->dst = x->dde ? x->dde->inode : NULL;
	if ((a->flags & RENAME_EXCHANGE) && !x->dst)
		return -ENOENT;
	if ((a->flags & RENAME_NOREPLACE) && x->dst)
		return -EEXIST;
	err = mfs_sticky_ok(x->op, x->src, c);
	if (!err && x->dst)
		err = mfs_sticky_ok(x->np, x->dst, c);
	if (err || x->src == x->dst)
		return err; /* same inode: nothing to do */
	/* A directory changing parent rewrites its "..". */
	if (x->op != x->np && S_ISDIR(x->src->mode))
		err = mfs_check(fs, x->src, c, W_OK);
	if (!err && x->op != x->np && (a->flags & RENAME_EXCHANGE) &&
	    S_ISDIR(x->dst->mode))
		err = mfs_check(fs, x->dst, c, W_OK);
	if (err)
		return err;
	if (S_ISDIR(x->src->mode) && in_subtree(fs, x->src, x->np))
		return -EINVAL;
	if (a->flags & RENAME_EXCHANGE) {
		if (S_ISDIR(x->dst->mode) && in_subtree(fs, x->dst, x->op))
			return -EINVAL;
		return 0;
	}
	if (x->dst) {
		if (S_ISDIR(x->src->mode) && !S_ISDIR(x->dst->mode))
			return -ENOTDIR;
		if (!S_ISDIR(x->src->mode) && S_ISDIR(x->dst->mode))
			return -EISDIR;
		if (S_ISDIR(x->dst->mode) && x->dst->dir.nlive)
			return -ENOTEMPTY;
	} else if (S_ISDIR(x->src->mode) && x->op != x->np &&
		   x->np->nlink >= MFS_DIR_NLINK_MAX) {
		return -EMLINK;
	}
	return 0;
}

static void do_exchange(struct rename_ctx *x)
{
	x->sde->inode = x->dst;
	x->dde->inode = x->src;
	move_dir(x->src, x->op, x->np);
	move_dir(x->dst, x->np, x->op);
}

static int do_move(struct memfs *fs, const struct fring_rename_args *a,
		   struct rename_ctx *x, const struct timespec *now)
{
	struct mfs_inode *dst = x->dst;

	if (!dst) {
		int err = mfs_dir_add(&x->np->dir, a->newname, a->newnamelen,
				      x->src);

		if (err)
			return err;
	} else {
		x->dde->inode = x->src;
	}
	mfs_dir_remove(&x->op->dir, x->sde);
	move_dir(x->src, x->op, x->np);
	if (dst) {
		if (S_ISDIR(dst->mode)) {
			dst->nlink = 0;
			dst->dir.parent = NULL;
			x->np->nlink--;
		} else {
			dst->nlink--;
		}
		dst->ctime = *now;
		mfs_maybe_free(fs, dst);
	}
	return 0;
}

void mfs_op_rename(void *inst, fring_req *r, const struct fring_rename_args *a)
{
	struct memfs *fs = inst;
	struct rename_ctx x;
	struct timespec now;
	struct mfs_cred c;
	int err;

	if (a->flags & ~(uint32_t)(RENAME_NOREPLACE | RENAME_EXCHANGE) ||
	    ((a->flags & RENAME_NOREPLACE) && (a->flags & RENAME_EXCHANGE))) {
		mfs_err(r, -EINVAL);
		return;
	}
	if (a->namelen > MFS_NAME_MAX || a->newnamelen > MFS_NAME_MAX) {
		mfs_err(r, -ENAMETOOLONG);
		return;
	}
	if (is_dot(a->name, a->namelen) || is_dot(a->newname, a->newnamelen)) {
		mfs_err(r, -EBUSY);
		return;
	}
	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	err = rename_check(fs, a, &c, &x);
	if (err || x.src == x.dst)
		goto out;
	mfs_now(&now);
	if (a->flags & RENAME_EXCHANGE) {
		do_exchange(&x);
		x.dst->ctime = now;
	} else {
		err = do_move(fs, a, &x, &now);
		if (err)
			goto out;
	}
	x.src->ctime = now;
	x.op->mtime = x.op->ctime = now;
	x.np->mtime = x.np->ctime = now;
out:
	pthread_rwlock_unlock(&fs->lock);
	mfs_err(r, err);
}
