// SPDX-License-Identifier: MIT
/*
 * memfs: fring's embedded default filesystem, a POSIX tree in memory.
 * This file holds the plugin descriptor, the lifecycle and the options.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"

#define MFS_DEFAULT_SIZE (1ull << 40) /* 1 TiB */
#define MFS_NS_PER_SEC 1000000000ull

static int32_t memfs_create(fring_mount *m, void **inst)
{
	struct memfs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return -ENOMEM;
	fs->m = m;
	fs->uid = getuid();
	fs->gid = getgid();
	fs->root_mode = 0755;
	fs->size_limit = MFS_DEFAULT_SIZE;
	fs->inode_limit = 0; /* derived from size_limit unless set */
	fs->entry_ns = fs->attr_ns = MFS_NS_PER_SEC;
	fs->negative_ns = 0;
	if (pthread_rwlock_init(&fs->lock, NULL)) {
		free(fs);
		return -ENOMEM;
	}
	if (mfs_itab_init(fs) < 0) {
		pthread_rwlock_destroy(&fs->lock);
		free(fs);
		return -ENOMEM;
	}
	*inst = fs;
	return 0;
}

static int parse_u32(const char *s, int base, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* Seconds as a decimal ("1", "0.25") to nanoseconds. */
static int parse_timeout(const char *s, uint64_t *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.0) || v > 1e9)
		return -EINVAL;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

static int32_t memfs_config(void *inst, const char *key, const char *value)
{
	struct memfs *fs = inst;
	int ret;

	if (!strcmp(key, "uid"))
		ret = parse_u32(value, 10, UINT32_MAX - 1, &fs->uid);
	else if (!strcmp(key, "gid"))
		ret = parse_u32(value, 10, UINT32_MAX - 1, &fs->gid);
	else if (!strcmp(key, "mode"))
		ret = parse_u32(value, 8, 07777, &fs->root_mode);
	else if (!strcmp(key, "size") || !strcmp(key, "inodes")) {
		uint64_t v = 0;
		bool size = key[0] == 's';

		ret = fring_host->parse_size(value, &v);
		if (!ret && v < (size ? MFS_CHUNK_SIZE : 1))
			ret = -EINVAL;
		if (!ret)
			*(size ? &fs->size_limit : &fs->inode_limit) = v;
	} else if (!strcmp(key, "entry_timeout"))
		ret = parse_timeout(value, &fs->entry_ns);
	else if (!strcmp(key, "attr_timeout"))
		ret = parse_timeout(value, &fs->attr_ns);
	else if (!strcmp(key, "negative_timeout"))
		ret = parse_timeout(value, &fs->negative_ns);
	else if (!strcmp(key, "check_permissions")) {
		int32_t on = 0;

		ret = fring_host->parse_bool(value, &on);
		if (!ret)
			fs->check_perms = on != 0;
	} else {
		fring_logf(fs->m, FRING_LOG_ERROR,
			   "memfs: unknown option '%s' (known: uid, gid, mode, "
			   "size, inodes, entry_timeout, attr_timeout, "
			   "negative_timeout, check_permissions)",
			   key);
		return -EINVAL;
	}
	if (ret < 0)
		fring_logf(fs->m, FRING_LOG_ERROR,
			   "memfs: bad value '%s' for option '%s'", value, key);
	return ret < 0 ? -EINVAL : 0;
}

/* The root is made once the options are known (uid, gid, mode). */
static int make_root(struct memfs *fs)
{
	struct mfs_inode *root;

	if (fs->root)
		return 0;
	if (!fs->inode_limit) {
		fs->inode_limit = fs->size_limit / MFS_BLKSIZE;
		if (fs->inode_limit > UINT32_MAX)
			fs->inode_limit = UINT32_MAX;
	}
	root = mfs_inew(fs, S_IFDIR | fs->root_mode, fs->uid, fs->gid);
	if (!root)
		return -ENOMEM;
	root->nlink = 2;
	mfs_dir_init(&root->dir, root);
	fs->root = root;
	return 0;
}

static int32_t memfs_config_complete(void *inst)
{
	return make_root(inst);
}

static int32_t memfs_init(void *inst, struct fring_conn *conn)
{
	return make_root(inst);
}

static void memfs_destroy(void *inst)
{
	struct memfs *fs = inst;

	mfs_itab_destroy(fs);
	pthread_rwlock_destroy(&fs->lock);
	free(fs);
}

void mfs_op_statfs(void *inst, fring_req *r, const struct fring_node_args *a)
{
	struct memfs *fs = inst;
	struct fring_statfs st;
	uint64_t used;

	memset(&st, 0, sizeof(st));
	pthread_rwlock_rdlock(&fs->lock);
	used = (fs->used_bytes + MFS_BLKSIZE - 1) / MFS_BLKSIZE;
	st.bsize = st.frsize = MFS_BLKSIZE;
	st.blocks = fs->size_limit / MFS_BLKSIZE;
	st.bfree = st.bavail = st.blocks > used ? st.blocks - used : 0;
	st.files = fs->inode_limit;
	st.ffree = fs->inode_limit > fs->ninodes ? fs->inode_limit - fs->ninodes
						 : 0;
	st.namelen = MFS_NAME_MAX;
	pthread_rwlock_unlock(&fs->lock);
	fring_host->reply_statfs(r, &st);
}

static const struct fring_fs_ops memfs_ops = {
	FRING_OPS_HEADER,
	.lookup = mfs_op_lookup,
	.forget = mfs_op_forget,
	.getattr = mfs_op_getattr,
	.setattr = mfs_op_setattr,
	.readlink = mfs_op_readlink,
	.mknod = mfs_op_mknod,
	.mkdir = mfs_op_mkdir,
	.symlink = mfs_op_symlink,
	.unlink = mfs_op_unlink,
	.rmdir = mfs_op_rmdir,
	.rename = mfs_op_rename,
	.link = mfs_op_link,
	.open = mfs_op_open,
	.read = mfs_op_read,
	.write = mfs_op_write,
	.flush = mfs_op_flush,
	.release = mfs_op_release,
	.fsync = mfs_op_fsync,
	.opendir = mfs_op_opendir,
	.readdir = mfs_op_readdir,
	.readdirplus = mfs_op_readdirplus,
	.releasedir = mfs_op_releasedir,
	.fsyncdir = mfs_op_fsyncdir,
	.statfs = mfs_op_statfs,
	.setxattr = mfs_op_setxattr,
	.getxattr = mfs_op_getxattr,
	.listxattr = mfs_op_listxattr,
	.removexattr = mfs_op_removexattr,
	.access = mfs_op_access,
	.create = mfs_op_create,
	.fallocate = mfs_op_fallocate,
	.lseek = mfs_op_lseek,
	.copy_file_range = mfs_op_copy_file_range,
	.tmpfile = mfs_op_tmpfile,
};

static struct fring_plugin memfs_plugin = {
	FRING_PLUGIN_HEADER,
	.thread_model = FRING_THREAD_PARALLEL,
	.name = "memfs",
	.version = "1.0",
	.description = "POSIX filesystem in memory (fring's embedded default)",
	.config_help =
		"uid: integer: owner of the root directory (default: caller)\n"
		"gid: integer: group of the root directory (default: caller)\n"
		"mode: octal: permissions of the root directory (default 0755)\n"
		"size: size: capacity for file data (default 1TiB)\n"
		"inodes: integer: maximum number of inodes (default size/4KiB)\n"
		"entry_timeout: seconds: kernel name cache timeout (default 1)\n"
		"attr_timeout: seconds: kernel attribute cache timeout (default 1)\n"
		"negative_timeout: seconds: cache of missing names (default 0)\n"
		"check_permissions: bool: enforce mode bits in memfs, for mounts "
		"without default_permissions (default false)\n",
	.create = memfs_create,
	.config = memfs_config,
	.config_complete = memfs_config_complete,
	.init = memfs_init,
	.destroy = memfs_destroy,
	.ops = &memfs_ops,
	/* open truncates on O_TRUNC itself: no SETATTR after it. */
	.features = FRING_FEATURE_ATOMIC_O_TRUNC,
	.state_save = mfs_state_save,
	.state_load = mfs_state_load,
};

FRING_PLUGIN_DEFINE(memfs_plugin)
