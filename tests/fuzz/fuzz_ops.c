// SPDX-License-Identifier: MIT
/*
 * The ops table of the plugin inside fuzz_decode. Every op first checks
 * what the host gave it: the args are the decoder's, names are
 * NUL-terminated with the stated length, every pointer lies inside the
 * request's own buffers (every byte is read, for the sanitizers); then
 * fuzz_plugin_handle answers.
 */
#include <string.h>

#include "fuzz.h"

static void check_name(const char *s, uint32_t len)
{
	FUZZ_ASSERT(s && len > 0 && fuzz_in_request(s, (size_t)len + 1),
		    "name outside the request");
	FUZZ_ASSERT(strlen(s) == len, "name length %zu, said %u", strlen(s), len);
}

static volatile uint8_t sink;

/* Reads every byte: the sanitizers check them. */
static void check_bytes(const void *p, size_t len)
{
	uint8_t x = 0;

	FUZZ_ASSERT(!len || fuzz_in_request(p, len), "%zu data bytes outside "
		    "the request", len);
	for (size_t i = 0; i < len; i++)
		x ^= ((const uint8_t *)p)[i];
	sink = x;
}

#define SAME(member) \
	FUZZ_ASSERT(!memcmp(a, &fuzz_cur->exp.a.member, sizeof(*a)), \
		    "args differ from the decoder's (" #member ")")

static void o_name(void *i, fring_req *r, const struct fring_name_args *a)
{
	SAME(name);
	check_name(a->name, a->namelen);
	fuzz_plugin_handle(r);
}

static void o_make(void *i, fring_req *r, const struct fring_make_args *a)
{
	SAME(make);
	check_name(a->name, a->namelen);
	if (fuzz_cur->exp.opcode == FUSE_SYMLINK)
		check_name(a->link_target, a->link_target_len);
	fuzz_plugin_handle(r);
}

static void o_rename(void *i, fring_req *r, const struct fring_rename_args *a)
{
	SAME(rename);
	check_name(a->name, a->namelen);
	check_name(a->newname, a->newnamelen);
	fuzz_plugin_handle(r);
}

static void o_link(void *i, fring_req *r, const struct fring_link_args *a)
{
	SAME(link);
	check_name(a->newname, a->newnamelen);
	fuzz_plugin_handle(r);
}

static void o_write(void *i, fring_req *r, const struct fring_write_args *a)
{
	SAME(write);
	check_bytes(a->data, a->len);
	fuzz_plugin_handle(r);
}

static void o_xattr(void *i, fring_req *r, const struct fring_xattr_args *a)
{
	uint32_t op = fuzz_cur->exp.opcode;

	SAME(xattr);
	if (op != FUSE_LISTXATTR)
		check_name(a->name, a->namelen);
	if (op == FUSE_SETXATTR)
		check_bytes(a->value, a->value_len);
	fuzz_plugin_handle(r);
}

static void o_forget(void *i, const struct fring_forget_one *it, uint32_t n)
{
	const struct fring_decoded *d = &fuzz_cur->exp;

	FUZZ_ASSERT(((uintptr_t)it & 7) == 0, "unaligned forget items");
	if (d->opcode == FUSE_FORGET) {
		FUZZ_ASSERT(n == 1 && it[0].nodeid == d->nodeid &&
			    it[0].nlookup == d->a.forget.nlookup, "FORGET item");
		return;
	}
	FUZZ_ASSERT(n == d->a.batch_forget.count &&
		    !memcmp(it, d->a.batch_forget.items, (size_t)n * sizeof(*it)),
		    "BATCH_FORGET items");
}

/* Ops whose args hold no pointers: compare and go. */
#define PLAIN(fn, type, member)                                      \
	static void fn(void *i, fring_req *r, const struct type *a)  \
	{                                                            \
		SAME(member);                                        \
		fuzz_plugin_handle(r);                                           \
	}
PLAIN(o_getattr, fring_getattr_args, getattr)
PLAIN(o_setattr, fring_setattr_args, setattr)
PLAIN(o_node, fring_node_args, node)
PLAIN(o_open, fring_open_args, open)
PLAIN(o_read, fring_read_args, read)
PLAIN(o_release, fring_release_args, release)
PLAIN(o_fsync, fring_fsync_args, fsync)
PLAIN(o_access, fring_access_args, access)
PLAIN(o_lock, fring_lock_args, lock)
PLAIN(o_fallocate, fring_fallocate_args, fallocate)
PLAIN(o_lseek, fring_lseek_args, lseek)
PLAIN(o_copy, fring_copy_range_args, copy)
PLAIN(o_statx, fring_statx_args, statx)

const struct fring_fs_ops fuzz_ops = {
	.size = sizeof(struct fring_fs_ops),
	.lookup = o_name, .forget = o_forget, .getattr = o_getattr,
	.setattr = o_setattr, .readlink = o_node, .mknod = o_make,
	.mkdir = o_make, .symlink = o_make, .unlink = o_name, .rmdir = o_name,
	.rename = o_rename, .link = o_link, .open = o_open, .read = o_read,
	.write = o_write, .flush = o_release, .release = o_release,
	.fsync = o_fsync, .opendir = o_open, .readdir = o_read,
	.readdirplus = o_read, .releasedir = o_release, .fsyncdir = o_fsync,
	.statfs = o_node, .setxattr = o_xattr, .getxattr = o_xattr,
	.listxattr = o_xattr, .removexattr = o_xattr, .access = o_access,
	.create = o_make, .getlk = o_lock, .setlk = o_lock, .flock = o_lock,
	.fallocate = o_fallocate, .lseek = o_lseek, .copy_file_range = o_copy,
	.tmpfile = o_make, .statx = o_statx,
};

const struct fring_fs_ops fuzz_no_ops = { .size = sizeof(struct fring_fs_ops) };

static int32_t p_init(void *inst, struct fring_conn *c)
{
	c->want |= FRING_CAP_WRITEBACK_CACHE;
	return 0;
}

const struct fring_plugin fuzz_desc = {
	.size = sizeof(struct fring_plugin), .magic = FRING_PLUGIN_MAGIC,
	.abi_major = FRING_ABI_MAJOR, .abi_minor = FRING_ABI_MINOR,
	.thread_model = FRING_THREAD_SERIALIZE, .name = "fuzz",
	.init = p_init, .ops = &fuzz_ops,
};
