// SPDX-License-Identifier: MIT
/*
 * Where plugins live: FRING_PLUGIN_PATH, then the plugin dir next to the
 * running binary or library (so a build tree works without installing),
 * then the compiled-in install dir. Looking a name up is find.c's job.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "loader/loader_internal.h"

#ifndef FRING_INSTALL_PLUGIN_DIR
#define FRING_INSTALL_PLUGIN_DIR "/usr/local/lib/fring/plugins"
#endif


static char *relative_dir;
static const char *default_dir;
static pthread_once_t dirs_once = PTHREAD_ONCE_INIT;

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *canonical(const char *p)
{
	char *r = realpath(p, NULL);

	return r ? r : strdup(p);
}

/* dladdr() on one of our own functions finds the object the loader was
 * linked into. For the main program glibc reports argv[0], which may be a
 * bare name, so use /proc/self/exe there. An executable (build/bin/fring)
 * looks in ../lib/fring/plugins, a library (build/lib/libfring.so) in
 * fring/plugins beside itself. */
static char *find_relative_dir(void)
{
	struct link_map *lm = NULL;
	char obj[PATH_MAX], *slash, *dir;
	bool exe;
	Dl_info info;
	ssize_t len;

	if (!dladdr1((void *)find_relative_dir, &info, (void **)&lm,
		     RTLD_DL_LINKMAP) || !lm)
		return NULL;
	exe = lm->l_name[0] == '\0';
	if (exe) {
		len = readlink("/proc/self/exe", obj, sizeof(obj) - 1);
		if (len <= 0)
			return NULL;
		obj[len] = '\0';
	} else if (!realpath(lm->l_name, obj)) {
		return NULL;
	}
	slash = strrchr(obj, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	dir = fring_strf("%s/%s", obj, exe ? "../lib/fring/plugins"
					   : "fring/plugins");
	if (!dir)
		return NULL;
	slash = canonical(dir);
	free(dir);
	return slash;
}

static void init_dirs(void)
{
	relative_dir = find_relative_dir();
	if (relative_dir && is_dir(relative_dir))
		default_dir = relative_dir;
	else
		default_dir = FRING_INSTALL_PLUGIN_DIR;
}

const char *fring_loader_default_dir(void)
{
	pthread_once(&dirs_once, init_dirs);
	return default_dir;
}

static int add_dir(char ***dirs, size_t *n, const char *d, size_t len)
{
	char **grown;
	char *s;

	for (size_t i = 0; i < *n; i++)
		if (strlen((*dirs)[i]) == len && !strncmp((*dirs)[i], d, len))
			return 0;
	s = strndup(d, len);
	grown = s ? realloc(*dirs, (*n + 1) * sizeof(**dirs)) : NULL;
	if (!grown) {
		free(s);
		return -ENOMEM;
	}
	*dirs = grown;
	(*dirs)[(*n)++] = s;
	return 0;
}

void fring_loader_free_dirs(char **dirs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

/* The search list in order, duplicates removed. Directories need not
 * exist; callers skip the missing ones. */
int fring_loader_search_dirs(char ***dirs, size_t *n)
{
	const char *env = getenv("FRING_PLUGIN_PATH"), *p, *colon;
	int rc = 0;

	pthread_once(&dirs_once, init_dirs);
	*dirs = NULL;
	*n = 0;
	for (p = env; p && *p && !rc; p = *colon ? colon + 1 : colon) {
		colon = strchrnul(p, ':');
		if (colon > p)
			rc = add_dir(dirs, n, p, (size_t)(colon - p));
	}
	if (!rc && relative_dir)
		rc = add_dir(dirs, n, relative_dir, strlen(relative_dir));
	if (!rc)
		rc = add_dir(dirs, n, FRING_INSTALL_PLUGIN_DIR,
			     strlen(FRING_INSTALL_PLUGIN_DIR));
	if (rc) {
		fring_loader_free_dirs(*dirs, *n);
		*dirs = NULL;
		*n = 0;
	}
	return rc;
}

/* "plugin 'x': not found (searched FRING_PLUGIN_PATH=a:b, /rel, /install)" */
int fring_loader_not_found(const char *name, char **err)
{
	const char *env = getenv("FRING_PLUGIN_PATH");
	const char *inst = FRING_INSTALL_PLUGIN_DIR;
	bool have_env = env && *env;
	bool have_rel;

	pthread_once(&dirs_once, init_dirs);
	have_rel = relative_dir && strcmp(relative_dir, inst);
	*err = fring_strf("plugin '%s': not found (searched %s%s%s%s%s%s)",
			  name, have_env ? "FRING_PLUGIN_PATH=" : "",
			  have_env ? env : "", have_env ? ", " : "",
			  have_rel ? relative_dir : "", have_rel ? ", " : "",
			  inst);
	return -ENOENT;
}
