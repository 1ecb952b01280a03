// SPDX-License-Identifier: MIT
/*
 * Directory handles and listing: opendir, readdir, readdirplus,
 * releasedir, fsyncdir.
 *
 * Offsets are the entries' cookies ("." = 1, ".." = 2), so a listing
 * continues correctly after any number of inserts and removals; each call
 * costs O(log n) to find its place plus the entries it returns.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"

#define COOKIE_DOT 1
#define COOKIE_DOTDOT 2

void mfs_op_opendir(void *inst, fring_req *r, const struct fring_open_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	struct fring_open_out o = { .fh = a->nodeid };
	struct mfs_cred c;
	int err;

	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in) {
		mfs_err(r, -ENOENT);
	} else if (!S_ISDIR(in->mode)) {
		mfs_err(r, -ENOTDIR);
	} else if ((err = mfs_check(fs, in, &c, R_OK))) {
		mfs_err(r, err);
	} else {
		in->nopen++;
		if (fring_host->reply_open(r, &o) < 0)
			mfs_put_handle(fs, in->ino);
	}
	pthread_rwlock_unlock(&fs->lock);
}

/* Inodes counted as looked up by one READDIRPLUS reply, to take back if
 * the reply does not reach the kernel. */
struct counted {
	uint64_t *ino;
	uint32_t n, cap;
};

static bool counted_push(struct counted *c, uint64_t ino)
{
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 64;
		uint64_t *p = realloc(c->ino, cap * sizeof(*p));

		if (!p)
			return false;
		c->ino = p;
		c->cap = cap;
	}
	c->ino[c->n++] = ino;
	return true;
}

/* Add one entry; 1 added, 0 full or failed. */
static int add_one(struct memfs *fs, fring_req *r, bool plus, const char *name,
		   uint32_t namelen, struct mfs_inode *in, bool dot,
		   uint64_t next, struct counted *cnt)
{
	struct fring_entry e;
	int ret;

	if (!plus)
		return fring_host->dir_add(r, name, namelen, in->ino,
					   in->mode & S_IFMT, next) == 1;
	mfs_fill_entry(fs, in, &e);
	if (dot) {
		/* The kernel never links "." and ".." from READDIRPLUS (and so
		 * never forgets them): no lookup count. The real ino stays in
		 * the entry because it also becomes the dirent's d_ino, and
		 * readdir(3) hides entries whose d_ino is 0. */
		return fring_host->dir_add_plus(r, name, namelen, &e, next) == 1;
	}
	if (!counted_push(cnt, in->ino))
		return 0;
	mfs_lookup_inc(in);
	ret = fring_host->dir_add_plus(r, name, namelen, &e, next);
	if (ret != 1) {
		/* Not sent: the entry is still linked, so this cannot be
		 * the last reference. */
		__atomic_sub_fetch(&in->nlookup, 1, __ATOMIC_ACQ_REL);
		cnt->n--;
		return 0;
	}
	return 1;
}

static void list_dir(struct memfs *fs, fring_req *r,
		     const struct fring_read_args *a, bool plus)
{
	struct counted cnt = { 0 };
	struct mfs_inode *d;
	uint64_t off = a->offset;

	pthread_rwlock_rdlock(&fs->lock);
	d = mfs_iget(fs, a->nodeid);
	if (!d || !S_ISDIR(d->mode)) {
		pthread_rwlock_unlock(&fs->lock);
		mfs_err(r, d ? -ENOTDIR : -ENOENT);
		return;
	}
	if (!d->nlink)
		goto reply; /* removed: empty, not even dots */
	if (off < COOKIE_DOT &&
	    !add_one(fs, r, plus, ".", 1, d, true, COOKIE_DOT, &cnt))
		goto reply;
	if (off < COOKIE_DOTDOT &&
	    !add_one(fs, r, plus, "..", 2, d->dir.parent ? d->dir.parent : d,
		     true, COOKIE_DOTDOT, &cnt))
		goto reply;
	for (uint32_t i = mfs_dir_seek(&d->dir, off < COOKIE_DOTDOT ?
							COOKIE_DOTDOT : off);
	     i < d->dir.nslots; i++) {
		struct mfs_dirent *de = d->dir.slots[i].de;

		if (de && !add_one(fs, r, plus, de->name, de->namelen,
				   de->inode, false, de->cookie, &cnt))
			break;
	}
reply:
	if (fring_host->reply_dir(r) < 0 && cnt.n) {
		pthread_rwlock_unlock(&fs->lock);
		pthread_rwlock_wrlock(&fs->lock);
		for (uint32_t i = 0; i < cnt.n; i++)
			mfs_forget_ino(fs, cnt.ino[i], 1);
	}
	pthread_rwlock_unlock(&fs->lock);
	free(cnt.ino);
}

void mfs_op_readdir(void *inst, fring_req *r, const struct fring_read_args *a)
{
	list_dir(inst, r, a, false);
}

void mfs_op_readdirplus(void *inst, fring_req *r,
			const struct fring_read_args *a)
{
	list_dir(inst, r, a, true);
}

void mfs_op_releasedir(void *inst, fring_req *r,
		       const struct fring_release_args *a)
{
	struct memfs *fs = inst;

	pthread_rwlock_wrlock(&fs->lock);
	mfs_put_handle(fs, a->nodeid);
	pthread_rwlock_unlock(&fs->lock);
	mfs_err(r, 0);
}

void mfs_op_fsyncdir(void *inst, fring_req *r, const struct fring_fsync_args *a)
{
	mfs_err(r, 0);
}
