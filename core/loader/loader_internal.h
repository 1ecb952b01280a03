// SPDX-License-Identifier: MIT
/* Shared between the loader's files; not used outside core/loader. */
#ifndef FRING_LOADER_INTERNAL_H
#define FRING_LOADER_INTERNAL_H

#include <stddef.h>

#include "loader.h"

/* The search path in order: FRING_PLUGIN_PATH dirs, then the default
 * dirs. Free with fring_loader_free_dirs. */
int fring_loader_search_dirs(char ***dirs, size_t *n);
void fring_loader_free_dirs(char **dirs, size_t n);

/* "plugin 'NAME': not found (searched ...)" in *err; returns -ENOENT. */
int fring_loader_not_found(const char *name, char **err);

/* The handshake checks; fills lp->desc and lp->ops (zero-filled copies). */
int fring_loader_check(const char *name, const struct fring_plugin *d,
		       struct fring_loaded_plugin *lp, char **err);

/* dlopen `path` in this process, entry point, handshake, load() once per .so;
 * messages name the plugin `name`. What fring_loader_open does after the
 * probe. */
int fring_loader_open_file(const char *name, const char *path,
			   const struct fring_host_api *host,
			   struct fring_loaded_plugin **out, char **err);

/* The file to load for `path` (snapshot.c): a private sealed copy,
 * "/proc/self/fd/N", one per version of the file (kept for the life of
 * the process), or `path` itself if no copy can be made. -EAGAIN if the
 * file kept changing while it was copied, -ENOMEM. */
int fring_loader_snapshot(const char *path, char **file);
/* The original path of a copy's "/proc/self/fd/N", or NULL. */
const char *fring_loader_copy_origin(const char *file);
/* After dlopen(file) of a copy: its link map names `orig` (dladdr). */
void fring_loader_name_copy(void *dl, const char *file, const char *orig);
/* Before dlopen(file) of a copy: the libraries its RUNPATH finds through
 * $ORIGIN, loaded from beside `orig`. */
void fring_loader_preload_origin(const char *file, const char *orig);

/* How long a probe may take before its child is killed (tests lower it). */
extern int fring_loader_probe_timeout_ms;

#endif
