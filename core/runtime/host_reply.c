// SPDX-License-Identifier: MIT
/*
 * The reply functions of the host table. Every reply checks that its kind
 * fits the request's opcode and its values fit what the kernel asked for;
 * a mismatch is a plugin bug that costs the caller an EIO, never a
 * malformed reply to the kernel.
 */
#define _GNU_SOURCE
#include "host.h"
#include "host_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../proto/ops.h"
#include "../request/reply.h"
#include "../request/request.h"
#include "dispatch_state.h"
#include "entry_check.h"

int32_t fring_host_reply_err(fring_req *h, int32_t neg_errno)
{
	GET_REQ(r, h);
	if (neg_errno == 0 && !fits(r, FRING_R_EMPTY))
		return fring_req_reply_misuse(h, "reply_err(0) (needs data)");
	return fring_req_reply_error(h, neg_errno);
}

/* Claim and send one body part. */
int32_t fring_host_send1(fring_req *h, const void *p, size_t len)
{
	struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
	int ret = fring_req_claim(h);

	return ret ? ret : fring_req_send(fring_req_ptr(h), 0, &iov, 1);
}

/* An entry naming a nodeid it may not (entry_check.h): claim, log why
 * (NULL: logged already) and answer EIO. */
int32_t fring_host_refuse_entry(fring_req *h, const char *why)
{
	struct fring_request *r = fring_req_ptr(h);
	int ret = fring_req_claim(h);

	if (ret)
		return ret;
	FRING_STAT_INC(r->rq, r->queue, misuse);
	if (why)
		fring_entry_log(r, why, NULL, 0);
	fring_req_send(r, -EIO, NULL, 0);
	return -EINVAL;
}

void fring_host_blksize(const struct fring_request *r, uint32_t *blksize)
{
	uint32_t b = fring_req_dx(r)->mount.blksize;

	if (b)
		*blksize = b;
}

int32_t fring_host_reply_entry(fring_req *h, const struct fring_entry *e)
{
	struct fuse_entry_out eo;
	const char *why;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_ENTRY))
		return fring_req_reply_misuse(h, "reply_entry");
	if (!e)
		return fring_req_reply_misuse(h, "reply_entry(NULL)");
	why = fring_entry_refusal(r, e->ino, NULL, 0);
	if (why)
		return fring_host_refuse_entry(h, why);
	fring_encode_entry(e, &eo);
	fring_host_blksize(r, &eo.attr.blksize);
	return fring_host_send1(h, &eo, sizeof(eo));
}

/* FOPEN_IO_URING_ZERO_COPY reaches the kernel only from a plugin that
 * knows it (ABI 1.5) on a mount whose rings serve zero-copy. */
static void open_filter(const struct fring_request *r, struct fuse_open_out *oo)
{
	if ((oo->open_flags & FOPEN_IO_URING_ZERO_COPY) &&
	    (fring_req_dx(r)->desc->abi_minor < 5 ||
	     !atomic_load_explicit(&fring_req_dx(r)->mount.zero_copy,
				   memory_order_relaxed)))
		oo->open_flags &= ~FOPEN_IO_URING_ZERO_COPY;
}

int32_t fring_host_reply_create(fring_req *h, const struct fring_entry *e,
			      const struct fring_open_out *o)
{
	struct fuse_entry_out eo;
	struct fuse_open_out oo;
	struct iovec iov[2];
	const char *why;
	int ret;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_CREATE))
		return fring_req_reply_misuse(h, "reply_create");
	if (!e || !o)
		return fring_req_reply_misuse(h, "reply_create(NULL)");
	why = fring_entry_refusal(r, e->ino, NULL, 0);
	if (why)
		return fring_host_refuse_entry(h, why);
	fring_encode_entry(e, &eo);
	fring_host_blksize(r, &eo.attr.blksize);
	fring_encode_open(o, &oo);
	open_filter(r, &oo);
	iov[0] = (struct iovec){ &eo, sizeof(eo) };
	iov[1] = (struct iovec){ &oo, sizeof(oo) };
	ret = fring_req_claim(h);
	return ret ? ret : fring_req_send(r, 0, iov, 2);
}

int32_t fring_host_reply_attr(fring_req *h, const struct fring_attr *a,
			    uint64_t attr_timeout_ns)
{
	struct fuse_attr_out ao;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_ATTR))
		return fring_req_reply_misuse(h, "reply_attr");
	if (!a)
		return fring_req_reply_misuse(h, "reply_attr(NULL)");
	fring_encode_attr_out(a, attr_timeout_ns, &ao);
	fring_host_blksize(r, &ao.attr.blksize);
	return fring_host_send1(h, &ao, sizeof(ao));
}

int32_t fring_host_reply_statx(fring_req *h, const struct fring_statx *sx,
			     uint64_t attr_timeout_ns)
{
	struct fuse_statx_out so;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_STATX))
		return fring_req_reply_misuse(h, "reply_statx");
	if (!sx || sx->size < sizeof(*sx))
		return fring_req_reply_misuse(h, "reply_statx(bad struct)");
	fring_encode_statx(sx, attr_timeout_ns, &so);
	fring_host_blksize(r, &so.stat.blksize);
	return fring_host_send1(h, &so, sizeof(so));
}

int32_t fring_host_reply_readlink(fring_req *h, const char *target, uint32_t len)
{
	/* The kernel reads at most a page minus the NUL it appends. */
	long limit = sysconf(_SC_PAGESIZE) - 1;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_READLINK))
		return fring_req_reply_misuse(h, "reply_readlink");
	if ((!target && len) || (long)len > limit)
		return fring_req_reply_misuse(h, "reply_readlink(bad target)");
	return fring_host_send1(h, target, len);
}

int32_t fring_host_reply_open(fring_req *h, const struct fring_open_out *o)
{
	struct fuse_open_out oo;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_OPEN))
		return fring_req_reply_misuse(h, "reply_open");
	if (!o)
		return fring_req_reply_misuse(h, "reply_open(NULL)");
	fring_encode_open(o, &oo);
	open_filter(r, &oo);
	return fring_host_send1(h, &oo, sizeof(oo));
}

int32_t fring_host_reply_write(fring_req *h, uint32_t count)
{
	struct fuse_copy_file_range_out co = { .bytes_copied = count };
	struct fuse_write_out wo = { .size = count };
	uint64_t len;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_WRITE | FRING_R_COPY64))
		return fring_req_reply_misuse(h, "reply_write");
	/* WRITE, or COPY_FILE_RANGE(_64) */
	len = r->opcode == FUSE_WRITE ? r->d.a.write.len : r->d.a.copy.len;
	if (count > len)
		return fring_req_reply_misuse(h, "reply_write(count > len)");
	if (fits(r, FRING_R_COPY64))
		return fring_host_send1(h, &co, sizeof(co));
	return fring_host_send1(h, &wo, sizeof(wo));
}

int32_t fring_host_reply_data(fring_req *h, const void *data, uint32_t len)
{
	uint32_t max;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_DATA))
		return fring_req_reply_misuse(h, "reply_data");
	if (r->opcode == FUSE_READ) {
		max = r->d.a.read.len;
	} else { /* GETXATTR LISTXATTR */
		max = r->d.a.xattr.max;
		if (max == 0)
			return fring_req_reply_misuse(
				h, "reply_data (size probe needs reply_xattr_size)");
	}
	if (len > max)
		return fring_req_reply_misuse(h, "reply_data(len > requested size)");
	if (!data && len)
		return fring_req_reply_misuse(h, "reply_data(NULL)");
	return fring_host_send1(h, data, len);
}

int32_t fring_host_reply_statfs(fring_req *h, const struct fring_statfs *s)
{
	struct fuse_statfs_out so;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_STATFS))
		return fring_req_reply_misuse(h, "reply_statfs");
	if (!s)
		return fring_req_reply_misuse(h, "reply_statfs(NULL)");
	fring_encode_statfs(s, &so);
	return fring_host_send1(h, &so, sizeof(so));
}

int32_t fring_host_reply_xattr_size(fring_req *h, uint32_t value_size)
{
	struct fuse_getxattr_out go = { .size = value_size };

	GET_REQ(r, h);
	if (!fits(r, FRING_R_XATTR_SIZE) || r->d.a.xattr.max != 0)
		return fring_req_reply_misuse(h, "reply_xattr_size");
	return fring_host_send1(h, &go, sizeof(go));
}

int32_t fring_host_reply_lock(fring_req *h, const struct fring_lock *l)
{
	struct fuse_lk_out lo;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_LOCK))
		return fring_req_reply_misuse(h, "reply_lock");
	if (!l)
		return fring_req_reply_misuse(h, "reply_lock(NULL)");
	memset(&lo, 0, sizeof(lo));
	lo.lk.start = l->start;
	lo.lk.end = l->end;
	lo.lk.type = l->type;
	lo.lk.pid = l->pid;
	return fring_host_send1(h, &lo, sizeof(lo));
}

int32_t fring_host_reply_lseek(fring_req *h, uint64_t offset)
{
	struct fuse_lseek_out so = { .offset = offset };

	GET_REQ(r, h);
	if (!fits(r, FRING_R_LSEEK))
		return fring_req_reply_misuse(h, "reply_lseek");
	return fring_host_send1(h, &so, sizeof(so));
}
