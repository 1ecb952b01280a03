// SPDX-License-Identifier: MIT
/*
 * fring_loader_list: every <stem>.so on the search path, in search order
 * and by name within a directory, each probed in a child (probe.c). A file
 * name found in an earlier directory shadows later ones, which is how a
 * FRING_PLUGIN_PATH directory overrides a shipped plugin.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "loader/loader_internal.h"

static int is_so(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	return de->d_name[0] != '.' && len > 3 &&
	       !strcmp(de->d_name + len - 3, ".so");
}

static bool seen_before(const struct fring_plugin_file *e, size_t n,
			const char *stem)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(e[i].stem, stem))
			return true;
	return false;
}

/* Append dir/file unless shadowed; probes it. */
static int add_file(struct fring_plugin_file **v, size_t *n, const char *dir,
		    const char *file, const struct fring_host_api *host)
{
	struct fring_plugin_file *grown, *e;
	char *stem = strndup(file, strlen(file) - 3), *err = NULL;

	if (!stem)
		return -ENOMEM;
	if (seen_before(*v, *n, stem)) {
		free(stem);
		return 0;
	}
	grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown) {
		free(stem);
		return -ENOMEM;
	}
	*v = grown;
	e = &grown[(*n)++];
	memset(e, 0, sizeof(*e));
	e->stem = stem;
	e->file = fring_strf("%s/%s", dir, file);
	e->path = e->file ? realpath(e->file, NULL) : NULL;
	if (!e->file || (!e->path && !(e->path = strdup(e->file))))
		return -ENOMEM;
	if (fring_loader_probe(e->file, e->path, host, &e->info, &err))
		e->err = err ? err : fring_strf("plugin '%s': out of memory",
						e->file);
	return 0;
}

int fring_loader_list(const struct fring_host_api *host,
		      struct fring_plugin_file **out, size_t *nout)
{
	struct fring_plugin_file *v = NULL;
	size_t nd, n = 0;
	char **dirs;
	int rc;

	*out = NULL;
	*nout = 0;
	if (fring_loader_search_dirs(&dirs, &nd))
		return -ENOMEM;
	rc = 0;
	for (size_t d = 0; !rc && d < nd; d++) {
		struct dirent **names;
		/* Missing or unreadable directories are simply empty. */
		int k = scandir(dirs[d], &names, is_so, alphasort);

		for (int i = 0; i < k; i++) {
			if (!rc)
				rc = add_file(&v, &n, dirs[d], names[i]->d_name,
					      host);
			free(names[i]);
		}
		if (k >= 0)
			free(names);
	}
	fring_loader_free_dirs(dirs, nd);
	if (rc) {
		fring_loader_list_free(v, n);
		return rc;
	}
	*out = v;
	*nout = n;
	return 0;
}

void fring_loader_list_free(struct fring_plugin_file *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].file);
		free(e[i].stem);
		free(e[i].path);
		free(e[i].err);
	}
	free(e);
}

const char *fring_loader_shared_name(const struct fring_plugin_file *a,
				     const struct fring_plugin_file *b)
{
	const char *an = a->info ? a->info->name : NULL;
	const char *bn = b->info ? b->info->name : NULL;

	if (!strcmp(a->path, b->path))
		return NULL;
	if (!strcmp(a->stem, b->stem))
		return a->stem; /* only across dirs, which shadowing hides */
	if (bn && !strcmp(a->stem, bn))
		return a->stem;
	if (an && (!strcmp(an, b->stem) || (bn && !strcmp(an, bn))))
		return an;
	return NULL;
}
