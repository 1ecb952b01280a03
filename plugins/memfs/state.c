// SPDX-License-Identifier: MIT
/*
 * Takeover state (ABI 1.7 state_save/state_load): the whole tree and its
 * data, so a new memfs instance serves the same node ids, generations,
 * lookup and open counts and readdir cookies the kernel already holds.
 *
 * Format, version 1, native endian (both sides run on the same machine):
 *   header:  magic "MFS1", version, next_ino, ninodes
 *   inodes:  attributes, xattrs, then the payload (file chunks as
 *            index + length + bytes ending with UINT64_MAX, a symlink's
 *            target, for a directory its parent, next cookie and entries
 *            as cookie + child ino + name). Entries are linked after every
 *            inode exists.
 * A newer version is refused with -EPROTO (the old server keeps serving).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memfs.h"

#define MFS_STATE_MAGIC 0x3153464du /* "MFS1" */
#define MFS_STATE_VERSION 1u
#define MFS_CHUNK_END UINT64_MAX

struct mfs_state_inode {
	uint64_t ino, gen, nlookup, size;
	uint32_t nlink, nopen, mode, uid, gid, rdev, tmpfile, nxattrs;
	struct timespec atime, mtime, ctime;
};

static int put(FILE *f, const void *p, size_t n)
{
	return fwrite(p, 1, n, f) == n ? 0 : -EIO;
}

static int get(FILE *f, void *p, size_t n)
{
	return fread(p, 1, n, f) == n ? 0 : -EPROTO;
}

static int put_blob(FILE *f, const void *p, uint32_t n)
{
	return put(f, &n, sizeof(n)) ?: put(f, p, n);
}

/* A stdio stream on a dup of fd at offset 0 (the caller keeps fd). */
static FILE *stream(int fd, const char *mode)
{
	int d;
	FILE *f;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return NULL;
	d = dup(fd);
	if (d < 0)
		return NULL;
	f = fdopen(d, mode);
	if (!f)
		close(d);
	return f;
}

/* A length-prefixed blob, NUL-terminated in memory. */
static int get_blob(FILE *f, char **out, uint32_t *len, uint32_t max)
{
	uint32_t n;
	char *b;

	if (get(f, &n, sizeof(n)) || n > max)
		return -EPROTO;
	b = malloc((size_t)n + 1);
	if (!b)
		return -ENOMEM;
	if (get(f, b, n)) {
		free(b);
		return -EPROTO;
	}
	b[n] = '\0';
	*out = b;
	*len = n;
	return 0;
}

static int save_data(FILE *f, const struct mfs_data *d)
{
	uint64_t idx = mfs_data_next(d, 0), end = MFS_CHUNK_END;
	int ret = 0;

	for (; !ret && idx != UINT64_MAX; idx = mfs_data_next(d, idx + 1)) {
		uint32_t cap;
		const uint8_t *c = mfs_data_chunk(d, idx, &cap);

		if (!c)
			continue;
		ret = put(f, &idx, sizeof(idx)) ?: put_blob(f, c, cap);
	}
	return ret ?: put(f, &end, sizeof(end));
}

static int save_dir(FILE *f, const struct mfs_inode *in)
{
	const struct mfs_dir *d = &in->dir;
	uint64_t parent = d->parent ? d->parent->ino : 0;
	int ret = put(f, &parent, sizeof(parent)) ?:
		  put(f, &d->next_cookie, sizeof(d->next_cookie)) ?:
		  put(f, &d->nlive, sizeof(d->nlive));

	for (uint32_t i = 0; !ret && i < d->nslots; i++) {
		const struct mfs_dirent *de = d->slots[i].de;

		if (de)
			ret = put(f, &de->cookie, sizeof(de->cookie)) ?:
			      put(f, &de->inode->ino, sizeof(uint64_t)) ?:
			      put_blob(f, de->name, de->namelen);
	}
	return ret;
}

static int save_inode(FILE *f, const struct mfs_inode *in)
{
	struct mfs_state_inode si = {
		.ino = in->ino, .gen = in->gen, .nlookup = in->nlookup,
		.size = in->size, .nlink = in->nlink, .nopen = in->nopen,
		.mode = in->mode, .uid = in->uid, .gid = in->gid,
		.rdev = in->rdev, .tmpfile = in->tmpfile,
		.nxattrs = in->nxattrs, .atime = in->atime,
		.mtime = in->mtime, .ctime = in->ctime,
	};
	int ret = put(f, &si, sizeof(si));

	for (uint32_t i = 0; !ret && i < in->nxattrs; i++)
		ret = put_blob(f, in->xattrs[i].name, in->xattrs[i].namelen) ?:
		      put_blob(f, in->xattrs[i].value, in->xattrs[i].len);
	if (ret)
		return ret;
	switch (in->mode & S_IFMT) {
	case S_IFREG:
		return save_data(f, &in->data);
	case S_IFLNK:
		return put_blob(f, in->target, (uint32_t)in->size);
	case S_IFDIR:
		return save_dir(f, in);
	}
	return 0;
}

int32_t mfs_state_save(void *inst, int fd, uint32_t *version)
{
	struct memfs *fs = inst;
	uint32_t hdr[2] = { MFS_STATE_MAGIC, MFS_STATE_VERSION };
	FILE *f;
	int ret;

	/* From offset 0 (the hook's contract), whatever fd held before. */
	if (ftruncate(fd, 0) < 0)
		return -errno;
	f = stream(fd, "w");
	if (!f)
		return -errno;
	pthread_rwlock_rdlock(&fs->lock);
	ret = put(f, hdr, sizeof(hdr)) ?:
	      put(f, &fs->next_ino, sizeof(fs->next_ino)) ?:
	      put(f, &fs->ninodes, sizeof(fs->ninodes));
	for (uint64_t b = 0; !ret && b < fs->nbuckets; b++)
		for (struct mfs_inode *in = fs->itab[b]; !ret && in;
		     in = in->hnext)
			ret = save_inode(f, in);
	pthread_rwlock_unlock(&fs->lock);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret)
		*version = MFS_STATE_VERSION;
	return ret;
}

static int load_xattrs(FILE *f, struct mfs_inode *in, uint32_t n)
{
	if (n > 65536)
		return -EPROTO;
	in->xattrs = calloc(n ? n : 1, sizeof(*in->xattrs));
	if (!in->xattrs)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct mfs_xattr *x = &in->xattrs[i];
		char *v;
		int ret = get_blob(f, &x->name, &x->namelen,
				   MFS_XATTR_NAME_MAX);

		if (!ret)
			ret = get_blob(f, &v, &x->len, MFS_XATTR_SIZE_MAX);
		if (ret) {
			free(x->name);
			return ret;
		}
		x->value = v;
		in->nxattrs++;
	}
	return 0;
}

static int load_data(struct memfs *fs, FILE *f, struct mfs_inode *in)
{
	for (;;) {
		uint64_t idx;
		uint32_t len;
		char *c;
		ssize_t n;

		if (get(f, &idx, sizeof(idx)))
			return -EPROTO;
		if (idx == MFS_CHUNK_END)
			return 0;
		if (idx > (UINT64_MAX >> MFS_CHUNK_SHIFT) ||
		    get_blob(f, &c, &len, MFS_CHUNK_SIZE))
			return -EPROTO;
		n = mfs_data_write(fs, &in->data, idx << MFS_CHUNK_SHIFT,
				   (uint8_t *)c, len);
		free(c);
		if (n < 0)
			return (int)n;
	}
}

/* The entries of one directory, linked to inodes made already. */
static int load_dir(struct memfs *fs, FILE *f, struct mfs_inode *in)
{
	uint64_t parent, next_cookie;
	uint32_t n;

	if (get(f, &parent, sizeof(parent)) ||
	    get(f, &next_cookie, sizeof(next_cookie)) || get(f, &n, sizeof(n)))
		return -EPROTO;
	mfs_dir_init(&in->dir, parent ? mfs_iget(fs, parent) : NULL);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t cookie, ino;
		uint32_t len;
		char *name;
		struct mfs_inode *child;
		int ret;

		if (get(f, &cookie, sizeof(cookie)) || get(f, &ino, sizeof(ino)) ||
		    get_blob(f, &name, &len, MFS_NAME_MAX))
			return -EPROTO;
		child = mfs_iget(fs, ino);
		in->dir.next_cookie = cookie; /* keep readdir offsets */
		ret = child ? mfs_dir_add(&in->dir, name, len, child) : -EPROTO;
		free(name);
		if (ret)
			return ret;
	}
	in->dir.next_cookie = next_cookie;
	return 0;
}

/* Read past a directory's entries (first pass: children may come later). */
static int skip_dir(FILE *f)
{
	uint64_t u[2];
	uint32_t n;

	if (get(f, u, sizeof(u)) || get(f, &n, sizeof(n)))
		return -EPROTO;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t len;
		char *name;

		if (get(f, u, sizeof(u)) ||
		    get_blob(f, &name, &len, MFS_NAME_MAX))
			return -EPROTO;
		free(name);
	}
	return 0;
}

/* One inode with its own number (mfs_inew takes fs->next_ino). */
static int load_inode(struct memfs *fs, FILE *f, uint64_t *ino, long *dir_at)
{
	struct mfs_state_inode si;
	struct mfs_inode *in;
	uint32_t len;
	int ret;

	*dir_at = -1;
	if (get(f, &si, sizeof(si)) || mfs_iget(fs, si.ino))
		return -EPROTO;
	fs->next_ino = si.ino;
	in = mfs_inew(fs, si.mode, si.uid, si.gid);
	if (!in)
		return -ENOMEM;
	*ino = si.ino;
	in->gen = si.gen;
	in->nlookup = si.nlookup;
	in->nlink = si.nlink;
	in->nopen = si.nopen;
	in->rdev = si.rdev;
	in->tmpfile = si.tmpfile;
	ret = load_xattrs(f, in, si.nxattrs);
	switch (si.mode & S_IFMT) {
	case S_IFREG:
		ret = ret ?: load_data(fs, f, in);
		break;
	case S_IFLNK:
		ret = ret ?: get_blob(f, &in->target, &len, UINT32_MAX - 1);
		break;
	case S_IFDIR:
		mfs_dir_init(&in->dir, NULL);
		*dir_at = ftell(f);
		ret = ret ?: skip_dir(f);
		break;
	}
	in->size = si.size;
	in->atime = si.atime;
	in->mtime = si.mtime;
	in->ctime = si.ctime;
	return ret;
}

struct mfs_dir_at {
	uint64_t ino;
	long at;
};

static int load_all(struct memfs *fs, FILE *f, uint64_t n)
{
	struct mfs_dir_at *dirs = calloc(n ? n : 1, sizeof(*dirs));
	uint64_t nd = 0;
	int ret = dirs ? 0 : -ENOMEM;

	for (uint64_t i = 0; !ret && i < n; i++) {
		ret = load_inode(fs, f, &dirs[nd].ino, &dirs[nd].at);
		if (!ret && dirs[nd].at >= 0)
			nd++;
	}
	for (uint64_t i = 0; !ret && i < nd; i++)
		ret = fseek(f, dirs[i].at, SEEK_SET) ? -EIO :
		      load_dir(fs, f, mfs_iget(fs, dirs[i].ino));
	free(dirs);
	return ret;
}

int32_t mfs_state_load(void *inst, int fd, uint32_t version)
{
	struct memfs *fs = inst;
	uint32_t hdr[2];
	uint64_t next_ino, n;
	FILE *f;
	int ret;

	if (version != MFS_STATE_VERSION) {
		fring_logf(fs->m, FRING_LOG_ERROR,
			   "memfs: takeover state version %u, this memfs reads "
			   "version %u only", version, MFS_STATE_VERSION);
		return -EPROTO;
	}
	f = stream(fd, "r");
	if (!f)
		return -errno;
	ret = get(f, hdr, sizeof(hdr)) ?: get(f, &next_ino, sizeof(next_ino)) ?:
	      get(f, &n, sizeof(n));
	if (!ret && (hdr[0] != MFS_STATE_MAGIC || hdr[1] != version))
		ret = -EPROTO;
	pthread_rwlock_wrlock(&fs->lock);
	if (!ret) {
		mfs_itab_destroy(fs);
		fs->used_bytes = 0;
		ret = mfs_itab_init(fs) ?: load_all(fs, f, n);
		fs->next_ino = next_ino;
		fs->root = mfs_iget(fs, MFS_ROOT_INO);
		if (!ret && !fs->root)
			ret = -EPROTO;
	}
	pthread_rwlock_unlock(&fs->lock);
	fclose(f);
	if (ret)
		fring_logf(fs->m, FRING_LOG_ERROR,
			   "memfs: cannot read the takeover state: %s",
			   strerror(-ret));
	return ret;
}
