// SPDX-License-Identifier: MIT
/*
 * The namespace changes S3 can express. CREATE makes the node at once
 * (the object appears at close, s3_upload.c); MKDIR puts a zero-byte
 * "name/" marker; UNLINK is a DELETE; RMDIR deletes the marker of an
 * empty directory; RENAME of a file is a server-side copy and a DELETE
 * (it costs the object's size in copying, not atomic), of a directory
 * EXDEV (mv then copies and removes file by file). SETATTR changes
 * nothing S3 stores: times are accepted and dropped, a size only when it
 * is the file's own, mode and owners EPERM. Symlinks, device nodes and
 * hard links: EPERM. With readonly, all of it is EROFS.
 */
#include "s3_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>

struct change_job {
	fring_req *r;
	uint64_t ino;   /* the node changed (RENAME: the source) */
	uint32_t flags; /* RENAME flags */
	char *path;
	char *to; /* RENAME: the new path */
};

static void job_free(struct change_job *j)
{
	free(j->path);
	free(j->to);
	free(j);
}

static bool refuse_ro(struct s3_fs *fs, fring_req *r)
{
	if (fs->cfg.readonly)
		fring_host->reply_err(r, -EROFS);
	return fs->cfg.readonly;
}

/* Meta lock held: the path of name in directory parent, or -errno. */
static int child(struct s3_fs *fs, uint64_t parent, const char *name,
		 uint32_t namelen, char **out)
{
	struct s3_node *p = s3_node_get(&fs->meta, parent);

	if (!p)
		return -ENOENT;
	if (!p->dir)
		return -ENOTDIR;
	*out = s3_child_path(p->path, name, namelen);
	return *out ? 0 : -ENOMEM;
}

static void queue(struct s3_fs *fs, fring_req *r, s3_job_fn fn,
		  struct change_job *j)
{
	if (s3_submit(fs, fn, j)) {
		job_free(j);
		fring_host->reply_err(r, -ENOMEM);
	}
}

static struct change_job *job_new(fring_req *r, char *path)
{
	struct change_job *j = calloc(1, sizeof(*j));

	if (!j) {
		free(path);
		return NULL;
	}
	j->r = r;
	j->path = path;
	return j;
}

/* A simple request on key (path + suffix): 0 or -errno. */
static int simple(struct s3_fs *fs, CURL *c, const char *method,
		  const char *path, const char *suffix)
{
	struct s3_buf k = { 0 };
	struct s3_call call = { .method = method };
	struct s3_resp resp;
	int err;

	if (s3_buf_add(&k, path, strlen(path)) ||
	    s3_buf_add(&k, suffix, strlen(suffix))) {
		free(k.p);
		return -ENOMEM;
	}
	call.key = k.p;
	err = s3_http(fs, c, &call, &resp);
	s3_resp_free(&resp);
	free(k.p);
	return err;
}

static void stale(struct s3_fs *fs, const char *path)
{
	struct s3_node *n;

	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_find(&fs->meta, path);
	if (n)
		n->fetched_ns = 0;
	pthread_mutex_unlock(&fs->meta.lock);
}

void s3_create(void *inst, fring_req *r, const struct fring_make_args *a)
{
	struct s3_fs *fs = inst;
	struct fring_entry e;
	struct s3_node *n = NULL;
	char *path = NULL;
	int err;

	if (refuse_ro(fs, r))
		return;
	pthread_mutex_lock(&fs->meta.lock);
	err = child(fs, a->parent, a->name, a->namelen, &path);
	if (!err && !(n = s3_node_make(&fs->meta, path)))
		err = -ENOMEM;
	if (!err && n->writers)
		err = -EBUSY;
	if (!err && n->dir && s3_node_fresh(fs, n, s3_now_ns()))
		err = -EISDIR;
	if (!err) {
		s3_node_set(n, false, 0, (int64_t)time(NULL), s3_now_ns());
		n->nlookup++;
		s3_node_entry(fs, n, &e);
	}
	pthread_mutex_unlock(&fs->meta.lock);
	if (err)
		fring_host->reply_err(r, err);
	else
		s3_open_reply(fs, r, e.ino, path, 0, a->flags | O_TRUNC, &e);
	free(path);
}

static void mkdir_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct change_job *j = arg;
	struct s3_call put = { .method = "PUT" };
	struct fring_entry e;
	struct s3_resp resp;
	struct s3_node *n = NULL;
	char *marker = s3_child_path(j->path, "", 0);
	int err;

	/* "a/b" + "/" : the zero-byte marker "a/b/". */
	put.key = marker;
	err = marker ? s3_http(fs, c, &put, &resp) : -ENOMEM;
	if (marker)
		s3_resp_free(&resp);
	free(marker);
	if (!err) {
		pthread_mutex_lock(&fs->meta.lock);
		n = s3_node_make(&fs->meta, j->path);
		if (n) {
			s3_node_set(n, true, 0, (int64_t)time(NULL),
				    s3_now_ns());
			n->nlookup++;
			s3_node_entry(fs, n, &e);
		}
		pthread_mutex_unlock(&fs->meta.lock);
		err = n ? 0 : -ENOMEM;
	}
	if (err)
		fring_host->reply_err(j->r, err);
	else if (fring_host->reply_entry(j->r, &e) < 0)
		s3_forget(fs, &(struct fring_forget_one){ e.ino, 1 }, 1);
	job_free(j);
}

void s3_mkdir(void *inst, fring_req *r, const struct fring_make_args *a)
{
	struct s3_fs *fs = inst;
	struct s3_node *n;
	char *path = NULL;
	int err;

	if (refuse_ro(fs, r))
		return;
	pthread_mutex_lock(&fs->meta.lock);
	err = child(fs, a->parent, a->name, a->namelen, &path);
	n = err ? NULL : s3_node_find(&fs->meta, path);
	if (n && s3_node_fresh(fs, n, s3_now_ns()) && n->fetched_ns)
		err = -EEXIST;
	pthread_mutex_unlock(&fs->meta.lock);
	if (err) {
		free(path);
		fring_host->reply_err(r, err);
		return;
	}
	queue(fs, r, mkdir_job, job_new(r, path));
}

static void unlink_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct change_job *j = arg;
	int err = simple(fs, c, "DELETE", j->path, "");

	stale(fs, j->path);
	fring_host->reply_err(j->r, err);
	job_free(j);
}

static void rmdir_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct change_job *j = arg;
	struct s3_listing l = { 0 };
	int err = s3_list_dir(fs, c, j->path, 2, &l);

	if (!err && l.n)
		err = -ENOTEMPTY;
	s3_listing_free(&l);
	if (!err)
		err = simple(fs, c, "DELETE", j->path, "/");
	if (!err)
		stale(fs, j->path);
	fring_host->reply_err(j->r, err);
	job_free(j);
}

/* UNLINK and RMDIR: the node must be known (the kernel looked it up). */
static void remove_name(struct s3_fs *fs, fring_req *r,
			const struct fring_name_args *a, bool dir)
{
	struct s3_node *n = NULL;
	char *path = NULL;
	int err;

	if (refuse_ro(fs, r))
		return;
	pthread_mutex_lock(&fs->meta.lock);
	err = child(fs, a->parent, a->name, a->namelen, &path);
	if (!err && !(n = s3_node_find(&fs->meta, path)))
		err = -ENOENT;
	else if (!err && n->dir != dir)
		err = dir ? -ENOTDIR : -EISDIR;
	else if (!err && n->writers)
		err = -EBUSY;
	pthread_mutex_unlock(&fs->meta.lock);
	if (err) {
		free(path);
		fring_host->reply_err(r, err);
		return;
	}
	queue(fs, r, dir ? rmdir_job : unlink_job, job_new(r, path));
}

void s3_unlink(void *inst, fring_req *r, const struct fring_name_args *a)
{
	remove_name(inst, r, a, false);
}

void s3_rmdir(void *inst, fring_req *r, const struct fring_name_args *a)
{
	remove_name(inst, r, a, true);
}

static int copy_object(struct s3_fs *fs, CURL *c, const char *from,
		       const char *to)
{
	struct s3_buf src = { 0 };
	struct s3_call put = { .method = "PUT", .key = to };
	struct s3_resp resp;
	char *enc;
	int err;

	if (s3_buf_add(&src, "/", 1) ||
	    s3_buf_add(&src, fs->cfg.bucket, strlen(fs->cfg.bucket)) ||
	    s3_buf_add(&src, "/", 1) ||
	    s3_buf_add(&src, fs->cfg.prefix, strlen(fs->cfg.prefix)) ||
	    s3_buf_add(&src, from, strlen(from))) {
		free(src.p);
		return -ENOMEM;
	}
	enc = s3_uri_encode(src.p, src.len, true);
	free(src.p);
	if (!enc)
		return -ENOMEM;
	put.copy_source = enc;
	err = s3_http(fs, c, &put, &resp);
	/* A copy can fail after its 200 has started: the body says so. */
	if (!err && resp.body.p && strstr(resp.body.p, "<Error>"))
		err = -EIO;
	s3_resp_free(&resp);
	free(enc);
	return err;
}

static void rename_job(struct s3_fs *fs, CURL *c, void *arg)
{
	struct change_job *j = arg;
	struct s3_node *n;
	int err = 0;

	if (j->flags & 1 /* RENAME_NOREPLACE */) {
		struct s3_call head = { .method = "HEAD", .key = j->to };
		struct s3_resp resp;
		int got = s3_http(fs, c, &head, &resp);

		s3_resp_free(&resp);
		err = got == 0 ? -EEXIST : got == -ENOENT ? 0 : got;
		if (!err && s3_dir_exists(fs, c, j->to) == 1)
			err = -EEXIST;
	}
	if (!err)
		err = copy_object(fs, c, j->path, j->to);
	if (!err)
		err = simple(fs, c, "DELETE", j->path, "");
	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_get(&fs->meta, j->ino);
	if (!err && n) {
		/* The kernel's inode now bears the new name. */
		err = s3_node_move(&fs->meta, n, j->to);
		n->fetched_ns = 0;
	}
	pthread_mutex_unlock(&fs->meta.lock);
	fring_host->reply_err(j->r, err);
	job_free(j);
}

void s3_rename(void *inst, fring_req *r, const struct fring_rename_args *a)
{
	struct s3_fs *fs = inst;
	struct change_job *j = NULL;
	struct s3_node *n = NULL;
	char *from = NULL, *to = NULL;
	int err;

	if (refuse_ro(fs, r))
		return;
	if (a->flags & ~1u) {
		/* RENAME_EXCHANGE, RENAME_WHITEOUT: nothing S3 can do. */
		fring_host->reply_err(r, -EINVAL);
		return;
	}
	pthread_mutex_lock(&fs->meta.lock);
	err = child(fs, a->parent, a->name, a->namelen, &from);
	if (!err)
		err = child(fs, a->newparent, a->newname, a->newnamelen, &to);
	if (!err && !(n = s3_node_find(&fs->meta, from)))
		err = -ENOENT;
	else if (!err && n->dir)
		err = -EXDEV; /* a prefix: mv copies it file by file */
	else if (!err && n->writers)
		err = -EBUSY;
	if (!err && !(j = job_new(r, from)))
		err = -ENOMEM;
	if (!err) {
		from = NULL;
		j->to = to;
		to = NULL;
		j->ino = n->ino;
		j->flags = a->flags;
	}
	pthread_mutex_unlock(&fs->meta.lock);
	free(from);
	free(to);
	if (err)
		fring_host->reply_err(r, err);
	else
		queue(fs, r, rename_job, j);
}

void s3_setattr(void *inst, fring_req *r, const struct fring_setattr_args *a)
{
	struct s3_fs *fs = inst;
	struct fring_attr at;
	struct s3_node *n;
	int err = 0;

	if (refuse_ro(fs, r))
		return;
	pthread_mutex_lock(&fs->meta.lock);
	n = s3_node_get(&fs->meta, a->nodeid);
	if (!n)
		err = -ENOENT;
	else if (a->valid & (FRING_SET_MODE | FRING_SET_UID | FRING_SET_GID))
		err = -EPERM;
	else if ((a->valid & FRING_SET_SIZE) && a->file_size != n->size)
		err = -EOPNOTSUPP;
	else
		s3_node_attr(fs, n, &at);
	pthread_mutex_unlock(&fs->meta.lock);
	if (err)
		fring_host->reply_err(r, err);
	else
		fring_host->reply_attr(r, &at, fs->cfg.attr_timeout_ns);
}

void s3_refuse_make(void *inst, fring_req *r, const struct fring_make_args *a)
{
	struct s3_fs *fs = inst;

	fring_host->reply_err(r, fs->cfg.readonly ? -EROFS : -EPERM);
}

void s3_refuse_link(void *inst, fring_req *r, const struct fring_link_args *a)
{
	struct s3_fs *fs = inst;

	fring_host->reply_err(r, fs->cfg.readonly ? -EROFS : -EPERM);
}
