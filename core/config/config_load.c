// SPDX-License-Identifier: MIT
/*
 * Config entry points: read the file, load it with libyaml's document API
 * and walk the top level (`mounts:`), leaving each mount to config_mount.c.
 *
 * Aliases (*name) are rejected before loading: the document API would
 * silently share nodes, a self-referencing anchor makes a cycle, and
 * "billion laughs" expansion would blow up the flattened plugin options.
 * Anchors alone are harmless and accepted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config_internal.h"

void fring_config_free(struct fring_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->nr_mounts; i++)
		fring_cfg_mount_free(&cfg->mounts[i]);
	free(cfg->mounts);
	free(cfg->path);
	free(cfg);
}

static int yaml_failed(struct cfg_ctx *c, yaml_parser_t *p, const char *text, size_t len)
{
	yaml_mark_t at = p->problem_mark;

	if (p->error == YAML_MEMORY_ERROR)
		return cfg_nomem(c);
	if (p->error == YAML_READER_ERROR) {
		/* Reader errors carry only a byte offset; count lines ourselves. */
		const char *s, *end = text + (p->problem_offset < len ? p->problem_offset : len);

		memset(&at, 0, sizeof(at));
		for (s = text; s < end; s++, at.column++)
			if (*s == '\n') {
				at.line++;
				at.column = (size_t)-1;
			}
		return cfg_error_at(c, at, "invalid input: %s", p->problem);
	}
	if (p->context)
		return cfg_error_at(c, at, "syntax error: %s (%s at %zu:%zu)", p->problem,
				    p->context, p->context_mark.line + 1,
				    p->context_mark.column + 1);
	return cfg_error_at(c, at, "syntax error: %s", p->problem);
}

/* Event pass: syntax errors, aliases and extra documents. */
static int prescan(struct cfg_ctx *c, const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int docs = 0, rc = 0, done = 0;

	if (!yaml_parser_initialize(&p))
		return cfg_nomem(c);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!rc && !done) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = yaml_failed(c, &p, text, len);
			break;
		}
		if (ev.type == YAML_ALIAS_EVENT)
			rc = cfg_error_at(c, ev.start_mark, "YAML aliases are not supported "
					  "(*%s); repeat the value instead",
					  (const char *)ev.data.alias.anchor);
		else if (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
			rc = cfg_error_at(c, ev.start_mark,
					  "expected a single YAML document, found another");
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

/* Same path up to repeated and trailing slashes. */
static int same_path(const char *a, const char *b)
{
	for (;;) {
		while (a[0] == '/' && (a[1] == '/' || !a[1]))
			a++;
		while (b[0] == '/' && (b[1] == '/' || !b[1]))
			b++;
		if (*a != *b)
			return 0;
		if (!*a)
			return 1;
		a++, b++;
	}
}

/* The `mounts:` sequence, each entry to config_mount.c. */
int cfg_key_mounts(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *seq,
		   void *base)
{
	struct fring_config *cfg = base;
	size_t n, i, j;
	char buf[80];
	int rc;

	(void)k;
	if (seq->type != YAML_SEQUENCE_NODE && !cfg_is_null(seq))
		return cfg_error(c, seq, "expected a sequence for mounts, got %s",
				 cfg_describe(seq, buf, sizeof(buf)));
	if (cfg_is_null(seq) ||
	    seq->data.sequence.items.top == seq->data.sequence.items.start)
		return cfg_error(c, seq, "no mounts ('mounts' is empty)");
	n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	if (!(cfg->mounts = calloc(n, sizeof(*cfg->mounts))))
		return cfg_nomem(c);
	for (i = 0; i < n; i++) {
		yaml_node_t *item = cfg_node(c, seq->data.sequence.items.start[i]);
		struct fring_cfg_mount *m = &cfg->mounts[i];

		cfg->nr_mounts = i + 1; /* so free() sees partial entries */
		/* Every error of an entry lies before the next entry's. */
		if ((rc = cfg_parse_mount(c, item, i + 1, m)) || (rc = c->rc))
			return rc;
		for (j = 0; j < i; j++)
			if (same_path(cfg->mounts[j].mountpoint, m->mountpoint))
				return cfg_error(c, cfg_get(c, item, "mountpoint", NULL),
						 "duplicate mountpoint '%s' (already used by "
						 "mount %zu at %u:%u)", m->mountpoint, j + 1,
						 cfg->mounts[j].line, cfg->mounts[j].column);
	}
	return 0;
}

static int parse_root(struct cfg_ctx *c, struct fring_config *cfg)
{
	yaml_node_t *root = yaml_document_get_root_node(c->doc);
	int rc;

	if (!root || cfg_is_null(root))
		return cfg_error_at(c, c->doc->start_mark,
				    "no mounts (expected a top-level 'mounts' sequence)");
	if ((rc = cfg_expect_map(c, root, "the top level")))
		return rc;
	cfg_parse_section(c, root, CFG_TOP, cfg, NULL); /* mounts still checked */
	/* A misspelt 'mounts' is the better message. */
	if (!c->rc && !cfg_get(c, root, "mounts", NULL))
		return cfg_error(c, root, "no mounts (expected a top-level 'mounts' "
				 "sequence)");
	return c->rc;
}

int fring_config_parse(const char *name, const char *text, size_t len,
		       struct fring_config **out, char **err)
{
	struct cfg_ctx c = { .name = name };
	struct fring_config *cfg = calloc(1, sizeof(*cfg));
	yaml_document_t doc;
	yaml_parser_t p;
	int rc, loaded = 0;

	if (!cfg || !(cfg->path = strdup(name))) {
		rc = cfg_nomem(&c);
		goto out;
	}
	if ((rc = prescan(&c, text, len)))
		goto out;
	if (!yaml_parser_initialize(&p)) {
		rc = cfg_nomem(&c);
		goto out;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	loaded = yaml_parser_load(&p, &doc);
	rc = loaded ? 0 : yaml_failed(&c, &p, text, len);
	yaml_parser_delete(&p);
	if (rc)
		goto out;
	c.doc = &doc;
	rc = parse_root(&c, cfg);
	if (!rc)
		rc = c.rc; /* an error recorded while the walk went on */
	yaml_document_delete(&doc);
out:
	if (rc) {
		fring_config_free(cfg);
		if (err)
			*err = c.err;
		else
			free(c.err);
		return rc;
	}
	if (err)
		*err = NULL;
	*out = cfg;
	return 0;
}

/* A configuration is small; anything bigger is not one (/dev/zero...). */
#define CONFIG_MAX_BYTES (4u << 20)

static int read_all(int fd, char **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap), *nb;
	ssize_t r;

	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap >= CONFIG_MAX_BYTES) {
				free(b);
				return -EFBIG;
			}
			if (!(nb = realloc(b, cap * 2))) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(b);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = b;
	*len = n;
	return 0;
}

int fring_config_load(const char *path, struct fring_config **out, char **err)
{
	char *text = NULL;
	size_t len = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (err && asprintf(err, "%s: cannot open: %s", path, strerror(-rc)) < 0)
			*err = NULL;
		return rc;
	}
	rc = read_all(fd, &text, &len);
	close(fd);
	if (rc == -EFBIG) {
		if (err && asprintf(err, "%s: not a configuration file (more than "
				    "%u MiB)", path, CONFIG_MAX_BYTES >> 20) < 0)
			*err = NULL;
		return -EINVAL;
	}
	if (rc) {
		if (err && asprintf(err, "%s: cannot read: %s", path, strerror(-rc)) < 0)
			*err = NULL;
		return rc;
	}
	rc = fring_config_parse(path, text, len, out, err);
	free(text);
	return rc;
}
