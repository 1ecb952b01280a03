// SPDX-License-Identifier: MIT
/*
 * The inode table: known inodes hashed by (st_dev, st_ino), and an id table
 * mapping FUSE nodeids (small integers, reused with a new generation) to
 * them. An inode lives while the kernel holds lookups on it or an operation
 * or path-mode child holds it. All functions here run under fs->lock
 * except pt_table_init/destroy and pt_forget_one.
 */
#include "pt.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t hash_key(const struct pt_fs *fs, dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino ^ ((uint64_t)dev << 32 | (uint64_t)dev >> 32);

	h *= 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (fs->nbuckets - 1);
}

static int grow_buckets(struct pt_fs *fs)
{
	size_t n = fs->nbuckets ? fs->nbuckets * 2 : 1024;
	struct pt_inode **nb = calloc(n, sizeof(*nb));
	struct pt_inode **old = fs->buckets;
	size_t oldn = fs->nbuckets;

	if (!nb)
		return -ENOMEM;
	fs->buckets = nb;
	fs->nbuckets = n;
	for (size_t i = 0; i < oldn; i++) {
		struct pt_inode *p = old[i], *next;

		for (; p; p = next) {
			size_t b = hash_key(fs, p->dev, p->ino);

			next = p->hnext;
			p->hnext = nb[b];
			nb[b] = p;
		}
	}
	free(old);
	return 0;
}

static void hash_insert(struct pt_fs *fs, struct pt_inode *ino)
{
	size_t b;

	/* A failed grow only lengthens the chains. */
	if (fs->ninodes >= fs->nbuckets)
		grow_buckets(fs);
	b = hash_key(fs, ino->dev, ino->ino);
	ino->hnext = fs->buckets[b];
	fs->buckets[b] = ino;
	ino->hashed = true;
	fs->ninodes++;
}

int pt_table_reserve(struct pt_fs *fs, size_t n)
{
	while (fs->nbuckets < n)
		if (grow_buckets(fs))
			return -ENOMEM;
	return 0;
}

void pt_inode_hash(struct pt_fs *fs, struct pt_inode *ino)
{
	hash_insert(fs, ino);
}

void pt_inode_unhash(struct pt_fs *fs, struct pt_inode *ino)
{
	struct pt_inode **pp;

	if (!ino->hashed)
		return;
	pp = &fs->buckets[hash_key(fs, ino->dev, ino->ino)];
	while (*pp != ino)
		pp = &(*pp)->hnext;
	*pp = ino->hnext;
	ino->hashed = false;
	fs->ninodes--;
	pt_live_inode(fs, ino);
}

int pt_table_init(struct pt_fs *fs, const struct stat *root_st)
{
	struct pt_inode *root = &fs->root;

	if (grow_buckets(fs))
		return -ENOMEM;
	fs->nids = 64;
	fs->ids = calloc(fs->nids, sizeof(*fs->ids));
	if (!fs->ids)
		return -ENOMEM;
	/* nodeid 0 is invalid in FUSE; every other free slot is reusable. */
	fs->free_cap = 64;
	fs->free_ids = malloc(fs->free_cap * sizeof(*fs->free_ids));
	if (!fs->free_ids)
		return -ENOMEM;
	for (uint64_t i = fs->nids - 1; i > PT_ROOT_ID; i--)
		fs->free_ids[fs->nfree++] = i;

	root->nodeid = PT_ROOT_ID;
	root->generation = 0;
	root->dev = root_st->st_dev;
	root->ino = root_st->st_ino;
	root->type = root_st->st_mode & S_IFMT;
	root->nlookup = 1;
	root->fd = fs->root_fd;
	fs->ids[PT_ROOT_ID] = root;
	hash_insert(fs, root);
	return 0;
}

struct pt_inode *pt_inode_by_id(struct pt_fs *fs, uint64_t nodeid)
{
	if (nodeid == 0 || nodeid >= fs->nids)
		return NULL;
	return fs->ids[nodeid];
}

struct pt_inode *pt_inode_find(struct pt_fs *fs, dev_t dev, ino_t ino)
{
	struct pt_inode *p = fs->buckets[hash_key(fs, dev, ino)];

	while (p && (p->ino != ino || p->dev != dev))
		p = p->hnext;
	return p;
}

static int alloc_id(struct pt_fs *fs, uint64_t *out)
{
	if (!fs->nfree) {
		size_t n = fs->nids * 2;
		struct pt_inode **ids = realloc(fs->ids, n * sizeof(*ids));
		uint64_t *fr;

		if (!ids)
			return -ENOMEM;
		fs->ids = ids;
		memset(ids + fs->nids, 0, (n - fs->nids) * sizeof(*ids));
		fr = realloc(fs->free_ids, n * sizeof(*fr));
		if (!fr)
			return -ENOMEM;
		fs->free_ids = fr;
		fs->free_cap = n;
		for (uint64_t i = n - 1; i >= fs->nids; i--)
			fs->free_ids[fs->nfree++] = i;
		fs->nids = n;
	}
	*out = fs->free_ids[--fs->nfree];
	return 0;
}

struct pt_inode *pt_inode_new(struct pt_fs *fs, const struct stat *st)
{
	struct pt_inode *ino = calloc(1, sizeof(*ino));

	if (!ino)
		return NULL;
	if (alloc_id(fs, &ino->nodeid)) {
		free(ino);
		return NULL;
	}
	ino->generation = ++fs->next_generation;
	ino->dev = st->st_dev;
	ino->ino = st->st_ino;
	ino->type = st->st_mode & S_IFMT;
	ino->fd = -1;
	fs->ids[ino->nodeid] = ino;
	hash_insert(fs, ino);
	return ino;
}

void pt_inode_set_path(struct pt_fs *fs, struct pt_inode *ino,
		       struct pt_inode *parent, const char *name)
{
	struct pt_inode *old = ino->parent;
	char *copy;

	/* ".." (NFS-style lookups) would make a child its parent's parent. */
	if (ino == &fs->root || ino->handle || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return;
	if (old == parent && ino->name && strcmp(ino->name, name) == 0)
		return;
	copy = strdup(name);
	if (!copy)
		return; /* keep the old path; a later open may then be stale */
	free(ino->name);
	ino->name = copy;
	parent->refs++;
	ino->parent = parent;
	pt_live_inode(fs, ino);
	if (old)
		pt_inode_unref(fs, old, 0, 1);
}

/* Frees ino, then walks up the parents it was holding. */
static void inode_free(struct pt_fs *fs, struct pt_inode *ino)
{
	while (ino) {
		struct pt_inode *parent = ino->parent;

		pt_inode_unhash(fs, ino);
		pt_live_gone(fs, ino->nodeid);
		fs->ids[ino->nodeid] = NULL;
		/* free_ids has room for every id (free_cap == nids). */
		fs->free_ids[fs->nfree++] = ino->nodeid;
		if (ino->fd >= 0) {
			if (ino->pinned)
				fs->pinned_count--;
			else
				pt_lru_remove(fs, ino);
			close(ino->fd);
		}
		free(ino->handle);
		free(ino->name);
		free(ino);
		ino = NULL;
		if (parent && --parent->refs == 0 && parent->nlookup == 0 &&
		    parent != &fs->root)
			ino = parent;
	}
}

void pt_inode_unref(struct pt_fs *fs, struct pt_inode *ino, uint64_t nlookup,
		    uint32_t refs)
{
	ino->nlookup -= nlookup;
	ino->refs -= refs;
	if (ino == &fs->root || ino->nlookup || ino->refs) {
		if (pt_live_on(fs) && nlookup) /* a FORGET of some */
			pt_live_inode(fs, ino);
		return;
	}
	inode_free(fs, ino);
}

void pt_forget_one(struct pt_fs *fs, uint64_t nodeid, uint64_t nlookup)
{
	struct pt_inode *ino;

	pthread_mutex_lock(&fs->lock);
	ino = pt_inode_by_id(fs, nodeid);
	if (ino) {
		if (nlookup > ino->nlookup) {
			fring_logf(fs->mount, FRING_LOG_WARN,
				   "passthrough: forget %llu of node %llu with %llu lookups",
				   (unsigned long long)nlookup,
				   (unsigned long long)nodeid,
				   (unsigned long long)ino->nlookup);
			nlookup = ino->nlookup;
		}
		pt_inode_unref(fs, ino, nlookup, 0);
	}
	pthread_mutex_unlock(&fs->lock);
}

void pt_table_destroy(struct pt_fs *fs)
{
	for (size_t i = 0; i < fs->nids; i++) {
		struct pt_inode *ino = fs->ids[i];

		if (!ino || ino == &fs->root)
			continue;
		if (ino->fd >= 0)
			close(ino->fd);
		free(ino->handle);
		free(ino->name);
		free(ino);
	}
	free(fs->ids);
	free(fs->free_ids);
	free(fs->buckets);
}
