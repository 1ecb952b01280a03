// SPDX-License-Identifier: MIT
/* The recording host table of fakehost.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "fakehost.h"

char fake_serving[1024];
int32_t fake_backing_result = 7, fake_backing_closed;
int fake_backing_opens, fake_backing_closes;

void fake_req_reset(struct fring_req *r)
{
	free(r->data);
	free(r->dir);
	memset(r, 0, sizeof(*r));
}

static void record(fring_req *r, enum kind k)
{
	cr_assert_eq(r->nreplies, 0, "second reply to one request");
	r->nreplies++;
	r->kind = k;
}

static void h_log(fring_mount *m, int32_t level, const char *msg)
{
	if (strstr(msg, "serving"))
		snprintf(fake_serving, sizeof(fake_serving), "%s", msg);
	if (level <= FRING_LOG_WARN)
		fprintf(stderr, "log %d: %s\n", level, msg);
}

static int32_t h_log_enabled(fring_mount *m, int32_t level)
{
	return 1;
}

static int32_t h_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -EINVAL;
	if (!strcmp(end, "KiB") || !strcmp(end, "K"))
		v <<= 10;
	else if (!strcmp(end, "MiB") || !strcmp(end, "M"))
		v <<= 20;
	else if (!strcmp(end, "GiB") || !strcmp(end, "G"))
		v <<= 30;
	else if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int32_t h_parse_bool(const char *s, int32_t *out)
{
	if (!strcmp(s, "true") || !strcmp(s, "1"))
		*out = 1;
	else if (!strcmp(s, "false") || !strcmp(s, "0"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static int32_t h_req_ctx(fring_req *r, struct fring_req_ctx *c)
{
	c->uid = r->uid;
	c->gid = r->gid;
	c->pid = 0;
	return 0;
}

static int32_t h_err(fring_req *r, int32_t e)
{
	cr_assert_leq(e, 0);
	record(r, K_ERR);
	r->err = e;
	return 0;
}

static int32_t h_entry(fring_req *r, const struct fring_entry *e)
{
	record(r, K_ENTRY);
	r->e = *e;
	return r->fail_reply ? -ENOENT : 0;
}

static int32_t h_create(fring_req *r, const struct fring_entry *e,
			const struct fring_open_out *o)
{
	record(r, K_CREATE);
	r->e = *e;
	r->o = *o;
	return r->fail_reply ? -ENOENT : 0;
}

static int32_t h_attr(fring_req *r, const struct fring_attr *a, uint64_t t)
{
	record(r, K_ATTR);
	r->attr = *a;
	return 0;
}

static int32_t h_data(fring_req *r, const void *d, uint32_t len)
{
	record(r, K_DATA);
	free(r->data);
	r->data = malloc(len + 1);
	cr_assert(r->data);
	if (len)
		memcpy(r->data, d, len);
	r->data[len] = 0;
	r->len = len;
	return 0;
}

static int32_t h_readlink(fring_req *r, const char *t, uint32_t len)
{
	h_data(r, t, len);
	r->kind = K_LINK;
	return 0;
}

static int32_t h_open(fring_req *r, const struct fring_open_out *o)
{
	record(r, K_OPEN);
	r->o = *o;
	return 0;
}

static int32_t h_write(fring_req *r, uint32_t n)
{
	record(r, K_WRITE);
	r->len = n;
	return 0;
}

static int32_t h_statfs(fring_req *r, const struct fring_statfs *s)
{
	record(r, K_STATFS);
	r->st = *s;
	return 0;
}

static int32_t h_xsize(fring_req *r, uint32_t n)
{
	record(r, K_XSIZE);
	r->len = n;
	return 0;
}

static int32_t h_lseek(fring_req *r, uint64_t off)
{
	record(r, K_LSEEK);
	r->off = off;
	return 0;
}

/* Like the kernel's buffer: fuse_dirent is 24 bytes + name, 8-aligned;
 * fuse_direntplus adds a 128-byte fuse_entry_out. */
static int32_t dir_put(fring_req *r, const char *name, uint32_t len,
		       uint64_t ino, uint32_t type, uint64_t off,
		       const struct fring_entry *e)
{
	uint32_t sz = ((24 + len + 7) & ~7u) + (e ? 128 : 0);
	struct dent *d;

	cr_assert_eq(r->nreplies, 0);
	cr_assert_neq(off, 0);
	if ((r->dir_budget && r->dir_used + sz > r->dir_budget) ||
	    (r->dir_cap && r->ndir == r->dir_cap))
		return 0;
	r->dir_used += sz;
	r->dir = realloc(r->dir, (r->ndir + 1) * sizeof(*r->dir));
	cr_assert(r->dir);
	d = &r->dir[r->ndir++];
	snprintf(d->name, sizeof(d->name), "%.*s", (int)len, name);
	d->ino = ino;
	d->node = e ? e->ino : 0;
	d->off = off;
	d->type = type;
	d->plus = e != NULL;
	return 1;
}

static int32_t h_dir_add(fring_req *r, const char *name, uint32_t len,
			 uint64_t ino, uint32_t type, uint64_t off)
{
	return dir_put(r, name, len, ino, type, off, NULL);
}

static int32_t h_dir_add_plus(fring_req *r, const char *name, uint32_t len,
			      const struct fring_entry *e, uint64_t off)
{
	return dir_put(r, name, len, e->attr.ino, e->attr.mode & S_IFMT, off, e);
}

static int32_t h_reply_dir(fring_req *r)
{
	record(r, K_DIR);
	return 0;
}

/* Kernel passthrough's backing files. */
static int32_t h_backing_open(fring_mount *m, int32_t fd, uint32_t flags)
{
	fake_backing_opens++;
	/* The open's own descriptor: the kernel reopens per caller. */
	cr_assert_geq(fcntl(fd, F_GETFD), 0);
	cr_assert_eq(flags, 0);
	return fake_backing_result;
}

static int32_t h_backing_close(fring_mount *m, int32_t id)
{
	fake_backing_closes++;
	fake_backing_closed = id;
	return 0;
}

const struct fring_host_api fake_host = {
	.size = sizeof(struct fring_host_api),
	.abi_major = FRING_ABI_MAJOR,
	.abi_minor = FRING_ABI_MINOR,
	.host_version = "test",
	.log = h_log,
	.log_enabled = h_log_enabled,
	.parse_size = h_parse_size,
	.parse_bool = h_parse_bool,
	.req_ctx = h_req_ctx,
	.reply_err = h_err,
	.reply_entry = h_entry,
	.reply_create = h_create,
	.reply_attr = h_attr,
	.reply_readlink = h_readlink,
	.reply_open = h_open,
	.reply_write = h_write,
	.reply_data = h_data,
	.reply_statfs = h_statfs,
	.reply_xattr_size = h_xsize,
	.reply_lseek = h_lseek,
	.dir_add = h_dir_add,
	.dir_add_plus = h_dir_add_plus,
	.reply_dir = h_reply_dir,
	.backing_open = h_backing_open,
	.backing_close = h_backing_close,
};
