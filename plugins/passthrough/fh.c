// SPDX-License-Identifier: MIT
/*
 * The open-file table: an fh is a slot here (low 32 bits, the flags of
 * backing.c and ops_file.c above), not a descriptor or a pointer, so a
 * takeover (state_save.c, state_load.c) can give the kernel's fh values the same meaning in
 * a new process, whose descriptor numbers and heap addresses differ.
 * Chunks are never moved or freed before destroy: readers look a slot up
 * without the lock (the fh reaches them through the kernel, after the
 * reply that carried it, so the slot was written before).
 */
#include "pt.h"

#include <stdlib.h>
#include <unistd.h>

static struct pt_open *slot_locked(struct pt_fs *fs, uint32_t s)
{
	struct pt_open **c = &fs->opens[s >> PT_FH_CHUNK_SHIFT];

	if (!*c)
		*c = calloc(1u << PT_FH_CHUNK_SHIFT, sizeof(**c));
	return *c ? &(*c)[s & ((1u << PT_FH_CHUNK_SHIFT) - 1)] : NULL;
}

int pt_fh_init(struct pt_fs *fs)
{
	fs->opens = calloc(PT_FH_CHUNKS, sizeof(*fs->opens));
	return fs->opens ? 0 : -ENOMEM;
}

int pt_fh_put_locked(struct pt_fs *fs, uint32_t s, int fd, uint32_t flags,
		     uint64_t nodeid, struct pt_dir *dir)
{
	struct pt_open *o;

	if (s >= PT_FH_CHUNKS << PT_FH_CHUNK_SHIFT)
		return -EMFILE;
	o = slot_locked(fs, s);
	if (!o)
		return -ENOMEM;
	*o = (struct pt_open){ .fd = fd,
			       .flags = flags,
			       .nodeid = nodeid,
			       .dir = dir,
			       .used = true };
	if (s >= fs->opens_top)
		fs->opens_top = s + 1;
	pt_live_open(fs, s, flags, nodeid, dir != NULL);
	return 0;
}

int pt_fh_new(struct pt_fs *fs, int fd, uint32_t flags, uint64_t nodeid,
	      struct pt_dir *dir, uint64_t *fh)
{
	uint32_t s;
	int err;

	pthread_mutex_lock(&fs->lock);
	s = fs->nfree_opens ? fs->free_opens[--fs->nfree_opens] : fs->opens_top;
	err = pt_fh_put_locked(fs, s, fd, flags, nodeid, dir);
	if (err && s != fs->opens_top)
		fs->nfree_opens++;
	pthread_mutex_unlock(&fs->lock);
	*fh = s;
	return err;
}

struct pt_open *pt_fh_get(struct pt_fs *fs, uint64_t fh)
{
	uint32_t s = (uint32_t)(fh & PT_FH_SLOT_MASK);
	struct pt_open *c;

	if (s >= PT_FH_CHUNKS << PT_FH_CHUNK_SHIFT)
		return NULL;
	c = fs->opens[s >> PT_FH_CHUNK_SHIFT];
	if (!c || !c[s & ((1u << PT_FH_CHUNK_SHIFT) - 1)].used)
		return NULL;
	return &c[s & ((1u << PT_FH_CHUNK_SHIFT) - 1)];
}

int pt_fh_fd(struct pt_fs *fs, uint64_t fh)
{
	struct pt_open *o = pt_fh_get(fs, fh);

	return o ? o->fd : -1;
}

void pt_fh_free(struct pt_fs *fs, uint64_t fh)
{
	uint32_t s = (uint32_t)(fh & PT_FH_SLOT_MASK);
	struct pt_open *o = pt_fh_get(fs, fh);
	uint32_t *fr;

	if (!o)
		return;
	pthread_mutex_lock(&fs->lock);
	o->used = false;
	o->fd = -1;
	o->dir = NULL;
	pt_live_close(fs, s);
	if (fs->nfree_opens == fs->free_opens_cap) {
		size_t cap = fs->free_opens_cap ? fs->free_opens_cap * 2 : 256;

		fr = realloc(fs->free_opens, cap * sizeof(*fr));
		if (fr) {
			fs->free_opens = fr;
			fs->free_opens_cap = cap;
		}
	}
	/* Without room the slot is lost, not reused: harmless. */
	if (fs->nfree_opens < fs->free_opens_cap)
		fs->free_opens[fs->nfree_opens++] = s;
	pthread_mutex_unlock(&fs->lock);
}

/* Free lists are rebuilt after a load placed slots at their old numbers. */
int pt_fh_rebuild_free_locked(struct pt_fs *fs)
{
	fs->nfree_opens = 0;
	for (uint32_t s = fs->opens_top; s-- > 0;) {
		struct pt_open *o = slot_locked(fs, s);

		if (!o)
			return -ENOMEM;
		if (o->used)
			continue;
		if (fs->nfree_opens == fs->free_opens_cap) {
			size_t cap = fs->free_opens_cap ? fs->free_opens_cap * 2
							: 256;
			uint32_t *fr = realloc(fs->free_opens,
					       cap * sizeof(*fr));

			if (!fr)
				return -ENOMEM;
			fs->free_opens = fr;
			fs->free_opens_cap = cap;
		}
		fs->free_opens[fs->nfree_opens++] = s;
	}
	return 0;
}

/* Open files (not directories: ops_dir.c frees those) and the table. */
void pt_fh_destroy(struct pt_fs *fs)
{
	if (!fs->opens)
		return;
	for (uint32_t i = 0; i < PT_FH_CHUNKS; i++) {
		struct pt_open *c = fs->opens[i];

		for (uint32_t j = 0; c && j < (1u << PT_FH_CHUNK_SHIFT); j++)
			if (c[j].used && !c[j].dir && c[j].fd >= 0)
				close(c[j].fd);
		free(c);
	}
	free(fs->opens);
	free(fs->free_opens);
	fs->opens = NULL;
}
