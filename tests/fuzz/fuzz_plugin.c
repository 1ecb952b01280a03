// SPDX-License-Identifier: MIT
/*
 * How the plugin inside fuzz_decode answers (its ops and their argument
 * checks are in fuzz_ops.c): the way the input's behaviour byte asks,
 * correctly, with any errno, with any reply kind, twice, later, through
 * the fd services, or with hostile directory entries. Each case states
 * what the host must then send, which the harness checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "runtime/host.h"

#define BIG (256u * 1024)

static const struct fring_host_api *H;
static char big[BIG];       /* reply data: 'x' bytes, some '/' and NUL */
static int memfd = -1;      /* READ source, 64 KiB, sealed */
static int nullfd = -1;     /* WRITE sink */
static uint8_t mode, knob;
static int32_t errval;
static fring_req *held;
static int expect_set;
static int32_t expect_err;

void fuzz_plugin_setup(void)
{
	H = fring_host_table();
	memset(big, 'x', sizeof(big));
	big[1500] = '/';
	big[1600] = '\0';
	memfd = memfd_create("fuzz", MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, 65536) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_WRITE))
		abort();
	nullfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (nullfd < 0)
		abort();
}

void fuzz_plugin_begin(uint8_t behaviour, int32_t err)
{
	mode = behaviour & 7;
	knob = behaviour >> 3;
	errval = err;
	held = NULL;
	expect_set = 0;
}

fring_req *fuzz_plugin_held(void) { return held; }

int fuzz_plugin_expect(int32_t *err)
{
	*err = expect_err;
	return expect_set;
}

static void expect(int32_t err)
{
	expect_set = 1;
	expect_err = err;
}

static void ok(int32_t ret, const char *what)
{
	FUZZ_ASSERT(ret == 0, "%s returned %d", what, ret);
	expect(0);
}

static void list(fring_req *r, const struct fring_decoded *d)
{
	char name[16];
	struct fring_entry e = { .ino = 7, .attr = { .ino = 7, .mode = S_IFREG } };
	int plus = d->opcode == FUSE_READDIRPLUS;

	for (uint64_t i = 0; i < 64; i++) {
		int n = snprintf(name, sizeof(name), "e%llu", (unsigned long long)i);
		int32_t ret = plus && (i & 1) ?
			H->dir_add_plus(r, name, (uint32_t)n, &e, i + 1) :
			H->dir_add(r, name, (uint32_t)n, i + 2, S_IFDIR, i + 1);

		FUZZ_ASSERT(ret == 0 || ret == 1, "dir_add %d", ret);
		if (!ret)
			break;
	}
	ok(H->reply_dir(r), "reply_dir");
}

/* The reply the op calls for; the host must send it unchanged. */
static void answer(fring_req *r, const struct fring_decoded *d)
{
	struct fring_entry e = { .ino = d->nodeid | 2, .generation = 1,
				 .entry_timeout_ns = d->unique,
				 .attr_timeout_ns = 1000000001ull,
				 .attr = { .ino = d->nodeid | 2, .mode = S_IFREG | 0644,
					   .nlink = 1, .size = d->nodeid } };
	struct fring_open_out o = { .fh = d->unique, .open_flags = 1 };
	struct fring_statx sx = { .size = sizeof(sx), .mask = 0x7ff, .attr = e.attr };
	struct fring_statfs sf = { .blocks = 1, .bsize = 4096, .namelen = 255 };
	struct fring_lock l = { .start = 0, .end = 9, .type = 1, .pid = 2 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint32_t n;

	switch (d->opcode) {
	case FUSE_LOOKUP: case FUSE_MKNOD: case FUSE_MKDIR:
	case FUSE_SYMLINK: case FUSE_LINK:
		ok(H->reply_entry(r, &e), "reply_entry");
		break;
	case FUSE_CREATE: case FUSE_TMPFILE:
		ok(H->reply_create(r, &e, &o), "reply_create");
		break;
	case FUSE_GETATTR: case FUSE_SETATTR:
		ok(H->reply_attr(r, &e.attr, d->unique), "reply_attr");
		break;
	case FUSE_STATX:
		ok(H->reply_statx(r, &sx, d->unique), "reply_statx");
		break;
	case FUSE_READLINK:
		/* Up to page - 1 bytes are valid; longer is a plugin bug. */
		n = (uint32_t)(d->nodeid % (page + 64));
		if (n < page)
			ok(H->reply_readlink(r, big, n), "reply_readlink");
		else
			FUZZ_ASSERT(H->reply_readlink(r, big, n) == -EINVAL,
				    "readlink of %u bytes accepted", n);
		if (n >= page)
			expect(-EIO);
		break;
	case FUSE_OPEN: case FUSE_OPENDIR:
		ok(H->reply_open(r, &o), "reply_open");
		break;
	case FUSE_READ:
		n = d->a.read.len < BIG ? d->a.read.len : BIG;
		ok(H->reply_data(r, big, n), "reply_data");
		break;
	case FUSE_WRITE:
		ok(H->reply_write(r, d->a.write.len), "reply_write");
		break;
	case FUSE_COPY_FILE_RANGE: case FUSE_COPY_FILE_RANGE_64:
		n = d->a.copy.len < UINT32_MAX ? (uint32_t)d->a.copy.len : UINT32_MAX;
		ok(H->reply_write(r, n), "reply_write(copy)");
		break;
	case FUSE_STATFS:
		ok(H->reply_statfs(r, &sf), "reply_statfs");
		break;
	case FUSE_GETXATTR: case FUSE_LISTXATTR:
		n = d->a.xattr.max < BIG ? d->a.xattr.max : BIG;
		if (d->a.xattr.max == 0)
			ok(H->reply_xattr_size(r, (uint32_t)d->nodeid),
			   "reply_xattr_size");
		else
			ok(H->reply_data(r, big, n), "reply_data(xattr)");
		break;
	case FUSE_GETLK:
		ok(H->reply_lock(r, &l), "reply_lock");
		break;
	case FUSE_LSEEK:
		ok(H->reply_lseek(r, d->a.lseek.offset), "reply_lseek");
		break;
	case FUSE_READDIR: case FUSE_READDIRPLUS:
		list(r, d);
		break;
	default:
		FUZZ_ASSERT(fring_op_replies(d->opcode) & FRING_R_EMPTY,
			    "op %u reached the plugin", d->opcode);
		ok(H->reply_err(r, 0), "reply_err(0)");
		break;
	}
}

void fuzz_plugin_answer(fring_req *r)
{
	answer(r, &fuzz_cur->exp);
}

/* One reply of kind k % 15, whatever the op, sized to the request's
 * limit or (k >= 15) one past it: fitting ones succeed, the others must
 * cost the caller an EIO and return -EINVAL. */
static void any_kind(fring_req *r, const struct fring_decoded *d, unsigned k)
{
	static const struct fring_entry e = { .ino = 3 };
	static const struct fring_open_out o = { .fh = 1 };
	static const struct fring_statfs sf = { .bsize = 512 };
	static const struct fring_lock l = { .type = 2 };
	uint32_t over = k >= 15, lim = 1, cnt = 0;
	struct fring_statx sx = { .size = over ? 8 : sizeof(sx) };
	int32_t ret;

	if (d->opcode == FUSE_READ)
		lim = d->a.read.len;
	else if (d->opcode == FUSE_GETXATTR || d->opcode == FUSE_LISTXATTR)
		lim = d->a.xattr.max;
	lim = (lim < BIG - 1 ? lim : BIG - 1) + over;
	if (d->opcode == FUSE_WRITE)
		cnt = d->a.write.len + over;
	else if (d->opcode == FUSE_COPY_FILE_RANGE || d->opcode == FUSE_COPY_FILE_RANGE_64)
		cnt = (d->a.copy.len < UINT32_MAX ? (uint32_t)d->a.copy.len : UINT32_MAX - 1) + over;
	switch (k % 15) {
	case 0: ret = H->reply_entry(r, &e); break;
	case 1: ret = H->reply_create(r, &e, &o); break;
	case 2: ret = H->reply_attr(r, &e.attr, 0); break;
	case 3: ret = H->reply_readlink(r, big, over ? 65536 : 1); break;
	case 4: ret = H->reply_open(r, &o); break;
	case 5: ret = H->reply_write(r, cnt); break;
	case 6: ret = H->reply_data(r, big, lim); break;
	case 7: ret = H->reply_statfs(r, &sf); break;
	case 8: ret = H->reply_xattr_size(r, 9); break;
	case 9: ret = H->reply_lock(r, &l); break;
	case 10: ret = H->reply_lseek(r, 5); break;
	case 11: ret = H->reply_dir(r); break;
	case 12: ret = H->reply_statx(r, &sx, 0); break;
	case 13: ret = H->reply_err(r, 0); break;
	default: ret = H->reply_entry(r, NULL); break;
	}
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL, "kind %u returned %d", k % 15, ret);
	expect(ret ? -EIO : 0);
}

/* Data-path services. A refusal leaves the request ours to answer. */
static void fd_service(fring_req *r, const struct fring_decoded *d)
{
	int fd = knob & 2 ? memfd : knob & 4 ? -1 : 1000; /* 1000: not open */
	uint32_t flags = knob & 8 ? 1 : 0, len = 0;
	uint64_t off;
	int32_t ret;

	if (d->opcode == FUSE_WRITE) {
		fd = fd == memfd ? nullfd : fd;
		ret = H->req_write_fd(r, fd, d->a.write.offset, flags);
	} else {
		if (d->opcode == FUSE_READ)
			len = (d->a.read.len < BIG ? d->a.read.len : BIG) + (knob & 1);
		ret = H->req_read_fd(r, fd, d->opcode == FUSE_READ ? d->a.read.offset : 0,
				     len, flags);
	}
	if (d->opcode != FUSE_READ && d->opcode != FUSE_WRITE)
		FUZZ_ASSERT(ret == -EINVAL, "fd service on %s: %d",
			    fring_opcode_name(d->opcode), ret);
	else if (flags || (d->opcode == FUSE_READ && len > d->a.read.len))
		FUZZ_ASSERT(ret == -EINVAL, "bad flags/len accepted: %d", ret);
	else if (fd == -1)
		FUZZ_ASSERT(ret == -EBADF, "fd -1: %d", ret);
	else
		FUZZ_ASSERT(ret == 0, "fd service refused: %d", ret);
	if (ret) {
		answer(r, d);
		return;
	}
	if (d->opcode == FUSE_WRITE)
		len = d->a.write.len;
	off = d->opcode == FUSE_WRITE ? d->a.write.offset : d->a.read.offset;
	/* pread/pwrite check the offset first; /dev/null takes anything.
	 * Past INT64_MAX - len the kernel's own overflow rules decide. */
	if (!len || off <= (uint64_t)INT64_MAX - len)
		expect(!len ? 0 : fd == 1000 ? -EBADF : 0);
	else if (off > INT64_MAX)
		expect(-EINVAL);
}

/* Entry names the kernel would reject must be refused, never sent. */
static void dir_names(fring_req *r, const struct fring_decoded *d)
{
	static const uint32_t lens[] = { 0, 1, 255, 1024, 1025, 1501, 1601, 4000 };
	struct fring_entry e = { .ino = knob, .attr = { .mode = (uint32_t)knob << 12 } };
	int32_t ret = 0;
	/* A READDIRPLUS entry naming nodeid 1 (the root) for a child: the
	 * host refuses the whole listing (EIO at reply_dir). */
	int root_child = d->opcode == FUSE_READDIRPLUS && knob == FUSE_ROOT_ID;

	for (unsigned i = 0; i < 8; i++) {
		uint32_t n = lens[(knob + i) % 8];
		const char *name = big + (i & 1 ? 1000 : BIG - 4000);

		ret = i & 2 ? H->dir_add_plus(r, name, n, &e, i + 1) :
			      H->dir_add(r, name, n, knob, (uint32_t)knob << 12, i + 1);
		if (d->opcode != FUSE_READDIR && d->opcode != FUSE_READDIRPLUS) {
			FUZZ_ASSERT(ret == -EINVAL, "dir_add on %s: %d",
				    fring_opcode_name(d->opcode), ret);
			expect(-EIO);
			return;
		}
		FUZZ_ASSERT(ret >= -EINVAL && ret <= 1, "dir_add: %d", ret);
	}
	if (root_child) {
		ret = H->reply_dir(r);
		FUZZ_ASSERT(ret == -EINVAL, "reply_dir after a root entry: %d", ret);
		expect(-EIO);
		return;
	}
	ok(H->reply_dir(r), "reply_dir");
}

void fuzz_plugin_handle(fring_req *r)
{
	const struct fring_decoded *d = &fuzz_cur->exp;
	struct fring_req_ctx c = { .size = sizeof(c) };

	/* The handle is the request's address tagged with its generation. */
	FUZZ_ASSERT(fring_req_ptr(r) == &fuzz_cur->fr.r &&
		    fring_req_get(r) == &fuzz_cur->fr.r, "unknown request handle");
	FUZZ_ASSERT(H->req_ctx(r, &c) == 0 && c.opcode == d->opcode &&
		    c.unique == d->unique && c.nodeid == d->nodeid &&
		    c.uid == d->uid && c.gid == d->gid && c.pid == d->pid,
		    "req_ctx differs from the header");
	switch (mode) {
	case B_ERRNO: {
		int valid = errval <= 0 && errval > -FUSE_ERRNO_LIMIT &&
			    (errval || (fring_op_replies(d->opcode) & FRING_R_EMPTY));

		FUZZ_ASSERT(H->reply_err(r, errval) == (valid ? 0 : -EINVAL),
			    "reply_err(%d)", errval);
		expect(valid ? errval : -EIO);
		return;
	}
	case B_ANYKIND:
		any_kind(r, d, knob);
		return;
	case B_TWICE:
		answer(r, d);
		FUZZ_ASSERT(H->reply_err(r, -EIO) == -EALREADY, "second reply");
		FUZZ_ASSERT(H->dir_add(r, "a", 1, 1, S_IFREG, 1) == -EALREADY,
			    "dir_add after the reply");
		return;
	case B_LATER:
		held = r;
		return;
	case B_FD:
		fd_service(r, d);
		return;
	case B_DIRNAMES:
		dir_names(r, d);
		return;
	default:
		answer(r, d);
		return;
	}
}
