// SPDX-License-Identifier: MIT
/*
 * C/C++ conveniences for plugin authors. Not part of the binary ABI and not
 * read by the binding generators (they use plugin.h only).
 *
 *   static struct fring_plugin my_plugin = {
 *       FRING_PLUGIN_HEADER,
 *       .name = "hello", .version = "1.0", .create = hello_create,
 *       .ops = &hello_ops,
 *   };
 *   FRING_PLUGIN_DEFINE(my_plugin)
 *
 * FRING_PLUGIN_DEFINE emits the only exported symbol, fring_plugin_entry_v1,
 * and stores the host table in `fring_host` for the wrappers below.
 */
#ifndef FRING_PLUGIN_HELPERS_H
#define FRING_PLUGIN_HELPERS_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin.h"

#define FRING_PLUGIN_HEADER                                                   \
	.size = sizeof(struct fring_plugin), .magic = FRING_PLUGIN_MAGIC,     \
	.abi_major = FRING_ABI_MAJOR, .abi_minor = FRING_ABI_MINOR

#define FRING_OPS_HEADER .size = sizeof(struct fring_fs_ops)

/* The host table, set by the entry point before any other callback. */
extern const struct fring_host_api *fring_host
	__attribute__((visibility("hidden")));

#ifdef __cplusplus
#define FRING_EXTERN_C extern "C"
#else
#define FRING_EXTERN_C
#endif

#define FRING_PLUGIN_DEFINE(desc)                                             \
	const struct fring_host_api *fring_host                               \
		__attribute__((visibility("hidden")));                        \
	FRING_EXTERN_C __attribute__((visibility("default")))                 \
	const struct fring_plugin *                                           \
	fring_plugin_entry_v1(const struct fring_host_api *host)              \
	{                                                                     \
		fring_host = host;                                            \
		return &(desc);                                               \
	}

/* True if a size-prefixed struct `s` (pointer) includes `field`. */
#define FRING_HAS_FIELD(s, type, field)                                       \
	((s)->size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* printf-style logging through the host table; keeps errno. */
__attribute__((format(printf, 3, 4))) static inline void
fring_logf(fring_mount *m, int level, const char *fmt, ...)
{
	int saved = errno;
	char buf[1024];
	va_list ap;

	if (fring_host->log_enabled && !fring_host->log_enabled(m, level)) {
		errno = saved;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fring_host->log(m, level, buf);
	errno = saved;
}

/* struct stat -> struct fring_attr. */
static inline void fring_attr_from_stat(const struct stat *st,
					struct fring_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = (uint64_t)st->st_ino;
	a->size = (uint64_t)st->st_size;
	a->blocks = (uint64_t)st->st_blocks;
	a->atime_sec = st->st_atim.tv_sec;
	a->atime_nsec = (uint32_t)st->st_atim.tv_nsec;
	a->mtime_sec = st->st_mtim.tv_sec;
	a->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
	a->ctime_sec = st->st_ctim.tv_sec;
	a->ctime_nsec = (uint32_t)st->st_ctim.tv_nsec;
	a->mode = st->st_mode;
	a->nlink = (uint32_t)st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->rdev = (uint32_t)st->st_rdev;
	a->blksize = (uint32_t)st->st_blksize;
}

#endif /* FRING_PLUGIN_HELPERS_H */
