// SPDX-License-Identifier: MIT
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
/* Value node for `key` in a checked mapping, or NULL. */
yaml_node_t *cfg_get(struct cfg_ctx *c, yaml_node_t *map, const char *key,
		     yaml_node_t **key_node);
/* malloc'ed copy of a scalar; rejects embedded NUL bytes. */
int cfg_strdup(struct cfg_ctx *c, yaml_node_t *n, const char *what, char **out);

/* The file's mappings; each key of one is a row of cfg_keys[]. */
enum cfg_section { CFG_TOP, CFG_MOUNT, CFG_TRANSPORT, CFG_BUFPOOL, CFG_STATS };

struct cfg_key;
/* Parses value `v` of key `k` into the section's struct `base`; an
 * error is recorded (cfg_error), the return value is only a hint. */
typedef int cfg_parse_fn(struct cfg_ctx *c, const struct cfg_key *k,
			 yaml_node_t *v, void *base);

/* One YAML key: config_keys.c holds them all, in the order of the
 * "expected one of" lists and of the README's table. */
struct cfg_key {
	const char *name;         /* within its section */
	enum cfg_section section;
	cfg_parse_fn *parse;
	size_t off, size;         /* its field in the section's struct */
	size_t at;                /* its struct fring_cfg_at there; 0: none */
	uint64_t lo, hi, def;     /* a number's range, a default value */
	const char *const *words; /* a choice's words; the value is the index */
	const char *unit;         /* of a number: "seconds" */
	const char *expect;       /* "must be ...", where not derived */
	unsigned required : 1;
	unsigned uring_only : 1;  /* unused over /dev/fuse */
	unsigned devfuse_only : 1; /* over io_uring a warning, not used */
	const char *type, *dflt;  /* the reference's columns, where not derived */
	const char *doc;          /* one line: what it does */
};
extern const struct cfg_key cfg_keys[];
extern const size_t cfg_nr_keys;

/* Checks the keys of mapping `n` against the section's rows (an unknown
 * one is recorded, the known ones still parsed), parses each given one
 * into `base` and sets its row's bit in *given (if given). Returns c->rc. */
int cfg_parse_section(struct cfg_ctx *c, yaml_node_t *n, enum cfg_section s,
		      void *base, uint64_t *given);
/* "transport.queue_depth": the key's full name. */
const char *cfg_key_path(const struct cfg_key *k, char *buf, size_t len);
/* What a value must be ("an integer 1..4096"), for messages and docs. */
const char *cfg_key_expect(const struct cfg_key *k, char *buf, size_t len);
/* Records "NAME must be EXPECT, got VALUE" at v. */
int cfg_key_bad(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v);
void cfg_key_store(void *base, const struct cfg_key *k, uint64_t v);

/* The parsers of the rows, by kind (config_scalar.c) */
cfg_parse_fn cfg_key_uint, cfg_key_uint_auto, cfg_key_words,
	cfg_key_tristate, cfg_key_size, cfg_key_bool;
extern const char *const cfg_tristate_words[];
extern const char *const cfg_mode_words[];
/* and of their own (config_mount.c, config_transport.c, config_load.c). */
cfg_parse_fn cfg_key_mounts, cfg_key_string, cfg_key_options,
	cfg_key_mount_options, cfg_key_transport, cfg_key_bufpool, cfg_key_cpus,
	cfg_key_stats, cfg_key_listen;

int cfg_parse_mount(struct cfg_ctx *c, yaml_node_t *n, size_t index,
		    struct fring_cfg_mount *m);
int cfg_parse_options(struct cfg_ctx *c, yaml_node_t *n,
		      struct fring_cfg_mount *m);

#endif /* FRING_CONFIG_INTERNAL_H */
