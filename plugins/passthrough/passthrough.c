// SPDX-License-Identifier: MIT
/*
 * passthrough: mirrors a source directory, inode by inode. Descriptor,
 * options and lifecycle; the operations live in ops_*.c.
 */
#include "pt.h"

#include <fcntl.h>
#include <math.h> /* isfinite */
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define PT_DEFAULT_FD_CACHE 1024
#define PT_MAX_IO_THREADS 64

static int pt_create_inst(fring_mount *m, void **inst)
{
	struct pt_fs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return -ENOMEM;
	fs->mount = m;
	fs->entry_timeout_ns = 1000000000ull;
	fs->attr_timeout_ns = 1000000000ull;
	fs->fd_cache_max = PT_DEFAULT_FD_CACHE;
	fs->xattr = true;
	fs->keep_cache = true;
	fs->handles = true;
	fs->zero_copy = true;
	fs->root_fd = -1;
	pthread_mutex_init(&fs->lock, NULL);
	pthread_rwlock_init(&fs->path_lock, NULL);
	*inst = fs;
	return 0;
}

static int parse_timeout(struct pt_fs *fs, const char *key, const char *v,
			 uint64_t *out)
{
	char *end;
	double s = strtod(v, &end);

	if (end == v || *end || !isfinite(s) || s < 0 || s > 1e9) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: %s: expected seconds >= 0, got '%s'",
			   key, v);
		return -EINVAL;
	}
	*out = (uint64_t)(s * 1e9);
	return 0;
}

static int parse_flag(struct pt_fs *fs, const char *key, const char *v,
		      bool *out)
{
	int32_t b;

	if (fring_host->parse_bool(v, &b)) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: %s: expected a boolean, got '%s'",
			   key, v);
		return -EINVAL;
	}
	*out = b != 0;
	return 0;
}

/* A decimal count min..max (no sign, no spaces). */
static int parse_count(struct pt_fs *fs, const char *key, const char *v,
		       unsigned long min, unsigned long max, uint32_t *out)
{
	char *end;
	unsigned long n = 0;

	if (*v >= '0' && *v <= '9') {
		errno = 0;
		n = strtoul(v, &end, 10);
	}
	if (*v < '0' || *v > '9' || *end || errno || n < min || n > max) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: %s: expected a count %lu..%lu, got '%s'",
			   key, min, max, v);
		return -EINVAL;
	}
	*out = (uint32_t)n;
	return 0;
}

static int pt_config(void *inst, const char *key, const char *value)
{
	struct pt_fs *fs = inst;

	if (!strcmp(key, "source")) {
		free(fs->source);
		fs->source = strdup(value);
		return fs->source ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "entry_timeout"))
		return parse_timeout(fs, key, value, &fs->entry_timeout_ns);
	if (!strcmp(key, "attr_timeout"))
		return parse_timeout(fs, key, value, &fs->attr_timeout_ns);
	if (!strcmp(key, "writeback"))
		return parse_flag(fs, key, value, &fs->writeback);
	if (!strcmp(key, "xattr"))
		return parse_flag(fs, key, value, &fs->xattr);
	if (!strcmp(key, "kernel_passthrough"))
		return parse_flag(fs, key, value, &fs->kernel_passthrough);
	if (!strcmp(key, "keep_cache"))
		return parse_flag(fs, key, value, &fs->keep_cache);
	if (!strcmp(key, "handles"))
		return parse_flag(fs, key, value, &fs->handles);
	if (!strcmp(key, "zero_copy"))
		return parse_flag(fs, key, value, &fs->zero_copy);
	if (!strcmp(key, "zero_copy_min")) {
		if (!fring_host->parse_size(value, &fs->zero_copy_min))
			return 0;
		fring_logf(fs->mount, FRING_LOG_ERROR, "passthrough: zero_copy_min: "
			   "expected a size (e.g. 64KiB), got '%s'", value);
		return -EINVAL;
	}
	if (!strcmp(key, "fd_cache"))
		return parse_count(fs, key, value, 1, 1000000, &fs->fd_cache_max);
	if (!strcmp(key, "io_threads"))
		return parse_count(fs, key, value, 0, PT_MAX_IO_THREADS,
				   &fs->io_threads);
	fring_logf(fs->mount, FRING_LOG_ERROR,
		   "passthrough: unknown option '%s' (known: source, "
		   "entry_timeout, attr_timeout, fd_cache, writeback, "
		   "keep_cache, xattr, kernel_passthrough, handles, "
		   "io_threads, zero_copy, zero_copy_min)", key);
	return -EINVAL;
}

/* The process umask, read without the set-and-restore race of umask(2). */
static mode_t process_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned int m = 022;

	if (!f)
		return 022;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	fclose(f);
	return (mode_t)m;
}

/* A mountpoint inside the source would show the mount inside itself:
 * looking it up makes the server call into its own mount and wait on the
 * very queue that must answer (over io_uring, a deadlock no signal ends).
 * The mountpoint may be the source itself: root_fd is opened before the
 * mount covers it. */
static int pt_check_mountpoint(struct pt_fs *fs)
{
	const char *mp = NULL;
	char *src;
	size_t n;
	int inside;

	if (FRING_HAS_FIELD(fring_host, struct fring_host_api, mount_point) &&
	    fring_host->mount_point)
		mp = fring_host->mount_point(fs->mount);
	src = mp ? realpath(fs->source, NULL) : NULL;
	if (!src)
		return 0;
	n = strlen(src);
	inside = !strncmp(mp, src, n) &&
		 (n == 1 ? mp[1] != '\0' : mp[n] == '/');
	if (inside)
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: the mountpoint %s lies inside source %s: "
			   "the mount would contain itself and its server would "
			   "wait on its own requests; mount it outside the source",
			   mp, src);
	free(src);
	return inside ? -ELOOP : 0;
}

/* Grow the process's descriptor table now, for the fd cache plus open
 * files. The kernel grows it in powers of two as descriptors are opened,
 * and in a multi-threaded process every growth waits for an RCU grace
 * period (expand_fdtable: synchronize_rcu), milliseconds here, stalling
 * the request that opened the descriptor: a 20,000-entry listing took
 * 25 ms instead of 12 ms when the table had to grow from 64 to 256 during
 * it. The table never shrinks, so one dup now settles it. */
static void reserve_fd_table(int root_fd, uint32_t fd_cache_max)
{
	struct rlimit rl;
	long top = (long)fd_cache_max + 256;
	int fd;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    top >= (long)rl.rlim_cur)
		top = (long)rl.rlim_cur - 1;
	fd = fcntl(root_fd, F_DUPFD_CLOEXEC, (int)top);
	if (fd >= 0)
		close(fd);
}

static int pt_config_complete(void *inst)
{
	struct pt_fs *fs = inst;
	struct rlimit rl;
	struct stat st;
	int err;

	if (!fs->source) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: option 'source' (a directory) is required");
		return -EINVAL;
	}
	if (fs->kernel_passthrough && fs->writeback) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: kernel_passthrough and writeback "
			   "exclude each other (the kernel refuses the pair)");
		return -EINVAL;
	}
	err = pt_check_mountpoint(fs);
	if (err)
		return err;
	/* Not O_PATH: open_by_handle_at refuses an O_PATH mount fd. Without
	 * read access only path mode is possible anyway. */
	fs->root_fd = open(fs->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0 && errno == EACCES)
		fs->root_fd = open(fs->source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0 || fstat(fs->root_fd, &st)) {
		err = -errno;
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: source '%s': %s", fs->source,
			   strerror(errno));
		return err;
	}
	fs->umask = process_umask();
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    fs->fd_cache_max > rl.rlim_cur / 2) {
		/* Leave room for open files, which are not bounded by us. */
		fs->fd_cache_max = (uint32_t)(rl.rlim_cur / 2);
		fring_logf(fs->mount, FRING_LOG_WARN,
			   "passthrough: fd_cache lowered to %u (half of RLIMIT_NOFILE)",
			   fs->fd_cache_max);
	}
	reserve_fd_table(fs->root_fd, fs->fd_cache_max);
	if (fs->handles)
		fs->handles = pt_probe_handles(fs);
	err = pt_table_init(fs, &st) ?: pt_fh_init(fs);
	if (!err)
		err = pt_io_create(fs); /* the threads start in init */
	if (err)
		return err;
	fring_logf(fs->mount, FRING_LOG_INFO,
		   "passthrough: serving %s (%s, fd cache %u)", fs->source,
		   fs->handles ? "file handles" : "paths", fs->fd_cache_max);
	return 0;
}

static int pt_init(void *inst, struct fring_conn *conn)
{
	struct pt_fs *fs = inst;

	/* The kernel applies the caller's umask, and clears set-id bits on
	 * write/truncate itself: we run with CAP_FSETID, so the backing file
	 * system would not do it for us. */
	conn->want &= ~(FRING_CAP_DONT_MASK | FRING_CAP_HANDLE_KILLPRIV |
			FRING_CAP_HANDLE_KILLPRIV_V2);
	if (fs->writeback && (conn->capable & FRING_CAP_WRITEBACK_CACHE)) {
		conn->want |= FRING_CAP_WRITEBACK_CACHE;
		fs->writeback_on = true;
	} else if (fs->writeback) {
		fring_logf(fs->mount, FRING_LOG_WARN,
			   "passthrough: kernel offers no write-back cache");
	}
	if (fs->kernel_passthrough && pt_backing_supported() &&
	    (conn->capable & FRING_CAP_PASSTHROUGH)) {
		conn->want |= FRING_CAP_PASSTHROUGH;
		fs->passthrough_on = true;
	} else if (fs->kernel_passthrough) {
		fring_logf(fs->mount, FRING_LOG_WARN,
			   "passthrough: %s offers no kernel passthrough; "
			   "reads and writes go through fring",
			   pt_backing_supported() ? "the kernel" : "the host");
	}
	pt_io_start(fs);
	return 0;
}

static void pt_destroy(void *inst)
{
	struct pt_fs *fs = inst;

	pt_io_destroy(fs); /* first: its workers may still be answering */
	pt_dirs_close_all(fs);
	pt_fh_destroy(fs);
	pt_live_destroy(fs);
	if (fs->ids)
		pt_table_destroy(fs);
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	pthread_mutex_destroy(&fs->lock);
	pthread_rwlock_destroy(&fs->path_lock);
	free(fs->source);
	free(fs);
}

const struct fring_fs_ops pt_ops = {
	FRING_OPS_HEADER,
	.lookup = pt_lookup,
	.forget = pt_forget,
	.getattr = pt_getattr,
	.setattr = pt_setattr,
	.readlink = pt_readlink,
	.mknod = pt_mknod,
	.mkdir = pt_mkdir,
	.symlink = pt_symlink,
	.unlink = pt_unlink,
	.rmdir = pt_rmdir,
	.rename = pt_rename,
	.link = pt_link,
	.open = pt_open,
	.read = pt_read,
	.write = pt_write,
	.flush = pt_flush,
	.release = pt_release,
	.fsync = pt_fsync,
	.opendir = pt_opendir,
	.readdir = pt_readdir,
	.readdirplus = pt_readdirplus,
	.releasedir = pt_releasedir,
	.fsyncdir = pt_fsyncdir,
	.statfs = pt_statfs,
	.setxattr = pt_setxattr,
	.getxattr = pt_getxattr,
	.listxattr = pt_listxattr,
	.removexattr = pt_removexattr,
	.create = pt_create,
	.fallocate = pt_fallocate,
	.lseek = pt_lseek,
	.copy_file_range = pt_copy_file_range,
	.tmpfile = pt_tmpfile,
};

static struct fring_plugin pt_plugin = {
	FRING_PLUGIN_HEADER,
	.thread_model = FRING_THREAD_PARALLEL,
	.name = "passthrough",
	.version = "1.0",
	.description =
		"mirror of a source directory, without a descriptor per inode",
	.config_help =
		"source: path: directory to mirror (required)\n"
		"entry_timeout: seconds: kernel name cache lifetime (1.0)\n"
		"attr_timeout: seconds: kernel attribute cache lifetime (1.0)\n"
		"fd_cache: count: cached O_PATH descriptors (1024)\n"
		"writeback: bool: use the kernel write-back cache (false)\n"
		"keep_cache: bool: keep a file's page cache across opens (true)\n"
		"xattr: bool: serve extended attributes (true)\n"
		"kernel_passthrough: bool: the kernel reads and writes files "
		"itself (FUSE passthrough; root, not with writeback) (false)\n"
		"handles: bool: track inodes by file handle, else by path (true)\n"
		"io_threads: count 0..64: serve READ and WRITE on this many "
		"own threads, 0 = on the calling thread (0)\n"
		"zero_copy: bool: offer io_uring zero-copy on regular files "
		"(FOPEN_IO_URING_ZERO_COPY, Linux 7.3) (true)\n"
		"zero_copy_min: size: ...only to files at least this large "
		"when opened (0)\n",
	.create = pt_create_inst,
	.config = pt_config,
	.config_complete = pt_config_complete,
	.init = pt_init,
	.destroy = pt_destroy,
	.ops = &pt_ops,
	.state_save = pt_state_save,
	.state_load = pt_state_load,
	.state_live = pt_state_live,
	/* open truncates on O_TRUNC itself: no SETATTR after it. */
	.features = FRING_FEATURE_ATOMIC_O_TRUNC,
};

FRING_PLUGIN_DEFINE(pt_plugin)
