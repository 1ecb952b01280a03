// SPDX-License-Identifier: MIT
/*
 * What the host table's files share: the hold a host call takes on the
 * request behind a plugin's handle, the reply-kind check, the one-part
 * send and the entry refusal, and the table's entries that live outside
 * host.c.
 */
#ifndef FRING_HOST_INTERNAL_H
#define FRING_HOST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <fring/plugin.h>

#include "../proto/ops.h"
#include "../request/request.h"

/* A host call's hold on a request (fring_req_enter), let go when the
 * call returns, whichever way. */
struct held_req {
	struct fring_request *r;
	int ref;
};

static inline void let_go(struct held_req *hr)
{
	if (hr->r)
		fring_req_leave(hr->r, hr->ref);
}

/* The request behind a plugin's handle, held until the host call returns:
 * a NULL handle is -EINVAL, a stale one (its request answered, the memory
 * reused) -EALREADY (request.h). */
#define GET_REQ(r, h)                                                       \
	__attribute__((cleanup(let_go))) struct held_req r##_held = { 0 };  \
	struct fring_request *r = r##_held.r =                              \
		fring_req_enter(h, &r##_held.ref);                          \
	if (!r)                                                             \
		return (h) ? -EALREADY : -EINVAL

/* The request's opcode may be answered with this body (FRING_R_*, the
 * replies column of ops.def). */
static inline int fits(const struct fring_request *r, uint32_t kinds)
{
	return !!(fring_op_replies(r->opcode) & kinds);
}

/* The mount option blksize, if set, as an attribute's st_blksize in
 * place of the plugin's (host_reply.c, host_dirbuf.c). */
void fring_host_blksize(const struct fring_request *r, uint32_t *blksize);

/* Claim and send one body part (host_reply.c). */
int32_t fring_host_send1(fring_req *h, const void *p, size_t len);

/* An entry naming a nodeid it may not (entry_check.h): claim, log why
 * (NULL: logged already) and answer EIO (host_reply.c). */
int32_t fring_host_refuse_entry(fring_req *h, const char *why);

/* host_reply.c */
int32_t fring_host_reply_err(fring_req *h, int32_t neg_errno);
int32_t fring_host_reply_entry(fring_req *h, const struct fring_entry *e);
int32_t fring_host_reply_create(fring_req *h, const struct fring_entry *e,
				const struct fring_open_out *o);
int32_t fring_host_reply_attr(fring_req *h, const struct fring_attr *a,
			      uint64_t attr_timeout_ns);
int32_t fring_host_reply_statx(fring_req *h, const struct fring_statx *sx,
			       uint64_t attr_timeout_ns);
int32_t fring_host_reply_readlink(fring_req *h, const char *target,
				  uint32_t len);
int32_t fring_host_reply_open(fring_req *h, const struct fring_open_out *o);
int32_t fring_host_reply_write(fring_req *h, uint32_t count);
int32_t fring_host_reply_data(fring_req *h, const void *data, uint32_t len);
int32_t fring_host_reply_statfs(fring_req *h, const struct fring_statfs *s);
int32_t fring_host_reply_xattr_size(fring_req *h, uint32_t value_size);
int32_t fring_host_reply_lock(fring_req *h, const struct fring_lock *l);
int32_t fring_host_reply_lseek(fring_req *h, uint64_t offset);

/* host_dirbuf.c */
int32_t fring_host_dir_add(fring_req *h, const char *name, uint32_t namelen,
			   uint64_t ino, uint32_t type, uint64_t next_off);
int32_t fring_host_dir_add_plus(fring_req *h, const char *name,
				uint32_t namelen, const struct fring_entry *e,
				uint64_t next_off);
int32_t fring_host_reply_dir(fring_req *h);

/* host_io.c */
int32_t fring_host_req_read_fd(fring_req *h, int32_t fd, uint64_t offset,
			       uint32_t len, uint32_t flags);
int32_t fring_host_req_write_fd(fring_req *h, int32_t fd, uint64_t offset,
				uint32_t flags);

/* host_backing.c */
int32_t fring_host_backing_open(fring_mount *m, int32_t fd, uint32_t flags);
int32_t fring_host_backing_close(fring_mount *m, int32_t backing_id);

#endif /* FRING_HOST_INTERNAL_H */
