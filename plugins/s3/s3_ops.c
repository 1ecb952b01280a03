// SPDX-License-Identifier: MIT
/*
 * LOOKUP, GETATTR, OPENDIR/READDIR/RELEASEDIR, STATFS. A name is answered
 * from the inode table while its attributes are fresh (meta_ttl), so a
 * listing followed by stat or open costs no more requests; otherwise a
 * worker asks S3: a directory when anything lies under "name/" (a
 * ListObjectsV2 of one key), else a file when HEAD finds the key.
 */
#include "s3.h"

#include <stdlib.h>
#include <string.h>

#define COOKIE_DOT 1
#define COOKIE_DOTDOT 2
#define COOKIE_FIRST 3

struct name_job {
	fring_req *r;
	uint64_t ino; /* GETATTR: the node; LOOKUP: 0 */
	char path[];
};

struct dir_handle {
	uint64_t ino;
	size_t n;
	struct dir_item {
		uint64_t ino;
		bool dir;
		char *name;
	} * items;
};

static struct name_job *name_job_new(fring_req *r, const char *path)
{
	size_t n = strlen(path) + 1;
	struct name_job *j = malloc(sizeof(*j) + n);

	if (j) {
		j->r = r;
		j->ino = 0;
		memcpy(j->path, path, n);
	}
	return j;
}

static void queue(struct s3_fs *fs, fring_req *r, s3_job_fn fn, void *job)
{
	int err = job ? s3_submit(fs, fn, job) : -ENOMEM;

	if (err) {
		free(job);
		fring_host->reply_err(r, err);
	}
}

/* What S3 holds at path: 1 and *dir/size/mtime, 0 nothing, or -errno. */
static int probe(struct s3_fs *fs, CURL *c, const char *path, bool *dir,
		 uint64_t *size, int64_t *mtime)
{
	struct s3_call head = { .method = "HEAD", .key = path };
	struct s3_resp resp;
	int err = s3_dir_exists(fs, c, path);

	if (err < 0 || err == 1) {
		*dir = true;
		*size = 0;
		*mtime = 0;
		return err;
	}
	err = s3_http(fs, c, &head, &resp);
	*dir = false;
	*size = resp.content_length;
	*mtime = resp.last_modified;
	s3_resp_free(&resp);
	return err == -ENOENT ? 0 : err ? err : 1;
}

static void lookup_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct name_job *j = arg;
	struct fring_entry e;
	struct s3_node *n;
	uint64_t size;
	int64_t mtime;
	bool dir;
	int got = probe(fs, c, j->path, &dir, &size, &mtime);

	if (got <= 0) {
		fring_host->reply_err(j->r, got ? got : -ENOENT);
		free(j);
		return;
	}
	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_make(&fs->meta, j->path);
	if (n) {
		if (!n->writers)
			s3_node_set(n, dir, size, mtime, s3_now_ns());
		n->nlookup++;
		s3_node_entry(fs, n, &e);
	}
	pthread_mutex_unlock(&fs->meta.lock);
	if (!n)
		fring_host->reply_err(j->r, -ENOMEM);
	else if (fring_host->reply_entry(j->r, &e) < 0)
		s3_forget(fs, &(struct fring_forget_one){ e.ino, 1 }, 1);
	free(j);
}

void s3_lookup(void *inst, fring_req *r, const struct fring_name_args *a)
{
	struct s3_fs *fs = inst;
	struct s3_node *p, *n;
	struct fring_entry e;
	char *path = NULL;
	int err = 0;

	pthread_mutex_lock(&fs->meta.lock);
	p = s3_node_get(&fs->meta, a->parent);
	if (!p)
		err = -ENOENT;
	else if (!p->dir)
		err = -ENOTDIR;
	else if (!(path = s3_child_path(p->path, a->name, a->namelen)))
		err = -ENOMEM;
	n = path && !err ? s3_node_find(&fs->meta, path) : NULL;
	if (n && s3_node_fresh(fs, n, s3_now_ns())) {
		n->nlookup++;
		s3_node_entry(fs, n, &e);
	} else {
		n = NULL;
	}
	pthread_mutex_unlock(&fs->meta.lock);
	if (err) {
		fring_host->reply_err(r, err);
	} else if (n) {
		if (fring_host->reply_entry(r, &e) < 0)
			s3_forget(fs, &(struct fring_forget_one){ e.ino, 1 },
				  1);
	} else {
		queue(fs, r, lookup_job, name_job_new(r, path));
	}
	free(path);
}

static void getattr_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct name_job *j = arg;
	struct s3_call head = { .method = "HEAD", .key = j->path };
	struct fring_attr a;
	struct s3_resp resp;
	struct s3_node *n;
	int err = s3_http(fs, c, &head, &resp);

	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_get(&fs->meta, j->ino);
	if (!err && n && !n->writers)
		s3_node_set(n, false, resp.content_length, resp.last_modified,
			    s3_now_ns());
	if (n)
		s3_node_attr(fs, n, &a);
	pthread_mutex_unlock(&fs->meta.lock);
	s3_resp_free(&resp);
	if (err || !n)
		fring_host->reply_err(j->r, err ? err : -ENOENT);
	else
		fring_host->reply_attr(j->r, &a, fs->cfg.attr_timeout_ns);
	free(j);
}

void s3_getattr(void *inst, fring_req *r, const struct fring_getattr_args *a)
{
	struct s3_fs *fs = inst;
	struct name_job *j = NULL;
	struct fring_attr at;
	struct s3_node *n;
	bool now = false;

	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_get(&fs->meta, a->nodeid);
	/* A directory has nothing to refresh: it exists while we know it. */
	if (n && (n->dir || s3_node_fresh(fs, n, s3_now_ns()))) {
		s3_node_attr(fs, n, &at);
		now = true;
	} else if (n && (j = name_job_new(r, n->path))) {
		j->ino = n->ino;
	}
	pthread_mutex_unlock(&fs->meta.lock);
	if (now)
		fring_host->reply_attr(r, &at, fs->cfg.attr_timeout_ns);
	else if (!n)
		fring_host->reply_err(r, -ENOENT);
	else
		queue(fs, r, getattr_job, j);
}

static void dir_handle_free(struct dir_handle *h)
{
	size_t i;

	for (i = 0; h && i < h->n; i++)
		free(h->items[i].name);
	if (h)
		free(h->items);
	free(h);
}

/* The listing becomes the handle's snapshot; every entry's node is made
 * or refreshed, so the LOOKUPs that follow are answered at once. */
static int snapshot(struct s3_fs *fs, const char *path, struct s3_listing *l,
		    struct dir_handle *h)
{
	uint64_t now = s3_now_ns();
	int err = 0;
	size_t i;

	h->items = calloc(l->n ? l->n : 1, sizeof(*h->items));
	if (!h->items)
		return -ENOMEM;
	pthread_mutex_lock(&fs->meta.lock);
	for (i = 0; i < l->n && !err; i++) {
		char *cp = s3_child_path(path, l->e[i].name,
					 strlen(l->e[i].name));
		struct s3_node *n = cp ? s3_node_make(&fs->meta, cp) : NULL;

		free(cp);
		if (!n) {
			err = -ENOMEM;
			break;
		}
		if (!n->writers)
			s3_node_set(n, l->e[i].dir, l->e[i].size, l->e[i].mtime,
				    now);
		h->items[h->n].ino = n->ino;
		h->items[h->n].dir = n->dir;
		h->items[h->n].name = l->e[i].name;
		l->e[i].name = NULL;
		h->n++;
	}
	pthread_mutex_unlock(&fs->meta.lock);
	return err;
}

/* The files that were being written when the listing began and that it
 * does not have (not uploaded yet, or only after it was taken) join the
 * snapshot, as a local filesystem lists a file from its creat(2) on. */
static int add_writing(struct s3_fs *fs, const uint64_t *inos, size_t count,
		       struct dir_handle *h)
{
	size_t i, k, listed = h->n;
	struct dir_item *items;
	int err = 0;

	if (!count)
		return 0;
	items = realloc(h->items, (h->n + count) * sizeof(*items));
	if (!items)
		return -ENOMEM;
	h->items = items;
	pthread_mutex_lock(&fs->meta.lock);
	for (i = 0; i < count && !err; i++) {
		struct s3_node *n = s3_node_get(&fs->meta, inos[i]);
		const char *slash;

		for (k = 0; n && k < listed && items[k].ino != inos[i]; k++)
			;
		if (!n || k < listed)
			continue;
		slash = strrchr(n->path, '/');
		items[h->n].ino = n->ino;
		items[h->n].dir = false;
		items[h->n].name = strdup(slash ? slash + 1 : n->path);
		if (!items[h->n].name)
			err = -ENOMEM;
		else
			h->n++;
	}
	pthread_mutex_unlock(&fs->meta.lock);
	return err;
}

static void opendir_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct name_job *j = arg;
	struct s3_listing l = { 0 };
	struct dir_handle *h = calloc(1, sizeof(*h));
	uint64_t *writing = NULL;
	size_t nwriting = 0;
	int err = h ? 0 : -ENOMEM;

	if (!err) {
		pthread_mutex_lock(&fs->meta.lock);
		err = s3_node_writing(&fs->meta, j->path, &writing, &nwriting);
		pthread_mutex_unlock(&fs->meta.lock);
	}
	if (!err)
		err = s3_list_dir(fs, c, j->path, 0, &l);
	if (!err) {
		h->ino = j->ino;
		err = snapshot(fs, j->path, &l, h);
	}
	if (!err)
		err = add_writing(fs, writing, nwriting, h);
	free(writing);
	s3_listing_free(&l);
	if (err) {
		dir_handle_free(h);
		fring_host->reply_err(j->r, err);
	} else {
		struct fring_open_out o = { .fh = (uint64_t)(uintptr_t)h };

		if (fring_host->reply_open(j->r, &o) < 0)
			dir_handle_free(h);
	}
	free(j);
}

void s3_opendir(void *inst, fring_req *r, const struct fring_open_args *a)
{
	struct s3_fs *fs = inst;
	struct name_job *j = NULL;
	struct s3_node *n;
	int err = 0;

	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_get(&fs->meta, a->nodeid);
	if (!n)
		err = -ENOENT;
	else if (!n->dir)
		err = -ENOTDIR;
	else if ((j = name_job_new(r, n->path)))
		j->ino = n->ino;
	pthread_mutex_unlock(&fs->meta.lock);
	if (err)
		fring_host->reply_err(r, err);
	else
		queue(fs, r, opendir_job, j);
}

void s3_readdir(void *inst, fring_req *r, const struct fring_read_args *a)
{
	struct dir_handle *h = (struct dir_handle *)(uintptr_t)a->fh;
	uint64_t off = a->offset;
	int ret = 1;

	if (off < COOKIE_DOT)
		ret = fring_host->dir_add(r, ".", 1, h->ino, S_IFDIR,
					  COOKIE_DOT);
	if (ret == 1 && off < COOKIE_DOTDOT)
		ret = fring_host->dir_add(r, "..", 2, h->ino, S_IFDIR,
					  COOKIE_DOTDOT);
	for (off = off < COOKIE_FIRST ? 0 : off - COOKIE_FIRST + 1;
	     ret == 1 && off < h->n; off++) {
		const struct dir_item *it = &h->items[off];

		ret = fring_host->dir_add(r, it->name,
					  (uint32_t)strlen(it->name), it->ino,
					  it->dir ? S_IFDIR : S_IFREG,
					  COOKIE_FIRST + off);
	}
	if (ret < 0)
		fring_host->reply_err(r, ret);
	else
		fring_host->reply_dir(r);
}

void s3_releasedir(void *inst, fring_req *r, const struct fring_release_args *a)
{
	dir_handle_free((struct dir_handle *)(uintptr_t)a->fh);
	fring_host->reply_err(r, 0);
}

void s3_statfs(void *inst, fring_req *r, const struct fring_node_args *a)
{
	/* A bucket has no capacity to report: plenty, as mountpoint-s3 says. */
	struct fring_statfs s = {
		.blocks = 1ull << 40,
		.bfree = 1ull << 40,
		.bavail = 1ull << 40,
		.files = 1ull << 32,
		.ffree = 1ull << 32,
		.bsize = 1u << 20,
		.frsize = 1u << 20,
		.namelen = 1024,
	};

	fring_host->reply_statfs(r, &s);
}
