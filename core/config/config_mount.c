// SPDX-License-Identifier: MIT
/* One entry of `mounts:` (its keys are rows of config_keys.c), and the
 * mount option words, which the embed API's specs use too. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_internal.h"

void fring_cfg_mount_free(struct fring_cfg_mount *m)
{
	size_t i;

	for (i = 0; i < m->nr_options; i++) {
		free(m->options[i].key);
		free(m->options[i].value);
	}
	free(m->options);
	free(m->mountpoint);
	free(m->plugin);
	free(m->fsname);
	free(m->subtype);
	free(m->transport.cpus);
	free(m->stats.prometheus);
}

/* A required, non-empty string (a missing one is said by the caller). */
int cfg_key_string(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v,
		   void *base)
{
	struct fring_cfg_at *at = (void *)((char *)base + k->at);
	char buf[80];

	if (v->type != YAML_SCALAR_NODE || !*cfg_scalar(v) || cfg_is_null(v))
		return cfg_error(c, v, "%s must be a non-empty string, got %s",
				 k->name, cfg_describe(v, buf, sizeof(buf)));
	/* Errors about the value (not a directory, dead...) point here. */
	at->line = (unsigned)v->start_mark.line + 1;
	at->column = (unsigned)v->start_mark.column + 1;
	return cfg_strdup(c, v, k->name, (char **)((char *)base + k->off));
}

int cfg_key_options(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v,
		    void *base)
{
	(void)k;
	return cfg_parse_options(c, v, base);
}

/* The words of mount_options: a flag, or NAME=VALUE stored once. */
static const struct {
	const char *name;
	size_t off;
	int named;
} mount_opts[] = {
	{ "default_permissions", offsetof(struct fring_cfg_mount, default_permissions), 0 },
	{ "allow_other", offsetof(struct fring_cfg_mount, allow_other), 0 },
	{ "ro", offsetof(struct fring_cfg_mount, ro), 0 },
	{ "trust_plugin_permissions",
	  offsetof(struct fring_cfg_mount, trust_plugin_permissions), 0 },
	{ "fsname", offsetof(struct fring_cfg_mount, fsname), 1 },
	{ "subtype", offsetof(struct fring_cfg_mount, subtype), 1 },
};
#define NR_MOUNT_OPTS (sizeof(mount_opts) / sizeof(mount_opts[0]))

static int opt_error(char **err, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int opt_error(char **err, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return rc;
}

int fring_cfg_mount_option(struct fring_cfg_mount *m, const char *opt,
			   const char *value, int flags, char **err)
{
	const char *eq = strchr(opt, '=');
	size_t len = eq ? (size_t)(eq - opt) : strlen(opt), i;
	char list[160];
	int on = 1, used = 0;

	if (eq)
		value = eq + 1;
	for (i = 0; i < NR_MOUNT_OPTS; i++) {
		const char *name = mount_opts[i].name;
		void *field = (char *)m + mount_opts[i].off;

		if (strlen(name) != len || strncmp(opt, name, len))
			continue;
		/* A YAML word is "ro" or "fsname=NAME", nothing else. */
		if (!(flags & FRING_MOPT_SPEC) && !!eq != mount_opts[i].named)
			break;
		if (!mount_opts[i].named) {
			if (value && fring_parse_bool(value, &on) < 0)
				return opt_error(err, -EINVAL, "mount option '%s': "
						 "'%s' is not a boolean", opt, value);
			*(int *)field = on;
			return 0;
		}
		if (*(char **)field)
			return opt_error(err, -EINVAL, "mount option '%s' given "
					 "twice", name);
		if (!value || !*value)
			return opt_error(err, -EINVAL, "mount option '%s=' needs "
					 "a value", name);
		if (!(*(char **)field = strdup(value)))
			return opt_error(err, -ENOMEM, "out of memory");
		return 0;
	}
	for (i = 0; i < NR_MOUNT_OPTS; i++)
		used += snprintf(list + used, sizeof(list) - (size_t)used, "%s%s%s",
				 i ? ", " : "", mount_opts[i].name,
				 mount_opts[i].named ? "=NAME" : "");
	return opt_error(err, -EINVAL, "unknown mount option '%s' (expected one "
			 "of: %s)", opt, list);
}

int cfg_key_mount_options(struct cfg_ctx *c, const struct cfg_key *k,
			  yaml_node_t *n, void *base)
{
	yaml_node_item_t *i;
	char buf[80];

	(void)k;
	if (cfg_is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_error(c, n, "expected a sequence for mount_options, got %s",
				 cfg_describe(n, buf, sizeof(buf)));
	for (i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
		yaml_node_t *v = cfg_node(c, *i);
		char *msg = NULL;
		int rc;

		if (v->type != YAML_SCALAR_NODE || cfg_is_null(v))
			return cfg_error(c, v, "expected a mount option in mount_options, got %s",
					 cfg_describe(v, buf, sizeof(buf)));
		rc = fring_cfg_mount_option(base, cfg_scalar(v), NULL, 0, &msg);
		if (rc == -ENOMEM || (rc && !msg))
			rc = cfg_nomem(c);
		else if (rc)
			rc = cfg_error(c, v, "%s", msg);
		free(msg);
		if (rc)
			return rc;
	}
	return 0;
}

/* `index` is 1-based, as printed in messages. */
int cfg_parse_mount(struct cfg_ctx *c, yaml_node_t *n, size_t index,
		    struct fring_cfg_mount *m)
{
	char what[32];
	int rc;

	fring_cfg_transport_defaults(&m->transport);
	fring_cfg_stats_defaults(&m->stats);
	m->line = (unsigned)n->start_mark.line + 1;
	m->column = (unsigned)n->start_mark.column + 1;
	snprintf(what, sizeof(what), "mount %zu", index);
	if ((rc = cfg_expect_map(c, n, what)))
		return rc;
	/* Every key is checked, a bad one or not: of several errors the one
	 * first in the file is reported (cfg_error_at keeps that one). */
	cfg_parse_section(c, n, CFG_MOUNT, m, NULL);
	/* A missing key has no place of its own (the entry's start): it is
	 * said only when nothing else is wrong, a misspelt key first. */
	for (size_t i = 0; !c->rc && i < cfg_nr_keys; i++) {
		const struct cfg_key *k = &cfg_keys[i];

		if (k->section == CFG_MOUNT && k->required &&
		    !*(char **)((char *)m + k->off))
			return cfg_error(c, n, "mount %zu is missing required key '%s'",
					 index, k->name);
	}
	return c->rc;
}
