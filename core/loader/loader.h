// SPDX-License-Identifier: MIT
/*
 * Plugin loader: find a plugin by name or path, dlopen it, run the version
 * handshake. Errors are one line, e.g.
 *   "plugin 'foo': not found (searched FRING_PLUGIN_PATH=..., /usr/lib/fring/plugins)"
 *   "plugin '/x/y.so': not a shared object: ..."
 *   "plugin 'bar': entry symbol fring_plugin_entry_v1 missing (built for ABI 2?)"
 *   "plugin 'bar': ABI major 2, host speaks 1"
 *   "plugin 'bar': built against ABI 1.3, newer than this host's 1.0; upgrade fring"
 *   "plugin 'baz': loading it killed the process (SIGSEGV)"
 */
#ifndef FRING_LOADER_H
#define FRING_LOADER_H

#include <fring/plugin.h>

struct fring_loaded_plugin {
	char *path;                 /* resolved file path */
	void *dl;                   /* dlopen handle (never dlclose'd) */
	struct fring_plugin desc;   /* host copy: min(size) bytes, rest zero */
	struct fring_fs_ops ops;    /* host copy of the ops table, same rule */
	const struct fring_plugin *orig;
};

/* What a probe (a load in a child process) learnt from a descriptor. */
struct fring_plugin_info {
	char *name;        /* NULL if the descriptor has none */
	char *version, *description, *config_help; /* NULL if not given */
	unsigned abi_major, abi_minor;
};

/* One plugin file on the search path, probed. */
struct fring_plugin_file {
	char *file;  /* <dir>/<stem>.so as found on the search path */
	char *stem;  /* one name it answers to; its descriptor's is the other */
	char *path;  /* the file it resolves to (symlinks followed) */
	const struct fring_plugin_info *info; /* NULL if it does not load */
	char *err;   /* why not, when info is NULL: "plugin 'FILE': ..." */
};

/* The plugin directory compiled in (build tree or install prefix). */
const char *fring_loader_default_dir(void);

/* Resolve `name_or_path`. Containing '/' or ending in ".so": a path.
 * Else a name: a plugin answers to its file name without ".so" and to
 * its descriptor's name, over FRING_PLUGIN_PATH (colon-separated) then
 * the default dir (a file name in an earlier directory shadows later
 * ones). Two files answering to the name is an error naming both.
 * Returns 0 and a malloc'ed path, or -errno + *err. */
int fring_loader_find(const char *name_or_path,
		      const struct fring_host_api *host, char **path,
		      char **err);

/* Load and check. The file is first loaded in a child process (see
 * fring_loader_probe), so a plugin that crashes while loading is an error,
 * not the end of the caller. Calls the entry point and `load` (once per .so).
 * Returns 0 or a negative errno with a one-line message in *err. */
int fring_loader_open(const char *name_or_path,
		      const struct fring_host_api *host,
		      struct fring_loaded_plugin **out, char **err);

/* Free what fring_loader_open returned (the .so stays loaded). */
void fring_loader_free(struct fring_loaded_plugin *p);

/* Load the file `path` in a forked child (its constructors, entry point,
 * the handshake and load()) and bring back its descriptor's strings; a crash,
 * exit or hang there becomes -errno and "plugin 'NAME': why" in *err.
 * Cached per file for the life of the process: *info stays valid. */
int fring_loader_probe(const char *name, const char *path,
		       const struct fring_host_api *host,
		       const struct fring_plugin_info **info, char **err);

/* Every plugin file on the search path, in search order (by name within a
 * directory; shadowed ones left out, as fring_loader_find does), each
 * probed. 0 and an array for fring_loader_list_free, or -ENOMEM. */
int fring_loader_list(const struct fring_host_api *host,
		      struct fring_plugin_file **out, size_t *n);
void fring_loader_list_free(struct fring_plugin_file *e, size_t n);

/* A name both files answer to (file name without ".so", or descriptor
 * name), or NULL; two listings of one file share nothing. */
const char *fring_loader_shared_name(const struct fring_plugin_file *a,
				     const struct fring_plugin_file *b);

#endif /* FRING_LOADER_H */
