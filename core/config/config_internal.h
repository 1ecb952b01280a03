/*
 * Private to core/config: the parse context shared by the document walk
 * (config_load.c), the schema (config_mount.c, config_transport.c) and the
 * plugin option flattening (config_options.c).
 */
#ifndef FRING_CONFIG_INTERNAL_H
#define FRING_CONFIG_INTERNAL_H

#include <yaml.h>

#include "config/config.h"

struct cfg_ctx {
	const char *name;    /* file name used in messages */
	yaml_document_t *doc;
	char *err;           /* the error first in the file */
	size_t err_line, err_column; /* its place (0-based) */
	int rc;              /* -EINVAL or -ENOMEM once an error is recorded */
};

/* Records "NAME:LINE:COL: message" at `mark` (0-based, printed 1-based) and
 * returns -EINVAL. Of several errors the one first in the file is kept
 * (not the first found): the schema goes on checking the other keys of
 * a mapping after a bad one, so what is reported does not depend on the
 * order the checks run in. Out of memory wins over everything. */
int cfg_error_at(struct cfg_ctx *c, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define cfg_error(c, node, ...) cfg_error_at((c), (node)->start_mark, __VA_ARGS__)
int cfg_nomem(struct cfg_ctx *c);

/* "a mapping", "a sequence", "null" or "'text'" for "got ..." messages. */
const char *cfg_describe(const yaml_node_t *n, char *buf, size_t len);
/* Plain ~, null, Null, NULL or empty scalar (quoted "null" is a string). */
int cfg_is_null(const yaml_node_t *n);
const char *cfg_scalar(const yaml_node_t *n);
yaml_node_t *cfg_node(struct cfg_ctx *c, int id);

/* Checks `n` is a mapping with scalar keys (else an error, returned: the
 * mapping cannot be walked) and unique ones (a duplicate is recorded, and
 * 0 returned: the walk goes on, cfg_get finds the first); `what` names it
 * in "expected a mapping for WHAT, got ...". */
int cfg_expect_map(struct cfg_ctx *c, yaml_node_t *n, const char *what);
/* Rejects any key not in the NULL-terminated `allowed` (the first such
 * is recorded); `where` is a phrase such as "in mount" or "at top level".
 * Callers go on checking the known keys' values. */
int cfg_check_keys(struct cfg_ctx *c, yaml_node_t *map, const char *where,
		   const char *const *allowed);
/* Value node for `key` in a checked mapping, or NULL. */
yaml_node_t *cfg_get(struct cfg_ctx *c, yaml_node_t *map, const char *key,
		     yaml_node_t **key_node);
/* malloc'ed copy of a scalar; rejects embedded NUL bytes. */
int cfg_strdup(struct cfg_ctx *c, yaml_node_t *n, const char *what, char **out);

int cfg_parse_mount(struct cfg_ctx *c, yaml_node_t *n, size_t index,
		    struct fring_cfg_mount *m);
int cfg_parse_transport(struct cfg_ctx *c, yaml_node_t *n,
			struct fring_cfg_transport *t);
int cfg_parse_options(struct cfg_ctx *c, yaml_node_t *n,
		      struct fring_cfg_mount *m);
void cfg_mount_free(struct fring_cfg_mount *m);

#endif /* FRING_CONFIG_INTERNAL_H */
