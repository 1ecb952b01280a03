// SPDX-License-Identifier: MIT
/*
 * fring embedding API (libfring.so).
 *
 *   fring_runtime *rt = fring_runtime_new(&err);
 *   fring_runtime_add_yaml(rt, "fring.yaml", &err);     // every mount in it
 *   fring_runtime_run(rt, &err);  // serves until fring_runtime_stop or unmount
 *   fring_runtime_free(rt);
 *
 * Errors: functions return 0 or a negative errno; when `err` is not NULL it
 * receives a malloc'ed one-line message the caller frees with free().
 * Same binding rules as plugin.h: fixed-width types, no inlines.
 */
#ifndef FRING_FRING_H
#define FRING_FRING_H

#include <stdint.h>

#include "plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fring_runtime fring_runtime;

/* One "key=value" plugin option (or mount option with value NULL). */
struct fring_kv {
	const char *key;
	const char *value;
};

/* A mount described without YAML. Size-prefixed; zero fields are defaults. */
struct fring_mount_spec {
	uint32_t size;
	uint32_t nr_options;
	const char *mountpoint;
	const char *plugin; /* name on FRING_PLUGIN_PATH / plugin dir, or path */
	const struct fring_kv *options; /* handed to the plugin's config() */
	uint32_t nr_mount_options;
	uint32_t padding;
	/* mount_options words of fring.yaml(5): key "ro", "max_read=N"...
	 * (value NULL), or key "max_read" and value "N" apart */
	const struct fring_kv *mount_options;
	const char *transport_mode; /* "auto" (NULL), "uring", "devfuse" */
};

fring_runtime *fring_runtime_new(char **err);
void fring_runtime_free(fring_runtime *rt);

/* Validate a YAML file and add each of its mounts (not yet mounted).
 * Nothing is added if the file is invalid. */
int32_t fring_runtime_add_yaml(fring_runtime *rt, const char *path, char **err);
/* Add one mount from a spec. */
int32_t fring_runtime_add_mount(fring_runtime *rt,
				const struct fring_mount_spec *spec, char **err);
/* Mount everything added and serve until fring_runtime_stop() is called
 * (from any thread or a signal handler), or until every mount is
 * unmounted from outside. Unmounts what it mounted before returning.
 * Returns 0 after a clean stop. */
int32_t fring_runtime_run(fring_runtime *rt, char **err);
/* Async-signal-safe. The runtime installs no signal handlers and has no
 * supervisor (that is the CLI's): a program that may be killed should call
 * this from its SIGINT/SIGTERM handlers, or mounts are left dead. */
void fring_runtime_stop(fring_runtime *rt);

/* Product version, e.g. "0.1.0". */
const char *fring_version(void);

#ifdef __cplusplus
}
#endif
#endif /* FRING_FRING_H */
