// SPDX-License-Identifier: MIT
/* The walk of one mapping of the file by the key table: unknown keys,
 * then each known key's parser. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "config/config_internal.h"

static const struct {
	const char *prefix; /* of its keys' full names */
	const char *where;  /* in "unknown key 'x' WHERE" */
} sections[] = {
	[CFG_TOP] = { "", "at top level" },
	[CFG_MOUNT] = { "", "in mount" },
	[CFG_TRANSPORT] = { "transport.", "in transport" },
	[CFG_BUFPOOL] = { "transport.bufpool.", "in transport.bufpool" },
	[CFG_STATS] = { "stats.", "in stats" },
};

const char *cfg_key_path(const struct cfg_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", sections[k->section].prefix, k->name);
	return buf;
}

static const struct cfg_key *find(enum cfg_section s, const char *name)
{
	for (size_t i = 0; i < cfg_nr_keys; i++)
		if (cfg_keys[i].section == s && !strcmp(cfg_keys[i].name, name))
			return &cfg_keys[i];
	return NULL;
}

/* The first key not in the section is recorded, with the section's keys. */
static void check_keys(struct cfg_ctx *c, yaml_node_t *map, enum cfg_section s)
{
	yaml_node_pair_t *p;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = cfg_node(c, p->key);
		char list[256] = "";
		size_t used = 0;

		if (find(s, cfg_scalar(k)))
			continue;
		for (size_t i = 0; i < cfg_nr_keys && used < sizeof(list); i++)
			if (cfg_keys[i].section == s)
				used += (size_t)snprintf(list + used, sizeof(list) - used,
							 "%s%s", used ? ", " : "",
							 cfg_keys[i].name);
		cfg_error(c, k, "unknown key '%s' %s (expected one of: %s)",
			  cfg_scalar(k), sections[s].where, list);
		return;
	}
}

int cfg_parse_section(struct cfg_ctx *c, yaml_node_t *n, enum cfg_section s,
		      void *base, uint64_t *given)
{
	check_keys(c, n, s);
	for (size_t i = 0; i < cfg_nr_keys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		yaml_node_t *v;

		if (k->section != s || !(v = cfg_get(c, n, k->name, NULL)))
			continue;
		if (given)
			*given |= 1ull << i;
		k->parse(c, k, v, base);
	}
	return c->rc;
}
