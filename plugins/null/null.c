// SPDX-License-Identifier: MIT
/*
 * null: files that read as zeros and swallow writes, so a benchmark of it
 * measures the runtime itself (protocol, transport, dispatch, replies)
 * without any backing I/O. The root holds `files` regular files f0, f1...
 * of `size` bytes each (inodes 2...), writable: a write is answered with
 * its full count and forgotten; truncation and other attribute changes are
 * accepted and dropped too, so the size never changes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fring/plugin-helpers.h>

#define ROOT 1
#define TIMEOUT_NS (3600 * 1000000000ull) /* nothing ever changes */
#define MAX_FILES 1000000u

struct null_fs {
	fring_mount *mount;
	uint64_t size;  /* bytes per file */
	uint32_t files;
};

/* Reads are answered from here; max_write (1 MiB) bounds a READ. */
static const char zeros[1 << 20];

static int32_t null_create(fring_mount *m, void **inst)
{
	struct null_fs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return -ENOMEM;
	fs->mount = m;
	fs->size = 1ull << 30;
	fs->files = 4;
	*inst = fs;
	return 0;
}

static int32_t null_config(void *inst, const char *key, const char *value)
{
	struct null_fs *fs = inst;
	uint64_t v;

	if (!strcmp(key, "size")) {
		/* The kernel's largest file size is 2^63 - 1 (MAX_LFS_FILESIZE). */
		if (fring_host->parse_size(value, &fs->size) == 0 &&
		    fs->size <= (uint64_t)INT64_MAX)
			return 0;
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "null: size: expected a size like 1GiB, below 8EiB, "
			   "got '%s'", value);
		return -EINVAL;
	}
	if (!strcmp(key, "files")) {
		char *end;

		v = strtoull(value, &end, 10);
		if (end != value && !*end && v >= 1 && v <= MAX_FILES) {
			fs->files = (uint32_t)v;
			return 0;
		}
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "null: files: expected a count 1..%u, got '%s'",
			   MAX_FILES, value);
		return -EINVAL;
	}
	fring_logf(fs->mount, FRING_LOG_ERROR, "null: unknown option '%s'", key);
	return -EINVAL;
}

static void null_destroy(void *inst)
{
	free(inst);
}

static int is_file(const struct null_fs *fs, uint64_t ino)
{
	return ino >= 2 && ino < 2ull + fs->files;
}

static void fill(const struct null_fs *fs, uint64_t ino, struct fring_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = ino == ROOT ? S_IFDIR | 0755 : S_IFREG | 0666;
	a->nlink = ino == ROOT ? 2 : 1;
	a->size = ino == ROOT ? 0 : fs->size;
	a->blocks = ino == ROOT ? 0 : (fs->size + 511) / 512;
	a->blksize = 4096;
}

/* "f<n>" with n < files, no leading zeros: its inode, else 0. */
static uint64_t file_ino(const struct null_fs *fs, const char *name)
{
	char *end;
	unsigned long n;

	if (name[0] != 'f' || name[1] < '0' || name[1] > '9' ||
	    (name[1] == '0' && name[2]))
		return 0;
	n = strtoul(name + 1, &end, 10);
	return *end || n >= fs->files ? 0 : 2 + n;
}

static void null_lookup(void *inst, fring_req *r, const struct fring_name_args *a)
{
	struct null_fs *fs = inst;
	struct fring_entry e = { .entry_timeout_ns = TIMEOUT_NS,
				 .attr_timeout_ns = TIMEOUT_NS };

	e.ino = a->parent == ROOT ? file_ino(fs, a->name) : 0;
	if (!e.ino) {
		fring_host->reply_err(r, a->parent == ROOT ? -ENOENT : -ENOTDIR);
		return;
	}
	fill(fs, e.ino, &e.attr);
	fring_host->reply_entry(r, &e);
}

/* The attributes of nodeid, which never change. */
static void reply_attr_of(struct null_fs *fs, fring_req *r, uint64_t nodeid)
{
	struct fring_attr attr;

	if (nodeid != ROOT && !is_file(fs, nodeid)) {
		fring_host->reply_err(r, -ENOENT);
		return;
	}
	fill(fs, nodeid, &attr);
	fring_host->reply_attr(r, &attr, TIMEOUT_NS);
}

static void null_getattr(void *inst, fring_req *r, const struct fring_getattr_args *a)
{
	reply_attr_of(inst, r, a->nodeid);
}

/* Every change (size included: O_TRUNC) is accepted and dropped, like the
 * data: the reply carries the unchanged attributes. */
static void null_setattr(void *inst, fring_req *r, const struct fring_setattr_args *a)
{
	reply_attr_of(inst, r, a->nodeid);
}

static void null_open(void *inst, fring_req *r, const struct fring_open_args *a)
{
	struct fring_open_out o = { .fh = 0 };

	fring_host->reply_open(r, &o);
}

static void null_read(void *inst, fring_req *r, const struct fring_read_args *a)
{
	struct null_fs *fs = inst;
	uint64_t off = a->offset < fs->size ? a->offset : fs->size;
	uint64_t n = fs->size - off < a->len ? fs->size - off : a->len;

	if (n > sizeof(zeros))
		n = sizeof(zeros);
	fring_host->reply_data(r, zeros, (uint32_t)n);
}

static void null_write(void *inst, fring_req *r, const struct fring_write_args *a)
{
	fring_host->reply_write(r, a->len);
}

static void null_readdir(void *inst, fring_req *r, const struct fring_read_args *a)
{
	struct null_fs *fs = inst;
	char name[16];

	/* offsets: 1 after ".", 2 after "..", 3 + n after f<n> */
	for (uint64_t i = a->offset; i < 2ull + fs->files; i++) {
		int32_t rc;

		if (i < 2)
			rc = fring_host->dir_add(r, i ? ".." : ".", (uint32_t)(i + 1),
						 ROOT, S_IFDIR, i + 1);
		else
			rc = fring_host->dir_add(
				r, name,
				(uint32_t)snprintf(name, sizeof(name), "f%llu",
						   (unsigned long long)(i - 2)),
				i, S_IFREG, i + 1);
		if (rc != 1)
			break;
	}
	fring_host->reply_dir(r);
}

static void null_statfs(void *inst, fring_req *r, const struct fring_node_args *a)
{
	struct null_fs *fs = inst;
	struct fring_statfs st = { .bsize = 4096, .frsize = 4096, .namelen = 255,
				   .files = fs->files + 1ull };

	st.blocks = (fs->size + 4095) / 4096 * fs->files;
	fring_host->reply_statfs(r, &st);
}

static const struct fring_fs_ops null_ops = {
	FRING_OPS_HEADER,
	.lookup = null_lookup,
	.getattr = null_getattr,
	.setattr = null_setattr,
	.open = null_open,
	.read = null_read,
	.write = null_write,
	.readdir = null_readdir,
	.statfs = null_statfs,
};

static const struct fring_plugin null_plugin = {
	FRING_PLUGIN_HEADER,
	.thread_model = FRING_THREAD_PARALLEL,
	.name = "null",
	.version = "1.0",
	.description = "files of zeros that swallow writes: benchmarks the runtime",
	.config_help = "size: size: bytes per file (1GiB)\n"
		       "files: count: files f0, f1... in the root (4)\n",
	.create = null_create,
	.config = null_config,
	.destroy = null_destroy,
	.ops = &null_ops,
};
FRING_PLUGIN_DEFINE(null_plugin)
