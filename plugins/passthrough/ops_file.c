/*
 * Open files: fh is a real descriptor opened through /proc/self/fd of the
 * inode's O_PATH fd, so it stays valid across rename and unlink.
 */
#include "pt.h"

#include <stdlib.h>
#include <unistd.h>

static inline int fh_fd(uint64_t fh)
{
	return (int)fh;
}

void pt_open(void *inst, fring_req *r, const struct fring_open_args *a)
{
	struct pt_fs *fs = inst;
	struct fring_open_out o;
	struct pt_ref ref;
	char proc[32];
	int fd, err = pt_ref_get(fs, a->nodeid, &ref);

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	pt_proc_path(proc, ref.fd);
	fd = open(proc, pt_open_flags(fs, a->flags) & ~(O_CREAT | O_EXCL));
	err = fd < 0 ? -errno : 0;
	pt_ref_put(fs, &ref);
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	pt_open_out(fs, a->flags, fd, &o);
	pt_backing_attach(fs, a->nodeid, &o);
	if (fring_host->reply_open(r, &o) < 0) {
		pt_backing_detach(fs, a->nodeid, o.fh);
		close(fd);
	}
}

/* Host data-path services (ABI 1.1): the runtime moves the bytes between
 * fd and the request buffer itself, zero-copy where the kernel allows. */
#define HAS_SERVICE(f)                                                        \
	(FRING_HAS_FIELD(fring_host, struct fring_host_api, f) && fring_host->f)

void pt_read(void *inst, fring_req *r, const struct fring_read_args *a)
{
	void *buf;
	ssize_t n;

	if (HAS_SERVICE(req_read_fd) &&
	    fring_host->req_read_fd(r, fh_fd(a->fh), a->offset, a->len, 0) == 0)
		return;
	buf = malloc(a->len ? a->len : 1);
	if (!buf) {
		fring_host->reply_err(r, -ENOMEM);
		return;
	}
	n = pread(fh_fd(a->fh), buf, a->len, (off_t)a->offset);
	if (n < 0)
		fring_host->reply_err(r, -errno);
	else
		fring_host->reply_data(r, buf, (uint32_t)n);
	free(buf);
}

void pt_write(void *inst, fring_req *r, const struct fring_write_args *a)
{
	ssize_t n;

	if (HAS_SERVICE(req_write_fd) &&
	    fring_host->req_write_fd(r, fh_fd(a->fh), a->offset, 0) == 0)
		return;
	n = pwrite(fh_fd(a->fh), a->data, a->len, (off_t)a->offset);
	if (n < 0)
		fring_host->reply_err(r, -errno);
	else
		fring_host->reply_write(r, (uint32_t)n);
}

/* Closing a duplicate reports deferred write errors (NFS and the like) and
 * drops this owner's POSIX locks, as close() would on a local file. */
void pt_flush(void *inst, fring_req *r, const struct fring_release_args *a)
{
	int fd = dup(fh_fd(a->fh));

	if (fd < 0)
		fring_host->reply_err(r, -errno);
	else
		fring_host->reply_err(r, close(fd) ? -errno : 0);
}

void pt_release(void *inst, fring_req *r, const struct fring_release_args *a)
{
	pt_backing_detach(inst, a->nodeid, a->fh);
	close(fh_fd(a->fh));
	fring_host->reply_err(r, 0);
}

void pt_fsync(void *inst, fring_req *r, const struct fring_fsync_args *a)
{
	int fd = fh_fd(a->fh);
	int res = a->datasync ? fdatasync(fd) : fsync(fd);

	fring_host->reply_err(r, res ? -errno : 0);
}

void pt_fallocate(void *inst, fring_req *r,
		  const struct fring_fallocate_args *a)
{
	int res = fallocate(fh_fd(a->fh), (int)a->mode, (off_t)a->offset,
			    (off_t)a->length);

	fring_host->reply_err(r, res ? -errno : 0);
}

void pt_lseek(void *inst, fring_req *r, const struct fring_lseek_args *a)
{
	off_t off = lseek(fh_fd(a->fh), (off_t)a->offset, (int)a->whence);

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
	ssize_t n = copy_file_range(fh_fd(a->fh_in), &in, fh_fd(a->fh_out),
				    &out, len, (unsigned int)a->flags);

	if (n < 0)
		fring_host->reply_err(r, -errno);
	else
		fring_host->reply_write(r, (uint32_t)n);
}
