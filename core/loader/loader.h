/*
 * Plugin loader: find a plugin by name or path, dlopen it, run the version
 * handshake. Errors are one line, e.g.
 *   "plugin 'foo': not found (searched FRING_PLUGIN_PATH=..., /usr/lib/fring/plugins)"
 *   "plugin '/x/y.so': not a shared object: ..."
 *   "plugin 'bar': entry symbol fring_plugin_entry_v1 missing (built for ABI 2?)"
 *   "plugin 'bar': ABI major 2, host speaks 1"
 *   "plugin 'bar': built against ABI 1.3, newer than this host's 1.0; upgrade fring"
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

/* The plugin directory compiled in (build tree or install prefix). */
const char *fring_loader_default_dir(void);

/* Resolve `name_or_path` (contains '/' or ends in ".so": a path; else
 * <dir>/<name>.so over FRING_PLUGIN_PATH (colon-separated), then the
 * default dir). Returns 0 and a malloc'ed path, or -ENOENT + *err. */
int fring_loader_find(const char *name_or_path, char **path, char **err);

/* Load and check. Calls the entry and `load` (once per .so). Returns 0 or
 * a negative errno with a one-line message in *err. */
int fring_loader_open(const char *name_or_path,
		      const struct fring_host_api *host,
		      struct fring_loaded_plugin **out, char **err);

/* Free what fring_loader_open returned (the .so stays loaded). */
void fring_loader_free(struct fring_loaded_plugin *p);

/* List every plugin found on the search path (for `fring plugins`). Calls
 * cb for each loadable plugin, and err_cb (may be NULL) for broken ones. */
void fring_loader_list(const struct fring_host_api *host,
		       void (*cb)(const struct fring_loaded_plugin *p, void *ud),
		       void (*err_cb)(const char *path, const char *err, void *ud),
		       void *ud);

#endif /* FRING_LOADER_H */
