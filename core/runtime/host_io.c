// SPDX-License-Identifier: MIT
/*
 * The data-path services of the host table (ABI 1.1): req_read_fd and
 * req_write_fd, through the transport's own service where it has one,
 * else synchronously (reply.c).
 */
#include "host.h"
#include "host_internal.h"

#include <errno.h>

#include "../request/reply.h"
#include "../request/request.h"

/* A refusal of req_read_fd / req_write_fd (-EINVAL) was decided on the
 * request's fields, read before any claim: if another thread answered
 * while they were read (the entry may already hold the next request, its
 * fields cleared before its generation is), the caller's answer is
 * -EALREADY, as for any answered request (tests/vm/test_owner_race.py saw
 * -EINVAL there, once while the request was stale, once while the reply
 * still showed the old generation). */
static int32_t stale_refusal(fring_req *h, int32_t ret)
{
	return ret == -EINVAL && h && !fring_req_pending(h) ? -EALREADY : ret;
}

static int32_t req_read_fd(fring_req *h, int32_t fd, uint64_t offset,
			   uint32_t len, uint32_t flags)
{
	int ret;

	GET_REQ(r, h);
	if (flags || r->opcode != FUSE_READ || len > r->d.a.read.len)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	if (r->ops->read_fd) {
		ret = r->ops->read_fd(h, fd, offset, len);
		if (ret != -EOPNOTSUPP)
			return ret;
	}
	ret = fring_req_claim(h);
	if (ret)
		return ret;
	fring_req_read_fd_sync(r, fd, offset, len);
	return 0;
}

int32_t fring_host_req_read_fd(fring_req *h, int32_t fd, uint64_t offset,
			     uint32_t len, uint32_t flags)
{
	return stale_refusal(h, req_read_fd(h, fd, offset, len, flags));
}

static int32_t req_write_fd(fring_req *h, int32_t fd, uint64_t offset,
			    uint32_t flags)
{
	int ret;

	GET_REQ(r, h);
	if (flags || r->opcode != FUSE_WRITE)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	if (r->ops->write_fd) {
		ret = r->ops->write_fd(h, fd, offset);
		if (ret != -EOPNOTSUPP)
			return ret;
	}
	ret = fring_req_claim(h);
	if (ret)
		return ret;
	fring_req_write_fd_sync(r, fd, offset);
	return 0;
}

int32_t fring_host_req_write_fd(fring_req *h, int32_t fd, uint64_t offset,
			      uint32_t flags)
{
	return stale_refusal(h, req_write_fd(h, fd, offset, flags));
}
