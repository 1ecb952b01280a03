// SPDX-License-Identifier: MIT
/*
 * fring_decode: every opcode in the classic (/dev/fuse) form and in the
 * two-part (io_uring op_in + payload) form, malformed requests, and a
 * prefix/random sweep. Buffers are heap copies of exactly the request size,
 * so running this under valgrind catches any read out of range.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "proto/proto.h"

/* A request under construction: header + body (arg 0, payload, ext). */
struct rq {
	struct fuse_in_header h;
	uint8_t body[4096];
	size_t n;      /* body bytes */
	size_t a0;     /* arg 0 bytes at the start of body */
	int force_len; /* keep h.len instead of 40 + n */
	size_t cut;    /* two-part forms: arglen = a0 - cut */
};

enum form { CLASSIC, SPLIT_PAD, SPLIT_EXACT, NFORMS };
static const char *const form_name[] = { "classic", "split-128", "split-exact" };

static const struct fring_proto_conn conn0 = { .minor = 45 };

/* Heap buffers of the decodes since release_all(), with the length each
 * decode was told it may read. */
static void *kept[64];
static size_t kept_len[64];
static int nkept;

static void *keep(size_t n)
{
	void *p = malloc(n ? n : 1);

	cr_assert(p && nkept < 64);
	kept_len[nkept] = n;
	kept[nkept++] = p;
	return p;
}

static void release_all(void)
{
	while (nkept)
		free(kept[--nkept]);
}

TestSuite(decode, .fini = release_all);

static void rq_init(struct rq *r, uint32_t op, uint64_t nodeid)
{
	memset(r, 0, sizeof(*r));
	r->h = (struct fuse_in_header){ .opcode = op, .unique = 0x1234,
		.nodeid = nodeid, .uid = 1000, .gid = 100, .pid = 4242 };
}

static void rq_put(struct rq *r, const void *p, size_t n)
{
	cr_assert(r->n + n <= sizeof(r->body));
	memcpy(r->body + r->n, p, n);
	r->n += n;
}

static void rq_arg(struct rq *r, const void *p, size_t n)
{
	rq_put(r, p, n);
	r->a0 = n;
}

static void rq_str(struct rq *r, const char *s)
{
	rq_put(r, s, strlen(s) + 1);
}

/* Append n8 * 8 bytes of a FUSE_EXT_GROUPS extension. */
static void rq_ext(struct rq *r, uint16_t n8)
{
	struct fuse_ext_header eh = { .size = n8 * 8u, .type = FUSE_EXT_GROUPS };
	uint8_t fill[64];

	cr_assert(n8 >= 1 && n8 * 8u <= sizeof(fill));
	memset(fill, 0, sizeof(fill));
	memcpy(fill, &eh, sizeof(eh));
	rq_put(r, fill, n8 * 8u);
	r->h.total_extlen = n8;
}

static int dec(const struct rq *r, enum form f,
	       const struct fring_proto_conn *conn, struct fring_decoded *out)
{
	struct fuse_in_header h = r->h;
	size_t arglen, plen;
	uint8_t *arg, *pay;

	if (!r->force_len)
		h.len = (uint32_t)(sizeof(h) + r->n);
	if (f == CLASSIC) {
		arg = keep(r->n);
		memcpy(arg, r->body, r->n);
		return fring_decode(&h, arg, r->n, NULL, 0, conn, out);
	}
	/* op_in: the 128-byte io_uring area (garbage after arg 0) or exact. */
	arglen = f == SPLIT_PAD && r->a0 < FUSE_URING_OP_IN_OUT_SZ ?
		 FUSE_URING_OP_IN_OUT_SZ : r->a0;
	arg = keep(arglen);
	memset(arg, 0xa5, arglen);
	memcpy(arg, r->body, r->a0);
	plen = r->n - r->a0;
	pay = keep(plen);
	memcpy(pay, r->body + r->a0, plen);
	if (r->cut) {
		arglen = r->a0 - r->cut;
		kept_len[nkept - 2] = arglen;
	}
	return fring_decode(&h, arg, arglen, pay, plen, conn, out);
}

/* [p, p + n) lies in bytes a decode since release_all() was given. */
static int in_bounds(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (int i = 0; i < nkept; i++) {
		const uint8_t *lo = kept[i];

		if (b >= lo && b + n <= lo + kept_len[i])
			return 1;
	}
	return 0;
}

/* A decoded name lies in the input, NUL included, and has no inner NUL. */
static void check_name(const char *name, uint32_t len)
{
	cr_assert(name && len > 0);
	cr_assert(in_bounds(name, (size_t)len + 1));
	cr_assert_eq(name[len], '\0');
	cr_assert_eq(strlen(name), len);
}

/* Decode in every form; all must succeed with the same header fields. */
static void decode_all(const struct rq *r, const struct fring_proto_conn *conn,
		       struct fring_decoded d[NFORMS])
{
	for (int f = 0; f < NFORMS; f++) {
		int rc = dec(r, f, conn, &d[f]);

		cr_assert_eq(rc, 0, "%s %s: rc %d", fring_opcode_name(r->h.opcode),
			     form_name[f], rc);
		cr_assert_eq(d[f].opcode, r->h.opcode);
		cr_assert_eq(d[f].unique, r->h.unique);
		cr_assert_eq(d[f].nodeid, r->h.nodeid);
		cr_assert_eq(d[f].uid, 1000);
		cr_assert_eq(d[f].gid, 100);
		cr_assert_eq(d[f].pid, 4242);
	}
}

static void expect_rc(const struct rq *r, const struct fring_proto_conn *conn,
		      int want, const char *what)
{
	struct fring_decoded d;

	for (int f = 0; f < NFORMS; f++) {
		int rc = dec(r, f, conn, &d);

		cr_assert_eq(rc, want, "%s (%s): rc %d, want %d", what,
			     form_name[f], rc, want);
	}
}

#define EACH(d, arr) for (struct fring_decoded *d = (arr); d < (arr) + NFORMS; d++)

/* ---- valid requests, one per opcode family ---- */

Test(decode, lookup_unlink_rmdir)
{
	static const uint32_t ops[] = { FUSE_LOOKUP, FUSE_UNLINK, FUSE_RMDIR };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (size_t i = 0; i < 3; i++) {
		rq_init(&r, ops[i], 7);
		rq_str(&r, "hello");
		decode_all(&r, &conn0, d);
		EACH(x, d) {
			cr_assert_eq(x->a.name.size, sizeof(x->a.name));
			cr_assert_eq(x->a.name.parent, 7);
			cr_assert_eq(x->a.name.namelen, 5);
			cr_assert_str_eq(x->a.name.name, "hello");
		}
	}
}

Test(decode, forget)
{
	struct fuse_forget_in fi = { .nlookup = 99 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_FORGET, 55);
	rq_arg(&r, &fi, sizeof(fi));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.forget.nlookup, 99);
		cr_assert_eq(x->nodeid, 55);
	}
}

Test(decode, batch_forget)
{
	struct fuse_batch_forget_in bi = { .count = 3 };
	struct fuse_forget_one one[3] = { { 10, 1 }, { 11, 2 }, { 12, 3 } };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_BATCH_FORGET, 0);
	rq_arg(&r, &bi, sizeof(bi));
	rq_put(&r, one, sizeof(one));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		struct fuse_forget_one got[3];

		cr_assert_eq(x->a.batch_forget.count, 3);
		cr_assert(in_bounds(x->a.batch_forget.items, sizeof(got)));
		memcpy(got, x->a.batch_forget.items, sizeof(got));
		cr_assert_eq(got[2].nodeid, 12);
		cr_assert_eq(got[2].nlookup, 3);
		cr_assert_eq(got[0].nodeid, 10);
	}
	/* count 0 is legal: nothing to forget */
	bi.count = 0;
	rq_init(&r, FUSE_BATCH_FORGET, 0);
	rq_arg(&r, &bi, sizeof(bi));
	decode_all(&r, &conn0, d);
	EACH(x, d)
		cr_assert_eq(x->a.batch_forget.count, 0);
}

Test(decode, getattr)
{
	struct fuse_getattr_in gi = { .getattr_flags = FUSE_GETATTR_FH, .fh = 0xabc };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_GETATTR, 9);
	rq_arg(&r, &gi, sizeof(gi));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.getattr.size, sizeof(x->a.getattr));
		cr_assert_eq(x->a.getattr.nodeid, 9);
		cr_assert_eq(x->a.getattr.flags, FRING_GETATTR_FH);
		cr_assert_eq(x->a.getattr.fh, 0xabc);
	}
}

Test(decode, setattr)
{
	struct fuse_setattr_in si = {
		.valid = FATTR_MODE | FATTR_SIZE | FATTR_MTIME | FATTR_FH,
		.fh = 5, .size = 1ull << 40, .lock_owner = 77, .atime = 1000,
		.mtime = 2000, .ctime = 3000, .atimensec = 1, .mtimensec = 2,
		.ctimensec = 3, .mode = 0100644, .uid = 11, .gid = 12,
	};
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_SETATTR, 3);
	rq_arg(&r, &si, sizeof(si));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		const struct fring_setattr_args *s = &x->a.setattr;

		cr_assert_eq(s->size, sizeof(*s));
		cr_assert_eq(s->nodeid, 3);
		cr_assert_eq(s->valid, FRING_SET_MODE | FRING_SET_SIZE |
				       FRING_SET_MTIME | FRING_SET_FH);
		cr_assert_eq(s->fh, 5);
		cr_assert_eq(s->file_size, 1ull << 40);
		cr_assert_eq(s->lock_owner, 77);
		cr_assert_eq(s->atime_sec, 1000);
		cr_assert_eq(s->mtime_sec, 2000);
		cr_assert_eq(s->ctime_sec, 3000);
		cr_assert_eq(s->atime_nsec, 1);
		cr_assert_eq(s->mtime_nsec, 2);
		cr_assert_eq(s->ctime_nsec, 3);
		cr_assert_eq(s->mode, 0100644);
		cr_assert_eq(s->uid, 11);
		cr_assert_eq(s->gid, 12);
	}
}

Test(decode, node_only_ops)
{
	static const uint32_t ops[] = { FUSE_READLINK, FUSE_STATFS,
					FUSE_DESTROY };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (size_t i = 0; i < 3; i++) {
		rq_init(&r, ops[i], 21);
		decode_all(&r, &conn0, d);
		EACH(x, d) {
			cr_assert_eq(x->a.node.size, sizeof(x->a.node));
			cr_assert_eq(x->a.node.nodeid, 21);
		}
	}
}

Test(decode, symlink)
{
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_SYMLINK, 4);
	rq_str(&r, "link");
	rq_str(&r, "../target/file");
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		const struct fring_make_args *m = &x->a.make;

		cr_assert_eq(m->size, sizeof(*m));
		cr_assert_eq(m->parent, 4);
		cr_assert_str_eq(m->name, "link");
		cr_assert_eq(m->namelen, 4);
		check_name(m->link_target, m->link_target_len);
		cr_assert_str_eq(m->link_target, "../target/file");
		cr_assert_eq(m->link_target_len, 14);
		cr_assert_eq(m->mode, S_IFLNK | 0777);
	}
}

Test(decode, mknod_mkdir)
{
	struct fuse_mknod_in mi = { .mode = S_IFCHR | 0600, .rdev = 0x0501,
				    .umask = 022 };
	struct fuse_mkdir_in di = { .mode = 0755, .umask = 077 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_MKNOD, 2);
	rq_arg(&r, &mi, sizeof(mi));
	rq_str(&r, "dev");
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.make.parent, 2);
		cr_assert_str_eq(x->a.make.name, "dev");
		cr_assert_eq(x->a.make.mode, S_IFCHR | 0600);
		cr_assert_eq(x->a.make.rdev, 0x0501);
		cr_assert_eq(x->a.make.umask, 022);
		cr_assert_null(x->a.make.link_target);
	}

	rq_init(&r, FUSE_MKDIR, 2);
	rq_arg(&r, &di, sizeof(di));
	rq_str(&r, "sub");
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_str_eq(x->a.make.name, "sub");
		cr_assert_eq(x->a.make.namelen, 3);
		cr_assert_eq(x->a.make.mode, S_IFDIR | 0755);
		cr_assert_eq(x->a.make.umask, 077);
		cr_assert_eq(x->a.make.rdev, 0);
	}
}

Test(decode, rename_rename2)
{
	struct fuse_rename_in ri = { .newdir = 8 };
	struct fuse_rename2_in r2 = { .newdir = 9, .flags = 2 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_RENAME, 5);
	rq_arg(&r, &ri, sizeof(ri));
	rq_str(&r, "old");
	rq_str(&r, "newname");
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		const struct fring_rename_args *a = &x->a.rename;

		cr_assert_eq(a->size, sizeof(*a));
		cr_assert_eq(a->parent, 5);
		cr_assert_eq(a->newparent, 8);
		cr_assert_eq(a->flags, 0);
		cr_assert_str_eq(a->name, "old");
		cr_assert_eq(a->namelen, 3);
		check_name(a->newname, a->newnamelen);
		cr_assert_str_eq(a->newname, "newname");
		cr_assert_eq(a->newnamelen, 7);
	}

	rq_init(&r, FUSE_RENAME2, 5);
	rq_arg(&r, &r2, sizeof(r2));
	rq_str(&r, "a");
	rq_str(&r, "b");
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.rename.newparent, 9);
		cr_assert_eq(x->a.rename.flags, 2);
		cr_assert_str_eq(x->a.rename.name, "a");
		cr_assert_str_eq(x->a.rename.newname, "b");
	}
}

Test(decode, link)
{
	struct fuse_link_in li = { .oldnodeid = 300 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_LINK, 6);
	rq_arg(&r, &li, sizeof(li));
	rq_str(&r, "hard");
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.link.size, sizeof(x->a.link));
		cr_assert_eq(x->a.link.nodeid, 300);
		cr_assert_eq(x->a.link.newparent, 6);
		cr_assert_str_eq(x->a.link.newname, "hard");
		cr_assert_eq(x->a.link.newnamelen, 4);
	}
}

Test(decode, open_opendir)
{
	static const uint32_t ops[] = { FUSE_OPEN, FUSE_OPENDIR };
	struct fuse_open_in oi = { .flags = 02 | 01000, .open_flags = 1 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (size_t i = 0; i < 2; i++) {
		rq_init(&r, ops[i], 12);
		rq_arg(&r, &oi, sizeof(oi));
		decode_all(&r, &conn0, d);
		EACH(x, d) {
			cr_assert_eq(x->a.open.size, sizeof(x->a.open));
			cr_assert_eq(x->a.open.nodeid, 12);
			cr_assert_eq(x->a.open.flags, 02 | 01000);
			cr_assert_eq(x->a.open.open_flags, 1);
		}
	}
}

Test(decode, create_tmpfile)
{
	static const uint32_t ops[] = { FUSE_CREATE, FUSE_TMPFILE };
	struct fuse_create_in ci = { .flags = 0101, .mode = S_IFREG | 0640,
				     .umask = 022, .open_flags = 4 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (size_t i = 0; i < 2; i++) {
		rq_init(&r, ops[i], 1);
		rq_arg(&r, &ci, sizeof(ci));
		rq_str(&r, i ? "/" : "new.txt");
		decode_all(&r, &conn0, d);
		EACH(x, d) {
			const struct fring_make_args *m = &x->a.make;

			cr_assert_eq(m->size, sizeof(*m));
			cr_assert_eq(m->parent, 1);
			cr_assert_str_eq(m->name, i ? "/" : "new.txt");
			cr_assert_eq(m->flags, 0101);
			cr_assert_eq(m->mode, S_IFREG | 0640);
			cr_assert_eq(m->umask, 022);
			cr_assert_eq(m->open_flags, 4);
		}
	}
}

Test(decode, read_readdir)
{
	static const uint32_t ops[] = { FUSE_READ, FUSE_READDIR,
					FUSE_READDIRPLUS };
	struct fuse_read_in ri = { .fh = 77, .offset = 4096, .size = 65536,
				   .read_flags = FUSE_READ_LOCKOWNER,
				   .lock_owner = 555, .flags = 02 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (size_t i = 0; i < 3; i++) {
		rq_init(&r, ops[i], 13);
		rq_arg(&r, &ri, sizeof(ri));
		decode_all(&r, &conn0, d);
		EACH(x, d) {
			const struct fring_read_args *a = &x->a.read;

			cr_assert_eq(a->size, sizeof(*a));
			cr_assert_eq(a->nodeid, 13);
			cr_assert_eq(a->fh, 77);
			cr_assert_eq(a->offset, 4096);
			cr_assert_eq(a->len, 65536);
			cr_assert_eq(a->read_flags, FUSE_READ_LOCKOWNER);
			cr_assert_eq(a->lock_owner, 555);
			cr_assert_eq(a->flags, 02);
		}
	}
}

Test(decode, write)
{
	struct fuse_write_in wi = { .fh = 3, .offset = 100, .size = 11,
				    .write_flags = FUSE_WRITE_CACHE,
				    .lock_owner = 9, .flags = 01 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_WRITE, 14);
	rq_arg(&r, &wi, sizeof(wi));
	rq_put(&r, "hello world", 11);
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		const struct fring_write_args *w = &x->a.write;

		cr_assert_eq(w->size, sizeof(*w));
		cr_assert_eq(w->nodeid, 14);
		cr_assert_eq(w->fh, 3);
		cr_assert_eq(w->offset, 100);
		cr_assert_eq(w->len, 11);
		cr_assert_eq(w->write_flags, FUSE_WRITE_CACHE);
		cr_assert_eq(w->lock_owner, 9);
		cr_assert_eq(w->flags, 01);
		cr_assert(in_bounds(w->data, 11));
		cr_assert_eq(memcmp(w->data, "hello world", 11), 0);
	}

	/* exactly max_write is fine */
	struct fring_proto_conn c = { .minor = 45, .max_write = 11 };
	decode_all(&r, &c, d);
}

Test(decode, release_flush)
{
	struct fuse_release_in ri = { .fh = 41, .flags = 02,
				      .release_flags = FUSE_RELEASE_FLUSH,
				      .lock_owner = 66 };
	struct fuse_flush_in fi = { .fh = 42, .unused = 7, .lock_owner = 67 };
	static const uint32_t ops[] = { FUSE_RELEASE, FUSE_RELEASEDIR };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (size_t i = 0; i < 2; i++) {
		rq_init(&r, ops[i], 15);
		rq_arg(&r, &ri, sizeof(ri));
		decode_all(&r, &conn0, d);
		EACH(x, d) {
			const struct fring_release_args *a = &x->a.release;

			cr_assert_eq(a->size, sizeof(*a));
			cr_assert_eq(a->nodeid, 15);
			cr_assert_eq(a->fh, 41);
			cr_assert_eq(a->flags, 02);
			cr_assert_eq(a->release_flags, FUSE_RELEASE_FLUSH);
			cr_assert_eq(a->lock_owner, 66);
		}
	}
	rq_init(&r, FUSE_FLUSH, 15);
	rq_arg(&r, &fi, sizeof(fi));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.release.size, sizeof(x->a.release));
		cr_assert_eq(x->a.release.fh, 42);
		cr_assert_eq(x->a.release.lock_owner, 67);
		cr_assert_eq(x->a.release.flags, 0);
		cr_assert_eq(x->a.release.release_flags, 0);
	}
}

Test(decode, fsync_fsyncdir)
{
	static const uint32_t ops[] = { FUSE_FSYNC, FUSE_FSYNCDIR };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (size_t i = 0; i < 2; i++) {
		struct fuse_fsync_in fi = { .fh = 50 + i,
			.fsync_flags = i ? FUSE_FSYNC_FDATASYNC : 0 };

		rq_init(&r, ops[i], 16);
		rq_arg(&r, &fi, sizeof(fi));
		decode_all(&r, &conn0, d);
		EACH(x, d) {
			cr_assert_eq(x->a.fsync.size, sizeof(x->a.fsync));
			cr_assert_eq(x->a.fsync.nodeid, 16);
			cr_assert_eq(x->a.fsync.fh, 50 + i);
			cr_assert_eq(!!x->a.fsync.datasync, (int)i);
		}
	}
}

Test(decode, setxattr_compat_and_ext)
{
	struct fuse_setxattr_in si = { .size = 5, .flags = 1,
				       .setxattr_flags = 1 };
	struct fring_proto_conn ext = { .minor = 45, .setxattr_ext = 1 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	/* 8-byte header without SETXATTR_EXT */
	rq_init(&r, FUSE_SETXATTR, 17);
	rq_arg(&r, &si, FUSE_COMPAT_SETXATTR_IN_SIZE);
	rq_str(&r, "user.k");
	rq_put(&r, "v\0lue", 5);
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		const struct fring_xattr_args *a = &x->a.xattr;

		cr_assert_eq(a->size, sizeof(*a));
		cr_assert_eq(a->nodeid, 17);
		cr_assert_str_eq(a->name, "user.k");
		cr_assert_eq(a->namelen, 6);
		cr_assert_eq(a->value_len, 5);
		cr_assert(in_bounds(a->value, 5));
		cr_assert_eq(memcmp(a->value, "v\0lue", 5), 0);
		cr_assert_eq(a->flags, 1);
		cr_assert_eq(a->setxattr_flags, 0);
	}

	/* 16-byte header with it */
	rq_init(&r, FUSE_SETXATTR, 17);
	rq_arg(&r, &si, sizeof(si));
	rq_str(&r, "user.k");
	rq_put(&r, "value", 5);
	decode_all(&r, &ext, d);
	EACH(x, d) {
		cr_assert_eq(x->a.xattr.setxattr_flags, 1);
		cr_assert_eq(x->a.xattr.value_len, 5);
		cr_assert_eq(memcmp(x->a.xattr.value, "value", 5), 0);
	}

	/* empty value is legal */
	si.size = 0;
	rq_init(&r, FUSE_SETXATTR, 17);
	rq_arg(&r, &si, FUSE_COMPAT_SETXATTR_IN_SIZE);
	rq_str(&r, "user.empty");
	decode_all(&r, &conn0, d);
	EACH(x, d)
		cr_assert_eq(x->a.xattr.value_len, 0);
}

Test(decode, getxattr_listxattr_removexattr)
{
	struct fuse_getxattr_in gi = { .size = 4096 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_GETXATTR, 18);
	rq_arg(&r, &gi, sizeof(gi));
	rq_str(&r, "security.selinux");
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.xattr.max, 4096);
		cr_assert_str_eq(x->a.xattr.name, "security.selinux");
		cr_assert_eq(x->a.xattr.namelen, 16);
		cr_assert_eq(x->a.xattr.nodeid, 18);
	}

	gi.size = 0;
	rq_init(&r, FUSE_LISTXATTR, 18);
	rq_arg(&r, &gi, sizeof(gi));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.xattr.size, sizeof(x->a.xattr));
		cr_assert_eq(x->a.xattr.max, 0);
		cr_assert_null(x->a.xattr.name);
	}

	rq_init(&r, FUSE_REMOVEXATTR, 18);
	rq_str(&r, "user.gone");
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_str_eq(x->a.xattr.name, "user.gone");
		cr_assert_eq(x->a.xattr.namelen, 9);
	}
}

Test(decode, access_fallocate_lseek_statx)
{
	struct fuse_access_in ai = { .mask = 4 | 2 };
	struct fuse_fallocate_in fa = { .fh = 1, .offset = 2, .length = 3,
					.mode = 0x01 };
	struct fuse_lseek_in li = { .fh = 4, .offset = 5, .whence = 3 };
	struct fuse_statx_in sx = { .getattr_flags = 1, .fh = 6,
				    .sx_flags = 0x2000, .sx_mask = 0xfff };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_ACCESS, 19);
	rq_arg(&r, &ai, sizeof(ai));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.access.size, sizeof(x->a.access));
		cr_assert_eq(x->a.access.mask, 6);
		cr_assert_eq(x->a.access.nodeid, 19);
	}

	rq_init(&r, FUSE_FALLOCATE, 19);
	rq_arg(&r, &fa, sizeof(fa));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.fallocate.size, sizeof(x->a.fallocate));
		cr_assert_eq(x->a.fallocate.fh, 1);
		cr_assert_eq(x->a.fallocate.offset, 2);
		cr_assert_eq(x->a.fallocate.length, 3);
		cr_assert_eq(x->a.fallocate.mode, 1);
	}

	rq_init(&r, FUSE_LSEEK, 19);
	rq_arg(&r, &li, sizeof(li));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.lseek.size, sizeof(x->a.lseek));
		cr_assert_eq(x->a.lseek.fh, 4);
		cr_assert_eq(x->a.lseek.offset, 5);
		cr_assert_eq(x->a.lseek.whence, 3);
	}

	rq_init(&r, FUSE_STATX, 19);
	rq_arg(&r, &sx, sizeof(sx));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.statx.size, sizeof(x->a.statx));
		cr_assert_eq(x->a.statx.nodeid, 19);
		cr_assert_eq(x->a.statx.getattr_flags, 1);
		cr_assert_eq(x->a.statx.fh, 6);
		cr_assert_eq(x->a.statx.sx_flags, 0x2000);
		cr_assert_eq(x->a.statx.sx_mask, 0xfff);
	}
}

Test(decode, copy_file_range)
{
	static const uint32_t ops[] = { FUSE_COPY_FILE_RANGE,
					FUSE_COPY_FILE_RANGE_64 };
	struct fuse_copy_file_range_in ci = { .fh_in = 1, .off_in = 2,
		.nodeid_out = 3, .fh_out = 4, .off_out = 5,
		.len = 1ull << 33, .flags = 0 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (size_t i = 0; i < 2; i++) {
		rq_init(&r, ops[i], 20);
		rq_arg(&r, &ci, sizeof(ci));
		decode_all(&r, &conn0, d);
		EACH(x, d) {
			const struct fring_copy_range_args *a = &x->a.copy;

			cr_assert_eq(a->size, sizeof(*a));
			cr_assert_eq(a->nodeid_in, 20);
			cr_assert_eq(a->fh_in, 1);
			cr_assert_eq(a->off_in, 2);
			cr_assert_eq(a->nodeid_out, 3);
			cr_assert_eq(a->fh_out, 4);
			cr_assert_eq(a->off_out, 5);
			cr_assert_eq(a->len, 1ull << 33);
		}
	}
}

Test(decode, locks)
{
	struct fuse_lk_in li = { .fh = 8, .owner = 0xfeed,
				 .lk = { .start = 10, .end = 20, .type = 1,
					 .pid = 333 } };
	static const uint32_t ops[] = { FUSE_GETLK, FUSE_SETLK, FUSE_SETLKW };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (size_t i = 0; i < 3; i++) {
		rq_init(&r, ops[i], 22);
		rq_arg(&r, &li, sizeof(li));
		decode_all(&r, &conn0, d);
		EACH(x, d) {
			const struct fring_lock_args *a = &x->a.lock;

			cr_assert_eq(a->size, sizeof(*a));
			cr_assert_eq(a->nodeid, 22);
			cr_assert_eq(a->fh, 8);
			cr_assert_eq(a->owner, 0xfeed);
			cr_assert_eq(a->lock.start, 10);
			cr_assert_eq(a->lock.end, 20);
			cr_assert_eq(a->lock.type, 1);
			cr_assert_eq(a->lock.pid, 333);
			cr_assert_eq(a->sleep, ops[i] == FUSE_SETLKW);
			cr_assert_eq(x->is_flock, 0);
		}
	}
	li.lk_flags = FUSE_LK_FLOCK;
	rq_init(&r, FUSE_SETLKW, 22);
	rq_arg(&r, &li, sizeof(li));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->is_flock, 1);
		cr_assert_eq(x->a.lock.sleep, 1);
	}
}

Test(decode, interrupt)
{
	struct fuse_interrupt_in ii = { .unique = 66 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_INTERRUPT, 0);
	r.h.unique = 67;
	rq_arg(&r, &ii, sizeof(ii));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.interrupt.unique, 66);
		cr_assert_eq(x->unique, 67);
	}
}

Test(decode, init_full_and_short)
{
	struct fuse_init_in ii = { .major = 7, .minor = 45,
		.max_readahead = 131072, .flags = 0x73fffffb,
		.flags2 = 0x7fd };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_INIT, 0);
	rq_arg(&r, &ii, sizeof(ii));
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.init.major, 7);
		cr_assert_eq(x->a.init.minor, 45);
		cr_assert_eq(x->a.init.max_readahead, 131072);
		cr_assert_eq(x->a.init.flags, 0x73fffffb);
		cr_assert_eq(x->a.init.flags2, 0x7fd);
	}

	/* flags2 is meaningless without INIT_EXT */
	ii.flags &= ~(uint32_t)FUSE_INIT_EXT;
	rq_init(&r, FUSE_INIT, 0);
	rq_arg(&r, &ii, sizeof(ii));
	decode_all(&r, &conn0, d);
	EACH(x, d)
		cr_assert_eq(x->a.init.flags2, 0);

	/* pre-7.36: 16 bytes, the rest must read as zero */
	ii = (struct fuse_init_in){ .major = 7, .minor = 31,
		.max_readahead = 4096, .flags = 0x3 };
	memset(ii.unused, 0xee, sizeof(ii.unused));
	rq_init(&r, FUSE_INIT, 0);
	rq_arg(&r, &ii, FUSE_COMPAT_INIT_IN_SIZE);
	for (int f = 0; f < NFORMS; f++) {
		struct fring_decoded x;

		if (f == SPLIT_PAD)
			continue; /* a 128-byte op_in would carry garbage */
		cr_assert_eq(dec(&r, f, &conn0, &x), 0, "%s", form_name[f]);
		cr_assert_eq(x.a.init.minor, 31);
		cr_assert_eq(x.a.init.flags, 3);
		cr_assert_eq(x.a.init.flags2, 0);
		for (int i = 0; i < 11; i++)
			cr_assert_eq(x.a.init.unused[i], 0);
	}
}

Test(decode, minimal_ops)
{
	struct fuse_syncfs_in sy = { 0 };
	uint8_t notify[40] = { 0 }, ioctl[32] = { 0 }, poll[24] = { 0 },
		bmap[16] = { 0 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_SYNCFS, 1);
	rq_arg(&r, &sy, sizeof(sy));
	decode_all(&r, &conn0, d);
	EACH(x, d)
		cr_assert_eq(x->a.node.nodeid, 1);

	rq_init(&r, FUSE_NOTIFY_REPLY, 5);
	rq_arg(&r, notify, sizeof(notify));
	rq_put(&r, "data", 4);
	decode_all(&r, &conn0, d);
	EACH(x, d)
		cr_assert_eq(x->a.node.nodeid, 5);

	/* answered -ENOSYS, but only once arg 0 checks out */
	rq_init(&r, FUSE_IOCTL, 5);
	rq_arg(&r, ioctl, sizeof(ioctl));
	expect_rc(&r, &conn0, -ENOSYS, "ioctl");
	rq_init(&r, FUSE_POLL, 5);
	rq_arg(&r, poll, sizeof(poll));
	expect_rc(&r, &conn0, -ENOSYS, "poll");
	rq_init(&r, FUSE_BMAP, 5);
	rq_arg(&r, bmap, sizeof(bmap));
	expect_rc(&r, &conn0, -ENOSYS, "bmap");
	rq_init(&r, FUSE_IOCTL, 5);
	rq_arg(&r, ioctl, sizeof(ioctl) - 1);
	struct fring_decoded x;
	cr_assert_eq(dec(&r, CLASSIC, &conn0, &x), -EPROTO);
	rq_init(&r, FUSE_IOCTL, 5);
	rq_arg(&r, ioctl, sizeof(ioctl));
	r.cut = 1;
	cr_assert_eq(dec(&r, SPLIT_PAD, &conn0, &x), -EPROTO);
	cr_assert_eq(dec(&r, SPLIT_EXACT, &conn0, &x), -EPROTO);
}

Test(decode, unknown_opcode)
{
	static const uint32_t ops[] = { 0, 7, 19, FUSE_SETUPMAPPING,
					FUSE_REMOVEMAPPING, FUSE_OPCODE_MAX,
					4096, 0xffffffff };
	struct fring_decoded x;
	struct rq r;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		rq_init(&r, ops[i], 0x77);
		rq_put(&r, "whatever", 8);
		for (int f = 0; f < NFORMS; f++) {
			cr_assert_eq(dec(&r, f, &conn0, &x), -ENOSYS);
			cr_assert_eq(x.opcode, ops[i]);
			cr_assert_eq(x.unique, 0x1234);
			cr_assert_eq(x.nodeid, 0x77);
		}
		cr_assert_eq(fring_proto_arg_size(ops[i], &conn0), -1);
	}
}

Test(decode, arg_sizes)
{
	struct fring_proto_conn ext = { .setxattr_ext = 1 };

	cr_assert_eq(fring_proto_arg_size(FUSE_LOOKUP, &conn0), 0);
	cr_assert_eq(fring_proto_arg_size(FUSE_SETATTR, &conn0), 88);
	cr_assert_eq(fring_proto_arg_size(FUSE_READ, &conn0), 40);
	cr_assert_eq(fring_proto_arg_size(FUSE_WRITE, &conn0), 40);
	cr_assert_eq(fring_proto_arg_size(FUSE_GETLK, &conn0), 48);
	cr_assert_eq(fring_proto_arg_size(FUSE_INIT, &conn0), 64);
	cr_assert_eq(fring_proto_arg_size(FUSE_RENAME2, &conn0), 16);
	cr_assert_eq(fring_proto_arg_size(FUSE_COPY_FILE_RANGE_64, &conn0), 56);
	cr_assert_eq(fring_proto_arg_size(FUSE_STATX, &conn0), 24);
	cr_assert_eq(fring_proto_arg_size(FUSE_FLUSH, &conn0), 24);
	cr_assert_eq(fring_proto_arg_size(FUSE_SETXATTR, &conn0), 8);
	cr_assert_eq(fring_proto_arg_size(FUSE_SETXATTR, &ext), 16);
	cr_assert_eq(fring_proto_arg_size(FUSE_SETXATTR, NULL), 8);
}

/* ---- malformed requests ---- */

/* Every known opcode with arg 0 one byte short is refused in both forms. */
Test(decode, arg0_short_by_one)
{
	struct rq r;

	for (uint32_t op = 1; op < FUSE_OPCODE_MAX; op++) {
		int size = fring_proto_arg_size(op, &conn0);
		uint8_t zero[88] = { 0 };

		if (size <= 0)
			continue;
		if (op == FUSE_INIT)
			size = FUSE_COMPAT_INIT_IN_SIZE;
		/* classic: nothing after the short arg 0 */
		rq_init(&r, op, 1);
		rq_arg(&r, zero, (size_t)size - 1);
		struct fring_decoded x;
		cr_assert_eq(dec(&r, CLASSIC, &conn0, &x), -EPROTO, "%s",
			     fring_opcode_name(op));
		/* two-part: op_in too short even with a payload present */
		rq_init(&r, op, 1);
		rq_arg(&r, zero, (size_t)size);
		rq_str(&r, "name");
		r.cut = 1;
		cr_assert_eq(dec(&r, SPLIT_EXACT, &conn0, &x), -EPROTO, "%s",
			     fring_opcode_name(op));
		cr_assert_eq(dec(&r, SPLIT_PAD, &conn0, &x), -EPROTO, "%s",
			     fring_opcode_name(op));
		release_all();
	}
}

Test(decode, names_malformed)
{
	struct fuse_rename_in ri = { .newdir = 1 };
	struct fuse_mkdir_in mi = { .mode = 0755 };
	struct fuse_getxattr_in gi = { .size = 10 };
	struct rq r;

	rq_init(&r, FUSE_LOOKUP, 1);
	rq_put(&r, "abc", 3);
	expect_rc(&r, &conn0, -EPROTO, "lookup without NUL");

	rq_init(&r, FUSE_LOOKUP, 1);
	rq_str(&r, "");
	expect_rc(&r, &conn0, -EPROTO, "lookup empty name");

	rq_init(&r, FUSE_UNLINK, 1);
	expect_rc(&r, &conn0, -EPROTO, "unlink no payload");

	rq_init(&r, FUSE_RENAME, 1);
	rq_arg(&r, &ri, sizeof(ri));
	rq_str(&r, "old");
	rq_put(&r, "new", 3);
	expect_rc(&r, &conn0, -EPROTO, "rename newname without NUL");

	rq_init(&r, FUSE_RENAME, 1);
	rq_arg(&r, &ri, sizeof(ri));
	rq_str(&r, "old");
	expect_rc(&r, &conn0, -EPROTO, "rename without newname");

	rq_init(&r, FUSE_SYMLINK, 1);
	rq_str(&r, "name");
	expect_rc(&r, &conn0, -EPROTO, "symlink without target");

	rq_init(&r, FUSE_SYMLINK, 1);
	rq_str(&r, "name");
	rq_str(&r, "");
	expect_rc(&r, &conn0, -EPROTO, "symlink empty target");

	rq_init(&r, FUSE_MKDIR, 1);
	rq_arg(&r, &mi, sizeof(mi));
	rq_put(&r, "dir", 3);
	expect_rc(&r, &conn0, -EPROTO, "mkdir without NUL");

	rq_init(&r, FUSE_LINK, 1);
	rq_arg(&r, &ri, sizeof(ri));
	expect_rc(&r, &conn0, -EPROTO, "link without name");

	rq_init(&r, FUSE_GETXATTR, 1);
	rq_arg(&r, &gi, sizeof(gi));
	rq_put(&r, "user.x", 6);
	expect_rc(&r, &conn0, -EPROTO, "getxattr without NUL");

	rq_init(&r, FUSE_REMOVEXATTR, 1);
	expect_rc(&r, &conn0, -EPROTO, "removexattr without name");
}

Test(decode, write_malformed)
{
	struct fuse_write_in wi = { .size = 10 };
	struct fring_proto_conn small = { .minor = 45, .max_write = 4 };
	struct rq r;

	rq_init(&r, FUSE_WRITE, 1);
	rq_arg(&r, &wi, sizeof(wi));
	rq_put(&r, "123456789", 9);
	expect_rc(&r, &conn0, -EPROTO, "write data short by 1");

	wi.size = 0xffffffff;
	rq_init(&r, FUSE_WRITE, 1);
	rq_arg(&r, &wi, sizeof(wi));
	rq_put(&r, "123456789", 9);
	expect_rc(&r, &conn0, -EPROTO, "write size huge");

	wi.size = 5;
	rq_init(&r, FUSE_WRITE, 1);
	rq_arg(&r, &wi, sizeof(wi));
	rq_put(&r, "12345", 5);
	expect_rc(&r, &small, -EPROTO, "write above max_write");
}

Test(decode, setxattr_malformed)
{
	struct fuse_setxattr_in si = { .size = 6 };
	struct fring_proto_conn ext = { .minor = 45, .setxattr_ext = 1 };
	struct rq r;

	rq_init(&r, FUSE_SETXATTR, 1);
	rq_arg(&r, &si, FUSE_COMPAT_SETXATTR_IN_SIZE);
	rq_str(&r, "user.k");
	rq_put(&r, "12345", 5);
	expect_rc(&r, &conn0, -EPROTO, "setxattr value short by 1");

	si.size = 0;
	rq_init(&r, FUSE_SETXATTR, 1);
	rq_arg(&r, &si, FUSE_COMPAT_SETXATTR_IN_SIZE);
	rq_put(&r, "user.k", 6);
	expect_rc(&r, &conn0, -EPROTO, "setxattr name without NUL");

	/* with SETXATTR_EXT the 8-byte header alone is too short */
	rq_init(&r, FUSE_SETXATTR, 1);
	rq_arg(&r, &si, FUSE_COMPAT_SETXATTR_IN_SIZE);
	struct fring_decoded x;
	cr_assert_eq(dec(&r, CLASSIC, &ext, &x), -EPROTO);
	cr_assert_eq(dec(&r, SPLIT_EXACT, &ext, &x), -EPROTO);
}

Test(decode, batch_forget_malformed)
{
	struct fuse_batch_forget_in bi = { .count = 3 };
	struct fuse_forget_one one[2] = { { 1, 1 }, { 2, 2 } };
	struct rq r;

	rq_init(&r, FUSE_BATCH_FORGET, 0);
	rq_arg(&r, &bi, sizeof(bi));
	rq_put(&r, one, sizeof(one));
	expect_rc(&r, &conn0, -EPROTO, "count 3, 2 items");

	bi.count = 0xffffffff;
	rq_init(&r, FUSE_BATCH_FORGET, 0);
	rq_arg(&r, &bi, sizeof(bi));
	rq_put(&r, one, sizeof(one));
	expect_rc(&r, &conn0, -EPROTO, "count 2^32-1");

	bi.count = 2;
	rq_init(&r, FUSE_BATCH_FORGET, 0);
	rq_arg(&r, &bi, sizeof(bi));
	rq_put(&r, one, sizeof(one) - 1);
	expect_rc(&r, &conn0, -EPROTO, "last item short by 1");
}

Test(decode, oversized_values)
{
	struct fuse_read_in ri = { .size = 0x80000000u };
	struct fuse_getxattr_in gi = { .size = 0x80000000u };
	struct fring_decoded d[NFORMS];
	struct rq r;

	for (uint32_t op = FUSE_READ; op; op = op == FUSE_READ ? FUSE_READDIR :
	     op == FUSE_READDIR ? FUSE_READDIRPLUS : 0) {
		ri.size = 0x80000000u;
		rq_init(&r, op, 1);
		rq_arg(&r, &ri, sizeof(ri));
		expect_rc(&r, &conn0, -EPROTO, fring_opcode_name(op));
		ri.size = 0x7fffffff;
		rq_init(&r, op, 1);
		rq_arg(&r, &ri, sizeof(ri));
		decode_all(&r, &conn0, d);
	}
	rq_init(&r, FUSE_LISTXATTR, 1);
	rq_arg(&r, &gi, sizeof(gi));
	expect_rc(&r, &conn0, -EPROTO, "listxattr size 2^31");
}

Test(decode, in_len_checks)
{
	struct fuse_getattr_in gi = { 0 };
	struct fring_decoded x;
	struct rq r;

	rq_init(&r, FUSE_GETATTR, 1);
	rq_arg(&r, &gi, sizeof(gi));
	r.force_len = 1;
	r.h.len = 40 + 16 + 1;
	cr_assert_eq(dec(&r, CLASSIC, &conn0, &x), -EPROTO);
	r.h.len = 40 + 16 - 1;
	cr_assert_eq(dec(&r, CLASSIC, &conn0, &x), -EPROTO);
	/* two-part form: only a sane minimum is required */
	r.h.len = 39;
	expect_rc(&r, &conn0, -EPROTO, "len < header");
	r.h.len = 40;
	cr_assert_eq(dec(&r, SPLIT_PAD, &conn0, &x), 0);

	cr_assert_eq(fring_decode(NULL, NULL, 0, NULL, 0, &conn0, &x), -EPROTO);
	/* payload length without a payload pointer */
	struct fuse_in_header h = { .len = 60, .opcode = FUSE_GETATTR };
	cr_assert_eq(fring_decode(&h, &gi, sizeof(gi), NULL, 4, &conn0, &x),
		     -EPROTO);
}

/* ---- request extensions ---- */

Test(decode, extensions_are_cut_off)
{
	struct fuse_write_in wi = { .size = 4 };
	struct fuse_create_in ci = { .mode = S_IFREG | 0644 };
	struct fring_decoded d[NFORMS];
	struct rq r;

	rq_init(&r, FUSE_CREATE, 1);
	rq_arg(&r, &ci, sizeof(ci));
	rq_str(&r, "file");
	rq_ext(&r, 2);
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_str_eq(x->a.make.name, "file");
		cr_assert_eq(x->a.make.namelen, 4);
	}

	rq_init(&r, FUSE_WRITE, 1);
	rq_arg(&r, &wi, sizeof(wi));
	rq_put(&r, "abcd", 4);
	rq_ext(&r, 1);
	decode_all(&r, &conn0, d);
	EACH(x, d) {
		cr_assert_eq(x->a.write.len, 4);
		cr_assert_eq(memcmp(x->a.write.data, "abcd", 4), 0);
	}

	/* the data may not run into the extension */
	wi.size = 12;
	rq_init(&r, FUSE_WRITE, 1);
	rq_arg(&r, &wi, sizeof(wi));
	rq_put(&r, "abcd", 4);
	rq_ext(&r, 1);
	expect_rc(&r, &conn0, -EPROTO, "write into extension");

	/* a name whose only NUL lies inside the extension is unterminated */
	rq_init(&r, FUSE_LOOKUP, 1);
	rq_put(&r, "abc", 3);
	rq_ext(&r, 1);
	expect_rc(&r, &conn0, -EPROTO, "name NUL in extension");
}

Test(decode, extlen_too_large)
{
	struct fuse_mknod_in mi = { .mode = S_IFREG };
	struct fuse_getattr_in gi = { 0 };
	struct rq r;

	rq_init(&r, FUSE_MKNOD, 1);
	rq_arg(&r, &mi, sizeof(mi));
	rq_str(&r, "1234567"); /* 8 bytes */
	r.h.total_extlen = 2;  /* claims 16 */
	expect_rc(&r, &conn0, -EPROTO, "extlen > payload");

	rq_init(&r, FUSE_LOOKUP, 1);
	rq_str(&r, "1234567");
	r.h.total_extlen = 1; /* swallows the whole name */
	expect_rc(&r, &conn0, -EPROTO, "extlen == payload");

	rq_init(&r, FUSE_GETATTR, 1);
	rq_arg(&r, &gi, sizeof(gi));
	r.h.total_extlen = 0xffff;
	expect_rc(&r, &conn0, -EPROTO, "extlen max");
}

/* ---- robustness sweep ---- */

static void build_sample(struct rq *r, int i)
{
	static const struct fuse_write_in wi = { .size = 5 };
	static const struct fuse_rename2_in r2 = { .newdir = 2 };
	static const struct fuse_batch_forget_in bi = { .count = 2 };
	static const struct fuse_forget_one one[2] = { { 1, 1 }, { 2, 2 } };
	static const struct fuse_setxattr_in si = { .size = 3 };
	static const struct fuse_create_in ci = { .mode = S_IFREG };
	static const struct fuse_init_in ii = { .major = 7, .minor = 45 };
	static const struct fuse_setattr_in sa = { .valid = 1 };

	switch (i) {
	case 0:
		rq_init(r, FUSE_LOOKUP, 1);
		rq_str(r, "hello");
		break;
	case 1:
		rq_init(r, FUSE_WRITE, 1);
		rq_arg(r, &wi, sizeof(wi));
		rq_put(r, "12345", 5);
		break;
	case 2:
		rq_init(r, FUSE_RENAME2, 1);
		rq_arg(r, &r2, sizeof(r2));
		rq_str(r, "a");
		rq_str(r, "bcd");
		break;
	case 3:
		rq_init(r, FUSE_BATCH_FORGET, 0);
		rq_arg(r, &bi, sizeof(bi));
		rq_put(r, one, sizeof(one));
		break;
	case 4:
		rq_init(r, FUSE_SETXATTR, 1);
		rq_arg(r, &si, FUSE_COMPAT_SETXATTR_IN_SIZE);
		rq_str(r, "user.a");
		rq_put(r, "xyz", 3);
		break;
	case 5:
		rq_init(r, FUSE_CREATE, 1);
		rq_arg(r, &ci, sizeof(ci));
		rq_str(r, "newfile");
		rq_ext(r, 1);
		break;
	case 6:
		rq_init(r, FUSE_SYMLINK, 1);
		rq_str(r, "l");
		rq_str(r, "target");
		break;
	case 7:
		rq_init(r, FUSE_INIT, 0);
		rq_arg(r, &ii, sizeof(ii));
		break;
	default:
		rq_init(r, FUSE_SETATTR, 1);
		rq_arg(r, &sa, sizeof(sa));
		break;
	}
}
#define NSAMPLES 9

/* Pointers handed out after a successful decode lie inside the input. */
static void check_pointers(const struct fring_decoded *x)
{
	switch (x->opcode) {
	case FUSE_LOOKUP: case FUSE_UNLINK: case FUSE_RMDIR:
		check_name(x->a.name.name, x->a.name.namelen);
		break;
	case FUSE_MKNOD: case FUSE_MKDIR: case FUSE_CREATE:
	case FUSE_TMPFILE:
		check_name(x->a.make.name, x->a.make.namelen);
		break;
	case FUSE_SYMLINK:
		check_name(x->a.make.name, x->a.make.namelen);
		check_name(x->a.make.link_target, x->a.make.link_target_len);
		break;
	case FUSE_RENAME: case FUSE_RENAME2:
		check_name(x->a.rename.name, x->a.rename.namelen);
		check_name(x->a.rename.newname, x->a.rename.newnamelen);
		break;
	case FUSE_LINK:
		check_name(x->a.link.newname, x->a.link.newnamelen);
		break;
	case FUSE_WRITE:
		cr_assert(!x->a.write.len ||
			  in_bounds(x->a.write.data, x->a.write.len));
		break;
	case FUSE_SETXATTR:
		cr_assert(!x->a.xattr.value_len ||
			  in_bounds(x->a.xattr.value, x->a.xattr.value_len));
		/* fall through */
	case FUSE_GETXATTR: case FUSE_REMOVEXATTR:
		check_name(x->a.xattr.name, x->a.xattr.namelen);
		break;
	case FUSE_BATCH_FORGET:
		cr_assert(!x->a.batch_forget.count ||
			  in_bounds(x->a.batch_forget.items,
				    x->a.batch_forget.count * 16ull));
		break;
	default:
		break;
	}
}

static void expect_sane(const struct rq *r, enum form f, int rc,
			const struct fring_decoded *x)
{
	cr_assert(rc == 0 || rc == -EPROTO || rc == -ENOSYS,
		  "%s %s: rc %d", fring_opcode_name(r->h.opcode), form_name[f], rc);
	if (rc == 0)
		check_pointers(x);
}

/* Every prefix of each sample: with the original in->len (must fail when
 * short) and with in->len matching what is there (must not misbehave). */
Test(decode, every_prefix)
{
	struct fring_decoded x;
	struct rq full, r;

	for (int i = 0; i < NSAMPLES; i++) {
		build_sample(&full, i);
		cr_assert_eq(dec(&full, CLASSIC, &conn0, &x), 0, "sample %d", i);
		release_all();
		for (size_t n = 0; n < full.n; n++) {
			r = full;
			r.n = n;
			r.force_len = 1;
			r.h.len = (uint32_t)(40 + full.n);
			cr_assert_eq(dec(&r, CLASSIC, &conn0, &x), -EPROTO,
				     "sample %d prefix %zu", i, n);
			r.force_len = 0;
			expect_sane(&r, CLASSIC, dec(&r, CLASSIC, &conn0, &x), &x);
			/* two-part: cut arg 0 or the payload */
			if (n < full.a0)
				r.cut = full.a0 - n, r.n = full.a0;
			for (int f = SPLIT_PAD; f < NFORMS; f++)
				expect_sane(&r, f, dec(&r, f, &conn0, &x), &x);
			release_all();
		}
	}
}

Test(decode, random_bytes)
{
	static const uint32_t opmix[] = { FUSE_LOOKUP, FUSE_SYMLINK,
		FUSE_RENAME, FUSE_RENAME2, FUSE_LINK, FUSE_MKNOD, FUSE_CREATE,
		FUSE_WRITE, FUSE_SETXATTR, FUSE_GETXATTR, FUSE_BATCH_FORGET,
		FUSE_INIT, FUSE_READ, FUSE_SETLKW };
	struct fring_proto_conn conns[2] = {
		{ .minor = 45 },
		{ .minor = 45, .setxattr_ext = 1, .max_write = 64 },
	};
	struct fring_decoded x;
	struct rq r;

	srand(20240611);
	for (int it = 0; it < 20000; it++) {
		const struct fring_proto_conn *c = &conns[it & 1];

		rq_init(&r, rand() % 4 ? opmix[rand() % 14] : (uint32_t)(rand() % 64),
			rand());
		r.n = (size_t)(rand() % 200);
		for (size_t k = 0; k < r.n; k++)
			r.body[k] = rand() % 3 ? (uint8_t)rand() : 0;
		r.a0 = r.n ? (size_t)rand() % (r.n + 1) : 0;
		r.h.total_extlen = rand() % 4 ? 0 : (uint16_t)(rand() % 30);
		if (rand() % 8 == 0) {
			r.force_len = 1;
			r.h.len = (uint32_t)rand() % 300;
		}
		for (int f = 0; f < NFORMS; f++)
			expect_sane(&r, f, dec(&r, f, c, &x), &x);
		release_all();
	}
}
