/*
 * fring_loader_list: every <name>.so on the search path, in search order
 * and by name within a directory. A name found in an earlier directory
 * shadows later ones, exactly as fring_loader_find resolves it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader_internal.h"
#include "runtime/log.h"


static int is_so(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	return de->d_name[0] != '.' && len > 3 &&
	       !strcmp(de->d_name + len - 3, ".so");
}

static bool seen_before(struct dirent ***lists, const int *counts,
			size_t upto, const char *name)
{
	for (size_t d = 0; d < upto; d++)
		for (int i = 0; i < counts[d]; i++)
			if (!strcmp(lists[d][i]->d_name, name))
				return true;
	return false;
}

static void list_one(const char *dir, const char *file,
		     const struct fring_host_api *host,
		     void (*cb)(const struct fring_loaded_plugin *, void *),
		     void (*err_cb)(const char *, const char *, void *),
		     void *ud)
{
	struct fring_loaded_plugin *p;
	char *path = fring_strf("%s/%s", dir, file), *err = NULL;

	if (!path)
		return;
	if (fring_loader_open(path, host, &p, &err) == 0) {
		cb(p, ud);
		fring_loader_free(p);
	} else if (err_cb) {
		err_cb(path, err ? err : "out of memory", ud);
	}
	free(err);
	free(path);
}

void fring_loader_list(const struct fring_host_api *host,
		       void (*cb)(const struct fring_loaded_plugin *p, void *ud),
		       void (*err_cb)(const char *path, const char *err, void *ud),
		       void *ud)
{
	struct dirent ***lists;
	char **dirs;
	int *counts;
	size_t n;

	if (fring_loader_search_dirs(&dirs, &n))
		return;
	lists = calloc(n, sizeof(*lists));
	counts = calloc(n, sizeof(*counts));
	for (size_t d = 0; lists && counts && d < n; d++) {
		/* Missing or unreadable directories are simply empty. */
		counts[d] = scandir(dirs[d], &lists[d], is_so, alphasort);
		if (counts[d] < 0)
			counts[d] = 0;
		for (int i = 0; i < counts[d]; i++)
			if (!seen_before(lists, counts, d, lists[d][i]->d_name))
				list_one(dirs[d], lists[d][i]->d_name, host, cb,
					 err_cb, ud);
	}
	for (size_t d = 0; lists && counts && d < n; d++) {
		for (int i = 0; i < counts[d]; i++)
			free(lists[d][i]);
		free(lists[d]);
	}
	free(lists);
	free(counts);
	fring_loader_free_dirs(dirs, n);
}
