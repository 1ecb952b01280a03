// SPDX-License-Identifier: MIT
/*
 * Flattening of a mount's `options:` subtree into key/value strings for the
 * plugin (plugin-abi-notes.md section 8.2):
 *   maps           -> dotted keys        cache: {ttl: 1s}  -> cache.ttl=1s
 *   list of scalars -> the key repeated  ex: [a, b]        -> ex=a, ex=b
 *   list of maps   -> indexed keys       r: [{p: x}]       -> r.0.p=x
 * Values are the scalars' text; YAML null becomes "" with is_null set.
 * Each option records where its key (or, for list items, the item) is.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_internal.h"

struct flat {
	struct fring_cfg_mount *m;
	size_t cap;
};

/* nbdkit's key grammar plus '.': a letter, then [A-Za-z0-9._-]. */
static int key_ok(const char *k)
{
	const char *p;

	if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z')))
		return 0;
	for (p = k + 1; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789._-", *p))
			return 0;
	return 1;
}

static int emit(struct cfg_ctx *c, struct flat *f, const char *key,
		yaml_node_t *val, yaml_mark_t at)
{
	struct fring_cfg_mount *m = f->m;
	struct fring_cfg_option *o;

	if (m->nr_options == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		void *p = realloc(m->options, cap * sizeof(*m->options));

		if (!p)
			return cfg_nomem(c);
		m->options = p;
		f->cap = cap;
	}
	o = &m->options[m->nr_options];
	memset(o, 0, sizeof(*o));
	o->line = (unsigned)at.line + 1;
	o->column = (unsigned)at.column + 1;
	o->is_null = cfg_is_null(val);
	if (!(o->key = strdup(key)))
		return cfg_nomem(c);
	m->nr_options++; /* counted now so free() releases the key on error */
	if (o->is_null) /* "~" and "null" are spellings of null, not values */
		return (o->value = strdup("")) ? 0 : cfg_nomem(c);
	return cfg_strdup(c, val, "an option value", &o->value);
}

static int flatten(struct cfg_ctx *c, struct flat *f, const char *key,
		   yaml_node_t *n, yaml_mark_t at);

static int flatten_map(struct cfg_ctx *c, struct flat *f, const char *prefix,
		       yaml_node_t *n)
{
	yaml_node_pair_t *p;
	char what[256];
	int rc;

	snprintf(what, sizeof(what), "options%s%s", prefix ? "." : "", prefix ? prefix : "");
	if ((rc = cfg_expect_map(c, n, what)))
		return rc;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = cfg_node(c, p->key);
		char *key;

		if (!key_ok(cfg_scalar(k)))
			return cfg_error(c, k, "invalid option key '%s' (expected a letter, "
					 "then letters, digits, '.', '_' or '-')",
					 cfg_scalar(k));
		if (asprintf(&key, "%s%s%s", prefix ? prefix : "", prefix ? "." : "",
			     cfg_scalar(k)) < 0)
			return cfg_nomem(c);
		rc = flatten(c, f, key, cfg_node(c, p->value), k->start_mark);
		free(key);
		if (rc)
			return rc;
	}
	return 0;
}

static int flatten(struct cfg_ctx *c, struct flat *f, const char *key,
		   yaml_node_t *n, yaml_mark_t at)
{
	yaml_node_item_t *i;
	int rc;

	if (n->type == YAML_SCALAR_NODE)
		return emit(c, f, key, n, at);
	if (n->type == YAML_MAPPING_NODE)
		return flatten_map(c, f, key, n);
	for (i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
		yaml_node_t *item = cfg_node(c, *i);
		char *sub;

		if (item->type == YAML_SCALAR_NODE) {
			rc = emit(c, f, key, item, item->start_mark);
		} else {
			if (asprintf(&sub, "%s.%td", key,
				     i - n->data.sequence.items.start) < 0)
				return cfg_nomem(c);
			rc = flatten(c, f, sub, item, item->start_mark);
			free(sub);
		}
		if (rc)
			return rc;
	}
	return 0;
}

int cfg_parse_options(struct cfg_ctx *c, yaml_node_t *n, struct fring_cfg_mount *m)
{
	struct flat f = { .m = m };

	if (cfg_is_null(n))
		return 0;
	return flatten_map(c, &f, NULL, n);
}
