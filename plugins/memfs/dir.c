// SPDX-License-Identifier: MIT
/*
 * Directory entries with stable readdir offsets.
 *
 * Each entry gets a cookie from a per-directory counter when it is
 * inserted ("." is 1, ".." is 2, entries start at 3) and keeps it for life.
 * Entries sit in an array ordered by cookie (appends only), so "continue
 * after cookie X" is a binary search; removal leaves a tombstone that keeps
 * the cookie, and the array is compacted once tombstones dominate. A name
 * hash gives O(1) lookup.
 */
#include <stdlib.h>
#include <string.h>

#include "memfs.h"

#define MFS_COOKIE_FIRST 3
#define MFS_DIR_MIN_BUCKETS 16

void mfs_dir_init(struct mfs_dir *d, struct mfs_inode *parent)
{
	memset(d, 0, sizeof(*d));
	d->next_cookie = MFS_COOKIE_FIRST;
	d->parent = parent;
}

void mfs_dir_free(struct mfs_dir *d)
{
	for (uint32_t i = 0; i < d->nslots; i++)
		free(d->slots[i].de);
	free(d->slots);
	free(d->buckets);
	d->slots = NULL;
	d->buckets = NULL;
	d->nslots = d->cap = d->nlive = d->nbuckets = 0;
}

/* FNV-1a, 32 bits. */
static uint32_t name_hash(const char *name, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++) {
		h ^= (uint8_t)name[i];
		h *= 16777619u;
	}
	return h;
}

struct mfs_dirent *mfs_dir_find(const struct mfs_dir *d, const char *name,
				uint32_t namelen)
{
	uint32_t h;
	struct mfs_dirent *de;

	if (!d->nbuckets)
		return NULL;
	h = name_hash(name, namelen);
	for (de = d->buckets[h & (d->nbuckets - 1)]; de; de = de->hnext)
		if (de->hash == h && de->namelen == namelen &&
		    !memcmp(de->name, name, namelen))
			return de;
	return NULL;
}

static int buckets_resize(struct mfs_dir *d, uint32_t n)
{
	struct mfs_dirent **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->nslots; i++) {
		struct mfs_dirent *de = d->slots[i].de;

		if (!de)
			continue;
		de->hnext = b[de->hash & (n - 1)];
		b[de->hash & (n - 1)] = de;
	}
	free(d->buckets);
	d->buckets = b;
	d->nbuckets = n;
	return 0;
}

int mfs_dir_add(struct mfs_dir *d, const char *name, uint32_t namelen,
		struct mfs_inode *in)
{
	struct mfs_dirent *de;
	uint32_t b;

	if (d->nslots == UINT32_MAX - 1)
		return -ENOSPC;
	if (d->nslots == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 8;
		struct mfs_dslot *s;

		if (cap < d->cap) /* overflow */
			cap = UINT32_MAX;
		s = realloc(d->slots, (size_t)cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		d->slots = s;
		d->cap = cap;
	}
	if (d->nlive + 1 > d->nbuckets &&
	    buckets_resize(d, d->nbuckets ? d->nbuckets * 2
					  : MFS_DIR_MIN_BUCKETS) < 0 &&
	    !d->nbuckets)
		return -ENOMEM; /* a failed grow is fine, no table is not */
	de = malloc(sizeof(*de) + namelen + 1);
	if (!de)
		return -ENOMEM;
	memcpy(de->name, name, namelen);
	de->name[namelen] = '\0';
	de->namelen = namelen;
	de->hash = name_hash(name, namelen);
	de->inode = in;
	de->cookie = d->next_cookie++;
	de->slot = d->nslots;
	d->slots[d->nslots].cookie = de->cookie;
	d->slots[d->nslots].de = de;
	d->nslots++;
	b = de->hash & (d->nbuckets - 1);
	de->hnext = d->buckets[b];
	d->buckets[b] = de;
	d->nlive++;
	return 0;
}

/* Squeeze out tombstones; cookies move with their entries. */
static void dir_compact(struct mfs_dir *d)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < d->nslots; i++) {
		if (!d->slots[i].de)
			continue;
		d->slots[j] = d->slots[i];
		d->slots[j].de->slot = j;
		j++;
	}
	d->nslots = j;
	if (d->cap > 64 && j < d->cap / 4) {
		struct mfs_dslot *s =
			realloc(d->slots, (size_t)(d->cap / 2) * sizeof(*s));

		if (s) {
			d->slots = s;
			d->cap /= 2;
		}
	}
}

void mfs_dir_remove(struct mfs_dir *d, struct mfs_dirent *de)
{
	struct mfs_dirent **pp = &d->buckets[de->hash & (d->nbuckets - 1)];
	uint32_t dead;

	while (*pp != de)
		pp = &(*pp)->hnext;
	*pp = de->hnext;
	d->slots[de->slot].de = NULL;
	free(de);
	d->nlive--;
	if (!d->nlive) {
		/* Release the tables of emptied directories. */
		free(d->slots);
		free(d->buckets);
		d->slots = NULL;
		d->buckets = NULL;
		d->nslots = d->cap = d->nbuckets = 0;
		return;
	}
	dead = d->nslots - d->nlive;
	/* Compacting once tombstones reach a third of the slots keeps
	 * readdir's skip over them short, at O(1) amortized per removal. */
	if (dead > 32 && dead * 2 > d->nlive)
		dir_compact(d);
	else if (d->nbuckets > MFS_DIR_MIN_BUCKETS &&
		 d->nlive < d->nbuckets / 4)
		buckets_resize(d, d->nbuckets / 2);
}

uint32_t mfs_dir_seek(const struct mfs_dir *d, uint64_t after)
{
	uint32_t lo = 0, hi = d->nslots;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->slots[mid].cookie <= after)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo < d->nslots && !d->slots[lo].de)
		lo++;
	return lo;
}
