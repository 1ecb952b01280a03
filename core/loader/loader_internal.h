/* Shared between the loader's files; not used outside core/loader. */
#ifndef FRING_LOADER_INTERNAL_H
#define FRING_LOADER_INTERNAL_H

#include <stddef.h>

#include "loader.h"

/* The search path in order: FRING_PLUGIN_PATH dirs, then the default
 * dirs. Free with fring_loader_free_dirs. */
int fring_loader_search_dirs(char ***dirs, size_t *n);
void fring_loader_free_dirs(char **dirs, size_t n);

/* The handshake checks; fills lp->desc and lp->ops (zero-filled copies). */
int fring_loader_check(const char *name, const struct fring_plugin *d,
		       struct fring_loaded_plugin *lp, char **err);

#endif
