// SPDX-License-Identifier: MIT
/* Each config entry as a runtime mount: its plugin loaded, its mountpoint
 * checked, its session created (nothing mounted yet), then appended to
 * the runtime. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../loader/loader.h"
#include "../mount/stale.h"
#include "../runtime/host.h"
#include "../runtime/session.h"
#include "embed_internal.h"

void embed_mount_release(struct embed_mount *m)
{
	if (m->s) {
		fring_session_stop(m->s);
		fring_session_free(m->s);
	}
	if (m->plugin) {
		free(m->plugin->path);
		free(m->plugin);
	}
	free(m->mountpoint);
	free(m->where);
	free(m->mp_where);
	embed_spec_free(m->owned);
	memset(m, 0, sizeof(*m));
}

/* Load the plugin, resolve and check the mountpoint (nothing created). */
static int prepare_mount(const struct fring_cfg_mount *cm, const char *file,
			 struct embed_mount *out, char **err)
{
	struct fring_loaded_plugin *lp = NULL;
	char *msg = NULL, *at, *real;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = fring_loader_open(cm->plugin, fring_host_table(), &lp, &msg);
	if (rc < 0) {
		at = embed_where(file, cm->at_plugin.line, cm->at_plugin.column);
		embed_set_err(err, fring_strf("%s%s", at ? at : "",
					      msg ? msg : "cannot load plugin"));
		free(at);
		free(msg);
		return rc;
	}
	out->plugin = lp;
	out->where = embed_where(file, cm->line, cm->column);
	out->mp_where = embed_where(file, cm->at_mountpoint.line,
				    cm->at_mountpoint.column);
	/* Resolve now so the ready line and the mount agree. */
	real = fring_kmount_realpath(cm->mountpoint);
	out->mountpoint = real ? real : strdup(cm->mountpoint);
	if (!out->mountpoint || !out->where || !out->mp_where) {
		embed_set_err(err, fring_strf("out of memory"));
		embed_mount_release(out);
		return -ENOMEM;
	}
	/* A missing, non-directory, dead or still-served mountpoint is
	 * reported now, where the file names it, so `check` catches it and
	 * `run` mounts nothing. */
	rc = fring_kmount_check_stale(cm->mountpoint, &msg);
	if (rc < 0) {
		embed_set_err(err, fring_strf("%s%s", out->mp_where, msg ? msg : ""));
		free(msg);
		embed_mount_release(out);
		return rc;
	}
	out->plugin_name = lp->desc.name ? lp->desc.name : cm->plugin;
	return 0;
}

/* Create the plugin instance and hand it its options (nothing mounted).
 * What the plugin logs as errors meanwhile goes into the one-line error. */
static int create_session(const struct fring_cfg_mount *cm, const char *file,
			  struct embed_mount *out, char **err)
{
	struct fring_session_params p = { 0 };
	struct fring_log_capture cap;
	char *msg = NULL;
	int rc;

	p.mountpoint = out->mountpoint;
	p.plugin = out->plugin;
	p.options = cm->options;
	p.nr_options = cm->nr_options;
	p.config_file = file;
	p.kmount = cm->kmount;
	p.trust_plugin_permissions = cm->trust_plugin_permissions;
	p.blksize = cm->blksize;
	p.transport = cm->transport;
	p.stats = cm->stats;
	p.restart = cm->restart;
	fring_log_capture_start(&cap);
	rc = fring_session_new(&p, &out->s, &msg);
	if (rc == 0) {
		fring_log_capture_stop(&cap, 1);
		return 0;
	}
	if (!msg)
		msg = fring_strf("%s: cannot create session: %s",
				 out->mountpoint, strerror(-rc));
	if (msg)
		msg = embed_with_reasons(msg, &cap, out->mountpoint);
	fring_log_capture_stop(&cap, !msg);
	/* Point at the mount entry unless the message already does. */
	if (msg && file && strncmp(msg, file, strlen(file))) {
		char *full = fring_strf("%s%s", out->where, msg);

		free(msg);
		msg = full;
	}
	embed_set_err(err, msg ? msg : fring_strf("out of memory"));
	out->s = NULL;
	return rc;
}

/* Every plugin loaded and every mountpoint checked before any plugin
 * instance exists, then every instance created: the cheap errors come
 * first, and the loader's probes fork before plugins start threads. */
int embed_open_mounts(const struct fring_cfg_mount *cm, size_t n,
		      const char *file, struct embed_mount *out, char **err)
{
	size_t i, j;
	int rc = 0;

	for (i = 0; i < n && !rc; i++)
		rc = prepare_mount(&cm[i], file, &out[i], err);
	if (rc)
		i--; /* out[i - 1] failed and released itself */
	for (j = 0; j < i && !rc; j++)
		rc = create_session(&cm[j], file, &out[j], err);
	if (rc)
		while (i--)
			embed_mount_release(&out[i]);
	return rc;
}

static int dup_mountpoint(const fring_runtime *rt,
			  const struct embed_mount *new, size_t nr_new,
			  char **err)
{
	for (size_t i = 0; i < nr_new; i++) {
		for (size_t j = 0; j < rt->n + i; j++) {
			const struct embed_mount *o = j < rt->n ? &rt->m[j] : &new[j - rt->n];

			if (!strcmp(o->mountpoint, new[i].mountpoint)) {
				embed_set_err(err, fring_strf("%s%s: mountpoint used twice",
							      new[i].mp_where,
							      new[i].mountpoint));
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* Append prepared mounts, or release them all on error. */
int embed_commit(fring_runtime *rt, struct embed_mount *new, size_t nr,
		 char **err)
{
	struct embed_mount *m;
	int rc = dup_mountpoint(rt, new, nr, err);

	if (!rc) {
		m = realloc(rt->m, (rt->n + nr) * sizeof(*m));
		if (!m) {
			embed_set_err(err, fring_strf("out of memory"));
			rc = -ENOMEM;
		} else {
			memcpy(m + rt->n, new, nr * sizeof(*m));
			rt->m = m;
			rt->n += nr;
			return 0;
		}
	}
	for (size_t i = 0; i < nr; i++)
		embed_mount_release(&new[i]);
	return rc;
}
