// SPDX-License-Identifier: MIT
/*
 * Request layer in process: synthetic /dev/fuse requests go through decode,
 * dispatch and a tiny in-test plugin; a fake transport captures the reply
 * bytes, which are checked field by field. Also FUSE_INIT negotiation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "runtime/dispatch.h"
#include "runtime/host.h"
#include "runtime/init.h"
#include "runtime/session.h"

#include "faketransport.h"

static const struct fring_host_api *H;
static struct fring_dispatch dx;

/* ---- the fake transport (faketransport.h): one reply captured ---- */

static struct fake_transport ft;

/* The mount's counters, summed over their shards. */
static struct fring_stats *stat_sum(void)
{
	static struct fring_stats sum;

	fring_dispatch_stats(&dx, &sum);
	return &sum;
}

static struct fring_request *new_req(size_t buflen, uint8_t **buf)
{
	return &ft_req_new(&ft, buflen, buf)->r;
}

/* The dispatching thread is done with r (the block lives to teardown). */
static void dispatch_and_put(struct fring_request *r, const uint8_t *buf,
			     size_t len)
{
	fring_dispatch_buf(&dx, r, buf, len);
	ft_req_put(ft_req_of(r));
}

static const struct fuse_out_header *oh(void)
{
	return (const void *)ft.reply;
}

static const void *body(void)
{
	return ft.reply + sizeof(struct fuse_out_header);
}

/* ---- the in-test plugin ---- */

static fring_req *held;         /* a request the plugin answers later */
static int32_t second_ret, first_ret;
static struct fring_forget_one forgot[4];
static uint32_t nforgot;

static struct fring_attr attr_of(uint64_t ino, uint32_t mode)
{
	return (struct fring_attr){ .ino = ino, .mode = mode, .nlink = 1,
				    .size = 42, .uid = 7, .gid = 8 };
}

static void t_lookup(void *inst, fring_req *r, const struct fring_name_args *a)
{
	struct fring_entry e = { .ino = 5, .generation = 9,
				 .entry_timeout_ns = 1500000000ull,
				 .attr_timeout_ns = 2000000000ull,
				 .attr = attr_of(5, S_IFREG | 0644) };

	if (!strcmp(a->name, "twice")) {
		first_ret = H->reply_entry(r, &e);
		second_ret = H->reply_entry(r, &e);
	} else if (!strcmp(a->name, "wrongkind")) {
		first_ret = H->reply_attr(r, &e.attr, 0);
	} else if (!strcmp(a->name, "positive")) {
		first_ret = H->reply_err(r, 5);
	} else if (!strcmp(a->name, "huge")) {
		first_ret = H->reply_err(r, -600);
	} else if (!strcmp(a->name, "zero")) {
		first_ret = H->reply_err(r, 0);
	} else if (!strcmp(a->name, "later")) {
		held = r;
	} else if (!strcmp(a->name, "missing")) {
		first_ret = H->reply_err(r, -ENOENT);
	} else if (!strcmp(a->name, "root") || !strcmp(a->name, "..")) {
		e.ino = 1; /* the root: an entry only for "." and ".." */
		e.attr = attr_of(1, S_IFDIR | 0755);
		first_ret = H->reply_entry(r, &e);
	} else {
		first_ret = H->reply_entry(r, &e);
	}
}

static void t_forget(void *inst, const struct fring_forget_one *it, uint32_t n)
{
	for (uint32_t i = 0; i < n && nforgot < 4; i++)
		forgot[nforgot++] = it[i];
}

static void t_getattr(void *inst, fring_req *r, const struct fring_getattr_args *a)
{
	struct fring_attr at = attr_of(a->nodeid, S_IFDIR | 0755);

	first_ret = H->reply_attr(r, &at, 3000000001ull);
}

static uint32_t t_open_extra; /* more open_flags t_opendir replies */

static void t_opendir(void *inst, fring_req *r, const struct fring_open_args *a)
{
	struct fring_open_out o = { .fh = 77, .open_flags = FRING_FOPEN_CACHE_DIR |
				    t_open_extra };

	first_ret = H->reply_open(r, &o);
}

static void t_readdir(void *inst, fring_req *r, const struct fring_read_args *a)
{
	cr_assert_eq(H->dir_add(r, ".", 1, 1, S_IFDIR, 1), 1);
	cr_assert_eq(H->dir_add(r, "file", 4, 5, S_IFREG, 2), 1);
	/* 40 bytes requested: the third entry does not fit */
	second_ret = H->dir_add(r, "nofit", 5, 6, S_IFREG, 3);
	first_ret = H->reply_dir(r);
}

static void t_readdirplus(void *inst, fring_req *r, const struct fring_read_args *a)
{
	struct fring_entry e = { .ino = 5, .attr = attr_of(5, S_IFREG | 0600) };

	if (a->nodeid == 2) { /* ".." may be the root, "x" may not */
		e.ino = 1;
		cr_assert_eq(H->dir_add_plus(r, "..", 2, &e, 1), 1);
		second_ret = H->dir_add_plus(r, "x", 1, &e, 2);
	} else {
		cr_assert_eq(H->dir_add_plus(r, "f", 1, &e, 1), 1);
	}
	first_ret = H->reply_dir(r);
}

static void t_getxattr(void *inst, fring_req *r, const struct fring_xattr_args *a)
{
	if (a->max == 0)
		first_ret = H->reply_xattr_size(r, 5);
	else if (!strcmp(a->name, "user.big"))
		first_ret = H->reply_data(r, "hello", 5); /* > max (3) */
	else
		first_ret = H->reply_err(r, -ERANGE);
}

static int backing_fd = -1; /* nodeid 9 is served from this fd */

static void t_read(void *inst, fring_req *r, const struct fring_read_args *a)
{
	if (a->nodeid == 9) {
		first_ret = H->req_read_fd(r, backing_fd, a->offset, a->len, 0);
		return;
	}
	first_ret = H->reply_data(r, "abcdefgh", a->len < 8 ? a->len : 8);
}

static void t_write(void *inst, fring_req *r, const struct fring_write_args *a)
{
	if (a->nodeid == 9) {
		/* Not accepted for a bad fd: still ours to answer. */
		second_ret = H->req_write_fd(r, -1, a->offset, 0);
		first_ret = H->req_write_fd(r, backing_fd, a->offset, 0);
		return;
	}
	first_ret = H->reply_write(r, a->offset == 1 ? a->len + 1 : a->len);
}

static void t_copy(void *inst, fring_req *r, const struct fring_copy_range_args *a)
{
	first_ret = H->reply_write(r, (uint32_t)a->len);
}

static const struct fring_fs_ops t_ops = {
	.size = sizeof(struct fring_fs_ops),
	.lookup = t_lookup, .forget = t_forget, .getattr = t_getattr,
	.opendir = t_opendir, .readdir = t_readdir,
	.readdirplus = t_readdirplus, .getxattr = t_getxattr,
	.read = t_read, .write = t_write, .copy_file_range = t_copy,
};

static uint64_t t_want_extra;   /* more caps t_init asks for */
static int t_no_writeback;      /* t_init leaves the writeback cache off */

static int32_t t_init(void *inst, struct fring_conn *c)
{
	c->max_write = 128 * 1024;
	if (!t_no_writeback)
		c->want |= FRING_CAP_WRITEBACK_CACHE;
	c->want |= t_want_extra;
	c->want &= ~FRING_CAP_ASYNC_READ;
	return 0;
}

static const struct fring_plugin t_desc = {
	.size = sizeof(struct fring_plugin), .magic = FRING_PLUGIN_MAGIC,
	.abi_major = FRING_ABI_MAJOR, .abi_minor = FRING_ABI_MINOR,
	.thread_model = FRING_THREAD_SERIALIZE, .name = "t", .init = t_init,
	.ops = &t_ops,
};

/* ---- harness ---- */

static void setup(void)
{
	H = fring_host_table();
	cr_assert_eq(fring_dispatch_init(&dx, &t_desc, &t_ops, "/mnt/t"), 0);
	dx.conn = (struct fring_proto_conn){ .minor = 45, .setxattr_ext = 1,
					     .max_write = 1 << 20 };
	held = NULL;
	first_ret = second_ret = 12345;
	ft_init(&ft, &dx.rq, 8192);
	nforgot = 0;
}

static void teardown(void)
{
	cr_expect_eq(fring_dispatch_outstanding(&dx), 0, "requests left unanswered");
	fring_dispatch_destroy(&dx);
	ft_fini(&ft);
}

TestSuite(dispatch, .init = setup, .fini = teardown);

/* Dispatch one request: header fields + arg bytes + optional name. */
static void run(uint32_t op, uint64_t unique, uint64_t nodeid, const void *arg,
		size_t arglen, const char *name, const char *name2)
{
	size_t n1 = name ? strlen(name) + 1 : 0, n2 = name2 ? strlen(name2) + 1 : 0;
	size_t len = sizeof(struct fuse_in_header) + arglen + n1 + n2;
	uint8_t *buf;
	struct fring_request *r = new_req(len, &buf);
	struct fuse_in_header in = { .len = (uint32_t)len, .opcode = op,
				     .unique = unique, .nodeid = nodeid,
				     .uid = 1000, .gid = 100, .pid = 42 };

	memcpy(buf, &in, sizeof(in));
	if (arglen)
		memcpy(buf + sizeof(in), arg, arglen);
	if (n1)
		memcpy(buf + sizeof(in) + arglen, name, n1);
	if (n2)
		memcpy(buf + sizeof(in) + arglen + n1, name2, n2);
	dispatch_and_put(r, buf, len);
}

static void expect_header(int32_t error, uint64_t unique, size_t bodylen)
{
	cr_assert_eq(ft.sends, 1, "sends: %d", ft.sends);
	cr_assert_eq(ft.reply_len, sizeof(struct fuse_out_header) + bodylen,
		     "reply len %zu", ft.reply_len);
	cr_expect_eq(oh()->len, ft.reply_len);
	cr_expect_eq(oh()->error, error, "error %d", oh()->error);
	cr_expect_eq(oh()->unique, unique);
}

Test(dispatch, lookup_entry_bytes)
{
	const struct fuse_entry_out *e;

	run(FUSE_LOOKUP, 10, 1, NULL, 0, "a", NULL);
	expect_header(0, 10, sizeof(struct fuse_entry_out));
	cr_expect_eq(first_ret, 0);
	e = body();
	cr_expect_eq(e->nodeid, 5);
	cr_expect_eq(e->generation, 9);
	cr_expect_eq(e->entry_valid, 1);
	cr_expect_eq(e->entry_valid_nsec, 500000000);
	cr_expect_eq(e->attr_valid, 2);
	cr_expect_eq(e->attr.ino, 5);
	cr_expect_eq(e->attr.mode, S_IFREG | 0644);
	cr_expect_eq(e->attr.size, 42);
	cr_expect_eq(ft.releases, 1);
}

Test(dispatch, getattr_attr_bytes)
{
	struct fuse_getattr_in gi = { 0 };
	const struct fuse_attr_out *a;

	run(FUSE_GETATTR, 12, 1, &gi, sizeof(gi), NULL, NULL);
	expect_header(0, 12, sizeof(struct fuse_attr_out));
	a = body();
	cr_expect_eq(a->attr_valid, 3);
	cr_expect_eq(a->attr_valid_nsec, 1);
	cr_expect_eq(a->attr.ino, 1);
	cr_expect_eq(a->attr.mode, S_IFDIR | 0755);
	cr_expect_eq(a->attr.uid, 7);
}

Test(dispatch, open_plugin_and_default)
{
	struct fuse_open_in oi = { .flags = 0 };
	const struct fuse_open_out *o;

	run(FUSE_OPENDIR, 14, 1, &oi, sizeof(oi), NULL, NULL);
	expect_header(0, 14, sizeof(struct fuse_open_out));
	o = body();
	cr_expect_eq(o->fh, 77);
	cr_expect_eq(o->open_flags, FRING_FOPEN_CACHE_DIR);

	/* No open op: the host answers fh 0. */
	ft.sends = 0;
	run(FUSE_OPEN, 16, 5, &oi, sizeof(oi), NULL, NULL);
	expect_header(0, 16, sizeof(struct fuse_open_out));
	o = body();
	cr_expect_eq(o->fh, 0);
}

/* FOPEN_IO_URING_ZERO_COPY passes only from an ABI 1.5 plugin on a mount
 * whose rings serve zero-copy; elsewhere the host drops it. */
Test(dispatch, zero_copy_open_flag_filtered)
{
	struct fuse_open_in oi = { .flags = 0 };
	struct fring_plugin older = t_desc;
	const struct fuse_open_out *o;

	t_open_extra = FRING_FOPEN_IO_URING_ZERO_COPY;
	run(FUSE_OPENDIR, 20, 1, &oi, sizeof(oi), NULL, NULL);
	o = body();
	cr_expect_eq(o->open_flags, FRING_FOPEN_CACHE_DIR, "kept on a copy mount");

	atomic_store(&dx.mount.zero_copy, 1);
	ft.sends = 0;
	run(FUSE_OPENDIR, 22, 1, &oi, sizeof(oi), NULL, NULL);
	o = body();
	cr_expect_eq(o->open_flags, FRING_FOPEN_CACHE_DIR |
		     FRING_FOPEN_IO_URING_ZERO_COPY);

	older.abi_minor = 4; /* bit 8 meant nothing before 1.5 */
	dx.desc = &older;
	ft.sends = 0;
	run(FUSE_OPENDIR, 24, 1, &oi, sizeof(oi), NULL, NULL);
	o = body();
	cr_expect_eq(o->open_flags, FRING_FOPEN_CACHE_DIR, "kept for a 1.4 plugin");
	dx.desc = &t_desc;
	t_open_extra = 0;
	atomic_store(&dx.mount.zero_copy, 0);
}

Test(dispatch, null_slot_defaults)
{
	struct fuse_release_in ri = { .fh = 1 };
	struct fuse_mkdir_in mi = { .mode = 0755 };

	run(FUSE_RELEASE, 20, 5, &ri, sizeof(ri), NULL, NULL);
	expect_header(0, 20, 0);
	ft.sends = 0;
	run(FUSE_MKDIR, 22, 1, &mi, sizeof(mi), "d", NULL);
	expect_header(-ENOSYS, 22, 0);
	ft.sends = 0;
	run(FUSE_READLINK, 24, 1, NULL, 0, NULL, NULL);
	expect_header(-ENOSYS, 24, 0);
}

Test(dispatch, unknown_opcode_enosys)
{
	uint64_t junk = 0;

	run(99, 30, 1, &junk, sizeof(junk), NULL, NULL);
	expect_header(-ENOSYS, 30, 0);
	cr_expect_eq(stat_sum()->requests[FUSE_OPCODE_MAX], 1);
	ft.sends = 0;
	run(FUSE_BMAP, 32, 1, &(struct fuse_bmap_in){ 0 },
	    sizeof(struct fuse_bmap_in), NULL, NULL);
	expect_header(-ENOSYS, 32, 0);
}

Test(dispatch, readdir_bytes)
{
	struct fuse_read_in ri = { .fh = 77, .size = 64 };
	const struct fuse_dirent *d;

	run(FUSE_READDIR, 40, 1, &ri, sizeof(ri), NULL, NULL);
	/* "." = 24+1 -> 32, "file" = 24+4 -> 32; "nofit" would need 32 more */
	expect_header(0, 40, 64);
	cr_expect_eq(second_ret, 0);
	d = body();
	cr_expect_eq(d->ino, 1);
	cr_expect_eq(d->off, 1);
	cr_expect_eq(d->namelen, 1);
	cr_expect_eq(d->type, S_IFDIR >> 12);
	cr_expect_eq(d->name[0], '.');
	d = (const void *)((const uint8_t *)body() + 32);
	cr_expect_eq(d->ino, 5);
	cr_expect_eq(d->off, 2);
	cr_expect_eq(d->type, S_IFREG >> 12);
	cr_expect(!memcmp(d->name, "file", 4));
}

Test(dispatch, readdirplus_bytes)
{
	struct fuse_read_in ri = { .size = 4096 };
	const struct fuse_direntplus *dp;

	run(FUSE_READDIRPLUS, 42, 1, &ri, sizeof(ri), NULL, NULL);
	expect_header(0, 42, FUSE_DIRENTPLUS_SIZE(1));
	dp = body();
	cr_expect_eq(dp->entry_out.nodeid, 5);
	cr_expect_eq(dp->entry_out.attr.mode, S_IFREG | 0600);
	cr_expect_eq(dp->dirent.ino, 5);
	cr_expect_eq(dp->dirent.namelen, 1);
	cr_expect_eq(dp->dirent.name[0], 'f');
}

/* Nodeid 1 is the root, which the kernel never looks up (entry_check.h). */
Test(dispatch, entry_naming_the_root_gets_eio)
{
	struct fuse_read_in ri = { .size = 4096 };

	run(FUSE_LOOKUP, 44, 1, NULL, 0, "root", NULL);
	expect_header(-EIO, 44, 0);
	cr_expect_eq(first_ret, -EINVAL);
	cr_expect_eq(stat_sum()->misuse, 1);

	ft.sends = 0;
	run(FUSE_LOOKUP, 45, 3, NULL, 0, "..", NULL); /* NFS export asks this */
	expect_header(0, 45, sizeof(struct fuse_entry_out));

	ft.sends = 0;
	run(FUSE_READDIRPLUS, 46, 2, &ri, sizeof(ri), NULL, NULL);
	expect_header(-EIO, 46, 0);
	cr_expect_eq(second_ret, -EINVAL);
	cr_expect_eq(first_ret, -EINVAL);
	cr_expect_eq(stat_sum()->misuse, 2);
}

Test(dispatch, xattr_probe_and_range)
{
	struct fuse_getxattr_in gi = { .size = 0 };
	const struct fuse_getxattr_out *go;

	run(FUSE_GETXATTR, 50, 5, &gi, sizeof(gi), "user.x", NULL);
	expect_header(0, 50, sizeof(struct fuse_getxattr_out));
	go = body();
	cr_expect_eq(go->size, 5);

	ft.sends = 0;
	gi.size = 3;
	run(FUSE_GETXATTR, 52, 5, &gi, sizeof(gi), "user.x", NULL);
	expect_header(-ERANGE, 52, 0);

	/* More than the caller's buffer: EIO to the kernel, -EINVAL back. */
	ft.sends = 0;
	run(FUSE_GETXATTR, 54, 5, &gi, sizeof(gi), "user.big", NULL);
	expect_header(-EIO, 54, 0);
	cr_expect_eq(first_ret, -EINVAL);
}

Test(dispatch, read_data_and_limit)
{
	struct fuse_read_in ri = { .fh = 1, .size = 4 };

	run(FUSE_READ, 60, 5, &ri, sizeof(ri), NULL, NULL);
	expect_header(0, 60, 4);
	cr_expect(!memcmp(body(), "abcd", 4));
}

Test(dispatch, write_counts)
{
	struct {
		struct fuse_write_in wi;
		char data[3];
	} w = { .wi = { .size = 3 }, .data = "xyz" };
	const struct fuse_write_out *wo;

	run(FUSE_WRITE, 70, 5, &w, sizeof(w), NULL, NULL);
	expect_header(0, 70, sizeof(struct fuse_write_out));
	wo = body();
	cr_expect_eq(wo->size, 3);

	/* count > len is a plugin bug */
	ft.sends = 0;
	w.wi.offset = 1;
	run(FUSE_WRITE, 72, 5, &w, sizeof(w), NULL, NULL);
	expect_header(-EIO, 72, 0);
	cr_expect_eq(first_ret, -EINVAL);
}

Test(dispatch, data_path_fd_services)
{
	char path[] = "/tmp/fring-test-dispatch-XXXXXX", back[8] = { 0 };
	struct {
		struct fuse_write_in wi;
		char data[5];
	} w = { .wi = { .size = 5, .offset = 2 }, .data = "hello" };
	struct fuse_read_in ri = { .size = 16 };

	backing_fd = mkstemp(path);
	cr_assert_geq(backing_fd, 0);
	unlink(path);

	run(FUSE_WRITE, 74, 9, &w, sizeof(w), NULL, NULL);
	expect_header(0, 74, sizeof(struct fuse_write_out));
	cr_expect_eq(((const struct fuse_write_out *)body())->size, 5);
	cr_expect_eq(first_ret, 0);
	cr_expect_eq(second_ret, -EBADF);
	cr_expect_eq(pread(backing_fd, back, 7, 0), 7);
	cr_expect(!memcmp(back, "\0\0hello", 7));

	/* Short at EOF: 7 bytes of the 16 asked. */
	ft.sends = 0;
	run(FUSE_READ, 76, 9, &ri, sizeof(ri), NULL, NULL);
	expect_header(0, 76, 7);
	cr_expect(!memcmp(body(), "\0\0hello", 7));
	close(backing_fd);
	backing_fd = -1;
}

Test(dispatch, copy_file_range_sizes)
{
	struct fuse_copy_file_range_in ci = { .len = 4096 };

	run(FUSE_COPY_FILE_RANGE, 80, 5, &ci, sizeof(ci), NULL, NULL);
	expect_header(0, 80, sizeof(struct fuse_write_out));
	cr_expect_eq(((const struct fuse_write_out *)body())->size, 4096);
	ft.sends = 0;
	run(FUSE_COPY_FILE_RANGE_64, 82, 5, &ci, sizeof(ci), NULL, NULL);
	expect_header(0, 82, sizeof(struct fuse_copy_file_range_out));
	cr_expect_eq(((const struct fuse_copy_file_range_out *)body())->bytes_copied,
		     4096);
}

Test(dispatch, exactly_once)
{
	run(FUSE_LOOKUP, 90, 1, NULL, 0, "twice", NULL);
	expect_header(0, 90, sizeof(struct fuse_entry_out));
	cr_expect_eq(first_ret, 0);
	cr_expect_eq(second_ret, -EALREADY);
	cr_expect_eq(ft.releases, 1);
}

Test(dispatch, wrong_kind_eio)
{
	run(FUSE_LOOKUP, 92, 1, NULL, 0, "wrongkind", NULL);
	expect_header(-EIO, 92, 0);
	cr_expect_eq(first_ret, -EINVAL);
	cr_expect_eq(stat_sum()->misuse, 1);

	ft.sends = 0;
	run(FUSE_LOOKUP, 94, 1, NULL, 0, "zero", NULL);
	expect_header(-EIO, 94, 0);
	cr_expect_eq(first_ret, -EINVAL);
}

Test(dispatch, errno_sanitized)
{
	run(FUSE_LOOKUP, 96, 1, NULL, 0, "positive", NULL);
	expect_header(-EIO, 96, 0);
	cr_expect_eq(first_ret, -EINVAL);
	ft.sends = 0;
	run(FUSE_LOOKUP, 98, 1, NULL, 0, "huge", NULL);
	expect_header(-EIO, 98, 0);
	ft.sends = 0;
	run(FUSE_LOOKUP, 100, 1, NULL, 0, "missing", NULL);
	expect_header(-ENOENT, 100, 0);
	cr_expect_eq(first_ret, 0);
}

Test(dispatch, malformed_eio)
{
	uint32_t shortarg = 0;

	/* LOOKUP name without its NUL */
	uint8_t *buf;
	struct fring_request *r = new_req(64, &buf);
	struct fuse_in_header in = { .len = 43, .opcode = FUSE_LOOKUP,
				     .unique = 110, .nodeid = 1 };

	memcpy(buf, &in, sizeof(in));
	memcpy(buf + sizeof(in), "abc", 3);
	dispatch_and_put(r, buf, 43);
	expect_header(-EIO, 110, 0);

	/* GETATTR with a 4-byte arg */
	ft.sends = 0;
	run(FUSE_GETATTR, 112, 1, &shortarg, sizeof(shortarg), NULL, NULL);
	expect_header(-EIO, 112, 0);
	cr_expect_eq(stat_sum()->malformed, 2);
}

Test(dispatch, forget_no_reply)
{
	struct fuse_forget_in fi = { .nlookup = 3 };
	struct {
		struct fuse_batch_forget_in h;
		struct fuse_forget_one it[2];
	} bf = { .h = { .count = 2 }, .it = { { 5, 1 }, { 6, 2 } } };

	run(FUSE_FORGET, 120, 5, &fi, sizeof(fi), NULL, NULL);
	run(FUSE_BATCH_FORGET, 122, 0, &bf, sizeof(bf), NULL, NULL);
	cr_expect_eq(ft.sends, 0);
	cr_expect_eq(ft.releases, 2);
	cr_assert_eq(nforgot, 3);
	cr_expect_eq(forgot[0].nodeid, 5);
	cr_expect_eq(forgot[0].nlookup, 3);
	cr_expect_eq(forgot[2].nodeid, 6);
	cr_expect_eq(forgot[2].nlookup, 2);
}

Test(dispatch, interrupt_and_late_reply)
{
	struct fuse_interrupt_in ii = { .unique = 130 };
	struct fring_entry e = { .ino = 0 };

	run(FUSE_LOOKUP, 130, 1, NULL, 0, "later", NULL);
	cr_assert(held);
	cr_expect_eq(ft.sends, 0);
	cr_expect_eq(fring_dispatch_outstanding(&dx), 1);
	cr_expect_eq(H->req_interrupted(held), 0);
	run(FUSE_INTERRUPT, 131, 0, &ii, sizeof(ii), NULL, NULL);
	cr_expect_eq(ft.sends, 0, "no reply to INTERRUPT");
	cr_expect_eq(H->req_interrupted(held), 1);
	/* Negative entry, answered late from "another thread". */
	cr_expect_eq(H->reply_entry(held, &e), 0);
	expect_header(0, 130, sizeof(struct fuse_entry_out));
	cr_expect_eq(((const struct fuse_entry_out *)body())->nodeid, 0);
}

Test(dispatch, interrupt_before_target)
{
	struct fuse_interrupt_in ii = { .unique = 140 };

	/* The INTERRUPT overtakes its target (another worker's read). */
	run(FUSE_INTERRUPT, 141, 0, &ii, sizeof(ii), NULL, NULL);
	run(FUSE_LOOKUP, 140, 1, NULL, 0, "later", NULL);
	cr_assert(held);
	cr_expect_eq(H->req_interrupted(held), 1);
	cr_expect_eq(H->reply_err(held, -EINTR), 0);
	expect_header(-EINTR, 140, 0);
}

Test(dispatch, init_again_and_destroy)
{
	struct fuse_init_in ii = { .major = 7, .minor = 45 };

	run(FUSE_INIT, 150, 0, &ii, sizeof(ii), NULL, NULL);
	expect_header(-EIO, 150, 0);
	ft.sends = 0;
	run(FUSE_DESTROY, 152, 0, NULL, 0, NULL, NULL);
	expect_header(0, 152, 0);
}

Test(dispatch, req_ctx)
{
	struct fring_req_ctx c = { .size = sizeof(c) };

	run(FUSE_LOOKUP, 160, 1, NULL, 0, "later", NULL);
	cr_assert_eq(H->req_ctx(held, &c), 0);
	cr_expect_eq(c.unique, 160);
	cr_expect_eq(c.opcode, FUSE_LOOKUP);
	cr_expect_eq(c.uid, 1000);
	cr_expect_eq(c.gid, 100);
	cr_expect_eq(c.pid, 42);
	cr_expect_eq(H->req_mount(held), &dx.mount);
	H->reply_err(held, -ENOENT);
}

/* ---- FUSE_INIT negotiation ---- */

Test(dispatch, init_negotiation)
{
	struct fuse_init_in ii = {
		.major = 7, .minor = 45, .max_readahead = 131072,
		.flags = 0x73fffffb, .flags2 = 0x7fd, /* this 6.18 kernel */
	};
	struct fring_init_params p = { .transport = FRING_TRANSPORT_DEVFUSE,
				       .nr_queues = 4 };
	struct fuse_init_out out;
	struct fring_init_result res;
	uint64_t want;
	size_t outlen;
	char *err = NULL;

	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), &p, &out, &outlen,
				      &res, &err), 0);
	cr_expect_eq(outlen, sizeof(out));
	cr_expect_eq(out.major, 7);
	cr_expect_eq(out.minor, 45);
	want = out.flags | (uint64_t)out.flags2 << 32;
	cr_expect(want & FUSE_INIT_EXT);
	cr_expect(want & FUSE_BIG_WRITES);
	cr_expect(want & FUSE_MAX_PAGES);
	cr_expect(want & FUSE_DO_READDIRPLUS);      /* plugin has readdirplus */
	cr_expect(want & FUSE_WRITEBACK_CACHE);     /* added by the plugin */
	cr_expect(!(want & FUSE_ASYNC_READ));       /* removed by the plugin */
	cr_expect(!(want & FUSE_POSIX_LOCKS));      /* no getlk/setlk */
	cr_expect(!(want & FUSE_FLOCK_LOCKS));
	cr_expect(!(want & FUSE_OVER_IO_URING));
	cr_expect(!(want & FUSE_EXPORT_SUPPORT));
	cr_expect_eq(out.max_write, 128 * 1024);
	cr_expect_eq(out.max_pages, 32);
	cr_expect_eq(out.max_readahead, 131072);
	cr_expect_eq(out.max_background, 64);
	cr_expect_eq(out.congestion_threshold, 48);
	cr_expect_eq(out.time_gran, 1);
	cr_expect_eq(res.bufsize, 128 * 1024 + 4096);
	cr_expect_eq(dx.conn.minor, 45);
	cr_expect_eq(dx.conn.setxattr_ext, 1);
	cr_expect_eq(dx.conn.max_write, 128 * 1024);
}

/* Kernel passthrough (ABI 1.3): granted with max_stack_depth 1, refused
 * next to the writeback cache; backing_open only works when granted. */
Test(dispatch, init_passthrough)
{
	struct fuse_init_in ii = {
		.major = 7, .minor = 45, .max_readahead = 131072,
		.flags = 0x73fffffb, .flags2 = 0x7fd, /* offers PASSTHROUGH */
	};
	struct fuse_init_out out;
	struct fring_init_result res;
	size_t outlen;
	char *err = NULL;

	cr_expect_eq(H->backing_open(&dx.mount, 3, 0), -EOPNOTSUPP);
	t_want_extra = FRING_CAP_PASSTHROUGH;
	t_no_writeback = 1;
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out,
				      &outlen, &res, &err), 0);
	cr_expect(out.flags2 & (FUSE_PASSTHROUGH >> 32));
	cr_expect(!(out.flags & FUSE_WRITEBACK_CACHE));
	cr_expect_eq(out.max_stack_depth, 1);
	cr_expect_eq(H->backing_open(&dx.mount, 3, 1), -EINVAL);  /* flags */
	cr_expect_eq(H->backing_open(&dx.mount, -1, 0), -EBADF);
	cr_expect_eq(H->backing_close(&dx.mount, 0), -EINVAL);

	/* With the writeback cache the kernel would ignore it: dropped. */
	t_no_writeback = 0;
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out,
				      &outlen, &res, &err), 0);
	cr_expect(out.flags & FUSE_WRITEBACK_CACHE);
	cr_expect(!(out.flags2 & (FUSE_PASSTHROUGH >> 32)));
	cr_expect_eq(out.max_stack_depth, 0);
	cr_expect_eq(H->backing_open(&dx.mount, 3, 0), -EOPNOTSUPP);
	cr_expect_eq(H->backing_close(&dx.mount, 1), -EOPNOTSUPP);

	/* A kernel that does not offer it never gets it. */
	t_no_writeback = 1;
	ii.flags2 &= ~(uint32_t)(FUSE_PASSTHROUGH >> 32);
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out,
				      &outlen, &res, &err), 0);
	cr_expect(!(out.flags2 & (FUSE_PASSTHROUGH >> 32)));
	cr_expect_eq(out.max_stack_depth, 0);
	t_want_extra = 0;
	t_no_writeback = 0;
}

/* ABI 1.6: FUSE_ATOMIC_O_TRUNC only for a plugin that says its open
 * truncates (the feature bit, or the cap from init); otherwise the kernel
 * must truncate with a SETATTR. */
Test(dispatch, init_atomic_o_trunc)
{
	struct fuse_init_in ii = {
		.major = 7, .minor = 45, .max_readahead = 131072,
		.flags = 0x73fffffb, .flags2 = 0x7fd,
	};
	struct fuse_init_out out;
	struct fring_init_result res;
	struct fring_plugin declares = t_desc;
	const struct fring_plugin *saved = dx.desc;
	size_t outlen;
	char *err = NULL;

	cr_assert(ii.flags & FUSE_ATOMIC_O_TRUNC); /* the kernel offers it */
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out,
				      &outlen, &res, &err), 0);
	cr_expect(!(out.flags & FUSE_ATOMIC_O_TRUNC));

	t_want_extra = FRING_CAP_ATOMIC_O_TRUNC; /* asked for in init */
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out,
				      &outlen, &res, &err), 0);
	cr_expect(out.flags & FUSE_ATOMIC_O_TRUNC);
	t_want_extra = 0;

	declares.features = FRING_FEATURE_ATOMIC_O_TRUNC;
	dx.desc = &declares;
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out,
				      &outlen, &res, &err), 0);
	cr_expect(out.flags & FUSE_ATOMIC_O_TRUNC);
	/* ...and never where the kernel does not offer it. */
	ii.flags &= ~(uint32_t)FUSE_ATOMIC_O_TRUNC;
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out,
				      &outlen, &res, &err), 0);
	cr_expect(!(out.flags & FUSE_ATOMIC_O_TRUNC));
	dx.desc = saved;
}

Test(dispatch, init_versions)
{
	struct fuse_init_in ii = { .major = 7, .minor = 31, .max_readahead = 4096,
				   .flags = 0x3fffffff };
	struct fuse_init_out out;
	struct fring_init_result res;
	size_t outlen;
	char *err = NULL;

	/* Older minor: theirs; no INIT_EXT so no flags2. */
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out, &outlen,
				      &res, &err), 0);
	cr_expect_eq(out.minor, 31);
	cr_expect_eq(out.flags2, 0);
	/* Newer major: answer major 7 and wait for another INIT. */
	ii.major = 8;
	cr_expect_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out, &outlen,
				      &res, &err), 1);
	cr_expect_eq(out.major, 7);
	/* Older major: EPROTO. */
	ii.major = 6;
	cr_expect_eq(fring_init_build(&dx, &ii, sizeof(ii), NULL, &out, &outlen,
				      &res, &err), -EPROTO);
	cr_expect(err != NULL);
	free(err);
}

/* ---- session: plugin create/config/config_complete, nothing mounted ---- */

static int s_destroyed, s_incomplete;

static int32_t s_create(fring_mount *m, void **inst)
{
	*inst = m;
	return 0;
}

static int32_t s_config(void *inst, const char *key, const char *value)
{
	if (!strcmp(key, "incomplete"))
		s_incomplete = 1;
	return strcmp(key, "bad") ? 0 : -EINVAL;
}

static int32_t s_config_complete(void *inst)
{
	return s_incomplete ? -EINVAL : 0;
}

static void s_destroy(void *inst)
{
	s_destroyed++;
}

static int new_session(const struct fring_cfg_option *o, size_t n,
		       const char *file, char **err)
{
	static struct fring_loaded_plugin lp;
	struct fring_session_params p = { .mountpoint = "/mnt/x", .plugin = &lp,
					  .options = o, .nr_options = n,
					  .config_file = file };
	struct fring_session *s = NULL;
	int ret;

	lp.path = "/x/s.so";
	lp.desc = t_desc;
	lp.desc.name = "s";
	lp.desc.create = s_create;
	lp.desc.config = s_config;
	lp.desc.config_complete = s_config_complete;
	lp.desc.destroy = s_destroy;
	lp.ops = t_ops;
	s_destroyed = s_incomplete = 0;
	*err = NULL;
	ret = fring_session_new(&p, &s, err);
	if (ret == 0) {
		cr_expect_str_eq(fring_session_transport(s), "devfuse");
		cr_expect_str_eq(fring_session_mountpoint(s), "/mnt/x");
		cr_expect_geq(fring_session_done_fd(s), 0);
		fring_session_free(s);
	}
	return ret;
}

Test(session, config_errors)
{
	struct fring_cfg_option o[2] = {
		{ .key = "good", .value = "1", .line = 3, .column = 5 },
		{ .key = "bad", .value = "2", .line = 4, .column = 7 },
	};
	char *err;

	cr_expect_eq(new_session(o, 1, "m.yaml", &err), 0);
	cr_expect_eq(s_destroyed, 1, "destroy runs at free");

	cr_expect_eq(new_session(o, 2, "m.yaml", &err), -EINVAL);
	cr_assert(err);
	cr_expect_str_eq(err, "m.yaml:4:7: plugin 's' rejected option 'bad'");
	cr_expect_eq(s_destroyed, 1);
	free(err);

	cr_expect_eq(new_session(o + 1, 1, NULL, &err), -EINVAL);
	cr_expect_str_eq(err, "plugin 's' rejected option 'bad'");
	free(err);

	/* Every bad option is offered and named, the first with its place. */
	{
		struct fring_cfg_option two[3] = {
			{ .key = "bad", .value = "1", .line = 2, .column = 3 },
			{ .key = "good", .value = "2", .line = 3, .column = 3 },
			{ .key = "bad", .value = "3", .line = 5, .column = 9 },
		};

		cr_expect_eq(new_session(two, 3, "m.yaml", &err), -EINVAL);
		cr_expect_str_eq(err, "m.yaml:2:3: plugin 's' rejected option "
				      "'bad'; also 'bad' (line 5)");
		free(err);
	}

	o[0].key = "incomplete";
	cr_expect_eq(new_session(o, 1, NULL, &err), -EINVAL);
	cr_expect_str_eq(err, "plugin 's': configuration incomplete or invalid "
			      "(see messages above)");
	cr_expect_eq(s_destroyed, 1);
	free(err);
}

/* ---- locks: routed only to plugins that implement them ---- */

static struct fring_lock_args last_lock;
static int lock_calls[3]; /* getlk, setlk, flock */

static void t_getlk(void *inst, fring_req *r, const struct fring_lock_args *a)
{
	struct fring_lock l = { .start = 10, .end = 19, .type = 1 /* F_WRLCK */,
				.pid = 4321 };

	last_lock = *a;
	lock_calls[0]++;
	first_ret = H->reply_lock(r, &l);
}

static void t_setlk(void *inst, fring_req *r, const struct fring_lock_args *a)
{
	last_lock = *a;
	lock_calls[1]++;
	first_ret = H->reply_err(r, 0);
}

static void t_flock(void *inst, fring_req *r, const struct fring_lock_args *a)
{
	last_lock = *a;
	lock_calls[2]++;
	first_ret = H->reply_err(r, -EWOULDBLOCK);
}

static struct fring_fs_ops lk_ops;

static void with_lock_ops(void)
{
	lk_ops = t_ops;
	lk_ops.getlk = t_getlk;
	lk_ops.setlk = t_setlk;
	lk_ops.flock = t_flock;
	dx.ops = &lk_ops;
	memset(lock_calls, 0, sizeof(lock_calls));
}

Test(dispatch, posix_locks_reach_getlk_and_setlk)
{
	struct fuse_lk_in lk = { .fh = 3, .owner = 0xabc,
				 .lk = { .start = 0, .end = 99, .type = 0, .pid = 7 } };
	const struct fuse_lk_out *lo;

	with_lock_ops();
	run(FUSE_GETLK, 300, 5, &lk, sizeof(lk), NULL, NULL);
	expect_header(0, 300, sizeof(struct fuse_lk_out));
	lo = body();
	cr_expect_eq(lo->lk.start, 10);
	cr_expect_eq(lo->lk.end, 19);
	cr_expect_eq(lo->lk.pid, 4321);
	cr_expect_eq(last_lock.owner, 0xabc);
	cr_expect_eq(last_lock.fh, 3);

	ft.sends = 0;
	run(FUSE_SETLKW, 302, 5, &lk, sizeof(lk), NULL, NULL);
	expect_header(0, 302, 0);
	cr_expect_eq(last_lock.sleep, 1);
	cr_expect_eq(last_lock.lock.end, 99);
	cr_expect_eq(lock_calls[1], 1);
	cr_expect_eq(lock_calls[2], 0);
}

Test(dispatch, flock_requests_reach_flock)
{
	struct fuse_lk_in lk = { .fh = 4, .owner = 1, .lk_flags = FUSE_LK_FLOCK,
				 .lk = { .type = 1 } };

	with_lock_ops();
	run(FUSE_SETLK, 310, 5, &lk, sizeof(lk), NULL, NULL);
	expect_header(-EWOULDBLOCK, 310, 0);
	cr_expect_eq(lock_calls[2], 1);
	cr_expect_eq(lock_calls[1], 0);
	cr_expect_eq(last_lock.sleep, 0);
}

Test(dispatch, locks_without_ops_are_enosys)
{
	struct fuse_lk_in lk = { .fh = 4 };

	run(FUSE_GETLK, 320, 5, &lk, sizeof(lk), NULL, NULL);
	expect_header(-ENOSYS, 320, 0);
}

Test(dispatch, init_offers_locks_only_with_lock_ops)
{
	struct fuse_init_in ii = { .major = 7, .minor = 45,
				   .max_readahead = 131072,
				   .flags = 0x73fffffb, .flags2 = 0x7fd };
	struct fring_init_params p = { .transport = FRING_TRANSPORT_DEVFUSE,
				       .nr_queues = 4 };
	struct fuse_init_out out;
	struct fring_init_result res;
	size_t outlen;
	char *err = NULL;
	uint64_t want;

	with_lock_ops();
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), &p, &out, &outlen,
				      &res, &err), 0);
	want = out.flags | (uint64_t)out.flags2 << 32;
	cr_expect(want & FUSE_POSIX_LOCKS);
	cr_expect(want & FUSE_FLOCK_LOCKS);
}

Test(dispatch, init_sets_request_timeout_where_offered)
{
	struct fuse_init_in ii = { .major = 7, .minor = 45,
				   .max_readahead = 131072,
				   .flags = 0x73fffffb, .flags2 = 0x7fd };
	struct fring_init_params p = { .transport = FRING_TRANSPORT_DEVFUSE,
				       .nr_queues = 4, .request_timeout = 300 };
	struct fuse_init_out out;
	struct fring_init_result res;
	size_t outlen;
	char *err = NULL;

	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), &p, &out, &outlen,
				      &res, &err), 0);
	cr_expect(out.flags2 & (FUSE_REQUEST_TIMEOUT >> 32));
	cr_expect_eq(out.request_timeout, 300);

	/* A kernel that does not offer it gets neither the flag nor a value. */
	ii.flags2 &= ~(uint32_t)(FUSE_REQUEST_TIMEOUT >> 32);
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), &p, &out, &outlen,
				      &res, &err), 0);
	cr_expect(!(out.flags2 & (FUSE_REQUEST_TIMEOUT >> 32)));
	cr_expect_eq(out.request_timeout, 0);

	/* 0 = off. */
	ii.flags2 = 0x7fd;
	p.request_timeout = 0;
	cr_assert_eq(fring_init_build(&dx, &ii, sizeof(ii), &p, &out, &outlen,
				      &res, &err), 0);
	cr_expect(!(out.flags2 & (FUSE_REQUEST_TIMEOUT >> 32)));
}

Test(dispatch, statfs_without_op_reports_an_empty_fs)
{
	const struct fuse_statfs_out *so;

	run(FUSE_STATFS, 330, 1, NULL, 0, NULL, NULL);
	expect_header(0, 330, sizeof(struct fuse_statfs_out));
	so = body();
	cr_expect_eq(so->st.namelen, 255);
	cr_expect_eq(so->st.bsize, 512);
	cr_expect_eq(so->st.blocks, 0);
}
