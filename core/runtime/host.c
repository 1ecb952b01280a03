/*
 * The host function table plugins call (struct fring_host_api): logging,
 * config helpers, request inspection and the reply functions. Every reply
 * checks that its kind fits the request's opcode and its values fit what
 * the kernel asked for; a mismatch is a plugin bug that costs the caller an
 * EIO, never a malformed reply to the kernel.
 */
#define _GNU_SOURCE
#include "host.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../base/log.h"
#include "../config/config.h"
#include "../proto/ops.h"
#include "../request/reply.h"
#include "../request/request.h"
#include "dispatch_state.h"
#include "entry_check.h"

/* A host call's hold on a request (fring_req_enter), let go when the
 * call returns, whichever way. */
struct held_req {
	struct fring_req *r;
	int ref;
};

static void let_go(struct held_req *hr)
{
	if (hr->r)
		fring_req_leave(hr->r, hr->ref);
}

/* The request behind a plugin's handle, held until the host call returns:
 * a NULL handle is -EINVAL, a stale one (its request answered, the memory
 * reused) -EALREADY (request.h). */
#define GET_REQ(r, h)                                                       \
	__attribute__((cleanup(let_go))) struct held_req r##_held = { 0 };  \
	struct fring_req *r = r##_held.r = fring_req_enter(h, &r##_held.ref); \
	if (!r)                                                             \
		return (h) ? -EALREADY : -EINVAL

#ifndef FRING_VERSION_STRING
#define FRING_VERSION_STRING "0"
#endif

static void h_log(fring_mount *m, int32_t level, const char *msg)
{
	if (level < FRING_LOG_ERROR)
		level = FRING_LOG_ERROR;
	if (level > FRING_LOG_DEBUG)
		level = FRING_LOG_DEBUG;
	if (m && m->name)
		fring_log(level, "%s: %s", m->name, msg ? msg : "");
	else
		fring_log(level, "%s", msg ? msg : "");
}

static int32_t h_log_enabled(fring_mount *m, int32_t level)
{
	return fring_log_enabled(level);
}

static int32_t h_parse_size(const char *s, uint64_t *out)
{
	return s && out ? fring_parse_size(s, out) : -EINVAL;
}

static int32_t h_parse_bool(const char *s, int32_t *out)
{
	int v, ret;

	if (!s || !out)
		return -EINVAL;
	ret = fring_parse_bool(s, &v);
	if (ret == 0)
		*out = v;
	return ret;
}

static int32_t h_req_ctx(fring_req *h, struct fring_req_ctx *out)
{
	uint32_t size;

	GET_REQ(r, h);
	if (!out || out->size < 8)
		return -EINVAL;
	/* Honour the caller's struct size: an older plugin's struct is
	 * shorter, and only the common prefix may be written. */
	size = out->size < sizeof(*out) ? out->size : sizeof(*out);
	struct fring_req_ctx c = {
		.size = size, .opcode = r->opcode, .unique = r->unique,
		.nodeid = r->nodeid, .uid = r->uid, .gid = r->gid,
		.pid = r->pid, .queue = r->queue,
	};
	memcpy(out, &c, size);
	return 0;
}

static fring_mount *h_req_mount(fring_req *h)
{
	int ref;
	struct fring_req *r = fring_req_enter(h, &ref);
	fring_mount *m = r ? &fring_req_dx(r)->mount : NULL;

	if (r)
		fring_req_leave(r, ref);
	return m;
}

static int32_t h_req_interrupted(fring_req *h)
{
	int ref, ret = 0;
	struct fring_req *r = fring_req_enter(h, &ref);

	if (r) {
		ret = atomic_load(&r->interrupted);
		fring_req_leave(r, ref);
	}
	return ret;
}

/* The request's opcode may be answered with this body (FRING_R_*, the
 * replies column of ops.def). */
static int fits(const struct fring_req *r, uint32_t kinds)
{
	return !!(fring_op_replies(r->opcode) & kinds);
}

static int32_t h_reply_err(fring_req *h, int32_t neg_errno)
{
	GET_REQ(r, h);
	if (neg_errno == 0 && !fits(r, FRING_R_EMPTY))
		return fring_req_reply_misuse(h, "reply_err(0) (needs data)");
	return fring_req_reply_error(h, neg_errno);
}

/* Claim and send one body part. */
static int32_t send1(fring_req *h, const void *p, size_t len)
{
	struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
	int ret = fring_req_claim(h);

	return ret ? ret : fring_req_send(fring_req_ptr(h), 0, &iov, 1);
}

/* An entry naming a nodeid it may not (entry_check.h): claim, log why
 * (NULL: logged already) and answer EIO. */
static int32_t refuse_entry(fring_req *h, const char *why)
{
	struct fring_req *r = fring_req_ptr(h);
	int ret = fring_req_claim(h);

	if (ret)
		return ret;
	FRING_STAT_INC(r->rq, r->queue, misuse);
	if (why)
		fring_entry_log(r, why, NULL, 0);
	fring_req_send(r, -EIO, NULL, 0);
	return -EINVAL;
}

static int32_t h_reply_entry(fring_req *h, const struct fring_entry *e)
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
		return refuse_entry(h, why);
	fring_encode_entry(e, &eo);
	return send1(h, &eo, sizeof(eo));
}

/* FOPEN_IO_URING_ZERO_COPY reaches the kernel only from a plugin that
 * knows it (ABI 1.5) on a mount whose rings serve zero-copy. */
static void open_filter(const struct fring_req *r, struct fuse_open_out *oo)
{
	if ((oo->open_flags & FOPEN_IO_URING_ZERO_COPY) &&
	    (fring_req_dx(r)->desc->abi_minor < 5 ||
	     !atomic_load_explicit(&fring_req_dx(r)->mount.zero_copy,
				   memory_order_relaxed)))
		oo->open_flags &= ~FOPEN_IO_URING_ZERO_COPY;
}

static int32_t h_reply_create(fring_req *h, const struct fring_entry *e,
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
		return refuse_entry(h, why);
	fring_encode_entry(e, &eo);
	fring_encode_open(o, &oo);
	open_filter(r, &oo);
	iov[0] = (struct iovec){ &eo, sizeof(eo) };
	iov[1] = (struct iovec){ &oo, sizeof(oo) };
	ret = fring_req_claim(h);
	return ret ? ret : fring_req_send(r, 0, iov, 2);
}

static int32_t h_reply_attr(fring_req *h, const struct fring_attr *a,
			    uint64_t attr_timeout_ns)
{
	struct fuse_attr_out ao;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_ATTR))
		return fring_req_reply_misuse(h, "reply_attr");
	if (!a)
		return fring_req_reply_misuse(h, "reply_attr(NULL)");
	fring_encode_attr_out(a, attr_timeout_ns, &ao);
	return send1(h, &ao, sizeof(ao));
}

static int32_t h_reply_statx(fring_req *h, const struct fring_statx *sx,
			     uint64_t attr_timeout_ns)
{
	struct fuse_statx_out so;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_STATX))
		return fring_req_reply_misuse(h, "reply_statx");
	if (!sx || sx->size < sizeof(*sx))
		return fring_req_reply_misuse(h, "reply_statx(bad struct)");
	fring_encode_statx(sx, attr_timeout_ns, &so);
	return send1(h, &so, sizeof(so));
}

static int32_t h_reply_readlink(fring_req *h, const char *target, uint32_t len)
{
	/* The kernel reads at most a page minus the NUL it appends. */
	long limit = sysconf(_SC_PAGESIZE) - 1;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_READLINK))
		return fring_req_reply_misuse(h, "reply_readlink");
	if ((!target && len) || (long)len > limit)
		return fring_req_reply_misuse(h, "reply_readlink(bad target)");
	return send1(h, target, len);
}

static int32_t h_reply_open(fring_req *h, const struct fring_open_out *o)
{
	struct fuse_open_out oo;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_OPEN))
		return fring_req_reply_misuse(h, "reply_open");
	if (!o)
		return fring_req_reply_misuse(h, "reply_open(NULL)");
	fring_encode_open(o, &oo);
	open_filter(r, &oo);
	return send1(h, &oo, sizeof(oo));
}

static int32_t h_reply_write(fring_req *h, uint32_t count)
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
		return send1(h, &co, sizeof(co));
	return send1(h, &wo, sizeof(wo));
}

static int32_t h_reply_data(fring_req *h, const void *data, uint32_t len)
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
	return send1(h, data, len);
}

static int32_t h_reply_statfs(fring_req *h, const struct fring_statfs *s)
{
	struct fuse_statfs_out so;

	GET_REQ(r, h);
	if (!fits(r, FRING_R_STATFS))
		return fring_req_reply_misuse(h, "reply_statfs");
	if (!s)
		return fring_req_reply_misuse(h, "reply_statfs(NULL)");
	fring_encode_statfs(s, &so);
	return send1(h, &so, sizeof(so));
}

static int32_t h_reply_xattr_size(fring_req *h, uint32_t value_size)
{
	struct fuse_getxattr_out go = { .size = value_size };

	GET_REQ(r, h);
	if (!fits(r, FRING_R_XATTR_SIZE) || r->d.a.xattr.max != 0)
		return fring_req_reply_misuse(h, "reply_xattr_size");
	return send1(h, &go, sizeof(go));
}

static int32_t h_reply_lock(fring_req *h, const struct fring_lock *l)
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
	return send1(h, &lo, sizeof(lo));
}

static int32_t h_reply_lseek(fring_req *h, uint64_t offset)
{
	struct fuse_lseek_out so = { .offset = offset };

	GET_REQ(r, h);
	if (!fits(r, FRING_R_LSEEK))
		return fring_req_reply_misuse(h, "reply_lseek");
	return send1(h, &so, sizeof(so));
}

/* ---- directory listings ---- */

static int is_readdir(const struct fring_req *r)
{
	return fits(r, FRING_R_DIRENT | FRING_R_DIRENTPLUS);
}

/* The listing lives in transport scratch memory when it is big enough,
 * else in a buffer of the kernel's requested size. */
static int dir_buf(struct fring_req *r)
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

static int32_t dir_check(fring_req *h, struct fring_req *r, const char *what)
{
	if (FRING_REQ_ST(atomic_load(&r->state)) != FRING_REQ_PENDING)
		return -EALREADY;
	if (!is_readdir(r))
		return fring_req_reply_misuse(h, what);
	return dir_buf(r);
}

static int32_t dir_result(struct fring_req *r, int ret)
{
	if (ret < 0)
		fring_log_ratelimited("dir-add", FRING_LOG_WARN,
				      "%s: plugin added an invalid directory "
				      "entry name to %s (unique %llu); skipped",
				      r->rq->name, fring_opcode_name(r->opcode),
				      (unsigned long long)r->unique);
	return ret;
}

static int32_t h_dir_add(fring_req *h, const char *name, uint32_t namelen,
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

static int32_t h_dir_add_plus(fring_req *h, const char *name, uint32_t namelen,
			      const struct fring_entry *e, uint64_t next_off)
{
	const char *why;
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
	return dir_result(r, fring_encode_direntplus(r->dirbuf, r->dir_cap,
						     &r->dir_used, name,
						     namelen, e, next_off));
}

static int32_t h_reply_dir(fring_req *h)
{
	GET_REQ(r, h);
	if (!is_readdir(r))
		return fring_req_reply_misuse(h, "reply_dir");
	if (r->dir_refused)
		return refuse_entry(h, NULL);
	return send1(h, r->dirbuf, r->dirbuf ? r->dir_used : 0);
}

/* ---- data-path services (ABI 1.1) ---- */

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

static int32_t h_req_read_fd(fring_req *h, int32_t fd, uint64_t offset,
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

static int32_t h_req_write_fd(fring_req *h, int32_t fd, uint64_t offset,
			      uint32_t flags)
{
	return stale_refusal(h, req_write_fd(h, fd, offset, flags));
}

static void h_mount_request_shutdown(fring_mount *m)
{
	if (m && m->request_shutdown)
		m->request_shutdown(m);
}

static const char *h_mount_point(fring_mount *m)
{
	return m ? m->path : NULL;
}

static int32_t h_backing_open(fring_mount *m, int32_t fd, uint32_t flags)
{
	struct fuse_backing_map map = { .fd = fd };
	int id;

	if (!m || !atomic_load(&m->passthrough))
		return -EOPNOTSUPP;
	if (flags)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	id = ioctl(m->fuse_fd, FUSE_DEV_IOC_BACKING_OPEN, &map);
	return id < 0 ? -errno : id;
}

static int32_t h_backing_close(fring_mount *m, int32_t backing_id)
{
	uint32_t id = (uint32_t)backing_id;

	if (!m || !atomic_load(&m->passthrough))
		return -EOPNOTSUPP;
	if (backing_id <= 0)
		return -EINVAL;
	return ioctl(m->fuse_fd, FUSE_DEV_IOC_BACKING_CLOSE, &id) < 0 ? -errno
								       : 0;
}

static const struct fring_host_api host_table = {
	.size = sizeof(struct fring_host_api),
	.abi_major = FRING_ABI_MAJOR,
	.abi_minor = FRING_ABI_MINOR,
	.host_version = FRING_VERSION_STRING,
	.log = h_log,
	.log_enabled = h_log_enabled,
	.parse_size = h_parse_size,
	.parse_bool = h_parse_bool,
	.req_ctx = h_req_ctx,
	.req_mount = h_req_mount,
	.req_interrupted = h_req_interrupted,
	.reply_err = h_reply_err,
	.reply_entry = h_reply_entry,
	.reply_create = h_reply_create,
	.reply_attr = h_reply_attr,
	.reply_readlink = h_reply_readlink,
	.reply_open = h_reply_open,
	.reply_write = h_reply_write,
	.reply_data = h_reply_data,
	.reply_statfs = h_reply_statfs,
	.reply_xattr_size = h_reply_xattr_size,
	.reply_lock = h_reply_lock,
	.reply_lseek = h_reply_lseek,
	.dir_add = h_dir_add,
	.dir_add_plus = h_dir_add_plus,
	.reply_dir = h_reply_dir,
	.mount_request_shutdown = h_mount_request_shutdown,
	.req_read_fd = h_req_read_fd,
	.req_write_fd = h_req_write_fd,
	.reply_statx = h_reply_statx,
	.mount_point = h_mount_point,
	.backing_open = h_backing_open,
	.backing_close = h_backing_close,
};

const struct fring_host_api *fring_host_table(void)
{
	return &host_table;
}
