// SPDX-License-Identifier: MIT
/*
 * Inode table and inode lifetime.
 *
 * Inode numbers are never reused (a 64-bit counter), so the generation is
 * constant. An inode lives while it has a name (nlink), a kernel reference
 * (nlookup) or an open handle (nopen); mfs_maybe_free() is called whenever
 * one of these drops.
 */
#include <stdlib.h>
#include <string.h>

#include "memfs.h"

#define MFS_ITAB_MIN 1024

int mfs_itab_init(struct memfs *fs)
{
	fs->nbuckets = MFS_ITAB_MIN;
	fs->itab = calloc(fs->nbuckets, sizeof(*fs->itab));
	if (!fs->itab)
		return -ENOMEM;
	fs->ninodes = 0;
	fs->next_ino = MFS_ROOT_INO;
	return 0;
}

static void inode_release_payload(struct memfs *fs, struct mfs_inode *in)
{
	switch (in->mode & S_IFMT) {
	case S_IFREG:
		mfs_data_free(fs, &in->data);
		break;
	case S_IFDIR:
		mfs_dir_free(&in->dir);
		break;
	case S_IFLNK:
		free(in->target);
		break;
	}
	mfs_xattr_free(in);
	free(in);
}

void mfs_itab_destroy(struct memfs *fs)
{
	for (uint64_t b = 0; b < fs->nbuckets; b++) {
		struct mfs_inode *in = fs->itab[b], *next;

		for (; in; in = next) {
			next = in->hnext;
			inode_release_payload(fs, in);
		}
	}
	free(fs->itab);
	fs->itab = NULL;
	fs->nbuckets = fs->ninodes = 0;
	fs->root = NULL;
}

static inline uint64_t ino_bucket(uint64_t ino, uint64_t nbuckets)
{
	/* Inode numbers are dense, so the low bits spread well already. */
	return ino & (nbuckets - 1);
}

struct mfs_inode *mfs_iget(struct memfs *fs, uint64_t ino)
{
	struct mfs_inode *in = fs->itab[ino_bucket(ino, fs->nbuckets)];

	while (in && in->ino != ino)
		in = in->hnext;
	return in;
}

static void itab_grow(struct memfs *fs)
{
	uint64_t n = fs->nbuckets * 2;
	struct mfs_inode **t = calloc(n, sizeof(*t));

	if (!t)
		return; /* keep the longer chains; still correct */
	for (uint64_t b = 0; b < fs->nbuckets; b++) {
		struct mfs_inode *in = fs->itab[b], *next;

		for (; in; in = next) {
			next = in->hnext;
			in->hnext = t[ino_bucket(in->ino, n)];
			t[ino_bucket(in->ino, n)] = in;
		}
	}
	free(fs->itab);
	fs->itab = t;
	fs->nbuckets = n;
}

struct mfs_inode *mfs_inew(struct memfs *fs, uint32_t mode, uint32_t uid,
			   uint32_t gid)
{
	struct mfs_inode *in;
	uint64_t b;

	if (fs->ninodes >= fs->inode_limit)
		return NULL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	in->ino = fs->next_ino++;
	in->gen = 1;
	in->mode = mode;
	in->uid = uid;
	in->gid = gid;
	mfs_now(&in->atime);
	in->mtime = in->ctime = in->atime;
	if (fs->ninodes >= fs->nbuckets)
		itab_grow(fs);
	b = ino_bucket(in->ino, fs->nbuckets);
	in->hnext = fs->itab[b];
	fs->itab[b] = in;
	fs->ninodes++;
	return in;
}

void mfs_maybe_free(struct memfs *fs, struct mfs_inode *in)
{
	struct mfs_inode **pp;

	if (in == fs->root || in->nlink || in->nopen ||
	    __atomic_load_n(&in->nlookup, __ATOMIC_ACQUIRE))
		return;
	pp = &fs->itab[ino_bucket(in->ino, fs->nbuckets)];
	while (*pp != in)
		pp = &(*pp)->hnext;
	*pp = in->hnext;
	fs->ninodes--;
	inode_release_payload(fs, in);
}

void mfs_now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

void mfs_touch(struct mfs_inode *in, bool mtime)
{
	mfs_now(&in->ctime);
	if (mtime)
		in->mtime = in->ctime;
}

void mfs_fill_attr(const struct mfs_inode *in, struct fring_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = in->ino;
	a->mode = in->mode;
	a->nlink = in->nlink;
	a->uid = in->uid;
	a->gid = in->gid;
	a->rdev = in->rdev;
	a->blksize = MFS_BLKSIZE;
	a->atime_sec = in->atime.tv_sec;
	a->atime_nsec = (uint32_t)in->atime.tv_nsec;
	a->mtime_sec = in->mtime.tv_sec;
	a->mtime_nsec = (uint32_t)in->mtime.tv_nsec;
	a->ctime_sec = in->ctime.tv_sec;
	a->ctime_nsec = (uint32_t)in->ctime.tv_nsec;
	switch (in->mode & S_IFMT) {
	case S_IFREG:
		a->size = in->size;
		a->blocks = in->data.bytes / 512;
		break;
	case S_IFDIR:
		/* Like tmpfs: a nominal size that grows with the entries. */
		a->size = (uint64_t)(in->dir.nlive + 2) * 32;
		break;
	case S_IFLNK:
		a->size = in->size;
		break;
	}
}

void mfs_fill_entry(const struct memfs *fs, const struct mfs_inode *in,
		    struct fring_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = in->ino;
	e->generation = in->gen;
	e->entry_timeout_ns = fs->entry_ns;
	e->attr_timeout_ns = fs->attr_ns;
	mfs_fill_attr(in, &e->attr);
}

void mfs_lookup_inc(struct mfs_inode *in)
{
	__atomic_add_fetch(&in->nlookup, 1, __ATOMIC_ACQ_REL);
}

/*
 * The kernel did not get an entry we counted: take the count back. Under
 * the read lock the inode cannot be freed here, so when it may have become
 * unreferenced the caller's lock is upgraded (dropped and retaken for
 * writing) and the inode looked up again by number.
 */
void mfs_lookup_undo(struct memfs *fs, struct mfs_inode *in, bool wrlocked)
{
	uint64_t ino = in->ino;

	if (__atomic_sub_fetch(&in->nlookup, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (wrlocked) {
		mfs_maybe_free(fs, in);
		return;
	}
	pthread_rwlock_unlock(&fs->lock);
	pthread_rwlock_wrlock(&fs->lock);
	in = mfs_iget(fs, ino);
	if (in)
		mfs_maybe_free(fs, in);
	pthread_rwlock_unlock(&fs->lock);
	pthread_rwlock_rdlock(&fs->lock);
}

/* Reply an entry for `in` and count it as a kernel reference. Returns the
 * reply result; the count is taken back when the reply failed. Caller holds
 * the write lock. */
int mfs_reply_entry(struct memfs *fs, fring_req *r, struct mfs_inode *in)
{
	struct fring_entry e;
	int ret;

	mfs_fill_entry(fs, in, &e);
	mfs_lookup_inc(in);
	ret = fring_host->reply_entry(r, &e);
	if (ret < 0)
		mfs_lookup_undo(fs, in, true);
	return ret;
}

void mfs_forget_ino(struct memfs *fs, uint64_t ino, uint64_t n)
{
	struct mfs_inode *in = mfs_iget(fs, ino);

	if (!in)
		return;
	in->nlookup = in->nlookup > n ? in->nlookup - n : 0;
	mfs_maybe_free(fs, in);
}

void mfs_put_handle(struct memfs *fs, uint64_t ino)
{
	struct mfs_inode *in = mfs_iget(fs, ino);

	if (!in)
		return;
	if (in->nopen)
		in->nopen--;
	mfs_maybe_free(fs, in);
}
