// SPDX-License-Identifier: MIT
/*
 * The passthrough plugin, driven in process: dlopen the built .so, hand it
 * the fake host of fakehost.h, whose replies land in the struct fring_req
 * it defines (the ABI keeps the type opaque to plugins), and call the ops
 * directly on a scratch source directory. Criterion forks per test, so
 * descriptor counts start fresh in each.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fring/plugin.h>

#include "fakehost.h"

#define PLUGIN FRING_BUILD_DIR "/lib/fring/plugins/passthrough.so"
#define ROOT 1
#define MAXDIR 512

/* One per thread, so the stress test's threads do not share replies. */
static __thread struct fring_req R;

static const struct fring_plugin *P;
static const struct fring_fs_ops *O;
static void *inst;
static void *dl;
static char src[] = "/tmp/fring-pt-XXXXXX";

static fring_req *req(void)
{
	fake_req_reset(&R);
	R.dir_cap = MAXDIR;
	return &R;
}

static void load(void)
{
	fring_plugin_entry_fn entry;

	dl = dlopen(PLUGIN, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(dl, "dlopen: %s", dlerror());
	entry = (fring_plugin_entry_fn)dlsym(dl, FRING_PLUGIN_ENTRY_SYMBOL);
	cr_assert_not_null(entry);
	P = entry(&fake_host);
	O = P->ops;
	cr_assert_eq(P->thread_model, FRING_THREAD_PARALLEL);
	cr_assert_eq(P->create(NULL, &inst), 0);
}

static const char *cur_handles, *cur_fd_cache;

static void start(const char *handles, const char *fd_cache)
{
	struct fring_conn conn = { .size = sizeof(conn) };

	cur_handles = handles;
	cur_fd_cache = fd_cache;
	cr_assert_not_null(mkdtemp(src));
	load();
	cr_assert_eq(P->config(inst, "source", src), 0);
	cr_assert_eq(P->config(inst, "handles", handles), 0);
	cr_assert_eq(P->config(inst, "fd_cache", fd_cache), 0);
	cr_assert_eq(P->config_complete(inst), 0);
	cr_assert_eq(P->init(inst, &conn), 0);
	/* As root on tmpfs/ext4/xfs/btrfs, handle mode must really be on. */
	if (!strcmp(handles, "true") && geteuid() == 0)
		cr_assert_not_null(strstr(fake_serving, "file handles"), "%s",
				   fake_serving);
	else
		cr_assert_not_null(strstr(fake_serving, "paths"), "%s",
				   fake_serving);
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *f)
{
	return remove(p);
}

static void stop(void)
{
	P->destroy(inst);
	nftw(src, rm_one, 64, FTW_DEPTH | FTW_PHYS);
}

static void start_handles(void) { start("true", "256"); }
static void start_paths(void) { start("false", "256"); }

/* ---- op wrappers: each returns 0 or the replied -errno ---- */

static int lookup(uint64_t parent, const char *name, struct fring_entry *e)
{
	struct fring_name_args a = { sizeof(a), (uint32_t)strlen(name),
				     parent, name };

	O->lookup(inst, req(), &a);
	cr_assert_eq(R.nreplies, 1);
	if (R.kind == K_ERR)
		return R.err;
	cr_assert_eq(R.kind, K_ENTRY);
	*e = R.e;
	return R.e.ino ? 0 : -ENOENT;
}

static void forget(uint64_t nodeid, uint64_t n)
{
	struct fring_forget_one f = { nodeid, n };

	O->forget(inst, &f, 1);
}

static int getattr(uint64_t nodeid, uint64_t fh, struct fring_attr *attr)
{
	struct fring_getattr_args a = { sizeof(a), fh ? FRING_GETATTR_FH : 0,
					nodeid, fh };

	O->getattr(inst, req(), &a);
	if (R.kind == K_ERR)
		return R.err;
	cr_assert_eq(R.kind, K_ATTR);
	*attr = R.attr;
	return 0;
}

static struct fring_make_args make(uint64_t parent, const char *name,
				   uint32_t mode, uint32_t flags)
{
	struct fring_make_args a = { .size = sizeof(a),
				     .namelen = (uint32_t)strlen(name),
				     .parent = parent, .name = name,
				     .mode = mode, .flags = flags };
	return a;
}

static int create(uint64_t parent, const char *name, uint64_t *fh,
		  struct fring_entry *e)
{
	struct fring_make_args a = make(parent, name, S_IFREG | 0644, O_RDWR);

	O->create(inst, req(), &a);
	if (R.kind == K_ERR)
		return R.err;
	cr_assert_eq(R.kind, K_CREATE);
	*fh = R.o.fh;
	*e = R.e;
	return 0;
}

static int mkdir_(uint64_t parent, const char *name, struct fring_entry *e)
{
	struct fring_make_args a = make(parent, name, S_IFDIR | 0755, 0);

	O->mkdir(inst, req(), &a);
	if (R.kind == K_ERR)
		return R.err;
	*e = R.e;
	return 0;
}

static void release(uint64_t nodeid, uint64_t fh)
{
	struct fring_release_args a = { .size = sizeof(a), .nodeid = nodeid,
					 .fh = fh };

	O->release(inst, req(), &a);
	cr_assert_eq(R.err, 0);
}

static void write_str(uint64_t fh, const char *s, uint64_t off)
{
	struct fring_write_args a = { .size = sizeof(a),
				      .len = (uint32_t)strlen(s), .fh = fh,
				      .offset = off, .data = s };

	O->write(inst, req(), &a);
	cr_assert_eq(R.kind, K_WRITE);
	cr_assert_eq(R.len, strlen(s));
}

static const char *read_str(uint64_t fh, uint32_t len, uint64_t off)
{
	struct fring_read_args a = { .size = sizeof(a), .len = len, .fh = fh,
				     .offset = off };

	O->read(inst, req(), &a);
	cr_assert_eq(R.kind, K_DATA, "read failed: %d", R.err);
	return R.data; /* NUL-terminated by the fake host */
}

static int rename_(uint64_t p, const char *n, uint64_t np, const char *nn,
		   uint32_t flags)
{
	struct fring_rename_args a = { sizeof(a), flags, p, np, n, nn,
				       (uint32_t)strlen(n),
				       (uint32_t)strlen(nn) };

	O->rename(inst, req(), &a);
	cr_assert_eq(R.kind, K_ERR);
	return R.err;
}

static int unlink_(uint64_t parent, const char *name)
{
	struct fring_name_args a = { sizeof(a), (uint32_t)strlen(name),
				     parent, name };

	O->unlink(inst, req(), &a);
	cr_assert_eq(R.kind, K_ERR);
	return R.err;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the DIR's own fd */
}

static void put_file(const char *rel, const char *content)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", src, rel);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs(content, f);
	fclose(f);
}

/* Each body runs once with file handles and once in path mode. */
#define BOTH(name)                                                            \
	static void body_##name(void);                                        \
	Test(handles, name, .init = start_handles, .fini = stop)              \
	{                                                                     \
		body_##name();                                                \
	}                                                                     \
	Test(paths, name, .init = start_paths, .fini = stop)                  \
	{                                                                     \
		body_##name();                                                \
	}                                                                     \
	static void body_##name(void)

BOTH(lookup_getattr)
{
	struct fring_entry e, d, e2;
	struct fring_attr attr;
	char p[512];
	struct stat st;

	put_file("a", "12345");
	snprintf(p, sizeof(p), "%s/sub", src);
	cr_assert_eq(mkdir(p, 0755), 0);
	put_file("sub/b", "xy");

	cr_assert_eq(lookup(ROOT, "a", &e), 0);
	cr_assert_eq(e.attr.size, 5);
	cr_assert(S_ISREG(e.attr.mode));
	snprintf(p, sizeof(p), "%s/a", src);
	stat(p, &st);
	cr_assert_eq(e.attr.ino, st.st_ino);
	cr_assert_eq(getattr(e.ino, 0, &attr), 0);
	cr_assert_eq(attr.size, 5);

	/* The same inode found twice is one node. */
	cr_assert_eq(lookup(ROOT, "a", &e2), 0);
	cr_assert_eq(e2.ino, e.ino);
	cr_assert_eq(e2.generation, e.generation);

	cr_assert_eq(lookup(ROOT, "sub", &d), 0);
	cr_assert(S_ISDIR(d.attr.mode));
	cr_assert_eq(lookup(d.ino, "b", &e2), 0);
	cr_assert_eq(e2.attr.size, 2);
	cr_assert_eq(lookup(ROOT, "missing", &e2), -ENOENT);
	cr_assert_eq(getattr(ROOT, 0, &attr), 0);
	cr_assert(S_ISDIR(attr.mode));
	forget(e.ino, 2);
	cr_assert_eq(getattr(e.ino, 0, &attr), -ESTALE, "freed after forget");
}

BOTH(create_write_read)
{
	struct fring_entry e;
	uint64_t fh;
	char p[512], buf[16] = { 0 };
	int fd;

	cr_assert_eq(create(ROOT, "f", &fh, &e), 0);
	write_str(fh, "hello world", 0);
	cr_assert_str_eq(read_str(fh, 5, 0), "hello");
	cr_assert_str_eq(read_str(fh, 100, 6), "world");
	release(e.ino, fh);

	snprintf(p, sizeof(p), "%s/f", src);
	fd = open(p, O_RDONLY);
	cr_assert_eq(read(fd, buf, sizeof(buf) - 1), 11);
	close(fd);

	/* Reopen through the inode and append. */
	struct fring_open_args oa = { sizeof(oa), O_RDWR, e.ino, 0, 0 };

	O->open(inst, req(), &oa);
	cr_assert_eq(R.kind, K_OPEN);
	fh = R.o.fh;
	write_str(fh, "!", 11);
	cr_assert_str_eq(read_str(fh, 100, 0), "hello world!");
	release(e.ino, fh);
	forget(e.ino, 1);
}

BOTH(rename_keeps_fh)
{
	struct fring_entry e, d, e2;
	struct fring_attr attr;
	uint64_t fh;

	cr_assert_eq(mkdir_(ROOT, "dir", &d), 0);
	cr_assert_eq(create(ROOT, "old", &fh, &e), 0);
	write_str(fh, "data", 0);
	cr_assert_eq(rename_(ROOT, "old", d.ino, "new", 0), 0);
	cr_assert_str_eq(read_str(fh, 10, 0), "data");
	write_str(fh, "more", 4);
	/* The node still resolves without its fh at its new place. */
	cr_assert_eq(getattr(e.ino, 0, &attr), 0);
	cr_assert_eq(attr.size, 8);
	cr_assert_eq(lookup(d.ino, "new", &e2), 0);
	cr_assert_eq(e2.ino, e.ino);
	cr_assert_eq(lookup(ROOT, "old", &e2), -ENOENT);

	/* Exchange swaps the names of two known inodes. */
	struct fring_entry x;
	uint64_t fh2;

	cr_assert_eq(create(ROOT, "x", &fh2, &x), 0);
	cr_assert_eq(rename_(ROOT, "x", d.ino, "new", RENAME_EXCHANGE), 0);
	cr_assert_eq(lookup(ROOT, "x", &e2), 0);
	cr_assert_eq(e2.ino, e.ino);
	cr_assert_eq(getattr(x.ino, 0, &attr), 0);
	cr_assert_eq(attr.size, 0);
	cr_assert_eq(rename_(ROOT, "x", d.ino, "new", RENAME_NOREPLACE),
		     -EEXIST);
	release(e.ino, fh);
	release(x.ino, fh2);
}

BOTH(unlink_open_file)
{
	struct fring_entry e;
	struct fring_attr attr;
	uint64_t fh;

	cr_assert_eq(create(ROOT, "gone", &fh, &e), 0);
	write_str(fh, "still here", 0);
	cr_assert_eq(unlink_(ROOT, "gone"), 0);
	cr_assert_str_eq(read_str(fh, 64, 0), "still here");
	cr_assert_eq(getattr(e.ino, fh, &attr), 0);
	cr_assert_eq(attr.nlink, 0);
	/* Without the fh too: by handle, or the fd pinned in path mode. */
	cr_assert_eq(getattr(e.ino, 0, &attr), 0);
	cr_assert_eq(attr.size, 10);
	release(e.ino, fh);
	forget(e.ino, 1);
	cr_assert_eq(unlink_(ROOT, "gone"), -ENOENT);
}

BOTH(dirs_links_attrs)
{
	struct fring_entry d, s, f, l;
	struct fring_attr attr;
	uint64_t fh;

	cr_assert_eq(mkdir_(ROOT, "d", &d), 0);
	cr_assert(S_ISDIR(d.attr.mode));
	cr_assert_eq(mkdir_(ROOT, "d", &s), -EEXIST);

	struct fring_make_args sa = make(d.ino, "sl", S_IFLNK | 0777, 0);

	sa.link_target = "../target";
	sa.link_target_len = 9;
	O->symlink(inst, req(), &sa);
	cr_assert_eq(R.kind, K_ENTRY);
	s = R.e;
	cr_assert(S_ISLNK(s.attr.mode));
	struct fring_node_args na = { sizeof(na), 0, s.ino };

	O->readlink(inst, req(), &na);
	cr_assert_eq(R.kind, K_LINK);
	cr_assert_eq(R.len, 9);
	cr_assert_eq(memcmp(R.data, "../target", 9), 0);

	struct fring_make_args fa = make(ROOT, "fifo", S_IFIFO | 0600, 0);

	O->mknod(inst, req(), &fa);
	cr_assert_eq(R.kind, K_ENTRY);
	cr_assert(S_ISFIFO(R.e.attr.mode));

	cr_assert_eq(create(ROOT, "f", &fh, &f), 0);
	release(f.ino, fh);
	struct fring_link_args la = { sizeof(la), 2, f.ino, d.ino, "hl" };

	O->link(inst, req(), &la);
	cr_assert_eq(R.kind, K_ENTRY, "link: %d", R.err);
	l = R.e;
	cr_assert_eq(l.ino, f.ino);
	cr_assert_eq(l.attr.nlink, 2);

	/* setattr: mode, size, times, without an fh. */
	struct fring_setattr_args st = {
		.size = sizeof(st), .nodeid = f.ino,
		.valid = FRING_SET_MODE | FRING_SET_SIZE | FRING_SET_MTIME,
		.mode = S_IFREG | 0600, .file_size = 4096, .mtime_sec = 1000,
	};
	O->setattr(inst, req(), &st);
	cr_assert_eq(R.kind, K_ATTR, "setattr: %d", R.err);
	cr_assert_eq(R.attr.mode & 07777, 0600);
	cr_assert_eq(R.attr.size, 4096);
	cr_assert_eq(R.attr.mtime_sec, 1000);
	cr_assert_eq(getattr(l.ino, 0, &attr), 0);

	struct fring_node_args sf = { sizeof(sf), 0, ROOT };

	O->statfs(inst, req(), &sf);
	cr_assert_eq(R.kind, K_STATFS);

	/* Permission bits survive the process umask (022 is typical). */
	umask(022);
	struct fring_make_args ma = make(ROOT, "open", S_IFDIR | 0777, 0);

	O->mkdir(inst, req(), &ma);
	cr_assert_eq(R.kind, K_ENTRY);
	cr_assert_eq(R.e.attr.mode & 0777, 0777);
}

BOTH(xattrs)
{
	struct fring_entry f;
	uint64_t fh;

	cr_assert_eq(create(ROOT, "x", &fh, &f), 0);
	struct fring_xattr_args a = { .size = sizeof(a), .nodeid = f.ino,
				      .name = "user.k", .namelen = 6,
				      .value = "val", .value_len = 3 };
	O->setxattr(inst, req(), &a);
	cr_assert_eq(R.kind, K_ERR);
	if (R.err == -EOPNOTSUPP)
		cr_skip_test("no user xattrs on %s", src);
	cr_assert_eq(R.err, 0);
	a.max = 0;
	O->getxattr(inst, req(), &a);
	cr_assert_eq(R.kind, K_XSIZE);
	cr_assert_eq(R.len, 3);
	a.max = 64;
	O->getxattr(inst, req(), &a);
	cr_assert_eq(R.kind, K_DATA);
	cr_assert_eq(memcmp(R.data, "val", 3), 0);
	a.max = 1;
	O->getxattr(inst, req(), &a);
	cr_assert_eq(R.err, -ERANGE);
	a.max = 64;
	O->listxattr(inst, req(), &a);
	cr_assert_eq(R.kind, K_DATA);
	cr_assert_str_eq(R.data, "user.k");
	O->removexattr(inst, req(), &a);
	cr_assert_eq(R.err, 0);
	O->getxattr(inst, req(), &a);
	cr_assert_eq(R.err, -ENODATA);
	release(f.ino, fh);
}

/* Lists the root in pages of `cap` entries, following next_off. */
static int list_all(bool plus, uint32_t cap, char (*names)[64], int max)
{
	struct fring_open_args oa = { sizeof(oa), O_RDONLY, ROOT, 0, 0 };
	uint64_t off = 0, dh;
	int n = 0;

	O->opendir(inst, req(), &oa);
	cr_assert_eq(R.kind, K_OPEN);
	dh = R.o.fh;
	for (;;) {
		struct fring_read_args ra = { .size = sizeof(ra), .len = 4096,
					      .nodeid = ROOT, .fh = dh,
					      .offset = off };
		req();
		R.dir_cap = cap;
		(plus ? O->readdirplus : O->readdir)(inst, &R, &ra);
		cr_assert_eq(R.kind, K_DIR, "readdir: %d", R.err);
		if (!R.ndir)
			break;
		for (uint32_t i = 0; i < R.ndir; i++) {
			bool dot = !strcmp(R.dir[i].name, ".") ||
				   !strcmp(R.dir[i].name, "..");
			cr_assert_lt(n, max);
			snprintf(names[n++], sizeof(names[0]), "%.63s",
				 R.dir[i].name);
			/* Dots: a plain entry with the real d_ino. */
			cr_assert_neq(R.dir[i].ino, 0);
			cr_assert_eq(R.dir[i].plus, plus && !dot);
			if (R.dir[i].plus) {
				cr_assert_neq(R.dir[i].node, 0);
				forget(R.dir[i].node, 1);
			}
		}
		off = R.dir[R.ndir - 1].off;
	}
	struct fring_release_args rel = { .size = sizeof(rel), .nodeid = ROOT,
					  .fh = dh };
	O->releasedir(inst, req(), &rel);
	return n;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

BOTH(readdir_paged)
{
	static char names[256][64];
	char n[32];

	for (int i = 0; i < 100; i++) {
		snprintf(n, sizeof(n), "file%03d", i);
		put_file(n, "");
	}
	for (int plus = 0; plus < 2; plus++) {
		int cnt = list_all(plus, 7, names, 256);

		cr_assert_eq(cnt, 102);
		qsort(names, (size_t)cnt, sizeof(names[0]), cmp_name);
		cr_assert_str_eq(names[0], ".");
		cr_assert_str_eq(names[1], "..");
		for (int i = 0; i < 100; i++) {
			snprintf(n, sizeof(n), "file%03d", i);
			cr_assert_str_eq(names[i + 2], n);
		}
	}
}

/* Many more known inodes than cached descriptors: the process must not
 * hold a descriptor per inode. */
static void many_files(int count)
{
	struct fring_entry e;
	struct fring_attr attr;
	uint64_t *ids = calloc((size_t)count, sizeof(*ids));
	int base = count_fds(), peak = 0;
	uint64_t fh;
	char n[32];

	for (int i = 0; i < count; i++) {
		snprintf(n, sizeof(n), "f%05d", i);
		cr_assert_eq(create(ROOT, n, &fh, &e), 0, "create %s", n);
		release(e.ino, fh);
		forget(e.ino, 1);
	}
	for (int i = 0; i < count; i++) {
		snprintf(n, sizeof(n), "f%05d", i);
		cr_assert_eq(lookup(ROOT, n, &e), 0, "lookup %s", n);
		ids[i] = e.ino;
		if (i % 1000 == 0 && count_fds() > peak)
			peak = count_fds();
	}
	/* All known at once, and each still reachable (reopened on demand). */
	for (int i = 0; i < count; i += 7) {
		cr_assert_eq(getattr(ids[i], 0, &attr), 0, "getattr %d", i);
		if (i % 700 == 0 && count_fds() > peak)
			peak = count_fds();
	}
	if (count_fds() > peak)
		peak = count_fds();
	cr_log_info("fds: %d before, peak %d", base, peak);
	cr_assert_lt(peak - base, 256 + 100, "fds grew by %d", peak - base);
	for (int i = 0; i < count; i++)
		forget(ids[i], 1);
	cr_assert_eq(getattr(ids[0], 0, &attr), -ESTALE);
	cr_assert_leq(count_fds(), base + 1);
	free(ids);
}

Test(handles, many_files, .init = start_handles, .fini = stop)
{
	many_files(30000);
}

Test(paths, many_files, .init = start_paths, .fini = stop)
{
	many_files(30000);
}

Test(handles, creates_as_caller, .init = start_handles, .fini = stop)
{
	struct fring_entry e;
	uint64_t fh;
	char p[512];
	struct stat st;

	if (geteuid() != 0)
		cr_skip_test("needs root to switch fsuid");
	chmod(src, 0777);
	struct fring_make_args a = make(ROOT, "mine", S_IFREG | 0644, O_RDWR);

	req();
	R.uid = 65534;
	R.gid = 65534;
	O->create(inst, &R, &a);
	cr_assert_eq(R.kind, K_CREATE, "create: %d", R.err);
	e = R.e;
	fh = R.o.fh;
	cr_assert_eq(e.attr.uid, 65534);
	snprintf(p, sizeof(p), "%s/mine", src);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_uid, 65534);
	cr_assert_eq(st.st_gid, 65534);
	release(e.ino, fh);
	/* The thread is root again. */
	cr_assert_eq(mkdir_(ROOT, "rootdir", &e), 0);
	cr_assert_eq(e.attr.uid, 0);
}

Test(options, errors)
{
	load();
	cr_assert_eq(P->config(inst, "bogus", "1"), -EINVAL);
	cr_assert_eq(P->config(inst, "fd_cache", "0"), -EINVAL);
	cr_assert_eq(P->config(inst, "attr_timeout", "-1"), -EINVAL);
	cr_assert_eq(P->config(inst, "writeback", "maybe"), -EINVAL);
	cr_assert_eq(P->config_complete(inst), -EINVAL, "source is required");
	P->destroy(inst);

	load();
	cr_assert_eq(P->config(inst, "source", "/etc/passwd"), 0);
	cr_assert_eq(P->config_complete(inst), -ENOTDIR);
	P->destroy(inst);

	load();
	cr_assert_eq(P->config(inst, "source", "/nonexistent/dir"), 0);
	cr_assert_eq(P->config_complete(inst), -ENOENT);
	P->destroy(inst);
}

Test(options, writeback_init)
{
	struct fring_conn conn = { .size = sizeof(conn),
				   .capable = FRING_CAP_WRITEBACK_CACHE };

	load();
	cr_assert_eq(P->config(inst, "source", "/tmp"), 0);
	cr_assert_eq(P->config(inst, "writeback", "true"), 0);
	cr_assert_eq(P->config_complete(inst), 0);
	cr_assert_eq(P->init(inst, &conn), 0);
	cr_assert(conn.want & FRING_CAP_WRITEBACK_CACHE);
	P->destroy(inst);
}

static int open_(uint64_t nodeid, uint32_t flags, struct fring_open_out *o)
{
	struct fring_open_args oa = { sizeof(oa), flags, nodeid, 0, 0 };

	O->open(inst, req(), &oa);
	if (R.kind == K_ERR)
		return R.err;
	cr_assert_eq(R.kind, K_OPEN);
	*o = R.o;
	return 0;
}

/* kernel_passthrough: every open of an inode shares one backing id, the
 * last release closes it, and EPERM turns the mode off for good. */
Test(handles, kernel_passthrough)
{
	struct fring_conn conn = { .size = sizeof(conn),
				   .capable = FRING_CAP_PASSTHROUGH };
	struct fring_open_out a, b, c;
	struct fring_entry e, e2;
	uint64_t fh;

	cr_assert_not_null(mkdtemp(src));
	load();
	cr_assert_eq(P->config(inst, "source", src), 0);
	cr_assert_eq(P->config(inst, "kernel_passthrough", "true"), 0);
	cr_assert_eq(P->config_complete(inst), 0);
	cr_assert_eq(P->init(inst, &conn), 0);
	cr_assert(conn.want & FRING_CAP_PASSTHROUGH);

	cr_assert_eq(create(ROOT, "f", &fh, &e), 0);
	cr_expect(R.o.open_flags & FRING_FOPEN_PASSTHROUGH);
	cr_expect_eq(R.o.backing_id, 7);
	cr_assert_eq(open_(e.ino, O_RDONLY, &a), 0);
	cr_assert_eq(open_(e.ino, O_WRONLY | O_APPEND | O_DIRECT, &b), 0);
	cr_expect_eq(fake_backing_opens, 1);       /* one per inode */
	cr_expect(a.open_flags & FRING_FOPEN_PASSTHROUGH);
	cr_expect(b.open_flags & FRING_FOPEN_PASSTHROUGH);
	cr_expect(!(b.open_flags & FRING_FOPEN_DIRECT_IO)); /* would override */
	cr_expect_eq(a.backing_id, 7);
	cr_expect_eq(b.backing_id, 7);
	release(e.ino, fh);
	release(e.ino, a.fh);
	cr_expect_eq(fake_backing_closes, 0);
	release(e.ino, b.fh);
	cr_expect_eq(fake_backing_closes, 1);      /* at the last release */
	cr_expect_eq(fake_backing_closed, 7);
	fake_backing_result = 9;
	cr_assert_eq(open_(e.ino, O_RDWR, &c), 0);
	cr_expect_eq(c.backing_id, 9);             /* registered again */
	release(e.ino, c.fh);

	/* Not allowed (no CAP_SYS_ADMIN): plain opens from then on. */
	fake_backing_result = -EPERM;
	cr_assert_eq(open_(e.ino, O_RDONLY, &a), 0);
	cr_expect(!(a.open_flags & FRING_FOPEN_PASSTHROUGH));
	cr_expect_eq(a.backing_id, 0);
	cr_assert_eq(mkdir_(ROOT, "d", &e2), 0);
	cr_assert_eq(create(e2.ino, "g", &fh, &e2), 0);
	cr_expect(!(R.o.open_flags & FRING_FOPEN_PASSTHROUGH));
	release(e2.ino, fh);
	cr_assert_eq(open_(e2.ino, O_RDONLY, &b), 0);
	cr_expect(!(b.open_flags & FRING_FOPEN_PASSTHROUGH));
	cr_expect_eq(fake_backing_opens, 3);       /* not tried again */
	release(e.ino, a.fh);
	release(e2.ino, b.fh);
	cr_expect_eq(fake_backing_closes, 2);      /* plain opens close none */
	fake_backing_result = 7;
	stop();
}

/* Threads looking up, stat()ing, renaming and forgetting the same files
 * through a tiny descriptor cache: refcounts, eviction and (in path mode)
 * renames racing reopen-by-path must never lose an inode. */
#define STRESS_FILES 200
#define STRESS_THREADS 4

static int stress_errors;

static void *stress_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	struct fring_entry e;
	struct fring_attr attr;
	char n[32], m[32];

	for (int i = 0; i < 3000; i++) {
		int k = (int)(rand_r(&seed) % STRESS_FILES);
		int err;

		snprintf(n, sizeof(n), "s%03d", k);
		snprintf(m, sizeof(m), "t%03d", k);
		err = lookup(ROOT, n, &e);
		if (err == -ENOENT)
			err = lookup(ROOT, m, &e);
		if (err == -ENOENT)
			continue; /* mid-rename by another thread */
		if (err) {
			__atomic_add_fetch(&stress_errors, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (getattr(e.ino, 0, &attr) || !S_ISREG(attr.mode))
			__atomic_add_fetch(&stress_errors, 1, __ATOMIC_RELAXED);
		if (rand_r(&seed) % 4 == 0) {
			rename_(ROOT, n, ROOT, m, 0);
			rename_(ROOT, m, ROOT, n, 0);
		}
		if (getattr(e.ino, 0, &attr))
			__atomic_add_fetch(&stress_errors, 1, __ATOMIC_RELAXED);
		forget(e.ino, 1);
	}
	return NULL;
}

static void stress(void)
{
	pthread_t t[STRESS_THREADS];
	char n[32];
	int base = count_fds();

	for (int i = 0; i < STRESS_FILES; i++) {
		snprintf(n, sizeof(n), "s%03d", i);
		put_file(n, "x");
	}
	for (int i = 0; i < STRESS_THREADS; i++)
		pthread_create(&t[i], NULL, stress_thread, (void *)(uintptr_t)i);
	for (int i = 0; i < STRESS_THREADS; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(stress_errors, 0, "%d failed operations", stress_errors);
	cr_assert_leq(count_fds(), base + 1, "descriptors left behind");
}

static void start_tiny_handles(void) { start("true", "4"); }
static void start_tiny_paths(void) { start("false", "4"); }

Test(handles, stress, .init = start_tiny_handles, .fini = stop)
{
	stress();
}

Test(paths, stress, .init = start_tiny_paths, .fini = stop)
{
	stress();
}

/* ---- O_TMPFILE (FUSE_TMPFILE) ---- */

static int tmpfile_(uint64_t parent, uint32_t flags, uint64_t *fh,
		    struct fring_entry *e)
{
	/* The kernel names the unborn dentry "/". */
	struct fring_make_args a = make(parent, "/", S_IFREG | 0640,
					flags | O_TMPFILE);

	O->tmpfile(inst, req(), &a);
	if (R.kind == K_ERR)
		return R.err;
	cr_assert_eq(R.kind, K_CREATE);
	*fh = R.o.fh;
	*e = R.e;
	return 0;
}

static int link_(uint64_t nodeid, uint64_t newparent, const char *name,
		 struct fring_entry *e)
{
	struct fring_link_args la = { sizeof(la), (uint32_t)strlen(name),
				      nodeid, newparent, name };

	O->link(inst, req(), &la);
	if (R.kind == K_ERR)
		return R.err;
	cr_assert_eq(R.kind, K_ENTRY);
	*e = R.e;
	return 0;
}

/* An unnamed inode stays reachable by nodeid however small the fd cache
 * (path mode has no name to reopen it by), gets a name by LINK, and
 * leaves no descriptor behind once released and forgotten. */
static void tmpfile_body(void)
{
	struct fring_entry e, d, n = { 0 }, x;
	struct fring_attr attr;
	uint64_t fh, others[12];
	char p[512], buf[32] = { 0 };
	int base = count_fds(), fd;
	DIR *dir;
	struct dirent *de;

	cr_assert_eq(mkdir_(ROOT, "sub", &d), 0);
	cr_assert_eq(tmpfile_(d.ino, O_RDWR, &fh, &e), 0);
	cr_assert(S_ISREG(e.attr.mode));
	cr_assert_eq(e.attr.mode & 07777, 0640);
	cr_assert_eq(e.attr.nlink, 0);
	cr_assert_neq(e.ino, ROOT);
	write_str(fh, "unnamed data", 0);
	cr_assert_str_eq(read_str(fh, 64, 0), "unnamed data");
	/* Nothing appeared in the backing directory. */
	snprintf(p, sizeof(p), "%s/sub", src);
	dir = opendir(p);
	while ((de = readdir(dir)))
		cr_assert(de->d_name[0] == '.', "backing dir has %s", de->d_name);
	closedir(dir);

	/* Fill the 4-entry cache many times over with other inodes, all
	 * still known: an unpinned descriptor would be evicted. */
	for (int i = 0; i < 12; i++) {
		char name[16];

		snprintf(name, sizeof(name), "other%d", i);
		put_file(name, "o");
		cr_assert_eq(lookup(ROOT, name, &x), 0);
		others[i] = x.ino;
	}
	cr_assert_eq(getattr(e.ino, 0, &attr), 0, "unnamed inode lost");
	cr_assert_eq(attr.size, 12);
	for (int i = 0; i < 12; i++)
		forget(others[i], 1);

	cr_assert_eq(link_(e.ino, d.ino, "named", &n), 0);
	cr_assert_eq(n.ino, e.ino, "the link names the same node");
	cr_assert_eq(n.generation, e.generation);
	cr_assert_eq(n.attr.nlink, 1);
	snprintf(p, sizeof(p), "%s/sub/named", src);
	fd = open(p, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(read(fd, buf, sizeof(buf) - 1), 12);
	close(fd);
	cr_assert_str_eq(buf, "unnamed data");
	/* Named now: it may leave the cache and be reopened. */
	for (int i = 0; i < 12; i++) {
		char name[16];

		snprintf(name, sizeof(name), "other%d", i);
		cr_assert_eq(lookup(ROOT, name, &x), 0);
		cr_assert_eq(getattr(x.ino, 0, &attr), 0);
		forget(x.ino, 1);
	}
	cr_assert_eq(getattr(e.ino, 0, &attr), 0);
	cr_assert_eq(attr.nlink, 1);
	release(e.ino, fh);
	forget(e.ino, 2);

	/* One never named: gone with its last reference, fd included. */
	cr_assert_eq(tmpfile_(ROOT, O_WRONLY, &fh, &e), 0);
	write_str(fh, "x", 0);
	release(e.ino, fh);
	forget(e.ino, 1);
	cr_assert_eq(getattr(e.ino, 0, &attr), -ESTALE);
	forget(d.ino, 1);
	cr_assert_leq(count_fds(), base + 1, "descriptors left behind");
}

Test(handles, tmpfile, .init = start_tiny_handles, .fini = stop)
{
	tmpfile_body();
}

Test(paths, tmpfile, .init = start_tiny_paths, .fini = stop)
{
	tmpfile_body();
}

/* Locks stay the kernel's (README "Locks"): without these ops the host
 * negotiates neither POSIX_LOCKS nor FLOCK_LOCKS, so the kernel keeps
 * them per mount. Serving some but not all would be worse than none. */
Test(options, locks_are_kernel_local)
{
	load();
	cr_assert_not_null(O->tmpfile);
	cr_assert_null(O->getlk);
	cr_assert_null(O->setlk);
	cr_assert_null(O->flock);
}

/* ---- ABI 1.7 takeover state: save, load into a new instance ---- */

/* Save inst's state to a memfd, make a fresh instance with the same
 * options, replay init and load the state (the version as saved + bump);
 * the old one is destroyed once the new one has loaded (it lives while
 * the load reopens its descriptors, as in `fring restart`). */
static int takeover(uint32_t bump)
{
	struct fring_conn conn = { .size = sizeof(conn) };
	uint32_t version = 0;
	int fd = memfd_create("pt-state", MFD_CLOEXEC), ret;
	void *old = inst;

	cr_assert(fd >= 0);
	cr_assert_eq(P->state_save(inst, fd, &version), 0);
	cr_assert_eq(version, 1);
	cr_assert_eq(P->create(NULL, &inst), 0);
	cr_assert_eq(P->config(inst, "source", src), 0);
	cr_assert_eq(P->config(inst, "handles", cur_handles), 0);
	cr_assert_eq(P->config(inst, "fd_cache", cur_fd_cache), 0);
	cr_assert_eq(P->config_complete(inst), 0);
	cr_assert_eq(P->init(inst, &conn), 0);
	ret = P->state_load(inst, fd, version + bump);
	close(fd);
	if (ret) {
		P->destroy(inst);
		inst = old; /* the old one keeps serving */
		return ret;
	}
	P->destroy(old);
	return 0;
}

static uint64_t opendir_(uint64_t nodeid)
{
	struct fring_open_args oa = { sizeof(oa), O_RDONLY, nodeid, 0, 0 };

	O->opendir(inst, req(), &oa);
	cr_assert_eq(R.kind, K_OPEN);
	return R.o.fh;
}

/* Entries a READDIR at offset 0 of directory handle dh returns. */
static uint32_t readdir_count(uint64_t nodeid, uint64_t dh)
{
	struct fring_read_args ra = {
		.size = sizeof(ra), .len = 4096, .nodeid = nodeid, .fh = dh
	};

	O->readdir(inst, req(), &ra);
	cr_assert_eq(R.kind, K_DIR, "readdir: %d", R.err);
	return R.ndir;
}

static void state_round_trip(void)
{
	struct fring_entry d, f, g, e, n;
	uint64_t fh, gh, dh, nh;
	struct fring_attr attr;

	cr_assert_eq(mkdir_(ROOT, "d", &d), 0);
	cr_assert_eq(create(d.ino, "f", &fh, &f), 0);
	write_str(fh, "hello", 0);
	cr_assert_eq(create(ROOT, "g", &gh, &g), 0);
	write_str(gh, "unlinked", 0);
	cr_assert_eq(unlink_(ROOT, "g"), 0);
	dh = opendir_(d.ino);

	cr_assert_eq(takeover(0), 0);
	cr_assert_not_null(strstr(fake_serving, cur_handles[0] == 't'
							? "file handles"
							: "paths"));
	/* The same node ids and generations... */
	cr_assert_eq(lookup(ROOT, "d", &e), 0);
	cr_assert_eq(e.ino, d.ino);
	cr_assert_eq(e.generation, d.generation);
	cr_assert_eq(lookup(d.ino, "f", &e), 0);
	cr_assert_eq(e.ino, f.ino);
	/* ...the same fh values, the unlinked file's too. */
	cr_assert_str_eq(read_str(fh, 5, 0), "hello");
	cr_assert_str_eq(read_str(gh, 8, 0), "unlinked");
	write_str(gh, "still", 0);
	cr_assert_str_eq(read_str(gh, 5, 0), "still");
	cr_assert_eq(getattr(g.ino, gh, &attr), 0);
	cr_assert_eq(attr.nlink, 0);
	cr_assert_eq(readdir_count(d.ino, dh), 3); /* ".", "..", "f" */
	/* New opens and inodes do not collide with the loaded ones. */
	cr_assert_eq(create(ROOT, "n", &nh, &n), 0);
	cr_assert_neq(n.ino, d.ino);
	cr_assert_neq(n.ino, f.ino);
	cr_assert_neq(n.ino, g.ino);
	cr_assert_neq(nh & 0xffffffffull, fh & 0xffffffffull);
	cr_assert_neq(nh & 0xffffffffull, gh & 0xffffffffull);
	cr_assert_neq(nh & 0xffffffffull, dh & 0xffffffffull);
	release(n.ino, nh);
	release(g.ino, gh);
	release(f.ino, fh);
	struct fring_release_args rel = { .size = sizeof(rel),
					  .nodeid = d.ino,
					  .fh = dh };
	O->releasedir(inst, req(), &rel);
	cr_assert_eq(R.err, 0);
}

Test(handles, state_round_trip, .init = start_handles, .fini = stop)
{
	state_round_trip();
}

Test(paths, state_round_trip, .init = start_paths, .fini = stop)
{
	state_round_trip();
}

Test(handles, state_newer_version_refused, .init = start_handles, .fini = stop)
{
	struct fring_entry f, e;
	uint64_t fh;

	cr_assert_eq(create(ROOT, "kept", &fh, &f), 0);
	cr_assert_eq(takeover(1), -EPROTO);
	cr_assert_eq(lookup(ROOT, "kept", &e), 0);
	cr_assert_eq(e.ino, f.ino);
	write_str(fh, "old", 0);
	release(f.ino, fh);
}
