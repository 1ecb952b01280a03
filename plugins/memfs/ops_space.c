// SPDX-License-Identifier: MIT
/*
 * Space management on regular files: fallocate, lseek(SEEK_DATA/HOLE),
 * copy_file_range.
 */
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <unistd.h>

#include "ops.h"

#ifndef SEEK_DATA
#define SEEK_DATA 3
#define SEEK_HOLE 4
#endif

static int reg_check(const struct mfs_inode *in, int other)
{
	if (!in)
		return -ENOENT;
	if (S_ISDIR(in->mode))
		return -EISDIR;
	return S_ISREG(in->mode) ? 0 : other;
}

static bool range_ok(uint64_t off, uint64_t len)
{
	return off <= MFS_MAX_FILE_SIZE && len <= MFS_MAX_FILE_SIZE - off;
}

void mfs_op_fallocate(void *inst, fring_req *r,
		      const struct fring_fallocate_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	bool punch = a->mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
	int err;

	if (a->mode != 0 && a->mode != FALLOC_FL_KEEP_SIZE && !punch) {
		mfs_err(r, -EOPNOTSUPP);
		return;
	}
	if (!a->length) {
		mfs_err(r, -EINVAL);
		return;
	}
	if (!range_ok(a->offset, a->length)) {
		mfs_err(r, -EFBIG);
		return;
	}
	pthread_rwlock_wrlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	err = reg_check(in, -ENODEV);
	if (!err && punch) {
		mfs_data_punch(fs, &in->data, a->offset, a->length);
		mfs_touch(in, true);
	} else if (!err) {
		err = mfs_data_allocate(fs, &in->data, a->offset, a->length);
		if (!err && !(a->mode & FALLOC_FL_KEEP_SIZE) &&
		    a->offset + a->length > in->size)
			in->size = a->offset + a->length;
		if (!err)
			mfs_touch(in, true);
	}
	pthread_rwlock_unlock(&fs->lock);
	mfs_err(r, err);
}

/* SEEK_DATA / SEEK_HOLE over the chunk map; past EOF is ENXIO. The end of
 * the file counts as a hole. */
static int64_t seek_data_hole(const struct mfs_inode *in, uint64_t off,
			      uint32_t whence)
{
	const struct mfs_data *d = &in->data;
	uint64_t idx, pos;

	if (off >= in->size)
		return -ENXIO;
	if (whence == SEEK_DATA) {
		idx = mfs_data_next(d, off >> MFS_CHUNK_SHIFT);
		if (idx == UINT64_MAX || (idx << MFS_CHUNK_SHIFT) >= in->size)
			return -ENXIO;
		pos = idx << MFS_CHUNK_SHIFT;
		return (int64_t)(pos > off ? pos : off);
	}
	idx = off >> MFS_CHUNK_SHIFT;
	while ((idx << MFS_CHUNK_SHIFT) < in->size && mfs_data_present(d, idx))
		idx++;
	pos = idx << MFS_CHUNK_SHIFT;
	if (pos < off)
		pos = off;
	return (int64_t)(pos < in->size ? pos : in->size);
}

void mfs_op_lseek(void *inst, fring_req *r, const struct fring_lseek_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *in;
	int64_t ret;

	if (a->whence != SEEK_DATA && a->whence != SEEK_HOLE) {
		mfs_err(r, -EINVAL);
		return;
	}
	pthread_rwlock_rdlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	ret = reg_check(in, -EINVAL);
	if (!ret)
		ret = seek_data_hole(in, a->offset, a->whence);
	pthread_rwlock_unlock(&fs->lock);
	if (ret < 0)
		mfs_err(r, (int)ret);
	else
		fring_host->reply_lseek(r, (uint64_t)ret);
}

/* Copy [off_in, off_in + len) piece by piece through a bounce buffer
 * (a write may move the chunk it reads from when src == dst); source holes
 * become holes (zeros) in the destination. Returns bytes copied. */
static int64_t copy_range(struct memfs *fs, struct mfs_inode *src,
			  uint64_t off_in, struct mfs_inode *dst,
			  uint64_t off_out, uint64_t len)
{
	uint8_t *buf = malloc(MFS_CHUNK_SIZE);
	uint64_t done = 0;

	if (!buf)
		return -ENOMEM;
	while (done < len) {
		uint64_t pos = off_in + done;
		uint32_t piece = MFS_CHUNK_SIZE - (pos & (MFS_CHUNK_SIZE - 1));
		ssize_t n;

		if (piece > len - done)
			piece = (uint32_t)(len - done);
		if (!mfs_data_present(&src->data, pos >> MFS_CHUNK_SHIFT)) {
			mfs_data_punch(fs, &dst->data, off_out + done, piece);
			done += piece;
			continue;
		}
		mfs_data_read(&src->data, pos, piece, buf);
		n = mfs_data_write(fs, &dst->data, off_out + done, buf, piece);
		if (n < 0) {
			free(buf);
			return done ? (int64_t)done : n;
		}
		done += (uint64_t)n;
		if ((uint64_t)n < piece)
			break;
	}
	free(buf);
	return (int64_t)done;
}

void mfs_op_copy_file_range(void *inst, fring_req *r,
			    const struct fring_copy_range_args *a)
{
	struct memfs *fs = inst;
	struct mfs_inode *src, *dst;
	/* The reply count is 32-bit: copy at most this much per call. */
	uint64_t len = a->len, max = UINT32_MAX & ~(uint64_t)(MFS_CHUNK_SIZE - 1);
	int64_t ret;

	if (a->flags) {
		mfs_err(r, -EINVAL);
		return;
	}
	pthread_rwlock_wrlock(&fs->lock);
	src = mfs_iget(fs, a->nodeid_in);
	dst = mfs_iget(fs, a->nodeid_out);
	ret = reg_check(src, -EINVAL);
	if (!ret)
		ret = reg_check(dst, -EINVAL);
	if (ret || a->off_in >= src->size) {
		len = 0;
		goto out;
	}
	if (len > src->size - a->off_in)
		len = src->size - a->off_in;
	if (len > max)
		len = max;
	if (!range_ok(a->off_out, len)) {
		ret = -EFBIG;
		goto out;
	}
	if (src == dst && a->off_in < a->off_out + len &&
	    a->off_out < a->off_in + len) {
		ret = -EINVAL; /* overlapping copy within one file */
		goto out;
	}
	ret = copy_range(fs, src, a->off_in, dst, a->off_out, len);
	if (ret > 0) {
		if (a->off_out + (uint64_t)ret > dst->size)
			dst->size = a->off_out + (uint64_t)ret;
		mfs_touch(dst, true);
	}
out:
	pthread_rwlock_unlock(&fs->lock);
	if (ret < 0)
		mfs_err(r, (int)ret);
	else
		fring_host->reply_write(r, (uint32_t)(len ? ret : 0));
}
