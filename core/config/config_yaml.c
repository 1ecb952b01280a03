// SPDX-License-Identifier: MIT
/* libyaml document helpers shared by the config schema: errors with
 * positions, node descriptions, mapping checks. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_internal.h"

int cfg_error_at(struct cfg_ctx *c, yaml_mark_t mark, const char *fmt, ...)
{
	char *msg = NULL, *full = NULL;
	va_list ap;

	/* Keep the error first in the file; out of memory beats them all. */
	if (c->rc == -ENOMEM)
		return c->rc;
	if (c->err && (mark.line > c->err_line ||
		       (mark.line == c->err_line && mark.column >= c->err_column)))
		return c->rc;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg || asprintf(&full, "%s:%zu:%zu: %s", c->name,
			     mark.line + 1, mark.column + 1, msg) < 0) {
		free(msg);
		free(c->err);
		c->err = NULL;
		return cfg_nomem(c);
	}
	free(msg);
	free(c->err);
	c->err = full;
	c->err_line = mark.line;
	c->err_column = mark.column;
	c->rc = -EINVAL;
	return c->rc;
}

int cfg_nomem(struct cfg_ctx *c)
{
	if (c->rc != -ENOMEM) {
		free(c->err);
		c->err = strdup("out of memory"); /* may be NULL; rc still says */
	}
	c->rc = -ENOMEM;
	return c->rc;
}

int cfg_is_null(const yaml_node_t *n)
{
	const char *v;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") ||
	       !strcmp(v, "Null") || !strcmp(v, "NULL");
}

const char *cfg_scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

const char *cfg_describe(const yaml_node_t *n, char *buf, size_t len)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a sequence";
	if (cfg_is_null(n))
		return "null";
	/* Long values are cut to fit, keeping the closing quote. */
	if ((size_t)snprintf(buf, len, "'%s'", cfg_scalar(n)) >= len && len > 5)
		strcpy(buf + len - 5, "...'");
	return buf;
}

yaml_node_t *cfg_node(struct cfg_ctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

int cfg_expect_map(struct cfg_ctx *c, yaml_node_t *n, const char *what)
{
	char buf[64];
	yaml_node_pair_t *p, *q;

	if (n->type != YAML_MAPPING_NODE)
		return cfg_error(c, n, "expected a mapping for %s, got %s", what,
				 cfg_describe(n, buf, sizeof(buf)));
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = cfg_node(c, p->key);

		if (k->type != YAML_SCALAR_NODE)
			return cfg_error(c, k, "expected a scalar key in %s, got %s",
					 what, cfg_describe(k, buf, sizeof(buf)));
	}
	/* Every key is a scalar: the mapping can be walked. A duplicate is
	 * recorded (the first in the file wins) and the walk goes on. */
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = cfg_node(c, p->key);

		for (q = n->data.mapping.pairs.start; q < p; q++) {
			yaml_node_t *k2 = cfg_node(c, q->key);

			if (!strcmp(cfg_scalar(k), cfg_scalar(k2))) {
				cfg_error(c, k, "duplicate key '%s' in %s (first at %zu:%zu)",
					  cfg_scalar(k), what,
					  k2->start_mark.line + 1,
					  k2->start_mark.column + 1);
				break;
			}
		}
	}
	return 0;
}

yaml_node_t *cfg_get(struct cfg_ctx *c, yaml_node_t *map, const char *key,
		     yaml_node_t **key_node)
{
	yaml_node_pair_t *p;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = cfg_node(c, p->key);

		if (!strcmp(cfg_scalar(k), key)) {
			if (key_node)
				*key_node = k;
			return cfg_node(c, p->value);
		}
	}
	return NULL;
}

int cfg_strdup(struct cfg_ctx *c, yaml_node_t *n, const char *what, char **out)
{
	size_t len = n->data.scalar.length;

	if (memchr(n->data.scalar.value, '\0', len))
		return cfg_error(c, n, "%s must not contain a NUL byte", what);
	*out = strndup(cfg_scalar(n), len);
	return *out ? 0 : cfg_nomem(c);
}
