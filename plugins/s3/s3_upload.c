// SPDX-License-Identifier: MIT
/*
 * A file opened for writing gets a whole new body: written in order from
 * offset 0 (anything else is EOPNOTSUPP: S3 cannot change part of an
 * object), uploaded when the file is flushed (close). Up to one part it
 * is one PUT; beyond, a multipart upload whose parts go up on workers
 * while the writer goes on, at most upload_parts in flight: the WRITE
 * that fills one more is answered only when one finishes, so memory
 * stays within (upload_parts + 2) * part_size per file. The first FLUSH
 * after data was written completes the upload and answers its result
 * (close(2) returns it); a failure aborts the upload, the object keeps
 * its old body and the writer gets EIO. A file closed with nothing
 * written is completed (empty) at RELEASE. A killed writer's descriptors
 * are closed by the kernel like any others (FUSE cannot tell the two
 * apart): what it wrote until then becomes the object.
 */
#include "s3_file.h"

#include <stdlib.h>
#include <time.h>

#define MAX_PARTS 10000 /* S3's limit */

struct part {
	struct s3_upload *up;
	uint32_t num; /* 1.. */
	char *buf;
	size_t len;
};

struct s3_upload {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_mutex_t id_lock;     /* one initiate */
	pthread_mutex_t finish_lock; /* one completion */
	char *path;
	uint64_t ino;
	char *buf; /* the part being filled */
	size_t len;
	uint64_t written;
	uint32_t nparts, in_flight;
	char **etags; /* [nparts] */
	char *upload_id;
	struct part *pend; /* full, waiting for a slot; its WRITE unanswered */
	fring_req *pend_r;
	uint32_t pend_count;
	int err;
	bool finished, ended;
	int result;
};

struct flush_job {
	fring_req *r;
	struct s3_file *f;
};

static void node_update(struct s3_fs *fs, struct s3_upload *up, bool ok)
{
	struct s3_node *n;

	if (up->ended)
		return;
	up->ended = true;
	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_get(&fs->meta, up->ino);
	if (n) {
		if (n->writers)
			n->writers--;
		if (ok)
			s3_node_set(n, false, up->written, (int64_t)time(NULL),
				    s3_now_ns());
		else
			n->fetched_ns = 0; /* ask S3 again */
	}
	pthread_mutex_unlock(&fs->meta.lock);
}

int s3_upload_begin(struct s3_fs *fs, struct s3_file *f)
{
	struct s3_upload *up = calloc(1, sizeof(*up));
	struct s3_node *n;

	if (!up || !(up->path = strdup(f->path)) ||
	    !(up->buf = malloc(fs->cfg.part_size))) {
		if (up)
			free(up->path);
		free(up);
		return -ENOMEM;
	}
	pthread_mutex_init(&up->lock, NULL);
	pthread_cond_init(&up->cond, NULL);
	pthread_mutex_init(&up->id_lock, NULL);
	pthread_mutex_init(&up->finish_lock, NULL);
	up->ino = f->ino;
	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_get(&fs->meta, f->ino);
	if (n) {
		n->writers++;
		n->size = 0;
	}
	pthread_mutex_unlock(&fs->meta.lock);
	f->up = up;
	return 0;
}

static void upload_free(struct s3_upload *up)
{
	uint32_t i;

	for (i = 0; i < up->nparts; i++)
		free(up->etags[i]);
	free(up->etags);
	free(up->buf);
	free(up->path);
	free(up->upload_id);
	pthread_mutex_destroy(&up->lock);
	pthread_cond_destroy(&up->cond);
	pthread_mutex_destroy(&up->id_lock);
	pthread_mutex_destroy(&up->finish_lock);
	free(up);
}

void s3_upload_drop(struct s3_fs *fs, struct s3_file *f)
{
	if (!f->up)
		return;
	node_update(fs, f->up, false);
	upload_free(f->up);
	f->up = NULL;
}

/* The text of <tag>...</tag> in an XML body, malloc'ed. */
static char *xml_value(const struct s3_buf *b, const char *tag)
{
	char open[64], close[64];
	const char *s, *e;

	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	if (!b->p || !(s = strstr(b->p, open)))
		return NULL;
	s += strlen(open);
	e = strstr(s, close);
	return e ? strndup(s, (size_t)(e - s)) : NULL;
}

static int ensure_id(struct s3_fs *fs, CURL *c, struct s3_upload *up)
{
	const char *kv[] = { "uploads", "", NULL };
	struct s3_call call = { .method = "POST", .key = up->path };
	struct s3_resp resp;
	int err = 0;

	pthread_mutex_lock(&up->id_lock);
	if (!up->upload_id) {
		call.query = s3_query(kv);
		err = call.query ? s3_http(fs, c, &call, &resp) : -ENOMEM;
		if (!err &&
		    !(up->upload_id = xml_value(&resp.body, "UploadId")))
			err = -EIO;
		if (call.query)
			s3_resp_free(&resp);
		free((char *)call.query);
	}
	pthread_mutex_unlock(&up->id_lock);
	return err;
}

static char *part_query(struct s3_upload *up, uint32_t num)
{
	char n[16];
	const char *kv[] = { "partNumber", n, "uploadId", up->upload_id, NULL };

	snprintf(n, sizeof(n), "%u", num);
	return s3_query(kv);
}

/* Upload one part; its ETag lands in up->etags. */
static int put_part(struct s3_fs *fs, CURL *c, struct part *p)
{
	struct s3_upload *up = p->up;
	struct s3_call call = { .method = "PUT",
				.key = up->path,
				.body = p->buf,
				.body_len = p->len };
	struct s3_resp resp;
	int err = ensure_id(fs, c, up);

	if (err)
		return err;
	call.query = part_query(up, p->num);
	if (!call.query)
		return -ENOMEM;
	err = s3_http(fs, c, &call, &resp);
	free((char *)call.query);
	if (!err && !*resp.etag)
		err = -EIO;
	if (!err) {
		pthread_mutex_lock(&up->lock);
		up->etags[p->num - 1] = strdup(resp.etag);
		if (!up->etags[p->num - 1])
			err = -ENOMEM;
		pthread_mutex_unlock(&up->lock);
	}
	s3_resp_free(&resp);
	return err;
}

static void part_job(struct s3_fs *fs, CURL *c, void *arg);

/* up->lock held: start p on a worker. */
static int start_part(struct s3_fs *fs, struct part *p)
{
	int err = s3_submit(fs, part_job, p);

	if (!err)
		p->up->in_flight++;
	return err;
}

static void part_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct part *p = arg, *next = NULL;
	struct s3_upload *up = p->up;
	fring_req *r = NULL;
	uint32_t count = 0;
	int err = put_part(fs, c, p), rerr = 0;

	free(p->buf);
	free(p);
	pthread_mutex_lock(&up->lock);
	if (err && !up->err)
		up->err = err;
	up->in_flight--;
	if (up->pend) {
		next = up->pend;
		r = up->pend_r;
		count = up->pend_count;
		up->pend = NULL;
		up->pend_r = NULL;
		rerr = up->err ? -EIO : start_part(fs, next);
		if (rerr) {
			free(next->buf);
			free(next);
		}
	}
	pthread_cond_broadcast(&up->cond);
	pthread_mutex_unlock(&up->lock);
	if (r && rerr)
		fring_host->reply_err(r, rerr);
	else if (r)
		fring_host->reply_write(r, count);
}

void s3_write(void *inst, fring_req *r, const struct fring_write_args *a)
{
	struct s3_fs *fs = inst;
	struct s3_file *f = (struct s3_file *)(uintptr_t)a->fh;
	struct s3_upload *up = f->up;
	const char *data = a->data;
	size_t left = a->len, ps = fs->cfg.part_size;
	struct s3_node *n;
	bool defer = false;
	int err = 0;

	if (!up) {
		fring_host->reply_err(r, -EBADF);
		return;
	}
	pthread_mutex_lock(&up->lock);
	if (up->finished)
		err = -EBADF; /* flushed: the object is complete */
	else if (up->err)
		err = -EIO;
	else if (a->offset != up->written)
		err = -EOPNOTSUPP; /* only in order: S3 has no random writes */
	else if ((up->written + left) / ps >= MAX_PARTS)
		err = -EFBIG;
	while (!err && left) {
		size_t n = ps - up->len < left ? ps - up->len : left;
		struct part *p;
		char **et, *nb;

		memcpy(up->buf + up->len, data, n);
		up->len += n;
		up->written += n;
		data += n;
		left -= n;
		if (up->len < ps)
			continue;
		/* A full part goes up; the next one fills a new buffer. */
		p = malloc(sizeof(*p));
		et = realloc(up->etags, (up->nparts + 1) * sizeof(*et));
		nb = malloc(ps);

		if (et)
			up->etags = et;
		if (!p || !et || !nb) {
			free(p);
			free(nb);
			err = up->err = -ENOMEM;
			break;
		}
		up->etags[up->nparts] = NULL;
		*p = (struct part){ .up = up,
				    .num = ++up->nparts,
				    .buf = up->buf,
				    .len = up->len };
		up->buf = nb;
		up->len = 0;
		if (up->in_flight < fs->cfg.upload_parts) {
			err = start_part(fs, p);
			if (err) {
				free(p->buf);
				free(p);
				up->err = err;
			}
		} else {
			/* At most one waits: its writer waits for this reply.
			 * The kernel splits a write(2) into WRITEs of at most
			 * max_write (< part_size), so left is 0 here. */
			up->pend = p;
			up->pend_r = r;
			up->pend_count = a->len;
			defer = true;
		}
	}
	pthread_mutex_unlock(&up->lock);
	if (!err) {
		pthread_mutex_lock(&fs->meta.lock);
		n = s3_node_get(&fs->meta, f->ino);
		if (n)
			n->size = up->written;
		pthread_mutex_unlock(&fs->meta.lock);
	}
	if (err)
		fring_host->reply_err(r, err);
	else if (!defer)
		fring_host->reply_write(r, a->len);
}

static int complete(struct s3_fs *fs, CURL *c, struct s3_upload *up)
{
	const char *kv[] = { "uploadId", up->upload_id, NULL };
	struct s3_call call = { .method = "POST", .key = up->path };
	struct s3_buf x = { 0 };
	struct s3_resp resp;
	char line[256];
	uint32_t i;
	int err = s3_buf_add(&x, "<CompleteMultipartUpload>", 25);

	for (i = 0; !err && i < up->nparts; i++) {
		if (!up->etags[i]) {
			err = -EIO;
			break;
		}
		snprintf(
			line, sizeof(line),
			"<Part><PartNumber>%u</PartNumber><ETag>%s</ETag></Part>",
			i + 1, up->etags[i]);
		err = s3_buf_add(&x, line, strlen(line));
	}
	err = err || s3_buf_add(&x, "</CompleteMultipartUpload>", 26) ? -ENOMEM
								      : 0;
	call.query = err ? NULL : s3_query(kv);
	if (!err && call.query) {
		call.body = x.p;
		call.body_len = x.len;
		err = s3_http(fs, c, &call, &resp);
		/* S3 may report a failed completion inside a 200. */
		if (!err && resp.body.p && strstr(resp.body.p, "<Error>"))
			err = -EIO;
		s3_resp_free(&resp);
	} else if (!err) {
		err = -ENOMEM;
	}
	free((char *)call.query);
	free(x.p);
	return err;
}

static void abort_upload(struct s3_fs *fs, CURL *c, struct s3_upload *up)
{
	const char *kv[] = { "uploadId", up->upload_id, NULL };
	struct s3_call call = { .method = "DELETE", .key = up->path };
	struct s3_resp resp;

	if (!up->upload_id)
		return;
	call.query = s3_query(kv);
	if (call.query && s3_http(fs, c, &call, &resp) == 0)
		fring_logf(fs->mount, FRING_LOG_INFO,
			   "s3: %s%s: upload aborted", fs->cfg.prefix,
			   up->path);
	if (call.query)
		s3_resp_free(&resp);
	free((char *)call.query);
}

/* Wait for the parts in flight (they run on other workers, queued
 * before this job), then finish: one PUT, or the last part and the
 * completion; abort on any failure. */
static int finish(struct s3_fs *fs, CURL *c, struct s3_upload *up)
{
	int err;

	pthread_mutex_lock(&up->lock);
	while (up->in_flight)
		pthread_cond_wait(&up->cond, &up->lock);
	err = up->err;
	pthread_mutex_unlock(&up->lock);
	if (!err && !up->nparts) {
		struct s3_call put = { .method = "PUT",
				       .key = up->path,
				       .body = up->buf,
				       .body_len = up->len };
		struct s3_resp resp;

		err = s3_http(fs, c, &put, &resp);
		s3_resp_free(&resp);
	} else if (!err) {
		if (up->len) {
			char **et = realloc(up->etags,
					    (up->nparts + 1) * sizeof(*et));
			struct part p = { .up = up,
					  .num = up->nparts + 1,
					  .buf = up->buf,
					  .len = up->len };

			if (!et)
				return -ENOMEM;
			up->etags = et;
			et[up->nparts++] = NULL;
			err = put_part(fs, c, &p);
		}
		if (!err)
			err = complete(fs, c, up);
	}
	if (err)
		abort_upload(fs, c, up);
	return err;
}

static void flush_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct flush_job *j = arg;
	struct s3_upload *up = j->f->up;
	int err;

	pthread_mutex_lock(&up->finish_lock);
	if (!up->finished) {
		up->result = finish(fs, c, up);
		if (up->result) {
			fring_logf(fs->mount, FRING_LOG_WARN,
				   "s3: %s%s: upload failed (%s); the object "
				   "keeps its old body",
				   fs->cfg.prefix, up->path,
				   strerror(-up->result));
			up->result = -EIO;
		}
		free(up->buf);
		up->buf = NULL;
		up->finished = true;
		node_update(fs, up, up->result == 0);
	}
	err = up->result;
	pthread_mutex_unlock(&up->finish_lock);
	fring_host->reply_err(j->r, err);
	free(j);
}

/* Nothing written yet: a FLUSH then is the close of a descriptor that
 * was duplicated first (a shell's "> file" opens, dup2()s and closes),
 * not the end of the writing; RELEASE completes an empty file. */
static bool upload_empty(struct s3_upload *up)
{
	bool empty;

	pthread_mutex_lock(&up->lock);
	empty = !up->written && !up->finished;
	pthread_mutex_unlock(&up->lock);
	return empty;
}

void s3_flush(void *inst, fring_req *r, const struct fring_release_args *a)
{
	struct s3_fs *fs = inst;
	struct s3_file *f = (struct s3_file *)(uintptr_t)a->fh;
	struct flush_job *j;

	if (!f->up || upload_empty(f->up)) {
		fring_host->reply_err(r, 0);
		return;
	}
	j = malloc(sizeof(*j));
	if (j) {
		j->r = r;
		j->f = f;
	}
	if (!j || s3_submit(fs, flush_job, j)) {
		free(j);
		fring_host->reply_err(r, -ENOMEM);
	}
}

static void release_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct s3_file *f = arg;
	struct s3_upload *up = f->up;
	int err = finish(fs, c, up);

	if (err)
		fring_logf(
			fs->mount, FRING_LOG_WARN,
			"s3: %s%s: upload at release failed (%s); the object "
			"keeps its old body",
			fs->cfg.prefix, up->path, strerror(-err));
	node_update(fs, up, !err);
	upload_free(up);
	f->up = NULL;
	s3_file_free(f);
}

bool s3_upload_release(struct s3_fs *fs, struct s3_file *f)
{
	if (!f->up)
		return false;
	if (f->up->finished) {
		upload_free(f->up);
		f->up = NULL;
		return false;
	}
	/* Not flushed with data (an empty file): complete it off this
	 * thread; nobody waits for the result, so a failure is logged. */
	if (!s3_submit(fs, release_job, f))
		return true;
	s3_upload_drop(fs, f);
	return false;
}
