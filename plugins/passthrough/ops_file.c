// SPDX-License-Identifier: MIT
/*
 * Open files: fh names a slot (fh.c) holding a real descriptor opened
 * through /proc/self/fd of the inode's O_PATH fd, so it stays valid across
 * rename and unlink. A slot lost at a takeover has fd -1: EIO.
 */
#include "pt.h"

#include <stdlib.h>
#include <unistd.h>

/* The slot's descriptor, or -EIO replied and -1. */
static int fh_fd_or_reply(struct pt_fs *fs, fring_req *r, uint64_t fh)
{
	int fd = pt_fh_fd(fs, fh);

	if (fd < 0)
		fring_host->reply_err(r, -EIO);
	return fd;
}

void pt_open(void *inst, fring_req *r, const struct fring_open_args *a)
{
	struct pt_fs *fs = inst;
	struct fring_open_out o;
	struct pt_ref ref;
	char proc[32];
	bool regular;
	int fd, oflags, err = pt_ref_get(fs, a->nodeid, &ref);

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	regular = ref.ino->type == S_IFREG; /* fixed at the inode's birth */
	pt_proc_path(proc, ref.fd);
	oflags = pt_open_flags(fs, a->flags) & ~(O_CREAT | O_EXCL);
	fd = open(proc, oflags);
	err = fd < 0 ? -errno : 0;
	pt_ref_put(fs, &ref);
	if (!err) {
		err = pt_open_out(fs, a->flags, fd, oflags, a->nodeid, &o);
		if (err)
			close(fd);
	}
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	pt_backing_attach(fs, a->nodeid, &o);
	pt_open_zero_copy(fs, regular, fd, &o);
	if (fring_host->reply_open(r, &o) < 0) {
		pt_backing_detach(fs, a->nodeid, o.fh);
		pt_fh_free(fs, o.fh);
		close(fd);
	}
}

/* Host data-path services (ABI 1.1): the runtime moves the bytes between
 * fd and the request buffer itself, zero-copy where the kernel allows. */
#define HAS_SERVICE(f)                                                        \
	(FRING_HAS_FIELD(fring_host, struct fring_host_api, f) && fring_host->f)

/* Zero-copy (ABI 1.5): with FOPEN_IO_URING_ZERO_COPY the kernel may leave
 * a READ's destination or a WRITE's data in the client's pages, which
 * only req_read_fd / req_write_fd reach. So it is offered only when the
 * host has both, and never with kernel passthrough (no READ or WRITE
 * comes then). The host clears it where the mount does not serve
 * zero-copy; PT_FH_ZERO_COPY keeps the pread/pwrite fallbacks below away
 * from such an open either way. */
void pt_open_zero_copy(struct pt_fs *fs, bool regular, int fd,
		       struct fring_open_out *o)
{
	struct stat st;

	/* zero_copy_min: small files copy (a fixed op against the slot costs
	 * more than copying a few pages; README, "Zero-copy"). */
	if (fs->zero_copy_min &&
	    (fstat(fd, &st) != 0 || (uint64_t)st.st_size < fs->zero_copy_min))
		return;
	if (!fs->zero_copy || !regular ||
	    (o->open_flags & FRING_FOPEN_PASSTHROUGH) ||
	    !HAS_SERVICE(req_read_fd) || !HAS_SERVICE(req_write_fd))
		return;
	o->open_flags |= FRING_FOPEN_IO_URING_ZERO_COPY;
	o->fh |= PT_FH_ZERO_COPY;
}

/* The host's service answers the request (0); -EALREADY: it was answered
 * already (interrupted, or the mount is going away), nothing to do. Any
 * other refusal falls back to pread/pwrite and a reply with the bytes,
 * except on a zero-copy open, whose data those cannot reach: the refusal
 * is the answer there. Also the path of the io_threads workers (io.c). */
void pt_serve_read(fring_req *r, int fd, uint64_t fh, uint64_t off,
		   uint32_t len)
{
	int ret = -ENOSYS;
	void *buf;
	ssize_t n;

	if (HAS_SERVICE(req_read_fd)) {
		ret = fring_host->req_read_fd(r, fd, off, len, 0);
		if (ret == 0 || ret == -EALREADY)
			return;
	}
	if (fh & PT_FH_ZERO_COPY) {
		fring_host->reply_err(r, ret);
		return;
	}
	buf = malloc(len ? len : 1);
	if (!buf) {
		fring_host->reply_err(r, -ENOMEM);
		return;
	}
	n = pread(fd, buf, len, (off_t)off);
	if (n < 0)
		fring_host->reply_err(r, -errno);
	else
		fring_host->reply_data(r, buf, (uint32_t)n);
	free(buf);
}

void pt_serve_write(fring_req *r, int fd, uint64_t fh, uint64_t off,
		    const void *data, uint32_t len)
{
	int ret = -ENOSYS;
	ssize_t n;

	if (HAS_SERVICE(req_write_fd)) {
		ret = fring_host->req_write_fd(r, fd, off, 0);
		if (ret == 0 || ret == -EALREADY)
			return;
	}
	if ((fh & PT_FH_ZERO_COPY) || (!data && len)) {
		fring_host->reply_err(r, ret);
		return;
	}
	n = pwrite(fd, data, len, (off_t)off);
	if (n < 0)
		fring_host->reply_err(r, -errno);
	else
		fring_host->reply_write(r, (uint32_t)n);
}

/* With io_threads the request waits on the queue of io.c and the calling
 * thread returns at once. */
void pt_read(void *inst, fring_req *r, const struct fring_read_args *a)
{
	int fd = fh_fd_or_reply(inst, r, a->fh);

	if (fd >= 0 &&
	    !pt_io_submit(inst, r, false, fd, a->fh, a->offset, a->len, NULL))
		pt_serve_read(r, fd, a->fh, a->offset, a->len);
}

void pt_write(void *inst, fring_req *r, const struct fring_write_args *a)
{
	int fd = fh_fd_or_reply(inst, r, a->fh);

	if (fd >= 0 &&
	    !pt_io_submit(inst, r, true, fd, a->fh, a->offset, a->len, a->data))
		pt_serve_write(r, fd, a->fh, a->offset, a->data, a->len);
}

/* Closing a duplicate reports deferred write errors (NFS and the like) and
 * drops this owner's POSIX locks, as close() would on a local file. */
void pt_flush(void *inst, fring_req *r, const struct fring_release_args *a)
{
	int fd = pt_fh_fd(inst, a->fh);

	if (fd >= 0)
		fd = dup(fd);
	else
		errno = EIO;
	if (fd < 0)
		fring_host->reply_err(r, -errno);
	else
		fring_host->reply_err(r, close(fd) ? -errno : 0);
}

void pt_release(void *inst, fring_req *r, const struct fring_release_args *a)
{
	int fd = pt_fh_fd(inst, a->fh);

	pt_backing_detach(inst, a->nodeid, a->fh);
	pt_fh_free(inst, a->fh);
	if (fd >= 0)
		pt_io_close(inst, fd); /* later if io.c still uses it */
	fring_host->reply_err(r, 0);
}

void pt_fsync(void *inst, fring_req *r, const struct fring_fsync_args *a)
{
	int fd = fh_fd_or_reply(inst, r, a->fh);
	int res;

	if (fd < 0)
		return;
	res = a->datasync ? fdatasync(fd) : fsync(fd);
	fring_host->reply_err(r, res ? -errno : 0);
}

void pt_fallocate(void *inst, fring_req *r,
		  const struct fring_fallocate_args *a)
{
	int fd = fh_fd_or_reply(inst, r, a->fh);
	int res;

	if (fd < 0)
		return;
	res = fallocate(fd, (int)a->mode, (off_t)a->offset, (off_t)a->length);
	fring_host->reply_err(r, res ? -errno : 0);
}

void pt_lseek(void *inst, fring_req *r, const struct fring_lseek_args *a)
{
	int fd = fh_fd_or_reply(inst, r, a->fh);
	off_t off;

	if (fd < 0)
		return;
	off = lseek(fd, (off_t)a->offset, (int)a->whence);
	if (off < 0)
		fring_host->reply_err(r, -errno);
	else
		fring_host->reply_lseek(r, (uint64_t)off);
}

void pt_copy_file_range(void *inst, fring_req *r,
			const struct fring_copy_range_args *a)
{
	loff_t in = (loff_t)a->off_in, out = (loff_t)a->off_out;
	size_t len = a->len > UINT32_MAX ? UINT32_MAX : (size_t)a->len;
	int fd_in = fh_fd_or_reply(inst, r, a->fh_in);
	int fd_out = fd_in < 0 ? -1 : fh_fd_or_reply(inst, r, a->fh_out);
	ssize_t n;

	if (fd_out < 0)
		return;
	n = copy_file_range(fd_in, &in, fd_out, &out, len,
			    (unsigned int)a->flags);
	if (n < 0)
		fring_host->reply_err(r, -errno);
	else
		fring_host->reply_write(r, (uint32_t)n);
}
