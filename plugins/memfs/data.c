// SPDX-License-Identifier: MIT
/*
 * Sparse file data: a radix tree of chunks, each covering MFS_CHUNK_SIZE
 * bytes of the file.
 *
 * Interior nodes have RADIX_FAN slots; the tree grows in height only as far
 * as the highest chunk index needs, so a small file costs one chunk and a
 * write at 1 TiB costs a handful of nodes. Holes are absent chunks: they
 * read as zeros and allocate nothing. A chunk's buffer holds only its first
 * `cap` bytes (a power of two from MFS_CHUNK_MIN up to MFS_CHUNK_SIZE) so
 * small files stay small; bytes past cap read as zeros.
 * Invariant: bytes at or past i_size inside a chunk's buffer are zero, so
 * growing a file needs no work.
 */
#include <stdlib.h>
#include <string.h>

#include "memfs.h"

#define RADIX_SHIFT 9
#define RADIX_FAN (1u << RADIX_SHIFT)
#define RADIX_MASK (RADIX_FAN - 1)
#define NO_CHUNK UINT64_MAX

struct rnode {
	void *slot[RADIX_FAN];
	uint32_t count; /* non-NULL slots */
};

struct mfs_chunk {
	uint32_t cap;
	uint32_t padding;
	uint8_t b[];
};

/* Does a tree of height h cover chunk index idx? */
static bool fits(uint32_t h, uint64_t idx)
{
	return h * RADIX_SHIFT >= 64 || (idx >> (h * RADIX_SHIFT)) == 0;
}

static uint32_t cap_for(uint32_t end)
{
	uint32_t cap = MFS_CHUNK_MIN;

	while (cap < end)
		cap <<= 1;
	return cap;
}

static void free_subtree(void *p, uint32_t level)
{
	struct rnode *n = p;

	if (!p)
		return;
	if (level)
		for (uint32_t i = 0; i < RADIX_FAN; i++)
			free_subtree(n->slot[i], level - 1);
	free(p);
}

void mfs_data_free(struct memfs *fs, struct mfs_data *d)
{
	free_subtree(d->root, d->height);
	fs->used_bytes -= d->bytes;
	memset(d, 0, sizeof(*d));
}

/* The slot holding chunk idx, or NULL if the path to it is missing. */
static void **slot_of(const struct mfs_data *d, uint64_t idx)
{
	void *const *pp = &d->root;

	if (!fits(d->height, idx))
		return NULL;
	for (uint32_t level = d->height; level > 0; level--) {
		struct rnode *n = *pp;

		if (!n)
			return NULL;
		pp = &n->slot[(idx >> ((level - 1) * RADIX_SHIFT)) & RADIX_MASK];
	}
	return (void **)pp;
}

static struct mfs_chunk *chunk_at(const struct mfs_data *d, uint64_t idx)
{
	void **pp = slot_of(d, idx);

	return pp ? *pp : NULL;
}

const uint8_t *mfs_data_chunk(const struct mfs_data *d, uint64_t idx,
			      uint32_t *cap)
{
	struct mfs_chunk *c = chunk_at(d, idx);

	*cap = c ? c->cap : 0;
	return c ? c->b : NULL;
}

bool mfs_data_present(const struct mfs_data *d, uint64_t idx)
{
	return chunk_at(d, idx) != NULL;
}

/* The slot for chunk idx, making the path to it. NULL: out of memory. */
static void **slot_make(struct mfs_data *d, uint64_t idx)
{
	struct rnode *parent = NULL;
	void **pp;

	while (!fits(d->height, idx)) {
		if (d->root) {
			struct rnode *n = calloc(1, sizeof(*n));

			if (!n)
				return NULL;
			n->slot[0] = d->root;
			n->count = 1;
			d->root = n;
		}
		d->height++;
	}
	pp = &d->root;
	for (uint32_t level = d->height; level > 0; level--) {
		if (!*pp) {
			*pp = calloc(1, sizeof(struct rnode));
			if (!*pp)
				return NULL;
			if (parent)
				parent->count++;
		}
		parent = *pp;
		pp = &parent->slot[(idx >> ((level - 1) * RADIX_SHIFT)) &
				   RADIX_MASK];
	}
	return pp;
}

/* The parent node of chunk idx's slot (NULL for a height-0 tree). */
static struct rnode *slot_parent(struct mfs_data *d, uint64_t idx)
{
	struct rnode *n = d->height ? d->root : NULL;

	for (uint32_t level = d->height; level > 1; level--)
		n = n->slot[(idx >> ((level - 1) * RADIX_SHIFT)) & RADIX_MASK];
	return n;
}

/* Chunk idx with at least `end` bytes of buffer (1..MFS_CHUNK_SIZE),
 * made or grown as needed. NULL with *err set on failure. */
static struct mfs_chunk *chunk_get(struct memfs *fs, struct mfs_data *d,
				   uint64_t idx, uint32_t end, int *err)
{
	void **pp = slot_of(d, idx);
	struct mfs_chunk *c = pp ? *pp : NULL;
	uint32_t old = c ? c->cap : 0, cap;

	if (c && c->cap >= end)
		return c;
	cap = cap_for(end);
	if (fs->used_bytes + (cap - old) > fs->size_limit) {
		*err = -ENOSPC;
		return NULL;
	}
	if (!c) {
		pp = slot_make(d, idx);
		if (!pp) {
			*err = -ENOMEM;
			return NULL;
		}
	}
	c = realloc(c, sizeof(*c) + cap);
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	memset(c->b + old, 0, cap - old);
	c->cap = cap;
	if (!old) {
		struct rnode *parent = slot_parent(d, idx);

		if (parent)
			parent->count++;
	}
	*pp = c;
	d->bytes += cap - old;
	fs->used_bytes += cap - old;
	return c;
}

static void chunk_remove(struct memfs *fs, struct mfs_data *d, uint64_t idx)
{
	struct rnode *path[64 / RADIX_SHIFT + 2];
	uint32_t slot[64 / RADIX_SHIFT + 2];
	void **pp = &d->root;
	uint32_t depth = 0;
	struct mfs_chunk *c;

	if (!fits(d->height, idx))
		return;
	for (uint32_t level = d->height; level > 0; level--) {
		struct rnode *n = *pp;

		if (!n)
			return;
		path[depth] = n;
		slot[depth] = (idx >> ((level - 1) * RADIX_SHIFT)) & RADIX_MASK;
		pp = &n->slot[slot[depth]];
		depth++;
	}
	c = *pp;
	if (!c)
		return;
	d->bytes -= c->cap;
	fs->used_bytes -= c->cap;
	free(c);
	*pp = NULL;
	/* Free interior nodes that became empty, bottom up. */
	while (depth > 0) {
		struct rnode *n = path[depth - 1];

		if (--n->count)
			return;
		free(n);
		depth--;
		if (depth)
			path[depth - 1]->slot[slot[depth - 1]] = NULL;
	}
	d->root = NULL;
	d->height = 0;
}

static uint64_t next_in(void *p, uint32_t level, uint64_t base, uint64_t idx)
{
	struct rnode *n = p;
	uint32_t shift;
	uint64_t start;

	if (!level)
		return base >= idx ? base : NO_CHUNK;
	shift = (level - 1) * RADIX_SHIFT;
	start = idx > base ? (idx - base) >> shift : 0;
	for (uint64_t i = start; i < RADIX_FAN; i++) {
		uint64_t r;

		if (!n->slot[i])
			continue;
		r = next_in(n->slot[i], level - 1, base + (i << shift), idx);
		if (r != NO_CHUNK)
			return r;
	}
	return NO_CHUNK;
}

uint64_t mfs_data_next(const struct mfs_data *d, uint64_t idx)
{
	if (!d->root || !fits(d->height, idx))
		return NO_CHUNK;
	return next_in(d->root, d->height, 0, idx);
}

void mfs_data_read(const struct mfs_data *d, uint64_t off, uint32_t len,
		   uint8_t *out)
{
	while (len) {
		uint32_t in = (uint32_t)(off & (MFS_CHUNK_SIZE - 1));
		uint32_t n = MFS_CHUNK_SIZE - in, have = 0;
		const struct mfs_chunk *c = chunk_at(d, off >> MFS_CHUNK_SHIFT);

		if (n > len)
			n = len;
		if (c && in < c->cap)
			have = c->cap - in < n ? c->cap - in : n;
		if (have)
			memcpy(out, c->b + in, have);
		memset(out + have, 0, n - have);
		out += n;
		off += n;
		len -= n;
	}
}

ssize_t mfs_data_write(struct memfs *fs, struct mfs_data *d, uint64_t off,
		       const uint8_t *buf, uint64_t len)
{
	uint64_t done = 0;

	while (done < len) {
		uint32_t in = (uint32_t)(off & (MFS_CHUNK_SIZE - 1));
		uint32_t n = MFS_CHUNK_SIZE - in;
		struct mfs_chunk *c;
		int err = 0;

		if (n > len - done)
			n = (uint32_t)(len - done);
		c = chunk_get(fs, d, off >> MFS_CHUNK_SHIFT, in + n, &err);
		if (!c)
			return done ? (ssize_t)done : err; /* short write */
		memcpy(c->b + in, buf + done, n);
		off += n;
		done += n;
	}
	return (ssize_t)done;
}

static bool chunk_is_zero(const struct mfs_chunk *c)
{
	return c->b[0] == 0 && !memcmp(c->b, c->b + 1, c->cap - 1);
}

/* Zero [off, end) and drop the chunks that end up all zero. */
void mfs_data_punch(struct memfs *fs, struct mfs_data *d, uint64_t off,
		    uint64_t len)
{
	uint64_t end = off + len;

	for (uint64_t i = mfs_data_next(d, off >> MFS_CHUNK_SHIFT);
	     i != NO_CHUNK && (i << MFS_CHUNK_SHIFT) < end;
	     i = mfs_data_next(d, i + 1)) {
		uint64_t cs = i << MFS_CHUNK_SHIFT;
		uint64_t s = (off > cs ? off : cs) - cs;
		uint64_t e = (end < cs + MFS_CHUNK_SIZE ? end : cs + MFS_CHUNK_SIZE) - cs;
		struct mfs_chunk *c = chunk_at(d, i);

		if (s == 0 && e >= c->cap) {
			chunk_remove(fs, d, i); /* all of its buffer goes */
			continue;
		}
		if (e > c->cap)
			e = c->cap;
		if (s < e)
			memset(c->b + s, 0, e - s);
		if (chunk_is_zero(c))
			chunk_remove(fs, d, i);
	}
}

void mfs_data_truncate(struct memfs *fs, struct mfs_data *d, uint64_t oldsize,
		       uint64_t newsize)
{
	uint64_t first, i;
	struct mfs_chunk *c;
	uint32_t in = (uint32_t)(newsize & (MFS_CHUNK_SIZE - 1));

	if (newsize >= oldsize)
		return; /* growing: the new range is already zero */
	/* Whole chunks past the new end go, including ones fallocate
	 * allocated beyond EOF. */
	first = (newsize + MFS_CHUNK_SIZE - 1) >> MFS_CHUNK_SHIFT;
	for (i = mfs_data_next(d, first); i != NO_CHUNK;
	     i = mfs_data_next(d, i + 1))
		chunk_remove(fs, d, i);
	c = in ? chunk_at(d, newsize >> MFS_CHUNK_SHIFT) : NULL;
	if (c && in < c->cap)
		memset(c->b + in, 0, c->cap - in);
}

int mfs_data_allocate(struct memfs *fs, struct mfs_data *d, uint64_t off,
		      uint64_t len)
{
	uint64_t first = off >> MFS_CHUNK_SHIFT;
	uint64_t last = (off + len - 1) >> MFS_CHUNK_SHIFT;
	uint64_t have = 0, want = (last - first + 1) * MFS_CHUNK_SIZE;

	/* Reserve whole chunks; check the space first so that a failing
	 * call allocates nothing. */
	for (uint64_t i = mfs_data_next(d, first); i != NO_CHUNK && i <= last;
	     i = mfs_data_next(d, i + 1))
		have += chunk_at(d, i)->cap;
	if (want - have > fs->size_limit - fs->used_bytes)
		return -ENOSPC;
	for (uint64_t i = first; i <= last; i++) {
		int err = 0;

		if (!chunk_get(fs, d, i, MFS_CHUNK_SIZE, &err))
			return err;
	}
	return 0;
}
