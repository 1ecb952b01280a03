// SPDX-License-Identifier: MIT
/*
 * The inode table: node id <-> key path, both hashed. A path keeps its
 * node id for the mount's life (ids are never reused, so generation 0
 * is enough); a node's size, mtime and type come from the last listing
 * or HEAD that saw it and are trusted for meta_ttl.
 */
#include "s3.h"

#include <stdlib.h>
#include <time.h>

#define META_BUCKETS_MIN 1024

uint64_t s3_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ull; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

int s3_meta_init(struct s3_meta *m)
{
	struct s3_node *root;

	pthread_mutex_init(&m->lock, NULL);
	m->buckets = META_BUCKETS_MIN;
	m->by_id = calloc(m->buckets, sizeof(*m->by_id));
	m->by_path = calloc(m->buckets, sizeof(*m->by_path));
	if (!m->by_id || !m->by_path)
		return -ENOMEM;
	m->next_ino = S3_ROOT;
	root = s3_node_make(m, "");
	if (!root)
		return -ENOMEM;
	root->dir = true;
	root->nlookup = 1; /* the kernel never forgets the root */
	return 0;
}

void s3_meta_destroy(struct s3_meta *m)
{
	size_t i;

	for (i = 0; m->by_id && i < m->buckets; i++) {
		struct s3_node *n = m->by_id[i], *next;

		for (; n; n = next) {
			next = n->id_next;
			free(n->path);
			free(n);
		}
	}
	free(m->by_id);
	free(m->by_path);
	pthread_mutex_destroy(&m->lock);
}

struct s3_node *s3_node_get(struct s3_meta *m, uint64_t ino)
{
	struct s3_node *n = m->by_id[ino % m->buckets];

	while (n && n->ino != ino)
		n = n->id_next;
	return n;
}

struct s3_node *s3_node_find(struct s3_meta *m, const char *path)
{
	struct s3_node *n = m->by_path[hash_str(path) % m->buckets];

	while (n && strcmp(n->path, path))
		n = n->path_next;
	return n;
}

/* Double the tables when they hold more nodes than buckets. */
static void grow(struct s3_meta *m)
{
	size_t nb = m->buckets * 2, i;
	struct s3_node **id = calloc(nb, sizeof(*id));
	struct s3_node **pa = calloc(nb, sizeof(*pa));

	if (!id || !pa) {
		free(id);
		free(pa);
		return; /* longer chains, still correct */
	}
	for (i = 0; i < m->buckets; i++) {
		struct s3_node *n, *next;

		for (n = m->by_id[i]; n; n = next) {
			next = n->id_next;
			n->id_next = id[n->ino % nb];
			id[n->ino % nb] = n;
		}
		for (n = m->by_path[i]; n; n = next) {
			next = n->path_next;
			n->path_next = pa[hash_str(n->path) % nb];
			pa[hash_str(n->path) % nb] = n;
		}
	}
	free(m->by_id);
	free(m->by_path);
	m->by_id = id;
	m->by_path = pa;
	m->buckets = nb;
}

struct s3_node *s3_node_make(struct s3_meta *m, const char *path)
{
	struct s3_node *n = s3_node_find(m, path);
	size_t h;

	if (n)
		return n;
	if (m->count >= m->buckets)
		grow(m);
	n = calloc(1, sizeof(*n));
	if (!n || !(n->path = strdup(path))) {
		free(n);
		return NULL;
	}
	n->ino = m->next_ino++;
	h = hash_str(path) % m->buckets;
	n->path_next = m->by_path[h];
	m->by_path[h] = n;
	n->id_next = m->by_id[n->ino % m->buckets];
	m->by_id[n->ino % m->buckets] = n;
	m->count++;
	return n;
}

void s3_node_set(struct s3_node *n, bool dir, uint64_t size, int64_t mtime,
		 uint64_t now_ns)
{
	n->dir = dir;
	n->size = dir ? 0 : size;
	if (mtime || !dir)
		n->mtime = mtime;
	n->fetched_ns = now_ns;
}

bool s3_node_fresh(const struct s3_fs *fs, const struct s3_node *n,
		   uint64_t now_ns)
{
	return n->ino == S3_ROOT || n->writers ||
	       (n->fetched_ns && now_ns - n->fetched_ns < fs->cfg.meta_ttl_ns);
}

void s3_node_attr(const struct s3_fs *fs, const struct s3_node *n,
		  struct fring_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = n->ino;
	a->size = n->size;
	a->blocks = (n->size + 511) / 512;
	a->mtime_sec = a->ctime_sec = a->atime_sec = n->mtime ? n->mtime
							      : fs->started;
	a->mode = n->dir ? (S_IFDIR | fs->cfg.dir_mode)
			 : (S_IFREG | fs->cfg.file_mode);
	a->nlink = n->dir ? 2 : 1;
	a->uid = fs->cfg.uid;
	a->gid = fs->cfg.gid;
	a->blksize = 1u << 20;
}

void s3_node_entry(const struct s3_fs *fs, const struct s3_node *n,
		   struct fring_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = n->ino;
	e->entry_timeout_ns = fs->cfg.entry_timeout_ns;
	e->attr_timeout_ns = fs->cfg.attr_timeout_ns;
	s3_node_attr(fs, n, &e->attr);
}

void s3_forget(void *inst, const struct fring_forget_one *items, uint32_t count)
{
	struct s3_fs *fs = inst;
	uint32_t i;

	/* Nodes stay (their id is the path's for the mount's life); the
	 * count only tells whether the kernel still holds them. */
	pthread_mutex_lock(&fs->meta.lock);
	for (i = 0; i < count; i++) {
		struct s3_node *n = s3_node_get(&fs->meta, items[i].nodeid);

		if (n && n->ino != S3_ROOT)
			n->nlookup = n->nlookup > items[i].nlookup
					     ? n->nlookup - items[i].nlookup
					     : 0;
	}
	pthread_mutex_unlock(&fs->meta.lock);
}

char *s3_child_path(const char *dir, const char *name, size_t namelen)
{
	size_t dl = strlen(dir);
	char *p = malloc(dl + namelen + 2);

	if (!p)
		return NULL;
	if (dl) {
		memcpy(p, dir, dl);
		p[dl++] = '/';
	}
	memcpy(p + dl, name, namelen);
	p[dl + namelen] = '\0';
	return p;
}

/* Unhook n from the path table (it keeps its id and path string). */
static void unhash_path(struct s3_meta *m, struct s3_node *n)
{
	struct s3_node **pp = &m->by_path[hash_str(n->path) % m->buckets];

	while (*pp && *pp != n)
		pp = &(*pp)->path_next;
	if (*pp)
		*pp = n->path_next;
	n->path_next = NULL;
}

int s3_node_move(struct s3_meta *m, struct s3_node *n, const char *path)
{
	struct s3_node *old = s3_node_find(m, path);
	char *p = strdup(path);
	size_t h;

	if (!p)
		return -ENOMEM;
	/* The node that had the name is the replaced file: only its id
	 * still reaches it. */
	if (old && old != n)
		unhash_path(m, old);
	unhash_path(m, n);
	free(n->path);
	n->path = p;
	h = hash_str(p) % m->buckets;
	n->path_next = m->by_path[h];
	m->by_path[h] = n;
	return 0;
}

/* Whether n lies directly in directory dir ("" is the root). */
static bool in_dir(const struct s3_node *n, const char *dir)
{
	const char *slash = strrchr(n->path, '/');
	size_t len = slash ? (size_t)(slash - n->path) : 0;

	return *n->path && len == strlen(dir) && !strncmp(n->path, dir, len);
}

int s3_node_writing(struct s3_meta *m, const char *dir, uint64_t **inos,
		    size_t *count)
{
	size_t i, n = 0, cap = 0;
	uint64_t *out = NULL;

	/* Every node is looked at: an opendir already costs a listing. */
	for (i = 0; i < m->buckets; i++) {
		const struct s3_node *p;

		for (p = m->by_id[i]; p; p = p->id_next) {
			if (!p->writers || !in_dir(p, dir))
				continue;
			if (n == cap) {
				uint64_t *q;

				cap = cap ? 2 * cap : 8;
				q = realloc(out, cap * sizeof(*out));
				if (!q) {
					free(out);
					return -ENOMEM;
				}
				out = q;
			}
			out[n++] = p->ino;
		}
	}
	*inos = out;
	*count = n;
	return 0;
}
