/* One entry of `mounts:`: mountpoint, plugin, options, mount_options and
 * transport. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_internal.h"

void cfg_mount_free(struct fring_cfg_mount *m)
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
}

/* A required, non-empty string; 1 if missing (said by the caller). */
static int req_string(struct cfg_ctx *c, yaml_node_t *map, const char *key,
		      char **out, yaml_node_t **where)
{
	yaml_node_t *v = cfg_get(c, map, key, NULL);
	char buf[80];

	if (!v)
		return 1;
	if (v->type != YAML_SCALAR_NODE || !*cfg_scalar(v) || cfg_is_null(v))
		return cfg_error(c, v, "%s must be a non-empty string, got %s", key,
				 cfg_describe(v, buf, sizeof(buf)));
	if (where)
		*where = v;
	return cfg_strdup(c, v, key, out);
}

/* `NAME=VALUE` with a non-empty value, stored once. */
static int named_opt(struct cfg_ctx *c, yaml_node_t *v, const char *name, char **out)
{
	const char *s = cfg_scalar(v) + strlen(name) + 1;

	if (*out)
		return cfg_error(c, v, "mount option '%s' given twice", name);
	if (!*s)
		return cfg_error(c, v, "mount option '%s=' needs a value", name);
	if (!(*out = strdup(s)))
		return cfg_nomem(c);
	return 0;
}

static int parse_mount_options(struct cfg_ctx *c, yaml_node_t *n, struct fring_cfg_mount *m)
{
	yaml_node_item_t *i;
	char buf[80];

	if (cfg_is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_error(c, n, "expected a sequence for mount_options, got %s",
				 cfg_describe(n, buf, sizeof(buf)));
	for (i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
		yaml_node_t *v = cfg_node(c, *i);
		const char *s;
		int rc = 0;

		if (v->type != YAML_SCALAR_NODE || cfg_is_null(v))
			return cfg_error(c, v, "expected a mount option in mount_options, got %s",
					 cfg_describe(v, buf, sizeof(buf)));
		s = cfg_scalar(v);
		if (!strcmp(s, "default_permissions"))
			m->default_permissions = 1;
		else if (!strcmp(s, "allow_other"))
			m->allow_other = 1;
		else if (!strcmp(s, "ro"))
			m->ro = 1;
		else if (!strcmp(s, "trust_plugin_permissions"))
			m->trust_plugin_permissions = 1;
		else if (!strncmp(s, "fsname=", 7))
			rc = named_opt(c, v, "fsname", &m->fsname);
		else if (!strncmp(s, "subtype=", 8))
			rc = named_opt(c, v, "subtype", &m->subtype);
		else
			rc = cfg_error(c, v, "unknown mount option '%s' (expected one of: "
				       "default_permissions, allow_other, ro, "
				       "trust_plugin_permissions, fsname=NAME, "
				       "subtype=NAME)", s);
		if (rc)
			return rc;
	}
	return 0;
}

/* `index` is 1-based, as printed in messages. */
int cfg_parse_mount(struct cfg_ctx *c, yaml_node_t *n, size_t index,
		    struct fring_cfg_mount *m)
{
	static const char *const keys[] = { "mountpoint", "plugin", "options",
					    "mount_options", "transport", NULL };
	yaml_node_t *v, *mountpoint = NULL, *plugin = NULL;
	int rc, missing_mp, missing_plugin;
	char what[32];

	fring_cfg_transport_defaults(&m->transport);
	m->line = (unsigned)n->start_mark.line + 1;
	m->column = (unsigned)n->start_mark.column + 1;
	snprintf(what, sizeof(what), "mount %zu", index);
	if ((rc = cfg_expect_map(c, n, what)))
		return rc;
	/* Every key is checked, a bad one or not: of several errors the one
	 * first in the file is reported (cfg_error_at keeps that one). */
	cfg_check_keys(c, n, "in mount", keys);
	missing_mp = req_string(c, n, "mountpoint", &m->mountpoint, &mountpoint) == 1;
	missing_plugin = req_string(c, n, "plugin", &m->plugin, &plugin) == 1;
	/* Mountpoint errors (missing, not a directory, dead...) point here. */
	if (mountpoint) {
		m->mountpoint_line = (unsigned)mountpoint->start_mark.line + 1;
		m->mountpoint_column = (unsigned)mountpoint->start_mark.column + 1;
	}
	if (plugin) {
		m->plugin_line = (unsigned)plugin->start_mark.line + 1;
		m->plugin_column = (unsigned)plugin->start_mark.column + 1;
	}
	if ((v = cfg_get(c, n, "options", NULL)))
		cfg_parse_options(c, v, m);
	if ((v = cfg_get(c, n, "mount_options", NULL)))
		parse_mount_options(c, v, m);
	if ((v = cfg_get(c, n, "transport", NULL)))
		cfg_parse_transport(c, v, &m->transport);
	/* A missing key has no place of its own (the entry's start): it is
	 * said only when nothing else is wrong, a misspelt key first. */
	if (!c->rc && (missing_mp || missing_plugin))
		return cfg_error(c, n, "mount %zu is missing required key '%s'",
				 index, missing_mp ? "mountpoint" : "plugin");
	return c->rc;
}
