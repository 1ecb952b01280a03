// SPDX-License-Identifier: MIT
/*
 * The embedding API (fring.h) on top of config + loader + session. The CLI's
 * `run` and `mount` use it too, so there is one implementation of the
 * "validate and load everything, then mount, then serve" sequence.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "embed_internal.h"

#ifndef FRING_VERSION_STRING
#define FRING_VERSION_STRING "0.0.0"
#endif

FRING_API const char *fring_version(void)
{
	return FRING_VERSION_STRING;
}

FRING_API fring_runtime *fring_runtime_new(char **err)
{
	fring_runtime *rt = calloc(1, sizeof(*rt));

	if (!rt) {
		embed_set_err(err, fring_strf("out of memory"));
		return NULL;
	}
	rt->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (rt->stop_fd < 0) {
		embed_set_err(err, fring_strf("eventfd: %s", strerror(errno)));
		free(rt);
		return NULL;
	}
	return rt;
}

void fring_runtime_on_ready(fring_runtime *rt, fring_ready_fn cb, void *ud)
{
	rt->ready = cb;
	rt->ready_ud = ud;
}

size_t fring_runtime_nr_mounts(const fring_runtime *rt)
{
	return rt->n;
}

FRING_API int32_t fring_runtime_add_yaml(fring_runtime *rt, const char *path,
					 char **err)
{
	struct fring_config *cfg = NULL, **cfgs;
	struct embed_mount *new;
	char *msg = NULL;
	int rc;

	rc = fring_config_load(path, &cfg, &msg);
	if (rc < 0) {
		embed_set_err(err, msg ? msg : fring_strf("%s: %s", path, strerror(-rc)));
		return rc;
	}
	new = calloc(cfg->nr_mounts ? cfg->nr_mounts : 1, sizeof(*new));
	cfgs = realloc(rt->cfgs, (rt->nr_cfgs + 1) * sizeof(*cfgs));
	if (!new || !cfgs) {
		free(new);
		if (cfgs)
			rt->cfgs = cfgs;
		fring_config_free(cfg);
		embed_set_err(err, fring_strf("out of memory"));
		return -ENOMEM;
	}
	rt->cfgs = cfgs;
	rc = embed_open_mounts(cfg->mounts, cfg->nr_mounts,
			       cfg->path ? cfg->path : path, new, err);
	if (rc == 0)
		rc = embed_commit(rt, new, cfg->nr_mounts, err);
	free(new);
	if (rc < 0) {
		fring_config_free(cfg);
		return rc;
	}
	rt->cfgs[rt->nr_cfgs++] = cfg;
	return 0;
}

FRING_API int32_t fring_runtime_add_mount(fring_runtime *rt,
					  const struct fring_mount_spec *spec,
					  char **err)
{
	struct fring_cfg_mount *cm = NULL;
	struct embed_mount m;
	char *msg = NULL;
	int rc;

	rc = embed_spec_to_cfg(spec, &cm, &msg);
	if (rc == 0) {
		rc = embed_open_mounts(cm, 1, NULL, &m, &msg);
		if (rc < 0)
			embed_spec_free(cm);
	}
	if (rc < 0) {
		embed_set_err(err, msg ? msg : fring_strf("%s", strerror(-rc)));
		return rc;
	}
	m.owned = cm;
	return embed_commit(rt, &m, 1, err);
}

FRING_API int32_t fring_runtime_run(fring_runtime *rt, char **err)
{
	uint64_t drained;
	int rc;

	if (!rt->n) {
		embed_set_err(err, fring_strf("nothing to mount"));
		return -EINVAL;
	}
	rc = embed_run(rt, err);
	/* Consume the stop request so a later run starts afresh. */
	if (read(rt->stop_fd, &drained, sizeof(drained)) < 0)
		drained = 0;
	return rc;
}

FRING_API void fring_runtime_stop(fring_runtime *rt)
{
	uint64_t one = 1;
	ssize_t r;

	/* Only write(2): this is called from signal handlers. */
	r = write(rt->stop_fd, &one, sizeof(one));
	(void)r;
}

FRING_API void fring_runtime_free(fring_runtime *rt)
{
	if (!rt)
		return;
	for (size_t i = 0; i < rt->n; i++)
		embed_mount_release(&rt->m[i]);
	free(rt->m);
	for (size_t i = 0; i < rt->nr_cfgs; i++)
		fring_config_free(rt->cfgs[i]);
	free(rt->cfgs);
	close(rt->stop_fd);
	free(rt);
}
