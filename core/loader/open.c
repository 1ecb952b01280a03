// SPDX-License-Identifier: MIT
/*
 * fring_loader_open: find, probe in a child (probe.c), then dlopen, entry
 * symbol, handshake, `load` once per .so in this process.
 *
 * Errors (negative errno, *err is one line starting "plugin 'NAME': "):
 *   -ENOENT   file not found (lists the searched dirs)
 *   -ENOEXEC  dlopen failed (not an ELF shared object, missing library or
 *             symbol), or no fring entry symbol at all
 *   -EPROTO   built for another ABI major (entry _vN or abi_major), a
 *             newer minor than the host's, or bad magic
 *   -EINVAL   malformed descriptor: entry returned NULL, too small, unknown
 *             thread model, reserved flags set, missing required callbacks;
 *             or a name two plugins answer to
 *   -ENOEXEC  also: loading it in the probe's child killed or ended it
 *   -ETIMEDOUT loading it in the probe's child did not finish
 *   other     whatever the plugin's load() returned ("load failed: ...")
 *   -ENOMEM
 * Nothing is ever dlclose'd: Rust cdylibs with thread-locals and embedded
 * interpreters misbehave when unloaded. What is probed and dlopen'd is a
 * private copy of the file (snapshot.c), named by the file's path.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "loader/loader_internal.h"

/* dl handles whose load() succeeded. dlopen returns the same handle for
 * the same file (even via another path or a symlink), so it is the key. */
static void **loaded;
static size_t nloaded;
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;

static bool was_loaded(void *dl)
{
	for (size_t i = 0; i < nloaded; i++)
		if (loaded[i] == dl)
			return true;
	return false;
}

/* Serialised so two mounts opening the same .so at once run load once. */
static int run_load(const char *name, void *dl,
		    const struct fring_loaded_plugin *lp,
		    const struct fring_host_api *host, char **err)
{
	void **grown;
	int rc = 0;

	pthread_mutex_lock(&loaded_lock);
	if (was_loaded(dl))
		goto out;
	if (lp->desc.load) {
		rc = lp->desc.load(host);
		if (rc > 0)
			rc = -EIO; /* not an errno convention we know */
		if (rc < 0) {
			*err = fring_strf("plugin '%s': load failed: %s", name,
					  strerror(-rc));
			goto out;
		}
	}
	grown = realloc(loaded, (nloaded + 1) * sizeof(*loaded));
	if (!grown) {
		rc = -ENOMEM;
		goto out;
	}
	loaded = grown;
	loaded[nloaded++] = dl;
out:
	pthread_mutex_unlock(&loaded_lock);
	return rc;
}

/* dlerror() text without the "path: " prefix and trailing whitespace;
 * a private copy's /proc/self/fd/N is named by its original path. */
static char *dl_reason(const char *path, const char *orig)
{
	const char *e = dlerror(), *at;
	size_t plen = strlen(path), len;
	char *s, *t;

	if (!e)
		return strdup("unknown dlopen error");
	if (!strncmp(e, path, plen) && !strncmp(e + plen, ": ", 2))
		e += plen + 2;
	len = strlen(e);
	while (len && isspace((unsigned char)e[len - 1]))
		len--;
	s = strndup(e, len);
	while (s && orig && (at = strstr(s, path))) {
		t = fring_strf("%.*s%s%s", (int)(at - s), s, orig, at + plen);
		free(s);
		s = t;
	}
	return s;
}

static void *open_dl(const char *name, const char *path, const char *orig,
		     char **err)
{
	char *why;
	void *dl;

	fring_loader_preload_origin(path, orig);
	dlerror();
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (dl) {
		fring_loader_name_copy(dl, path, orig);
		return dl;
	}
	why = dl_reason(path, orig);
	if (why && (strstr(why, "invalid ELF header") ||
		    strstr(why, "file too short")))
		*err = fring_strf("plugin '%s': not a shared object: %s", name,
				  why);
	else
		*err = fring_strf("plugin '%s': cannot load: %s", name,
				  why ? why : "out of memory");
	free(why);
	return NULL;
}

/* The entry for our major, or a message naming the major it was built
 * for (a _vN symbol for another N). */
static fring_plugin_entry_fn find_entry(const char *name, void *dl,
				       char **err, int *rc)
{
	char sym[32];
	void *fn;

	dlerror();
	fn = dlsym(dl, FRING_PLUGIN_ENTRY_SYMBOL);
	if (fn && !dlerror())
		return (fring_plugin_entry_fn)fn;
	for (int v = 2; v <= 9; v++) {
		snprintf(sym, sizeof(sym), "fring_plugin_entry_v%d", v);
		if (v != FRING_ABI_MAJOR && dlsym(dl, sym)) {
			*err = fring_strf("plugin '%s': entry symbol %s missing "
					  "(built for ABI %d; this host speaks "
					  "%d)", name, FRING_PLUGIN_ENTRY_SYMBOL,
					  v, FRING_ABI_MAJOR);
			*rc = -EPROTO;
			return NULL;
		}
	}
	*err = fring_strf("plugin '%s': entry symbol %s missing (not a fring "
			  "plugin?)", name, FRING_PLUGIN_ENTRY_SYMBOL);
	*rc = -ENOEXEC;
	return NULL;
}

int fring_loader_open_file(const char *name, const char *path,
			   const struct fring_host_api *host,
			   struct fring_loaded_plugin **out, char **err)
{
	/* A private copy (snapshot.c) is loaded; lp->path is the file's. */
	const char *orig = fring_loader_copy_origin(path);
	struct fring_loaded_plugin *lp;
	fring_plugin_entry_fn entry;
	int rc = -ENOMEM;

	*out = NULL;
	*err = NULL;
	lp = calloc(1, sizeof(*lp));
	if (!lp || !(lp->path = strdup(orig ? orig : path)))
		goto fail;
	rc = -ENOEXEC;
	lp->dl = open_dl(name, path, orig, err);
	if (!lp->dl)
		goto fail;
	entry = find_entry(name, lp->dl, err, &rc);
	if (!entry)
		goto fail;
	lp->orig = entry(host);
	rc = fring_loader_check(name, lp->orig, lp, err);
	if (rc)
		goto fail;
	rc = run_load(name, lp->dl, lp, host, err);
	if (rc)
		goto fail;
	*out = lp;
	return 0;
fail:
	if (!*err && rc == -ENOMEM)
		*err = fring_strf("plugin '%s': out of memory", name);
	fring_loader_free(lp);
	return rc;
}

int fring_loader_open(const char *name_or_path,
		      const struct fring_host_api *host,
		      struct fring_loaded_plugin **out, char **err)
{
	const struct fring_plugin_info *info;
	char *path = NULL, *file = NULL;
	int rc;

	*out = NULL;
	rc = fring_loader_find(name_or_path, host, &path, err);
	/* What is probed and served is a private copy of the file, so the
	 * file may be rewritten in place meanwhile or later (snapshot.c). */
	if (!rc) {
		rc = fring_loader_snapshot(path, &file);
		if (rc == -EAGAIN)
			*err = fring_strf("plugin '%s': %s kept changing while it "
					  "was read (being installed?); try again",
					  name_or_path, path);
		else if (rc)
			*err = fring_strf("plugin '%s': out of memory",
					  name_or_path);
	}
	/* A crash in its constructors, entry or load() ends a child, not us. */
	if (!rc)
		rc = fring_loader_probe(name_or_path, file, host, &info, err);
	if (!rc)
		rc = fring_loader_open_file(name_or_path, file, host, out, err);
	free(file);
	free(path);
	return rc;
}

void fring_loader_free(struct fring_loaded_plugin *p)
{
	if (!p)
		return;
	free(p->path);
	free(p);
}
