// SPDX-License-Identifier: MIT
/*
 * OPEN and READ. A read is a ranged GET on a worker. Each open file keeps
 * one window of the object: a reader that continues where it stopped
 * gets a window twice as large each time (from 1 MiB up to part_size *
 * readahead_parts), so a stream costs few requests, each large; a read
 * elsewhere fetches only what it asks, rounded up to 64 KiB.
 */
#include "s3_file.h"

#include <fcntl.h>
#include <stdlib.h>

#define AHEAD_FIRST (1u << 20)
#define RANDOM_ALIGN (64u << 10)

struct read_job {
	fring_req *r;
	struct s3_file *f;
	uint64_t off;
	uint32_t len;
};

struct open_job {
	fring_req *r;
	uint64_t ino;
	uint32_t flags;
	char path[];
};

struct s3_file *s3_file_new(uint64_t ino, const char *path, uint64_t size)
{
	struct s3_file *f = calloc(1, sizeof(*f));

	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	f->ino = ino;
	f->size = size;
	f->ahead = AHEAD_FIRST;
	pthread_mutex_init(&f->lock, NULL);
	return f;
}

void s3_file_free(struct s3_file *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
	free(f->win);
	free(f->path);
	free(f);
}

static bool wants_write(uint32_t flags)
{
	return (flags & O_ACCMODE) != O_RDONLY;
}

void s3_open_reply(struct s3_fs *fs, fring_req *r, uint64_t ino,
		   const char *path, uint64_t size, uint32_t flags,
		   const struct fring_entry *created)
{
	struct s3_file *f = s3_file_new(ino, path, size);
	struct fring_open_out o = { 0 };
	int err = f ? 0 : -ENOMEM, ret;

	if (!err && wants_write(flags)) {
		/* A whole new body only: S3 cannot change part of an object. */
		if (fs->cfg.readonly)
			err = -EROFS;
		else if (!(flags & O_TRUNC) && size)
			err = -EOPNOTSUPP;
		else
			err = s3_upload_begin(fs, f);
	}
	if (err) {
		if (created)
			s3_forget(fs, &(struct fring_forget_one){ ino, 1 }, 1);
		s3_file_free(f);
		fring_host->reply_err(r, err);
		return;
	}
	o.fh = (uint64_t)(uintptr_t)f;
	o.open_flags = f->up ? FRING_FOPEN_DIRECT_IO : 0;
	ret = created ? fring_host->reply_create(r, created, &o)
		      : fring_host->reply_open(r, &o);
	if (ret < 0) {
		if (created)
			s3_forget(fs, &(struct fring_forget_one){ ino, 1 }, 1);
		s3_upload_drop(fs, f);
		s3_file_free(f);
	}
}

static void open_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct open_job *j = arg;
	struct s3_call head = { .method = "HEAD", .key = j->path };
	struct s3_resp resp;
	struct s3_node *n;
	uint64_t size = 0;
	int err = s3_http(fs, c, &head, &resp);

	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_get(&fs->meta, j->ino);
	if (!err && n && !n->writers)
		s3_node_set(n, false, resp.content_length, resp.last_modified,
			    s3_now_ns());
	if (n)
		size = n->size;
	pthread_mutex_unlock(&fs->meta.lock);
	s3_resp_free(&resp);
	if (err == -ENOENT && (j->flags & O_TRUNC) && wants_write(j->flags))
		err = 0; /* gone meanwhile: written anew all the same */
	if (err)
		fring_host->reply_err(j->r, err);
	else
		s3_open_reply(fs, j->r, j->ino, j->path, size, j->flags, NULL);
	free(j);
}

void s3_open(void *inst, fring_req *r, const struct fring_open_args *a)
{
	struct s3_fs *fs = inst;
	struct open_job *j = NULL;
	struct s3_node *n;
	uint64_t size = 0;
	char *path = NULL;
	int err = 0;
	bool now = false;

	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_get(&fs->meta, a->nodeid);
	if (!n)
		err = -ENOENT;
	else if (n->dir)
		err = -EISDIR;
	else if (n->writers)
		err = -EBUSY; /* one writer at a time, no reader of half a body */
	else if (s3_node_fresh(fs, n, s3_now_ns()) || (a->flags & O_TRUNC))
		now = true;
	if (!err) {
		size = n->size;
		path = strdup(n->path);
		err = path ? 0 : -ENOMEM;
	}
	pthread_mutex_unlock(&fs->meta.lock);
	if (!err && !now) {
		j = malloc(sizeof(*j) + strlen(path) + 1);
		if (j) {
			j->r = r;
			j->ino = a->nodeid;
			j->flags = a->flags;
			strcpy(j->path, path);
		}
		err = j ? s3_submit(fs, open_job, j) : -ENOMEM;
		if (err)
			free(j);
	} else if (!err) {
		s3_open_reply(fs, r, a->nodeid, path, size, a->flags, NULL);
	}
	if (err)
		fring_host->reply_err(r, err);
	free(path);
}

/* Lock held. Fetch [off, off + len) of the object into the window. */
static int fetch(struct s3_fs *fs, CURL *c, struct s3_file *f, uint64_t off,
		 size_t len)
{
	struct s3_call get = { .method = "GET",
			       .key = f->path,
			       .range_off = off,
			       .range_len = len };
	struct s3_resp resp;
	int err;

	if (len > f->win_cap) {
		char *p = realloc(f->win, len);

		if (!p)
			return -ENOMEM;
		f->win = p;
		f->win_cap = len;
	}
	f->win_len = 0;
	get.sink = f->win;
	get.sink_cap = len;
	err = s3_http(fs, c, &get, &resp);
	if (!err) {
		f->win_off = off;
		f->win_len = resp.sink_len;
	}
	s3_resp_free(&resp);
	return err;
}

static void read_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct read_job *j = arg;
	struct s3_file *f = j->f;
	uint64_t off = j->off,
		 max = fs->cfg.part_size * fs->cfg.readahead_parts;
	size_t len = j->len, want;
	int err = 0;

	pthread_mutex_lock(&f->lock);
	if (off >= f->size)
		len = 0;
	else if (len > f->size - off)
		len = (size_t)(f->size - off);
	if (len &&
	    !(off >= f->win_off && off + len <= f->win_off + f->win_len)) {
		if (off == f->next_off || (f->win_len && off >= f->win_off &&
					   off <= f->win_off + f->win_len)) {
			want = f->ahead;
			if (f->ahead < max)
				f->ahead = f->ahead * 2 < max ? f->ahead * 2
							      : max;
		} else {
			want = (len + RANDOM_ALIGN - 1) / RANDOM_ALIGN *
			       RANDOM_ALIGN;
			f->ahead = AHEAD_FIRST;
		}
		if (want < len)
			want = len;
		if (want > f->size - off)
			want = (size_t)(f->size - off);
		err = fetch(fs, c, f, off, want);
	}
	if (!err && len && off + len > f->win_off + f->win_len)
		len = f->win_off + f->win_len > off
			      ? (size_t)(f->win_off + f->win_len - off)
			      : 0;
	if (err) {
		fring_host->reply_err(j->r, err);
	} else {
		f->next_off = off + len;
		fring_host->reply_data(j->r,
				       len ? f->win + (off - f->win_off) : "",
				       (uint32_t)len);
	}
	pthread_mutex_unlock(&f->lock);
	free(j);
}

void s3_read(void *inst, fring_req *r, const struct fring_read_args *a)
{
	struct s3_fs *fs = inst;
	struct s3_file *f = (struct s3_file *)(uintptr_t)a->fh;
	struct read_job *j;
	int err;

	if (f->up) {
		fring_host->reply_err(r, -EBADF);
		return;
	}
	j = malloc(sizeof(*j));
	if (!j) {
		fring_host->reply_err(r, -ENOMEM);
		return;
	}
	*j = (struct read_job){
		.r = r, .f = f, .off = a->offset, .len = a->len
	};
	err = s3_submit(fs, read_job, j);
	if (err) {
		free(j);
		fring_host->reply_err(r, err);
	}
}

void s3_release(void *inst, fring_req *r, const struct fring_release_args *a)
{
	struct s3_fs *fs = inst;
	struct s3_file *f = (struct s3_file *)(uintptr_t)a->fh;

	if (!s3_upload_release(fs, f))
		s3_file_free(f);
	fring_host->reply_err(r, 0);
}
