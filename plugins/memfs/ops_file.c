// SPDX-License-Identifier: MIT
/*
 * Regular file I/O: open, read, write, flush, release, fsync.
 *
 * The file handle is the inode number; an open handle keeps the inode
 * alive after unlink (nopen). Reads do not update atime (like noatime).
 */
#include <fcntl.h>
#include <stdlib.h>

#include "ops.h"


void mfs_op_open(void *inst, fring_req *r, const struct fring_open_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	struct fring_open_out o = { .open_flags = FRING_FOPEN_KEEP_CACHE };
	struct mfs_cred c;
	int err = 0;

	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in)
		err = -ENOENT;
	else if (S_ISDIR(in->mode) && (a->flags & O_ACCMODE) != O_RDONLY)
		err = -EISDIR;
	else
		err = mfs_check(fs, in, &c, mfs_open_mask(a->flags));
	if (err) {
		pthread_rwlock_unlock(&fs->lock);
		mfs_err(r, err);
		return;
	}
	/* ATOMIC_O_TRUNC: the kernel leaves the truncation to us. Like Linux,
	 * O_TRUNC truncates even with O_RDONLY (the kernel checked write
	 * permission). */
	if (S_ISREG(in->mode) && (a->flags & O_TRUNC)) {
		mfs_data_truncate(fs, &in->data, in->size, 0);
		in->size = 0;
		mfs_touch(in, true);
		if (a->open_flags & FRING_OPEN_KILL_SUIDGID)
			in->mode = mfs_kill_suidgid(in->mode);
	}
	in->nopen++;
	o.fh = in->ino;
	if (fring_host->reply_open(r, &o) < 0)
		mfs_put_handle(fs, in->ino);
	pthread_rwlock_unlock(&fs->lock);
}

static int file_check(const struct mfs_inode *in)
{
	if (!in)
		return -ENOENT;
	if (S_ISDIR(in->mode))
		return -EISDIR;
	return S_ISREG(in->mode) ? 0 : -EINVAL;
}

void mfs_op_read(void *inst, fring_req *r, const struct fring_read_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	uint8_t *buf;
	uint64_t n;
	int err;

	pthread_rwlock_rdlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	err = file_check(in);
	if (err || a->offset >= in->size) {
		pthread_rwlock_unlock(&fs->lock);
		if (err)
			mfs_err(r, err);
		else
			fring_host->reply_data(r, NULL, 0);
		return;
	}
	n = in->size - a->offset;
	if (n > a->len)
		n = a->len;
	/* Within one chunk's buffer: reply straight from it. */
	if ((a->offset >> MFS_CHUNK_SHIFT) ==
	    ((a->offset + n - 1) >> MFS_CHUNK_SHIFT)) {
		uint32_t cap, in_chunk = a->offset & (MFS_CHUNK_SIZE - 1);
		const uint8_t *c = mfs_data_chunk(
			&in->data, a->offset >> MFS_CHUNK_SHIFT, &cap);

		if (c && in_chunk + n <= cap) {
			fring_host->reply_data(r, c + in_chunk, (uint32_t)n);
			pthread_rwlock_unlock(&fs->lock);
			return;
		}
	}
	buf = malloc(n);
	if (buf)
		mfs_data_read(&in->data, a->offset, (uint32_t)n, buf);
	pthread_rwlock_unlock(&fs->lock);
	if (!buf) {
		mfs_err(r, -ENOMEM);
		return;
	}
	fring_host->reply_data(r, buf, (uint32_t)n);
	free(buf);
}

void mfs_op_write(void *inst, fring_req *r, const struct fring_write_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	ssize_t ret;

	pthread_rwlock_wrlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	ret = file_check(in);
	if (!ret && (a->offset > MFS_MAX_FILE_SIZE ||
		     a->len > MFS_MAX_FILE_SIZE - a->offset))
		ret = -EFBIG;
	if (!ret && a->len)
		ret = mfs_data_write(fs, &in->data, a->offset, a->data, a->len);
	if (ret > 0) {
		if (a->offset + (uint64_t)ret > in->size)
			in->size = a->offset + (uint64_t)ret;
		mfs_touch(in, true);
		if (a->write_flags & FRING_WRITE_KILL_SUIDGID)
			in->mode = mfs_kill_suidgid(in->mode);
	}
	pthread_rwlock_unlock(&fs->lock);
	if (ret < 0)
		mfs_err(r, (int)ret);
	else
		fring_host->reply_write(r, (uint32_t)ret);
}

void mfs_op_flush(void *inst, fring_req *r, const struct fring_release_args *a)
{
	mfs_err(r, 0);
}

void mfs_op_release(void *inst, fring_req *r,
		    const struct fring_release_args *a)
{
	struct memfs *fs = inst;

	pthread_rwlock_wrlock(&fs->lock);
	mfs_put_handle(fs, a->nodeid);
	pthread_rwlock_unlock(&fs->lock);
	mfs_err(r, 0);
}

void mfs_op_fsync(void *inst, fring_req *r, const struct fring_fsync_args *a)
{
	mfs_err(r, 0); /* memory is as durable as it gets */
}
