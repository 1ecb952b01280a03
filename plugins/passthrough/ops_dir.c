// SPDX-License-Identifier: MIT
/*
 * Directory listing. fh's slot (fh.c) holds a pt_dir: a DIR stream plus
 * the offset it stands at, and the entry that did not fit in the previous
 * reply so the next call starts with it without seeking.
 */
#include "pt.h"

#include <stdlib.h>
#include <unistd.h>

struct pt_dir {
	struct pt_dir *prev, *next; /* fs->dirs, so destroy can free them */
	pthread_mutex_t lock;
	DIR *dp;
	off_t offset;     /* position after the last entry handed out */
	bool has_pending; /* `pending` was read at `offset` but not sent */
	struct dirent pending;
};

/* NULL: lost at a takeover. */
static struct pt_dir *fh_dir(struct pt_fs *fs, uint64_t fh)
{
	struct pt_open *o = pt_fh_get(fs, fh);

	return o ? o->dir : NULL;
}

/* Open directories are tracked: after an aborted connection no RELEASEDIR
 * comes, and destroy must still free them. */
static void dir_link(struct pt_fs *fs, struct pt_dir *d)
{
	pthread_mutex_lock(&fs->lock);
	d->next = fs->dirs;
	if (fs->dirs)
		fs->dirs->prev = d;
	fs->dirs = d;
	pthread_mutex_unlock(&fs->lock);
}

static void dir_free(struct pt_fs *fs, struct pt_dir *d)
{
	pthread_mutex_lock(&fs->lock);
	if (d->prev)
		d->prev->next = d->next;
	else
		fs->dirs = d->next;
	if (d->next)
		d->next->prev = d->prev;
	pthread_mutex_unlock(&fs->lock);
	closedir(d->dp);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

void pt_dirs_close_all(struct pt_fs *fs)
{
	while (fs->dirs)
		dir_free(fs, fs->dirs);
}

void pt_opendir(void *inst, fring_req *r, const struct fring_open_args *a)
{
	struct pt_fs *fs = inst;
	struct fring_open_out o;
	struct pt_dir *d;
	struct pt_ref ref;
	int fd, err = pt_ref_get(fs, a->nodeid, &ref);

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	fd = openat(ref.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	pt_ref_put(fs, &ref);
	d = err ? NULL : calloc(1, sizeof(*d));
	if (!err && (!d || !(d->dp = fdopendir(fd)))) {
		err = d ? -errno : -ENOMEM;
		free(d);
		close(fd);
	}
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	pthread_mutex_init(&d->lock, NULL);
	dir_link(fs, d);
	memset(&o, 0, sizeof(o));
	err = pt_fh_new(fs, fd, O_RDONLY | O_DIRECTORY, a->nodeid, d, &o.fh);
	if (err) {
		dir_free(fs, d);
		fring_host->reply_err(r, err);
	} else if (fring_host->reply_open(r, &o) < 0) {
		pt_fh_free(fs, o.fh);
		dir_free(fs, d);
	}
}

struct pt_dir *pt_dir_adopt(struct pt_fs *fs, int fd)
{
	struct pt_dir *d = calloc(1, sizeof(*d));

	if (!d || !(d->dp = fdopendir(fd))) {
		free(d);
		return NULL;
	}
	/* The kernel's first READDIR here may name any offset. ext4 keeps
	 * its htree position from the first read of an open file: a fresh
	 * file read first at the end and then at 0 lists nothing. One read
	 * at 0 first gives it the history of a stream listed from the start. */
	readdir(d->dp);
	rewinddir(d->dp);
	pthread_mutex_init(&d->lock, NULL);
	dir_link(fs, d);
	return d;
}

static bool is_dot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/* Nodeids counted by a READDIRPLUS reply, undone if the reply fails. */
struct counted {
	uint64_t *ids;
	size_t n, cap;
};

static void counted_add(struct counted *c, uint64_t id)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		uint64_t *ids = realloc(c->ids, cap * sizeof(*ids));

		if (!ids)
			return; /* lose only the undo of a failed reply */
		c->ids = ids;
		c->cap = cap;
	}
	c->ids[c->n++] = id;
}

/* Add one entry; returns 1 added, 0 full, -errno. -ENOENT: it vanished
 * since readdir, skip it. */
static int add_entry(struct pt_fs *fs, fring_req *r, struct pt_ref *dir,
		     const struct dirent *de, struct counted *c)
{
	uint32_t type = (uint32_t)DTTOIF(de->d_type) & S_IFMT;
	uint32_t len = (uint32_t)strlen(de->d_name);
	struct fring_entry e;
	int rc;

	/* "." and ".." are not looked up: a plain entry (nodeid 0) adds no
	 * lookup count and keeps the real d_ino for readdir(3), which skips
	 * entries whose inode number is 0. */
	if (!dir || is_dot(de->d_name))
		return fring_host->dir_add(r, de->d_name, len, de->d_ino, type,
					   (uint64_t)de->d_off);
	rc = pt_lookup_at(fs, dir, de->d_name, &e);
	if (rc)
		return rc;
	rc = fring_host->dir_add_plus(r, de->d_name, len, &e,
				      (uint64_t)de->d_off);
	if (rc == 1)
		counted_add(c, e.ino);
	else
		pt_forget_one(fs, e.ino, 1);
	return rc;
}

static void do_readdir(struct pt_fs *fs, fring_req *r,
		       const struct fring_read_args *a, bool plus)
{
	struct pt_dir *d = fh_dir(fs, a->fh);
	struct counted c = { 0 };
	struct pt_ref dir;
	int added = 0, err = 0;

	if (!d) {
		fring_host->reply_err(r, -EIO);
		return;
	}
	if (plus && (err = pt_ref_get(fs, a->nodeid, &dir))) {
		fring_host->reply_err(r, err);
		return;
	}
	pthread_mutex_lock(&d->lock);
	if ((off_t)a->offset != d->offset) {
		seekdir(d->dp, (long)a->offset);
		d->offset = (off_t)a->offset;
		d->has_pending = false;
	}
	for (;;) {
		struct dirent *de = &d->pending;
		int rc;

		if (!d->has_pending) {
			errno = 0;
			de = readdir(d->dp);
			if (!de) {
				err = -errno;
				break;
			}
		}
		rc = add_entry(fs, r, plus ? &dir : NULL, de, &c);
		if (rc == 0 || (rc < 0 && rc != -ENOENT)) {
			if (de != &d->pending)
				memcpy(&d->pending, de,
				       offsetof(struct dirent, d_name) +
					       strlen(de->d_name) + 1);
			d->has_pending = true;
			err = rc;
			break;
		}
		added += rc == 1;
		d->has_pending = false;
		d->offset = de->d_off;
	}
	pthread_mutex_unlock(&d->lock);
	if (plus)
		pt_ref_put(fs, &dir);

	/* An error after some entries: send those, the next call retries. */
	if (err < 0 && !added) {
		fring_host->reply_err(r, err);
	} else if (fring_host->reply_dir(r) < 0) {
		for (size_t i = 0; i < c.n; i++)
			pt_forget_one(fs, c.ids[i], 1);
	}
	free(c.ids);
}

void pt_readdir(void *inst, fring_req *r, const struct fring_read_args *a)
{
	do_readdir(inst, r, a, false);
}

void pt_readdirplus(void *inst, fring_req *r, const struct fring_read_args *a)
{
	do_readdir(inst, r, a, true);
}

void pt_releasedir(void *inst, fring_req *r,
		   const struct fring_release_args *a)
{
	struct pt_dir *d = fh_dir(inst, a->fh);

	pt_fh_free(inst, a->fh);
	if (d)
		dir_free(inst, d);
	fring_host->reply_err(r, 0);
}

void pt_fsyncdir(void *inst, fring_req *r, const struct fring_fsync_args *a)
{
	struct pt_dir *d = fh_dir(inst, a->fh);
	int res;

	if (!d) {
		fring_host->reply_err(r, -EIO);
		return;
	}
	res = a->datasync ? fdatasync(dirfd(d->dp)) : fsync(dirfd(d->dp));
	fring_host->reply_err(r, res ? -errno : 0);
}
