// SPDX-License-Identifier: MIT
/*
 * memfs driven in process: dlopen the built plugin, give it the fake host
 * of fakehost.h, which records each reply into the request object, and
 * call the ops directly.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <fring/plugin.h>

#include "fakehost.h"

#define PLUGIN FRING_BUILD_DIR "/lib/fring/plugins/memfs.so"
#define ROOT 1
#define CHUNK 65536u

static struct fring_req R;
static uint32_t cur_uid, cur_gid;

static const struct fring_plugin *P;
static const struct fring_fs_ops *O;
static void *inst;
static void *dl;

/* A fresh request from the current caller. */
static fring_req *rq(void)
{
	fake_req_reset(&R);
	R.uid = cur_uid;
	R.gid = cur_gid;
	R.dir_budget = 4096;
	return &R;
}

static void load(void)
{
	fring_plugin_entry_fn entry;

	dl = dlopen(PLUGIN, RTLD_NOW | RTLD_LOCAL);
	cr_assert(dl, "dlopen %s: %s", PLUGIN, dlerror());
	entry = (fring_plugin_entry_fn)dlsym(dl, FRING_PLUGIN_ENTRY_SYMBOL);
	cr_assert(entry);
	P = entry(&fake_host);
	cr_assert(P && P->magic == FRING_PLUGIN_MAGIC);
	O = P->ops;
	cr_assert_eq(P->thread_model, FRING_THREAD_PARALLEL);
}

static void setup_with(const char *const *opts)
{
	struct fring_conn conn = { .size = sizeof(conn) };

	cur_uid = 1000;
	cur_gid = 1000;
	load();
	cr_assert_eq(P->create(NULL, &inst), 0);
	for (; opts && opts[0]; opts += 2)
		cr_assert_eq(P->config(inst, opts[0], opts[1]), 0, "%s", opts[0]);
	cr_assert_eq(P->config_complete(inst), 0);
	cr_assert_eq(P->init(inst, &conn), 0);
}

static void setup(void)
{
	static const char *const opts[] = { "uid", "1000", "gid", "1000",
					    "attr_timeout", "0.5", NULL };
	setup_with(opts);
}

static void teardown(void)
{
	if (inst)
		P->destroy(inst);
	inst = NULL;
	fake_req_reset(&R);
	if (dl)
		dlclose(dl);
	dl = NULL;
}

TestSuite(memfs, .init = setup, .fini = teardown);

/* ---- op wrappers: return the error (0 on success) ---- */

static int lookup(uint64_t parent, const char *name)
{
	struct fring_name_args a = { sizeof(a), (uint32_t)strlen(name),
				     parent, name };
	O->lookup(inst, rq(), &a);
	return R.kind == K_ERR ? R.err : 0;
}

static void forget(uint64_t ino, uint64_t n)
{
	struct fring_forget_one f = { ino, n };
	O->forget(inst, &f, 1);
}

static int getattr(uint64_t ino)
{
	struct fring_getattr_args a = { .size = sizeof(a), .nodeid = ino };
	O->getattr(inst, rq(), &a);
	return R.kind == K_ERR ? R.err : 0;
}

static int make(void (*op)(void *, fring_req *, const struct fring_make_args *),
		uint64_t parent, const char *name, uint32_t mode,
		const char *target, uint32_t flags)
{
	struct fring_make_args a = {
		.size = sizeof(a), .namelen = (uint32_t)strlen(name),
		.parent = parent, .name = name, .mode = mode, .flags = flags,
		.link_target = target,
		.link_target_len = target ? (uint32_t)strlen(target) : 0,
	};
	op(inst, rq(), &a);
	return R.kind == K_ERR ? R.err : 0;
}

/* Create a regular file; returns its ino, R.o.fh is the handle. */
static uint64_t create(uint64_t parent, const char *name)
{
	cr_assert_eq(make(O->create, parent, name, S_IFREG | 0644, NULL,
			  O_RDWR | O_CREAT), 0, "create %s", name);
	cr_assert_eq(R.kind, K_CREATE);
	return R.e.ino;
}

static uint64_t mkdir_(uint64_t parent, const char *name)
{
	cr_assert_eq(make(O->mkdir, parent, name, S_IFDIR | 0755, NULL, 0), 0);
	return R.e.ino;
}

static int name_op(void (*op)(void *, fring_req *,
			      const struct fring_name_args *),
		   uint64_t parent, const char *name)
{
	struct fring_name_args a = { sizeof(a), (uint32_t)strlen(name),
				     parent, name };
	op(inst, rq(), &a);
	cr_assert_eq(R.kind, K_ERR);
	return R.err;
}

static int rename_(uint64_t p, const char *n, uint64_t np, const char *nn,
		   uint32_t flags)
{
	struct fring_rename_args a = { sizeof(a), flags, p, np, n, nn,
				       (uint32_t)strlen(n), (uint32_t)strlen(nn) };
	O->rename(inst, rq(), &a);
	cr_assert_eq(R.kind, K_ERR);
	return R.err;
}

static int link_(uint64_t ino, uint64_t np, const char *nn)
{
	struct fring_link_args a = { sizeof(a), (uint32_t)strlen(nn), ino, np,
				     nn };
	O->link(inst, rq(), &a);
	return R.kind == K_ERR ? R.err : 0;
}

static int open_(uint64_t ino, uint32_t flags)
{
	struct fring_open_args a = { .size = sizeof(a), .flags = flags,
				     .nodeid = ino };
	O->open(inst, rq(), &a);
	return R.kind == K_ERR ? R.err : 0;
}

static void release(uint64_t ino, uint64_t fh)
{
	struct fring_release_args a = { .size = sizeof(a), .nodeid = ino,
					.fh = fh };
	O->release(inst, rq(), &a);
	cr_assert_eq(R.kind, K_ERR);
	cr_assert_eq(R.err, 0);
}

static int write_(uint64_t ino, uint64_t off, const void *buf, uint32_t len)
{
	struct fring_write_args a = { .size = sizeof(a), .len = len,
				      .nodeid = ino, .fh = ino, .offset = off,
				      .data = buf };
	O->write(inst, rq(), &a);
	if (R.kind == K_ERR)
		return R.err;
	cr_assert_eq(R.kind, K_WRITE);
	return (int)R.len;
}

/* Read into R.data/R.len. */
static int read_(uint64_t ino, uint64_t off, uint32_t len)
{
	struct fring_read_args a = { .size = sizeof(a), .len = len,
				     .nodeid = ino, .fh = ino, .offset = off };
	O->read(inst, rq(), &a);
	if (R.kind == K_ERR)
		return R.err;
	cr_assert_eq(R.kind, K_DATA);
	return (int)R.len;
}

static int setattr(uint64_t ino, uint32_t valid, uint64_t size, uint32_t mode)
{
	struct fring_setattr_args a = { .size = sizeof(a), .valid = valid,
					.nodeid = ino, .file_size = size,
					.mode = mode };
	O->setattr(inst, rq(), &a);
	return R.kind == K_ERR ? R.err : 0;
}

static int xattr(void (*op)(void *, fring_req *, const struct fring_xattr_args *),
		 uint64_t ino, const char *name, const char *value,
		 uint32_t flags, uint32_t max)
{
	struct fring_xattr_args a = {
		.size = sizeof(a), .namelen = name ? (uint32_t)strlen(name) : 0,
		.nodeid = ino, .name = name, .value = value,
		.value_len = value ? (uint32_t)strlen(value) : 0,
		.flags = flags, .max = max,
	};
	op(inst, rq(), &a);
	return R.kind == K_ERR ? R.err : 0;
}

static int lseek_(uint64_t ino, uint64_t off, uint32_t whence)
{
	struct fring_lseek_args a = { .size = sizeof(a), .whence = whence,
				      .nodeid = ino, .offset = off };
	O->lseek(inst, rq(), &a);
	return R.kind == K_ERR ? R.err : 0;
}

static int fallocate_(uint64_t ino, uint32_t mode, uint64_t off, uint64_t len)
{
	struct fring_fallocate_args a = { .size = sizeof(a), .mode = mode,
					  .nodeid = ino, .offset = off,
					  .length = len };
	O->fallocate(inst, rq(), &a);
	cr_assert_eq(R.kind, K_ERR);
	return R.err;
}

static struct fring_attr attr_of(uint64_t ino)
{
	cr_assert_eq(getattr(ino), 0, "getattr %llu", (unsigned long long)ino);
	return R.attr;
}

static bool ts_after(int64_t s1, uint32_t n1, int64_t s0, uint32_t n0)
{
	return s1 > s0 || (s1 == s0 && n1 > n0);
}

/* ---------------------------------------------------------------------- */

Test(memfs, root_and_config)
{
	struct fring_attr a = attr_of(ROOT);
	struct fring_node_args n = { .size = sizeof(n), .nodeid = ROOT };

	cr_assert_eq(a.ino, ROOT);
	cr_assert_eq(a.mode, S_IFDIR | 0755);
	cr_assert_eq(a.uid, 1000);
	cr_assert_eq(a.nlink, 2);
	cr_assert_eq(P->config(inst, "bogus", "1"), -EINVAL);
	cr_assert_eq(P->config(inst, "entry_timeout", "x"), -EINVAL);
	cr_assert_eq(P->config(inst, "entry_timeout", "-1"), -EINVAL);
	O->statfs(inst, rq(), &n);
	cr_assert_eq(R.kind, K_STATFS);
	cr_assert_eq(R.st.bsize, 4096);
	cr_assert_eq(R.st.blocks, (1ull << 40) / 4096);
	cr_assert_eq(R.st.bfree, R.st.blocks);
	cr_assert_eq(R.st.namelen, 255);
	cr_assert_gt(R.st.ffree, 0);
}

Test(memfs, create_lookup_getattr)
{
	struct fring_attr root0 = attr_of(ROOT), root1;
	uint64_t ino;

	cur_uid = 1234;
	cur_gid = 99;
	ino = create(ROOT, "a");
	cr_assert_gt(ino, ROOT);
	cr_assert_eq(R.e.attr.mode, S_IFREG | 0644);
	cr_assert_eq(R.e.attr.uid, 1234);
	cr_assert_eq(R.e.attr.gid, 99);
	cr_assert_eq(R.e.attr.nlink, 1);
	cr_assert_eq(R.e.entry_timeout_ns, 1000000000ull);
	cr_assert_eq(R.e.attr_timeout_ns, 500000000ull);
	cr_assert_eq(R.o.fh, ino);
	root1 = attr_of(ROOT);
	cr_assert(ts_after(root1.mtime_sec, root1.mtime_nsec, root0.mtime_sec,
			   root0.mtime_nsec) ||
		  (root1.mtime_sec == root0.mtime_sec &&
		   root1.mtime_nsec == root0.mtime_nsec));
	cr_assert_eq(lookup(ROOT, "a"), 0);
	cr_assert_eq(R.kind, K_ENTRY);
	cr_assert_eq(R.e.ino, ino);
	cr_assert_eq(lookup(ROOT, "nope"), -ENOENT);
	cr_assert_eq(lookup(ino, "x"), -ENOTDIR);
	cr_assert_eq(make(O->create, ROOT, "a", S_IFREG | 0600, NULL,
			  O_CREAT | O_EXCL | O_RDWR), -EEXIST);
	cr_assert_eq(make(O->mkdir, ROOT, "a", S_IFDIR | 0755, NULL, 0), -EEXIST);
	cr_assert_eq(getattr(ino), 0);
	cr_assert_eq(R.attr.size, 0);
	cr_assert_eq(getattr(9999), -ENOENT);
}

Test(memfs, mknod_symlink_mkdir)
{
	uint64_t d, l, f;

	cr_assert_eq(make(O->mknod, ROOT, "fifo", S_IFIFO | 0600, NULL, 0), 0);
	cr_assert_eq(R.e.attr.mode, S_IFIFO | 0600);
	cr_assert_eq(make(O->mknod, ROOT, "dev", S_IFCHR | 0600, NULL, 0), 0);
	cr_assert_eq(make(O->mknod, ROOT, "bad", S_IFDIR | 0600, NULL, 0),
		     -EINVAL);
	cr_assert_eq(make(O->symlink, ROOT, "ln", S_IFLNK | 0777, "target/x", 0),
		     0);
	l = R.e.ino;
	cr_assert_eq(R.e.attr.size, 8);
	{
		struct fring_node_args n = { .size = sizeof(n), .nodeid = l };
		O->readlink(inst, rq(), &n);
		cr_assert_eq(R.kind, K_LINK);
		cr_assert_eq(R.len, 8);
		cr_assert_eq(memcmp(R.data, "target/x", 8), 0);
	}
	d = mkdir_(ROOT, "d");
	cr_assert_eq(attr_of(d).nlink, 2);
	cr_assert_eq(attr_of(ROOT).nlink, 3);
	f = create(d, "f");
	cr_assert_eq(name_op(O->rmdir, ROOT, "d"), -ENOTEMPTY);
	cr_assert_eq(name_op(O->unlink, ROOT, "d"), -EISDIR);
	cr_assert_eq(name_op(O->rmdir, d, "f"), -ENOTDIR);
	cr_assert_eq(name_op(O->unlink, d, "f"), 0);
	cr_assert_eq(name_op(O->rmdir, ROOT, "d"), 0);
	cr_assert_eq(attr_of(ROOT).nlink, 2);
	cr_assert_eq(lookup(ROOT, "d"), -ENOENT);
	(void)f;
}

Test(memfs, setgid_dir_inherits)
{
	uint64_t d, sub, f;

	d = mkdir_(ROOT, "g");
	cur_uid = 0;
	cr_assert_eq(setattr(d, FRING_SET_MODE, 0, 02775), 0);
	cr_assert_eq(R.attr.mode, S_IFDIR | 02775);
	struct fring_setattr_args a = { .size = sizeof(a),
					.valid = FRING_SET_GID,
					.nodeid = d, .gid = 4242 };
	O->setattr(inst, rq(), &a);
	cr_assert_eq(R.kind, K_ATTR);
	cur_uid = 1000;
	f = create(d, "f");
	cr_assert_eq(R.e.attr.gid, 4242);
	sub = mkdir_(d, "sub");
	cr_assert_eq(R.e.attr.gid, 4242);
	cr_assert(R.e.attr.mode & S_ISGID);
	(void)f;
	(void)sub;
}

Test(memfs, write_read_holes_blocks)
{
	uint64_t ino = create(ROOT, "f");
	char buf[100];

	cr_assert_eq(write_(ino, 0, "hello", 5), 5);
	cr_assert_eq(write_(ino, 1 << 20, "world", 5), 5);
	struct fring_attr a = attr_of(ino);
	cr_assert_eq(a.size, (1 << 20) + 5);
	/* Two chunks, each holding a small buffer (not 64 KiB). */
	cr_assert_eq(a.blocks, 2, "blocks %llu", (unsigned long long)a.blocks);
	cr_assert_eq(read_(ino, 0, 5), 5);
	cr_assert_eq(memcmp(R.data, "hello", 5), 0);
	/* A hole reads as zeros. */
	cr_assert_eq(read_(ino, 200000, 100), 100);
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(memcmp(R.data, buf, 100), 0);
	/* Across chunk boundary and through a hole into data. */
	cr_assert_eq(read_(ino, (1 << 20) - 3, 100), 8);
	cr_assert_eq(memcmp(R.data, "\0\0\0world", 8), 0);
	/* Past EOF: empty. */
	cr_assert_eq(read_(ino, (1 << 20) + 5, 10), 0);
	/* Big write spanning three chunks. */
	{
		uint32_t n = 3 * CHUNK;
		uint8_t *big = malloc(n);

		for (uint32_t i = 0; i < n; i++)
			big[i] = (uint8_t)(i * 7);
		cr_assert_eq(write_(ino, 12345, big, n), (int)n);
		cr_assert_eq(read_(ino, 12345, n), (int)n);
		cr_assert_eq(memcmp(R.data, big, n), 0);
		free(big);
	}
	/* chunks 0-2 full, chunk 3 up to 12345 -> 16 KiB, chunk 16: 512 */
	cr_assert_eq(attr_of(ino).blocks, (3 * CHUNK + 16384 + 512) / 512);
	/* Writing to a dir fails. */
	cr_assert_eq(write_(ROOT, 0, "x", 1), -EISDIR);
}

Test(memfs, write_updates_times_read_does_not)
{
	uint64_t ino = create(ROOT, "f");
	struct fring_attr a0 = attr_of(ino), a1, a2;
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
	cr_assert_eq(write_(ino, 0, "x", 1), 1);
	a1 = attr_of(ino);
	cr_assert(ts_after(a1.mtime_sec, a1.mtime_nsec, a0.mtime_sec,
			   a0.mtime_nsec));
	cr_assert(ts_after(a1.ctime_sec, a1.ctime_nsec, a0.ctime_sec,
			   a0.ctime_nsec));
	nanosleep(&ts, NULL);
	cr_assert_eq(read_(ino, 0, 1), 1);
	a2 = attr_of(ino);
	cr_assert_eq(a2.mtime_nsec, a1.mtime_nsec);
	cr_assert_eq(a2.atime_nsec, a1.atime_nsec);
}

Test(memfs, truncate_up_down)
{
	uint64_t ino = create(ROOT, "f");
	uint8_t data[CHUNK + 100];
	uint8_t zero[CHUNK] = { 0 };

	memset(data, 'x', sizeof(data));
	cr_assert_eq(write_(ino, 0, data, sizeof(data)), (int)sizeof(data));
	cr_assert_eq(attr_of(ino).blocks, (CHUNK + 512) / 512);
	/* Down into the first chunk: second chunk goes, tail is zeroed. */
	cr_assert_eq(setattr(ino, FRING_SET_SIZE, 10, 0), 0);
	cr_assert_eq(R.attr.size, 10);
	cr_assert_eq(R.attr.blocks, CHUNK / 512);
	/* Up again: the old bytes must not come back. */
	cr_assert_eq(setattr(ino, FRING_SET_SIZE, 3 * CHUNK, 0), 0);
	cr_assert_eq(R.attr.size, 3 * CHUNK);
	cr_assert_eq(R.attr.blocks, CHUNK / 512);
	cr_assert_eq(read_(ino, 0, 20), 20);
	cr_assert_eq(memcmp(R.data, data, 10), 0);
	cr_assert_eq(memcmp(R.data + 10, zero, 10), 0);
	cr_assert_eq(read_(ino, CHUNK, CHUNK), (int)CHUNK);
	cr_assert_eq(memcmp(R.data, zero, CHUNK), 0);
	cr_assert_eq(setattr(ino, FRING_SET_SIZE, 0, 0), 0);
	cr_assert_eq(R.attr.blocks, 0);
	cr_assert_eq(setattr(ROOT, FRING_SET_SIZE, 0, 0), -EISDIR);
	/* O_TRUNC on open. */
	cr_assert_eq(write_(ino, 0, "abc", 3), 3);
	cr_assert_eq(open_(ino, O_WRONLY | O_TRUNC), 0);
	cr_assert_eq(attr_of(ino).size, 0);
}

Test(memfs, setattr_perms_and_times)
{
	uint64_t ino = create(ROOT, "f"); /* owned by 1000 */
	struct fring_setattr_args a = { .size = sizeof(a), .nodeid = ino };

	/* Another user may not chmod or chown. */
	cur_uid = 2000;
	cr_assert_eq(setattr(ino, FRING_SET_MODE, 0, 0777), -EPERM);
	a.valid = FRING_SET_UID;
	a.uid = 2000;
	O->setattr(inst, rq(), &a);
	cr_assert_eq(R.err, -EPERM);
	/* Owner may chmod but not give the file away. */
	cur_uid = 1000;
	cr_assert_eq(setattr(ino, FRING_SET_MODE, 0, 04755), 0);
	cr_assert_eq(R.attr.mode, S_IFREG | 04755);
	O->setattr(inst, rq(), &a);
	cr_assert_eq(R.err, -EPERM);
	/* A non-owner may drop setuid (kernel privilege kill on write). */
	cur_uid = 2000;
	cr_assert_eq(setattr(ino, FRING_SET_MODE, 0, 0755), 0);
	cr_assert_eq(R.attr.mode, S_IFREG | 0755);
	/* Root chowns; KILL_SUIDGID clears setuid. */
	cur_uid = 0;
	O->setattr(inst, rq(), &a);
	cr_assert_eq(R.kind, K_ATTR);
	cr_assert_eq(R.attr.uid, 2000);
	cr_assert_eq(setattr(ino, FRING_SET_MODE, 0, 06755), 0);
	cr_assert_eq(setattr(ino, FRING_SET_KILL_SUIDGID, 0, 0), 0);
	cr_assert_eq(R.attr.mode, S_IFREG | 0755);
	/* Explicit and "now" times. */
	a.valid = FRING_SET_ATIME | FRING_SET_MTIME;
	a.atime_sec = 100;
	a.atime_nsec = 5;
	a.mtime_sec = 200;
	a.mtime_nsec = 7;
	O->setattr(inst, rq(), &a);
	cr_assert_eq(R.attr.atime_sec, 100);
	cr_assert_eq(R.attr.atime_nsec, 5);
	cr_assert_eq(R.attr.mtime_sec, 200);
	cr_assert_eq(R.attr.mtime_nsec, 7);
	cr_assert_gt(R.attr.ctime_sec, 200);
	a.valid = FRING_SET_MTIME | FRING_SET_MTIME_NOW;
	O->setattr(inst, rq(), &a);
	cr_assert_gt(R.attr.mtime_sec, 200);
	cr_assert_eq(R.attr.atime_sec, 100);
	/* Non-owner without write permission cannot set explicit times. */
	cur_uid = 3000;
	a.valid = FRING_SET_ATIME;
	O->setattr(inst, rq(), &a);
	cr_assert_eq(R.err, -EPERM);
}

Test(memfs, access_checks)
{
	uint64_t ino = create(ROOT, "f"); /* 0644, uid 1000 */
	struct fring_access_args a = { .size = sizeof(a), .nodeid = ino };

	a.mask = R_OK | W_OK;
	O->access(inst, rq(), &a);
	cr_assert_eq(R.err, 0);
	cur_uid = 2000;
	cur_gid = 2000;
	O->access(inst, rq(), &a);
	cr_assert_eq(R.err, -EACCES);
	a.mask = R_OK;
	O->access(inst, rq(), &a);
	cr_assert_eq(R.err, 0);
	cur_uid = 0;
	a.mask = X_OK;
	O->access(inst, rq(), &a);
	cr_assert_eq(R.err, -EACCES, "root needs some x bit");
	a.mask = W_OK;
	O->access(inst, rq(), &a);
	cr_assert_eq(R.err, 0);
}

Test(memfs, rename_flags)
{
	uint64_t a = create(ROOT, "a"), b = create(ROOT, "b");
	uint64_t d = mkdir_(ROOT, "d"), e = mkdir_(d, "e");

	cr_assert_eq(rename_(ROOT, "a", ROOT, "b", RENAME_NOREPLACE), -EEXIST);
	cr_assert_eq(rename_(ROOT, "a", ROOT, "zz", RENAME_EXCHANGE), -ENOENT);
	cr_assert_eq(rename_(ROOT, "a", ROOT, "b", 3), -EINVAL);
	cr_assert_eq(rename_(ROOT, "a", ROOT, "b", RENAME_EXCHANGE), 0);
	cr_assert_eq(lookup(ROOT, "a"), 0);
	cr_assert_eq(R.e.ino, b);
	cr_assert_eq(lookup(ROOT, "b"), 0);
	cr_assert_eq(R.e.ino, a);
	/* Exchange a file and a dir across directories: ".." follows. */
	cr_assert_eq(rename_(ROOT, "a", d, "e", RENAME_EXCHANGE), 0);
	cr_assert_eq(lookup(ROOT, "a"), 0);
	cr_assert_eq(R.e.ino, e);
	cr_assert_eq(lookup(e, ".."), 0);
	cr_assert_eq(R.e.ino, ROOT);
	cr_assert_eq(attr_of(d).nlink, 2);
	cr_assert_eq(attr_of(ROOT).nlink, 4);
	cr_assert_eq(rename_(ROOT, "a", d, "e", RENAME_EXCHANGE), 0);
	/* Plain rename over a file: the old target loses its link. */
	cr_assert_eq(rename_(ROOT, "b", ROOT, "a", 0), 0);
	cr_assert_eq(lookup(ROOT, "b"), -ENOENT);
	cr_assert_eq(lookup(ROOT, "a"), 0);
	cr_assert_eq(R.e.ino, a);
	cr_assert_eq(getattr(b), 0, "b is still looked up");
	cr_assert_eq(R.attr.nlink, 0);
	/* Dir rules. */
	cr_assert_eq(rename_(ROOT, "d", d, "x", 0), -EINVAL);
	cr_assert_eq(rename_(ROOT, "d", e, "x", 0), -EINVAL);
	cr_assert_eq(rename_(ROOT, "a", d, "e", 0), -EISDIR);
	cr_assert_eq(rename_(d, "e", ROOT, "a", 0), -ENOTDIR);
	mkdir_(ROOT, "empty");
	cr_assert_eq(rename_(d, "e", ROOT, "empty", 0), 0);
	cr_assert_eq(attr_of(d).nlink, 2);
	cr_assert_eq(lookup(ROOT, "empty"), 0);
	cr_assert_eq(R.e.ino, e);
	create(e, "inside");
	mkdir_(ROOT, "full");
	create(ROOT, "x");
	cr_assert_eq(rename_(ROOT, "x", ROOT, "full", 0), -EISDIR);
	cr_assert_eq(rename_(ROOT, "full", ROOT, "empty", 0), -ENOTEMPTY);
	/* Same inode via hard link: no-op. */
	cr_assert_eq(link_(a, ROOT, "a2"), 0);
	cr_assert_eq(rename_(ROOT, "a", ROOT, "a2", 0), 0);
	cr_assert_eq(lookup(ROOT, "a"), 0);
}

Test(memfs, sticky_dir)
{
	uint64_t t = mkdir_(ROOT, "tmp");

	cr_assert_eq(setattr(t, FRING_SET_MODE, 0, 01777), 0);
	cur_uid = 2000;
	create(t, "mine");
	cur_uid = 3000;
	cr_assert_eq(name_op(O->unlink, t, "mine"), -EPERM);
	cr_assert_eq(rename_(t, "mine", t, "other", 0), -EPERM);
	cur_uid = 1000; /* owner of the dir */
	cr_assert_eq(rename_(t, "mine", t, "other", 0), 0);
	cur_uid = 2000; /* owner of the file */
	cr_assert_eq(name_op(O->unlink, t, "other"), 0);
}

Test(memfs, hard_links)
{
	uint64_t a = create(ROOT, "a"), d = mkdir_(ROOT, "d");

	release(a, a);
	cr_assert_eq(link_(a, d, "b"), 0);
	cr_assert_eq(R.e.ino, a);
	cr_assert_eq(R.e.attr.nlink, 2);
	cr_assert_eq(link_(a, ROOT, "c"), 0);
	cr_assert_eq(attr_of(a).nlink, 3);
	cr_assert_eq(link_(a, ROOT, "c"), -EEXIST);
	cr_assert_eq(link_(d, ROOT, "dl"), -EPERM);
	cr_assert_eq(name_op(O->unlink, ROOT, "a"), 0);
	cr_assert_eq(attr_of(a).nlink, 2);
	cr_assert_eq(name_op(O->unlink, d, "b"), 0);
	cr_assert_eq(name_op(O->unlink, ROOT, "c"), 0);
	cr_assert_eq(attr_of(a).nlink, 0);
	/* create + 2 link replies = 3 lookups; forget them all: gone. */
	forget(a, 3);
	cr_assert_eq(getattr(a), -ENOENT);
}

Test(memfs, unlink_while_open)
{
	uint64_t ino = create(ROOT, "f"), fh = R.o.fh;

	cr_assert_eq(write_(ino, 0, "data", 4), 4);
	cr_assert_eq(name_op(O->unlink, ROOT, "f"), 0);
	forget(ino, 1); /* the kernel drops its dentry */
	/* Still open: readable and writable. */
	cr_assert_eq(read_(ino, 0, 4), 4);
	cr_assert_eq(memcmp(R.data, "data", 4), 0);
	cr_assert_eq(write_(ino, 4, "more", 4), 4);
	cr_assert_eq(attr_of(ino).nlink, 0);
	cr_assert_eq(attr_of(ino).size, 8);
	release(ino, fh);
	cr_assert_eq(getattr(ino), -ENOENT);
	struct fring_node_args n = { .size = sizeof(n), .nodeid = ROOT };
	O->statfs(inst, rq(), &n);
	cr_assert_eq(R.st.bfree, R.st.blocks, "chunks freed");
}

Test(memfs, tmpfile_then_link)
{
	uint64_t ino;

	cr_assert_eq(make(O->tmpfile, ROOT, "", S_IFREG | 0600, NULL, O_RDWR),
		     0);
	cr_assert_eq(R.kind, K_CREATE);
	ino = R.e.ino;
	cr_assert_eq(R.e.attr.nlink, 0);
	cr_assert_eq(write_(ino, 0, "t", 1), 1);
	cr_assert_eq(link_(ino, ROOT, "named"), 0);
	cr_assert_eq(R.e.attr.nlink, 1);
	release(ino, ino);
	forget(ino, 2);
	cr_assert_eq(lookup(ROOT, "named"), 0);
	cr_assert_eq(R.e.ino, ino);
}

Test(memfs, failed_entry_reply_is_not_counted)
{
	uint64_t ino;
	struct fring_name_args a = { sizeof(a), 1, ROOT, "f" };

	ino = create(ROOT, "f");
	release(ino, ino);
	rq()->fail_reply = 1;
	O->lookup(inst, &R, &a);
	cr_assert_eq(name_op(O->unlink, ROOT, "f"), 0);
	/* Only the create's reference is left. */
	cr_assert_eq(getattr(ino), 0);
	forget(ino, 1);
	cr_assert_eq(getattr(ino), -ENOENT);
}

Test(memfs, xattrs)
{
	uint64_t ino = create(ROOT, "f");
	char big[70000];

	cr_assert_eq(xattr(O->getxattr, ino, "user.a", NULL, 0, 0), -ENODATA);
	cr_assert_eq(xattr(O->setxattr, ino, "user.a", "value", 0, 0), 0);
	cr_assert_eq(xattr(O->setxattr, ino, "user.a", "v2", XATTR_CREATE, 0),
		     -EEXIST);
	cr_assert_eq(xattr(O->setxattr, ino, "user.b", "v2", XATTR_REPLACE, 0),
		     -ENODATA);
	cr_assert_eq(xattr(O->getxattr, ino, "user.a", NULL, 0, 0), 0);
	cr_assert_eq(R.kind, K_XSIZE);
	cr_assert_eq(R.len, 5);
	cr_assert_eq(xattr(O->getxattr, ino, "user.a", NULL, 0, 4), -ERANGE);
	cr_assert_eq(xattr(O->getxattr, ino, "user.a", NULL, 0, 5), 0);
	cr_assert_eq(R.kind, K_DATA);
	cr_assert_eq(memcmp(R.data, "value", 5), 0);
	cr_assert_eq(xattr(O->setxattr, ino, "user.a", "xy", XATTR_REPLACE, 0),
		     0);
	cr_assert_eq(xattr(O->setxattr, ino, "user.bb", "", 0, 0), 0);
	cr_assert_eq(xattr(O->listxattr, ino, NULL, NULL, 0, 0), 0);
	cr_assert_eq(R.kind, K_XSIZE);
	cr_assert_eq(R.len, 15);
	cr_assert_eq(xattr(O->listxattr, ino, NULL, NULL, 0, 14), -ERANGE);
	cr_assert_eq(xattr(O->listxattr, ino, NULL, NULL, 0, 100), 0);
	cr_assert_eq(R.len, 15);
	cr_assert_eq(memcmp(R.data, "user.a\0user.bb\0", 15), 0);
	cr_assert_eq(xattr(O->removexattr, ino, "user.a", NULL, 0, 0), 0);
	cr_assert_eq(xattr(O->removexattr, ino, "user.a", NULL, 0, 0), -ENODATA);
	cr_assert_eq(xattr(O->getxattr, ino, "user.bb", NULL, 0, 0), 0);
	cr_assert_eq(R.len, 0);
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	cr_assert_eq(xattr(O->setxattr, ino, "user.big", big, 0, 0), -E2BIG);
	/* user.* only on files and dirs. */
	make(O->symlink, ROOT, "l", 0, "f", 0);
	cr_assert_eq(xattr(O->setxattr, R.e.ino, "user.a", "v", 0, 0), -EPERM);
}

/* List dir `ino` with readdir(plus) from `off` into an accumulator. */
static void list_page(bool plus, uint64_t ino, uint64_t off)
{
	struct fring_read_args a = { .size = sizeof(a), .len = 4096,
				     .nodeid = ino, .offset = off };
	if (plus)
		O->readdirplus(inst, rq(), &a);
	else
		O->readdir(inst, rq(), &a);
	cr_assert_eq(R.kind, K_DIR);
}

Test(memfs, readdir_stable_offsets)
{
	enum { N = 10000 };
	static char seen[N];
	static char removed[N];
	uint64_t d = mkdir_(ROOT, "big"), off = 0;
	char name[32];
	int pages = 0, total = 0;

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "file-%05d", i);
		cr_assert_eq(make(O->mknod, d, name, S_IFREG | 0644, NULL, 0), 0);
	}
	for (;;) {
		list_page(false, d, off);
		if (!R.ndir)
			break;
		for (uint32_t i = 0; i < R.ndir; i++) {
			int k;

			cr_assert_gt(R.dir[i].off, off, "offsets increase");
			off = R.dir[i].off;
			if (!strcmp(R.dir[i].name, ".") ||
			    !strcmp(R.dir[i].name, ".."))
				continue;
			cr_assert_eq(sscanf(R.dir[i].name, "file-%d", &k), 1);
			cr_assert_eq(seen[k], 0, "duplicate %s", R.dir[i].name);
			cr_assert_eq(removed[k], 0, "removed %s listed",
				     R.dir[i].name);
			seen[k] = 1;
			total++;
		}
		/* Between pages remove a spread of entries, both already
		 * listed and not yet listed, including the last one sent. */
		if (++pages % 3 == 0) {
			for (int k = pages * 7; k < N; k += 97) {
				if (removed[k])
					continue;
				snprintf(name, sizeof(name), "file-%05d", k);
				cr_assert_eq(name_op(O->unlink, d, name), 0);
				removed[k] = 1;
			}
			for (int j = (int)R.ndir - 1; j >= 0; j--) {
				int k;
				if (sscanf(R.dir[j].name, "file-%d", &k) == 1 &&
				    !removed[k]) {
					cr_assert_eq(name_op(O->unlink, d,
							     R.dir[j].name), 0);
					removed[k] = 1;
					break;
				}
			}
		}
	}
	cr_assert_gt(pages, 20);
	for (int k = 0; k < N; k++)
		cr_assert(seen[k] || removed[k], "missed file-%05d", k);
	cr_assert_gt(total, N / 2);
}

Test(memfs, readdirplus_counts_lookups)
{
	uint64_t d = mkdir_(ROOT, "d"), f = create(d, "f");
	uint64_t off = 0;
	int n = 0;

	release(f, f);
	forget(f, 1);
	do {
		list_page(true, d, off);
		for (uint32_t i = 0; i < R.ndir; i++) {
			off = R.dir[i].off;
			n++;
			if (!strcmp(R.dir[i].name, "."))
				cr_assert_eq(R.dir[i].ino, d);
			if (!strcmp(R.dir[i].name, ".."))
				cr_assert_eq(R.dir[i].ino, ROOT);
		}
	} while (R.ndir);
	cr_assert_eq(n, 3);
	/* The listing counted one lookup for f: unlink + forget frees it. */
	cr_assert_eq(name_op(O->unlink, d, "f"), 0);
	cr_assert_eq(getattr(f), 0);
	forget(f, 1);
	cr_assert_eq(getattr(f), -ENOENT);
}

Test(memfs, big_directory_is_fast)
{
	enum { N = 100000 };
	uint64_t d = mkdir_(ROOT, "huge"), off = 0;
	struct timespec t0, t1;
	char name[32];
	long listed = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		cr_assert_eq(make(O->mknod, d, name, S_IFREG | 0644, NULL, 0), 0);
	}
	for (int i = 0; i < N; i += 7) {
		snprintf(name, sizeof(name), "n%d", i);
		cr_assert_eq(lookup(d, name), 0);
	}
	do {
		list_page(false, d, off);
		if (R.ndir)
			off = R.dir[R.ndir - 1].off;
		listed += R.ndir;
	} while (R.ndir);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_eq(listed, N + 2);
	/* Quadratic behaviour would take minutes here. */
	cr_assert_lt(t1.tv_sec - t0.tv_sec, 60);
}

Test(memfs, lseek_data_hole)
{
	uint64_t ino = create(ROOT, "f");

	cr_assert_eq(write_(ino, 2 * CHUNK + 10, "x", 1), 1);
	cr_assert_eq(write_(ino, 5 * CHUNK, "y", 1), 1);
	/* size = 5*CHUNK + 1; data in chunks 2 and 5. */
	cr_assert_eq(lseek_(ino, 0, SEEK_DATA), 0);
	cr_assert_eq(R.off, 2 * CHUNK);
	cr_assert_eq(lseek_(ino, 2 * CHUNK + 5, SEEK_DATA), 0);
	cr_assert_eq(R.off, 2 * CHUNK + 5);
	cr_assert_eq(lseek_(ino, 3 * CHUNK, SEEK_DATA), 0);
	cr_assert_eq(R.off, 5 * CHUNK);
	cr_assert_eq(lseek_(ino, 0, SEEK_HOLE), 0);
	cr_assert_eq(R.off, 0);
	cr_assert_eq(lseek_(ino, 2 * CHUNK, SEEK_HOLE), 0);
	cr_assert_eq(R.off, 3 * CHUNK);
	cr_assert_eq(lseek_(ino, 5 * CHUNK, SEEK_HOLE), 0);
	cr_assert_eq(R.off, 5 * CHUNK + 1, "EOF is a hole");
	cr_assert_eq(lseek_(ino, 5 * CHUNK + 1, SEEK_DATA), -ENXIO);
	cr_assert_eq(lseek_(ino, 5 * CHUNK + 1, SEEK_HOLE), -ENXIO);
}

Test(memfs, fallocate_and_punch)
{
	uint64_t ino = create(ROOT, "f");
	uint8_t buf[3 * CHUNK], zero[CHUNK] = { 0 };

	cr_assert_eq(fallocate_(ino, 0, 100, 2 * CHUNK), 0);
	cr_assert_eq(attr_of(ino).size, 2 * CHUNK + 100);
	cr_assert_eq(R.attr.blocks, 3 * CHUNK / 512);
	cr_assert_eq(fallocate_(ino, FALLOC_FL_KEEP_SIZE, 10 * CHUNK, 1), 0);
	cr_assert_eq(attr_of(ino).size, 2 * CHUNK + 100);
	cr_assert_eq(R.attr.blocks, 4 * CHUNK / 512);
	cr_assert_eq(fallocate_(ino, FALLOC_FL_ZERO_RANGE, 0, 1), -EOPNOTSUPP);
	cr_assert_eq(fallocate_(ino, FALLOC_FL_PUNCH_HOLE, 0, 1), -EOPNOTSUPP);

	memset(buf, 'z', sizeof(buf));
	cr_assert_eq(write_(ino, 0, buf, sizeof(buf)), (int)sizeof(buf));
	/* Punch from the middle of chunk 0 to the middle of chunk 2:
	 * chunk 1 is freed, the edges are zeroed, the size stays. */
	cr_assert_eq(fallocate_(ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				CHUNK / 2, 2 * CHUNK), 0);
	cr_assert_eq(attr_of(ino).size, 3 * CHUNK);
	cr_assert_eq(R.attr.blocks, 3 * CHUNK / 512); /* chunks 0, 2, 10 */
	cr_assert_eq(read_(ino, 0, 3 * CHUNK), (int)(3 * CHUNK));
	for (uint32_t i = 0; i < CHUNK / 2; i++)
		cr_assert_eq(R.data[i], 'z');
	cr_assert_eq(memcmp(R.data + CHUNK / 2, zero, CHUNK), 0);
	cr_assert_eq(memcmp(R.data + 3 * CHUNK / 2, zero, CHUNK), 0);
	cr_assert_eq(R.data[5 * CHUNK / 2], 'z');
	cr_assert_eq(lseek_(ino, CHUNK / 2, SEEK_DATA), 0);
	cr_assert_eq(R.off, CHUNK / 2); /* chunk 0 still has data */
	cr_assert_eq(lseek_(ino, 0, SEEK_HOLE), 0);
	cr_assert_eq(R.off, CHUNK);
	/* Punching a whole chunk's data frees it even when unaligned. */
	cr_assert_eq(fallocate_(ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				0, CHUNK / 2), 0);
	cr_assert_eq(attr_of(ino).blocks, 2 * CHUNK / 512);
}

Test(memfs, copy_file_range)
{
	uint64_t a = create(ROOT, "a"), b = create(ROOT, "b");
	struct fring_copy_range_args c = { .size = sizeof(c), .nodeid_in = a,
					   .nodeid_out = b, .len = 1 << 30 };

	cr_assert_eq(write_(a, 0, "head", 4), 4);
	cr_assert_eq(write_(a, 3 * CHUNK, "tail", 4), 4);
	cr_assert_eq(write_(b, CHUNK, "junk", 4), 4);
	c.off_out = 10;
	O->copy_file_range(inst, rq(), &c);
	cr_assert_eq(R.kind, K_WRITE);
	cr_assert_eq(R.len, 3 * CHUNK + 4);
	cr_assert_eq(attr_of(b).size, 3 * CHUNK + 14);
	cr_assert_eq(read_(b, 10, 4), 4);
	cr_assert_eq(memcmp(R.data, "head", 4), 0);
	cr_assert_eq(read_(b, CHUNK, 4), 4);
	cr_assert_eq(memcmp(R.data, "\0\0\0\0", 4), 0, "hole copied as zeros");
	cr_assert_eq(read_(b, 3 * CHUNK + 10, 4), 4);
	cr_assert_eq(memcmp(R.data, "tail", 4), 0);
	/* Overlap within one file is refused. */
	c.nodeid_out = a;
	c.off_out = 2;
	O->copy_file_range(inst, rq(), &c);
	cr_assert_eq(R.err, -EINVAL);
}

Test(memfs, size_limit_enospc)
{
	static const char *const opts[] = { "size", "128KiB", NULL };
	uint8_t buf[CHUNK] = { 1 };
	uint64_t ino;

	teardown(); /* restart with a small capacity */
	setup_with(opts);
	ino = create(ROOT, "f");
	cr_assert_eq(write_(ino, 0, buf, CHUNK), (int)CHUNK);
	cr_assert_eq(write_(ino, CHUNK, buf, CHUNK), (int)CHUNK);
	cr_assert_eq(write_(ino, 2 * CHUNK, buf, CHUNK), -ENOSPC);
	cr_assert_eq(fallocate_(ino, 0, 5 * CHUNK, 1), -ENOSPC);
	cr_assert_eq(setattr(ino, FRING_SET_SIZE, CHUNK, 0), 0);
	cr_assert_eq(write_(ino, 7 * CHUNK, buf, 10), 10);
}

Test(memfs, removed_dir_lists_empty)
{
	uint64_t d = mkdir_(ROOT, "d");
	struct fring_open_args o = { .size = sizeof(o), .nodeid = d };

	O->opendir(inst, rq(), &o);
	cr_assert_eq(R.kind, K_OPEN);
	cr_assert_eq(name_op(O->rmdir, ROOT, "d"), 0);
	list_page(false, d, 0);
	cr_assert_eq(R.ndir, 0);
	cr_assert_eq(make(O->create, d, "x", S_IFREG | 0644, NULL, O_RDWR),
		     -ENOENT);
	forget(d, 1);
	struct fring_release_args r = { .size = sizeof(r), .nodeid = d };
	O->releasedir(inst, rq(), &r);
	cr_assert_eq(getattr(d), -ENOENT);
}

Test(memfs, small_files_stay_small_and_appends_grow)
{
	uint64_t ino = create(ROOT, "log");
	char line[100];
	uint32_t total = 0;

	cr_assert_eq(write_(ino, 0, "x", 1), 1);
	cr_assert_eq(attr_of(ino).blocks, 1, "a 1-byte file holds 512 bytes");
	for (int i = 0; i < 1000; i++) {
		memset(line, 'a' + i % 26, sizeof(line));
		cr_assert_eq(write_(ino, total, line, sizeof(line)),
			     (int)sizeof(line));
		total += sizeof(line);
	}
	cr_assert_eq(attr_of(ino).size, total);
	cr_assert_eq(R.attr.blocks, 2 * CHUNK / 512);
	cr_assert_eq(read_(ino, 0, total), (int)total);
	for (uint32_t i = 0; i < total; i++)
		cr_assert_eq(R.data[i], 'a' + (i / 100) % 26, "byte %u", i);
}

Test(memfs, copy_within_one_file)
{
	uint64_t ino = create(ROOT, "f");
	struct fring_copy_range_args c = { .size = sizeof(c), .nodeid_in = ino,
					   .nodeid_out = ino, .off_in = 0,
					   .off_out = 1000, .len = 3 };

	cr_assert_eq(write_(ino, 0, "abc", 3), 3);
	/* The destination grows the very chunk the source lives in. */
	O->copy_file_range(inst, rq(), &c);
	cr_assert_eq(R.kind, K_WRITE);
	cr_assert_eq(R.len, 3);
	cr_assert_eq(read_(ino, 1000, 3), 3);
	cr_assert_eq(memcmp(R.data, "abc", 3), 0);
	cr_assert_eq(attr_of(ino).size, 1003);
}

/* Threads hammering one instance through their own requests. */
struct worker {
	int id;
	int failures;
};

static void *hammer(void *arg)
{
	struct worker *w = arg;
	struct fring_req *r = calloc(1, sizeof(*r));
	char name[32], buf[256];
	uint64_t dir;

	r->dir_budget = 4096;
#define RESET() do { free(r->data); free(r->dir); memset(r, 0, sizeof(*r)); \
		r->dir_budget = 4096; } while (0)
	snprintf(name, sizeof(name), "t%d", w->id);
	struct fring_make_args m = { .size = sizeof(m), .namelen = (uint32_t)strlen(name),
				     .parent = ROOT, .name = name, .mode = S_IFDIR | 0755 };
	O->mkdir(inst, r, &m);
	dir = r->e.ino;
	for (int i = 0; i < 2000; i++) {
		char fname[32];
		uint64_t ino;

		snprintf(fname, sizeof(fname), "f%d", i % 37);
		RESET();
		struct fring_make_args c = { .size = sizeof(c),
			.namelen = (uint32_t)strlen(fname), .parent = dir,
			.name = fname, .mode = S_IFREG | 0644, .flags = O_RDWR };
		O->create(inst, r, &c);
		if (r->kind != K_CREATE) {
			w->failures++;
			continue;
		}
		ino = r->e.ino;
		memset(buf, w->id + i, sizeof(buf));
		RESET();
		struct fring_write_args wa = { .size = sizeof(wa), .len = sizeof(buf),
			.nodeid = ino, .fh = ino, .offset = (uint64_t)i * 1000, .data = buf };
		O->write(inst, r, &wa);
		RESET();
		struct fring_read_args ra = { .size = sizeof(ra), .len = sizeof(buf),
			.nodeid = ino, .fh = ino, .offset = (uint64_t)i * 1000 };
		O->read(inst, r, &ra);
		if (r->kind != K_DATA || r->len != sizeof(buf) ||
		    memcmp(r->data, buf, sizeof(buf)))
			w->failures++;
		RESET();
		struct fring_read_args da = { .size = sizeof(da), .len = 4096, .nodeid = ROOT };
		O->readdirplus(inst, r, &da);
		for (uint32_t k = 0; k < r->ndir; k++) {
			struct fring_forget_one f = { r->dir[k].ino, 1 };
			if (strcmp(r->dir[k].name, ".") && strcmp(r->dir[k].name, ".."))
				O->forget(inst, &f, 1);
		}
		RESET();
		struct fring_release_args rel = { .size = sizeof(rel), .nodeid = ino, .fh = ino };
		O->release(inst, r, &rel);
		if (i % 3 == 0) {
			RESET();
			struct fring_name_args u = { sizeof(u), (uint32_t)strlen(fname), dir, fname };
			O->unlink(inst, r, &u);
		}
		struct fring_forget_one f = { ino, 1 };
		O->forget(inst, &f, 1);
	}
#undef RESET
	free(r->data);
	free(r->dir);
	free(r);
	return NULL;
}

Test(memfs, parallel_threads)
{
	enum { T = 4 };
	pthread_t th[T];
	struct worker w[T];
	struct fring_node_args n = { .size = sizeof(n), .nodeid = ROOT };

	for (int i = 0; i < T; i++) {
		w[i] = (struct worker){ .id = i };
		cr_assert_eq(pthread_create(&th[i], NULL, hammer, &w[i]), 0);
	}
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(w[i].failures, 0, "thread %d", i);
	}
	/* A name survives if its last round (i % 37 == k) did not unlink. */
	int alive = 0;
	for (int k = 0; k < 37; k++) {
		int last = k + (1999 - k) / 37 * 37;
		alive += last % 3 != 0;
	}
	O->statfs(inst, rq(), &n);
	cr_assert_eq(R.st.files - R.st.ffree, 1 + T + T * alive,
		     "root, dirs and their files; nothing leaked (%llu)",
		     (unsigned long long)(R.st.files - R.st.ffree));
}

Test(memfs, check_permissions_option)
{
	static const char *const opts[] = { "uid", "1000", "gid", "1000",
					    "check_permissions", "true", NULL };
	uint64_t d, f;

	teardown();
	setup_with(opts);
	cr_assert_eq(P->config(inst, "check_permissions", "maybe"), -EINVAL);
	d = mkdir_(ROOT, "d");          /* 0755, uid 1000 */
	f = create(d, "f");             /* 0644 */
	release(f, f);
	cur_uid = 2000;
	cur_gid = 2000;
	cr_assert_eq(make(O->create, d, "x", S_IFREG | 0644, NULL, O_RDWR),
		     -EACCES);
	cr_assert_eq(make(O->mkdir, d, "x", S_IFDIR | 0755, NULL, 0), -EACCES);
	cr_assert_eq(name_op(O->unlink, d, "f"), -EACCES);
	cr_assert_eq(rename_(d, "f", ROOT, "g", 0), -EACCES);
	cr_assert_eq(open_(f, O_RDONLY), 0);
	cr_assert_eq(open_(f, O_WRONLY), -EACCES);
	cr_assert_eq(open_(f, O_RDONLY | O_TRUNC), -EACCES);
	cr_assert_eq(setattr(f, FRING_SET_SIZE, 0, 0), -EACCES);
	cr_assert_eq(xattr(O->setxattr, f, "user.a", "v", 0, 0), -EACCES);
	cr_assert_eq(lookup(d, "f"), 0);
	/* The owner is bound by the mode bits too; root is not. */
	cur_uid = 1000;
	cur_gid = 1000;
	cr_assert_eq(setattr(d, FRING_SET_MODE, 0, 0600), 0);
	cr_assert_eq(lookup(d, "f"), -EACCES);
	cur_uid = 0;
	cr_assert_eq(lookup(d, "f"), 0);
	cr_assert_eq(open_(f, O_RDWR), 0);
}

/* ---- ABI 1.7 takeover state: save, load into a new instance ---- */

/* Save inst's state to a memfd, destroy inst, make a fresh instance with
 * the same options and load the state (the version as saved + bump). */
static int takeover(uint32_t bump)
{
	static const char *const opts[] = { "uid", "1000", "gid", "1000", NULL };
	struct fring_conn conn = { .size = sizeof(conn) };
	uint32_t version = 0;
	int fd = memfd_create("memfs-state", MFD_CLOEXEC), ret;
	void *old = inst;

	cr_assert(fd >= 0);
	cr_assert_eq(P->state_save(inst, fd, &version), 0);
	cr_assert_eq(version, 1);
	cr_assert_eq(P->create(NULL, &inst), 0);
	for (const char *const *o = opts; o[0]; o += 2)
		cr_assert_eq(P->config(inst, o[0], o[1]), 0);
	cr_assert_eq(P->config_complete(inst), 0);
	ret = P->state_load(inst, fd, version + bump);
	close(fd);
	if (ret) {
		P->destroy(inst);
		inst = old; /* the old one keeps serving */
		return ret;
	}
	P->destroy(old);
	cr_assert_eq(P->init(inst, &conn), 0);
	return 0;
}

Test(memfs, state_round_trip)
{
	static char big[3 * CHUNK + 100];
	uint64_t d, f, g;
	struct fring_attr fa;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + 1);
	d = mkdir_(ROOT, "dir");
	f = create(d, "file");
	cr_assert_eq(write_(f, 0, big, sizeof(big)), (int)sizeof(big));
	/* A hole: chunk 5 and beyond chunk 3 are absent. */
	cr_assert_eq(write_(f, 6 * CHUNK, "tail", 4), 4);
	g = create(ROOT, "g");
	cr_assert_eq(link_(g, d, "g2"), 0);
	cr_assert_eq(make(O->symlink, ROOT, "ln", S_IFLNK | 0777, "dir/file",
			  0), 0);
	fa = attr_of(f);

	cr_assert_eq(takeover(0), 0);
	cr_assert_eq(lookup(ROOT, "dir"), 0);
	cr_assert_eq(R.e.ino, d);
	cr_assert_eq(lookup(d, "file"), 0);
	cr_assert_eq(R.e.ino, f);
	cr_assert_eq(attr_of(f).size, fa.size);
	cr_assert_eq(attr_of(f).mtime_sec, fa.mtime_sec);
	cr_assert_eq(attr_of(f).mtime_nsec, fa.mtime_nsec);
	cr_assert_eq(read_(f, 0, sizeof(big)), (int)sizeof(big));
	cr_assert_eq(memcmp(R.data, big, sizeof(big)), 0);
	cr_assert_eq(read_(f, 5 * CHUNK, 8), 8);
	cr_assert_eq(memcmp(R.data, "\0\0\0\0\0\0\0\0", 8), 0);
	cr_assert_eq(read_(f, 6 * CHUNK, 4), 4);
	cr_assert_eq(memcmp(R.data, "tail", 4), 0);
	cr_assert_eq(lookup(d, "g2"), 0);
	cr_assert_eq(R.e.ino, g);
	cr_assert_eq(attr_of(g).nlink, 2);
	cr_assert_eq(lookup(ROOT, "ln"), 0);
	/* New inodes go on from the old counter: no node id is reused. */
	cr_assert_gt(create(ROOT, "new"), g);
}

Test(memfs, state_newer_version_refused)
{
	uint64_t f = create(ROOT, "kept");

	cr_assert_eq(takeover(1), -EPROTO);
	cr_assert_eq(lookup(ROOT, "kept"), 0);
	cr_assert_eq(R.e.ino, f);
}
