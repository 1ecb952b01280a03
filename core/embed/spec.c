// SPDX-License-Identifier: MIT
/* A struct fring_mount_spec as a config entry: plugin options copied,
 * mount options and the transport mode read by config's own parsers
 * (the words, checks and messages of the YAML schema). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "embed_internal.h"

void embed_spec_free(struct fring_cfg_mount *cm)
{
	if (!cm)
		return;
	fring_cfg_mount_free(cm);
	free(cm);
}

int fring_mount_option_check(const char *opt, char **err)
{
	struct fring_cfg_mount cm = { 0 };
	int rc = fring_cfg_mount_option(&cm, opt, NULL, FRING_MOPT_SPEC, err);

	fring_cfg_mount_free(&cm);
	return rc;
}

static int copy_options(const struct fring_mount_spec *sp,
			struct fring_cfg_mount *cm, char **err)
{
	cm->options = calloc(sp->nr_options ? sp->nr_options : 1,
			     sizeof(*cm->options));
	if (!cm->options)
		return -ENOMEM;
	for (uint32_t i = 0; i < sp->nr_options; i++) {
		const struct fring_kv *kv = &sp->options[i];
		struct fring_cfg_option *o = &cm->options[i];

		if (!kv->key) {
			embed_set_err(err, fring_strf("plugin option %u has no key", i));
			return -EINVAL;
		}
		o->key = strdup(kv->key);
		o->value = strdup(kv->value ? kv->value : "");
		o->is_null = !kv->value;
		cm->nr_options = i + 1;
		if (!o->key || !o->value)
			return -ENOMEM;
	}
	return 0;
}

static int fill(const struct fring_mount_spec *sp, struct fring_cfg_mount *cm,
		char **err)
{
	const char *mode = SPEC_HAS(sp, transport_mode) ? sp->transport_mode : NULL;
	int rc;

	fring_cfg_transport_defaults(&cm->transport);
	fring_cfg_stats_defaults(&cm->stats);
	rc = fring_cfg_parse_mode(mode ? mode : "auto", &cm->transport.mode, err);
	if (rc < 0)
		return rc;
	cm->mountpoint = strdup(sp->mountpoint);
	cm->plugin = strdup(sp->plugin);
	if (!cm->mountpoint || !cm->plugin)
		return -ENOMEM;
	rc = copy_options(sp, cm, err);
	for (uint32_t i = 0; !rc && i < sp->nr_mount_options; i++) {
		const struct fring_kv *kv = &sp->mount_options[i];

		if (!kv->key) {
			embed_set_err(err, fring_strf("mount option %u has no key", i));
			return -EINVAL;
		}
		rc = fring_cfg_mount_option(cm, kv->key, kv->value,
					    FRING_MOPT_SPEC, err);
	}
	return rc;
}

int embed_spec_to_cfg(const struct fring_mount_spec *sp,
		      struct fring_cfg_mount **out, char **err)
{
	struct fring_cfg_mount *cm;
	int rc;

	if (!sp || !SPEC_HAS(sp, mount_options) || !sp->mountpoint ||
	    !sp->plugin || (sp->nr_options && !sp->options) ||
	    (sp->nr_mount_options && !sp->mount_options)) {
		embed_set_err(err, fring_strf("invalid mount spec (size, mountpoint "
					      "and plugin are required)"));
		return -EINVAL;
	}
	if (!(cm = calloc(1, sizeof(*cm))))
		return -ENOMEM;
	rc = fill(sp, cm, err);
	if (rc < 0) {
		embed_spec_free(cm);
		return rc;
	}
	*out = cm;
	return 0;
}
