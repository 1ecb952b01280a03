// SPDX-License-Identifier: MIT
/*
 * The host function table plugins call (struct fring_host_api): logging,
 * config helpers, request inspection and the mount's services. The reply
 * functions are host_reply.c, directory listings host_dirbuf.c, the
 * data-path services host_io.c, passthrough backing files host_backing.c.
 */
#include "host.h"
#include "host_internal.h"

#include <errno.h>
#include <string.h>

#include "../base/log.h"
#include "../config/config.h"
#include "../request/request.h"
#include "dispatch_state.h"

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
	struct fring_request *r = fring_req_enter(h, &ref);
	fring_mount *m = r ? &fring_req_dx(r)->mount : NULL;

	if (r)
		fring_req_leave(r, ref);
	return m;
}

static int32_t h_req_interrupted(fring_req *h)
{
	int ref, ret = 0;
	struct fring_request *r = fring_req_enter(h, &ref);

	if (r) {
		ret = atomic_load(&r->interrupted);
		fring_req_leave(r, ref);
	}
	return ret;
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
	.reply_err = fring_host_reply_err,
	.reply_entry = fring_host_reply_entry,
	.reply_create = fring_host_reply_create,
	.reply_attr = fring_host_reply_attr,
	.reply_readlink = fring_host_reply_readlink,
	.reply_open = fring_host_reply_open,
	.reply_write = fring_host_reply_write,
	.reply_data = fring_host_reply_data,
	.reply_statfs = fring_host_reply_statfs,
	.reply_xattr_size = fring_host_reply_xattr_size,
	.reply_lock = fring_host_reply_lock,
	.reply_lseek = fring_host_reply_lseek,
	.dir_add = fring_host_dir_add,
	.dir_add_plus = fring_host_dir_add_plus,
	.reply_dir = fring_host_reply_dir,
	.mount_request_shutdown = h_mount_request_shutdown,
	.req_read_fd = fring_host_req_read_fd,
	.req_write_fd = fring_host_req_write_fd,
	.reply_statx = fring_host_reply_statx,
	.mount_point = h_mount_point,
	.backing_open = fring_host_backing_open,
	.backing_close = fring_host_backing_close,
};

const struct fring_host_api *fring_host_table(void)
{
	return &host_table;
}
