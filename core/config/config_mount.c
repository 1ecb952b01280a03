// SPDX-License-Identifier: MIT
/* One entry of `mounts:` (its keys are rows of config_keys.c), and the
 * mount option words, which the embed API's specs use too. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
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
	free(m->kmount.fsname);
	free(m->kmount.subtype);
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

/* The words of mount_options, each once (fuse(8) and libfuse name the
 * mount(2) ones; fring.yaml(5) says what each does):
 *   FLAG   on with the word ("ro"), or a boolean in specs ("ro=false");
 *   WORD   the word sets its field to `val`: nosuid 1, suid -1, and so on;
 *          in specs "nosuid=false" gives the opposite word's value;
 *   NAME   NAME=VALUE, a non-empty string stored once;
 *   NUM    NAME=N, a number in lo..hi (a power of two with pow2), once. */
enum mopt_kind { MOPT_FLAG, MOPT_WORD, MOPT_NAME, MOPT_NUM };

#define K(f) offsetof(struct fring_cfg_mount, kmount.f)
#define M(f) offsetof(struct fring_cfg_mount, f)
/* Every field given (name, offset, kind, val, lo, hi, pow2), one row a
 * line: */
/* clang-format off */
#define FLAG(n, o) { n, o, MOPT_FLAG, 0, 0, 0, 0 }
#define WORD(n, o, v) { n, o, MOPT_WORD, v, 0, 0, 0 }
#define NAME(n, o) { n, o, MOPT_NAME, 0, 0, 0, 0 }
#define NUM(n, o, lo, hi, pow2) { n, o, MOPT_NUM, 0, lo, hi, pow2 }
static const struct mopt {
	const char *name;
	size_t off;
	enum mopt_kind kind;
	int val;
	unsigned lo, hi, pow2;
} mount_opts[] = {
	FLAG("default_permissions", K(default_permissions)),
	FLAG("allow_other", K(allow_other)),
	FLAG("ro", K(ro)),
	FLAG("trust_plugin_permissions", M(trust_plugin_permissions)),
	NAME("fsname", K(fsname)),
	NAME("subtype", K(subtype)),
	WORD("rw", K(ro), 0),
	WORD("nosuid", K(nosuid), 1),
	WORD("suid", K(nosuid), -1),
	WORD("nodev", K(nodev), 1),
	WORD("dev", K(nodev), -1),
	WORD("noexec", K(noexec), 1),
	WORD("exec", K(noexec), -1),
	WORD("noatime", K(noatime), 1),
	WORD("atime", K(noatime), -1),
	NUM("max_read", K(max_read), 4096, UINT32_MAX, 0),
	NUM("blksize", M(blksize), 512, 1u << 20, 1),
	FLAG("auto_unmount", K(auto_unmount)),
};
/* clang-format on */
#undef K
#undef M
#undef FLAG
#undef WORD
#undef NAME
#undef NUM
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

int fring_cfg_mount_option_known(const char *opt)
{
	size_t len = strcspn(opt, "=");

	for (size_t i = 0; i < NR_MOUNT_OPTS; i++)
		if (strlen(mount_opts[i].name) == len &&
		    !strncmp(opt, mount_opts[i].name, len))
			return 1;
	return 0;
}

size_t fring_cfg_mount_option_words(char *buf, size_t len)
{
	size_t used = 0, i;

	if (len)
		*buf = 0;
	for (i = 0; i < NR_MOUNT_OPTS; i++) {
		const struct mopt *o = &mount_opts[i];
		int n = snprintf(buf + used, len > used ? len - used : 0,
				 "%s%s%s", i ? ", " : "", o->name,
				 o->kind == MOPT_NAME  ? "=NAME"
				 : o->kind == MOPT_NUM ? "=N"
						       : "");

		used += n > 0 ? (size_t)n : 0;
	}
	return used;
}

static int set_num(const struct mopt *o, unsigned *field, const char *value,
		   char **err)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno || end == value || *end || *value == '-' || v < o->lo ||
	    v > o->hi || (o->pow2 && (v & (v - 1))))
		return opt_error(err, -EINVAL,
				 "mount option '%s': '%s' is not "
				 "%s from %u to %u",
				 o->name, value,
				 o->pow2 ? "a power of two" : "a number", o->lo,
				 o->hi);
	*field = (unsigned)v;
	return 0;
}

int fring_cfg_mount_option(struct fring_cfg_mount *m, const char *opt,
			   const char *value, int flags, char **err)
{
	const char *eq = strchr(opt, '=');
	size_t len = eq ? (size_t)(eq - opt) : strlen(opt), i;
	char list[400];
	int on = 1;

	if (eq)
		value = eq + 1;
	for (i = 0; i < NR_MOUNT_OPTS; i++) {
		const struct mopt *o = &mount_opts[i];
		void *field = (char *)m + o->off;
		int valued = o->kind == MOPT_NAME || o->kind == MOPT_NUM;

		if (strlen(o->name) != len || strncmp(opt, o->name, len))
			continue;
		/* A YAML word is "ro" or "fsname=NAME", nothing else. */
		if (!(flags & FRING_MOPT_SPEC) && !!eq != valued)
			break;
		if (!valued) {
			if (value && fring_parse_bool(value, &on) < 0)
				return opt_error(err, -EINVAL, "mount option '%s': "
						 "'%s' is not a boolean", opt, value);
			if (o->kind == MOPT_FLAG)
				*(int *)field = on;
			else /* rw: ro 0; "rw=false": ro 1 */
				*(int *)field = on       ? o->val
						: o->val ? -o->val
							 : 1;
			return 0;
		}
		if (!value || !*value)
			return opt_error(err, -EINVAL,
					 "mount option '%s=' needs "
					 "a value",
					 o->name);
		if (o->kind == MOPT_NUM && *(unsigned *)field)
			return opt_error(err, -EINVAL,
					 "mount option '%s' given twice",
					 o->name);
		if (o->kind == MOPT_NUM)
			return set_num(o, field, value, err);
		if (*(char **)field)
			return opt_error(err, -EINVAL,
					 "mount option '%s' given "
					 "twice",
					 o->name);
		if (!(*(char **)field = strdup(value)))
			return opt_error(err, -ENOMEM, "out of memory");
		return 0;
	}
	fring_cfg_mount_option_words(list, sizeof(list));
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
