// SPDX-License-Identifier: MIT
/*
 * fring_loader_find: a path as given, or a name. `fring plugins` shows a
 * plugin's descriptor name (hello-rust) while its file may be called
 * otherwise (libhello.so), so a plugin answers to both: every file on the
 * search path is probed (in a child, once per process) for its name. A
 * name two files answer to would pick one by accident; it is an error
 * naming both, whichever way they answer to it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "loader/loader_internal.h"

static bool is_path(const char *s)
{
	size_t len = strlen(s);

	return strchr(s, '/') || (len > 3 && !strcmp(s + len - 3, ".so"));
}

static bool answers_to(const struct fring_plugin_file *e, const char *name)
{
	return !strcmp(e->stem, name) ||
	       (e->info && e->info->name && !strcmp(e->info->name, name));
}

/* "a, b and c" of the files in `idx`. */
static char *join_files(const struct fring_plugin_file *e, const size_t *idx,
			size_t n)
{
	char *s = strdup(e[idx[0]].file);

	for (size_t i = 1; s && i < n; i++) {
		char *t = fring_strf("%s%s%s", s, i + 1 < n ? ", " : " and ",
				     e[idx[i]].file);

		free(s);
		s = t;
	}
	return s;
}

/* Not found: say so, and which files could not be asked their name. */
static int not_found(const char *name, const struct fring_plugin_file *e,
		     size_t n, char **err)
{
	size_t bad = 0;
	char *msg;

	fring_loader_not_found(name, &msg);
	for (size_t i = 0; i < n; i++)
		bad += !e[i].info;
	if (msg && bad) {
		*err = fring_strf("%s; %zu plugin file%s there could not be "
				  "loaded to read %s name (fring plugins says "
				  "why)", msg, bad, bad == 1 ? "" : "s",
				  bad == 1 ? "its" : "their");
		free(msg);
	} else {
		*err = msg;
	}
	return -ENOENT;
}

static int by_name(const char *name, const struct fring_host_api *host,
		   char **path, char **err)
{
	struct fring_plugin_file *e;
	size_t n, nr = 0, *idx;
	int rc;

	if (fring_loader_list(host, &e, &n))
		return -ENOMEM;
	idx = calloc(n ? n : 1, sizeof(*idx));
	if (!idx) {
		fring_loader_list_free(e, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		if (!answers_to(&e[i], name))
			continue;
		for (size_t j = 0; j < nr; j++)
			dup |= !strcmp(e[idx[j]].path, e[i].path);
		if (!dup)
			idx[nr++] = i;
	}
	if (nr == 0) {
		rc = not_found(name, e, n, err);
	} else if (nr > 1) {
		char *files = join_files(e, idx, nr);

		*err = fring_strf("plugin '%s': ambiguous: %s %s answer to that "
				  "name (rename one, or give the path of the "
				  "one you mean)", name, files ? files : "?",
				  nr == 2 ? "both" : "all");
		free(files);
		rc = -EINVAL;
	} else {
		*path = strdup(e[idx[0]].path);
		rc = *path ? 0 : -ENOMEM;
	}
	free(idx);
	fring_loader_list_free(e, n);
	return rc;
}

int fring_loader_find(const char *name_or_path,
		      const struct fring_host_api *host, char **path,
		      char **err)
{
	int rc;

	*path = NULL;
	*err = NULL;
	if (is_path(name_or_path)) {
		*path = realpath(name_or_path, NULL);
		if (*path)
			return 0;
		rc = -errno;
		*err = fring_strf("plugin '%s': %s", name_or_path,
				  rc == -ENOENT ? "not found" : strerror(-rc));
		return rc;
	}
	if (!*name_or_path) {
		*err = fring_strf("plugin '': empty name");
		return -EINVAL;
	}
	rc = by_name(name_or_path, host, path, err);
	if (rc == -ENOMEM && !*err)
		*err = fring_strf("plugin '%s': out of memory", name_or_path);
	return rc;
}
