// SPDX-License-Identifier: MIT
/*
 * Directory listings (READDIR, READDIRPLUS): the buffer a plugin's
 * dir_add / dir_add_plus calls fill, and reply_dir, which sends it.
 */
#include "host.h"
#include "host_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../proto/ops.h"
#include "../request/reply.h"
#include "../request/request.h"
#include "entry_check.h"

static int is_readdir(const struct fring_request *r)
{
	return fits(r, FRING_R_DIRENT | FRING_R_DIRENTPLUS);
}

/* The listing lives in transport scratch memory when it is big enough,
 * else in a buffer of the kernel's requested size. */
static int dir_buf(struct fring_request *r)
{
	/* The kernel never asks for more than max_pages pages; a bigger size
	 * (a bogus request) gets a shorter listing, which is allowed, rather
	 * than a huge allocation. */
	size_t cap = r->d.a.read.len < (1u << 20) ? r->d.a.read.len : (1u << 20);

	if (r->dirbuf)
		return 0;
	if (r->scratch && r->scratch_cap >= cap) {
		r->dirbuf = r->scratch;
	} else {
		r->dirbuf = malloc(cap ? cap : 1);
		if (!r->dirbuf)
			return -ENOMEM;
		r->dir_malloced = 1;
	}
	r->dir_cap = cap;
	r->dir_used = 0;
	return 0;
}

static int32_t dir_check(fring_req *h, struct fring_request *r,
			 const char *what)
{
	if (FRING_REQ_ST(atomic_load(&r->state)) != FRING_REQ_PENDING)
		return -EALREADY;
	if (!is_readdir(r))
		return fring_req_reply_misuse(h, what);
	return dir_buf(r);
}

static int32_t dir_result(struct fring_request *r, int ret)
{
	if (ret < 0)
		fring_log_ratelimited("dir-add", FRING_LOG_WARN,
				      "%s: plugin added an invalid directory "
				      "entry name to %s (unique %llu); skipped",
				      r->rq->name, fring_opcode_name(r->opcode),
				      (unsigned long long)r->unique);
	return ret;
}

int32_t fring_host_dir_add(fring_req *h, const char *name, uint32_t namelen,
			 uint64_t ino, uint32_t type, uint64_t next_off)
{
	int32_t ret;
	size_t start;

	GET_REQ(r, h);
	ret = dir_check(h, r, "dir_add");
	if (ret)
		return ret;
	if (fits(r, FRING_R_DIRENT))
		return dir_result(r, fring_encode_dirent(r->dirbuf, r->dir_cap,
							 &r->dir_used, name,
							 namelen, ino, type,
							 next_off));
	/* READDIRPLUS without attributes: entry nodeid 0 (no lookup is
	 * counted, the kernel only emits the name), dirent ino kept. */
	struct fring_entry e = { .ino = 0 };

	e.attr.mode = type;
	start = r->dir_used;
	ret = fring_encode_direntplus(r->dirbuf, r->dir_cap, &r->dir_used,
				      name, namelen, &e, next_off);
	if (ret == 1)
		memcpy(r->dirbuf + start + sizeof(struct fuse_entry_out), &ino,
		       sizeof(ino));
	return dir_result(r, ret);
}

int32_t fring_host_dir_add_plus(fring_req *h, const char *name, uint32_t namelen,
			      const struct fring_entry *e, uint64_t next_off)
{
	const char *why;
	size_t start;
	int32_t ret;

	GET_REQ(r, h);
	ret = dir_check(h, r, "dir_add_plus");
	if (ret)
		return ret;
	if (!e)
		return -EINVAL;
	if (fits(r, FRING_R_DIRENTPLUS) &&
	    (why = fring_entry_refusal(r, e->ino, name, namelen))) {
		/* The listing is answered EIO at reply_dir. */
		fring_entry_log(r, why, name, namelen);
		r->dir_refused = 1;
		return -EINVAL;
	}
	if (fits(r, FRING_R_DIRENT))
		return dir_result(r, fring_encode_dirent(r->dirbuf, r->dir_cap,
							 &r->dir_used, name,
							 namelen, e->ino,
							 e->attr.mode, next_off));
	start = r->dir_used;
	ret = fring_encode_direntplus(r->dirbuf, r->dir_cap, &r->dir_used, name,
				      namelen, e, next_off);
	if (ret == 1) {
		uint8_t *at = (uint8_t *)r->dirbuf + start +
			      offsetof(struct fuse_entry_out, attr) +
			      offsetof(struct fuse_attr, blksize);
		uint32_t b;

		memcpy(&b, at, sizeof(b));
		fring_host_blksize(r, &b);
		memcpy(at, &b, sizeof(b));
	}
	return dir_result(r, ret);
}

int32_t fring_host_reply_dir(fring_req *h)
{
	GET_REQ(r, h);
	if (!is_readdir(r))
		return fring_req_reply_misuse(h, "reply_dir");
	if (r->dir_refused)
		return fring_host_refuse_entry(h, NULL);
	return fring_host_send1(h, r->dirbuf, r->dirbuf ? r->dir_used : 0);
}
