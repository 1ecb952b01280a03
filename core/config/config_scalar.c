// SPDX-License-Identifier: MIT
/* The parsers of the key table's plain kinds (numbers, choices, sizes,
 * booleans) and the "must be" text each derives from its row. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config/config_internal.h"

const char *const cfg_tristate_words[] = { "auto", "on", "off", NULL };
const char *const cfg_mode_words[] = { "auto", "uring", "devfuse", NULL };

void cfg_key_store(void *base, const struct cfg_key *k, uint64_t v)
{
	char *field = (char *)base + k->off;

	/* Enums, ints and uint32_t fields are 4 bytes, sizes 8. */
	if (k->size == sizeof(uint32_t)) {
		uint32_t v32 = (uint32_t)v;

		memcpy(field, &v32, sizeof(v32));
	} else if (k->size == sizeof(uint64_t)) {
		memcpy(field, &v, sizeof(v));
	}
}

static size_t join_words(const char *const *w, char *buf, size_t len)
{
	size_t used = 0;

	for (int i = 0; w[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i ? ", " : "", w[i]);
	return used;
}

const char *cfg_key_expect(const struct cfg_key *k, char *buf, size_t len)
{
	if (k->expect)
		return k->expect;
	if (k->parse == cfg_key_uint)
		snprintf(buf, len, "an integer %llu..%llu%s%s%s%s",
			 (unsigned long long)k->lo, (unsigned long long)k->hi,
			 k->unit ? " (" : "", k->unit ? k->unit : "",
			 k->unit && !k->lo ? ", 0 = off" : "", k->unit ? ")" : "");
	else if (k->parse == cfg_key_uint_auto)
		snprintf(buf, len, "'auto' or an integer %llu..%llu",
			 (unsigned long long)k->lo, (unsigned long long)k->hi);
	else if (k->parse == cfg_key_bool)
		snprintf(buf, len, "a boolean (true/false, yes/no, on/off, 1/0)");
	else if (k->words && len > sizeof("one of ")) {
		/* Two statements: the prefix must be written before the
		 * words' space is measured. */
		size_t pre = (size_t)snprintf(buf, len, "one of ");

		join_words(k->words, buf + pre, len - pre);
	} else
		snprintf(buf, len, "valid");
	return buf;
}

int cfg_key_bad(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v)
{
	char path[64], expect[160], got[80];

	return cfg_error(c, v, "%s must be %s, got %s",
			 cfg_key_path(k, path, sizeof(path)),
			 cfg_key_expect(k, expect, sizeof(expect)),
			 cfg_describe(v, got, sizeof(got)));
}

/* Where a value is, for errors about it found later (fring check's
 * kernel check, run's): 1-based. */
static void note_at(const struct cfg_key *k, yaml_node_t *v, void *base)
{
	struct fring_cfg_at *at = (void *)((char *)base + k->at);

	if (!k->at)
		return;
	at->line = (unsigned)v->start_mark.line + 1;
	at->column = (unsigned)v->start_mark.column + 1;
}

/* Decimal digits only, within lo..hi. */
static int parse_uint(const yaml_node_t *n, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *s = cfg_scalar(n);
	uint64_t v = 0;

	if (n->type != YAML_SCALAR_NODE || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > hi)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

int cfg_key_uint(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v,
		 void *base)
{
	uint64_t n;

	if (parse_uint(v, k->lo, k->hi, &n))
		return cfg_key_bad(c, k, v);
	cfg_key_store(base, k, n);
	note_at(k, v, base);
	return 0;
}

/* 'auto' keeps the default (0). */
int cfg_key_uint_auto(struct cfg_ctx *c, const struct cfg_key *k,
		      yaml_node_t *v, void *base)
{
	if (v->type == YAML_SCALAR_NODE && !strcmp(cfg_scalar(v), "auto"))
		return 0;
	return cfg_key_uint(c, k, v, base);
}

/* Index of the scalar in the NULL-terminated `words`, or -1. */
static int pick(const yaml_node_t *n, const char *const *words)
{
	if (n->type != YAML_SCALAR_NODE)
		return -1;
	for (int i = 0; words[i]; i++)
		if (!strcmp(cfg_scalar(n), words[i]))
			return i;
	return -1;
}

int cfg_key_words(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v,
		  void *base)
{
	int i = pick(v, k->words);

	if (i < 0)
		return cfg_key_bad(c, k, v);
	cfg_key_store(base, k, (uint64_t)i);
	note_at(k, v, base);
	return 0;
}

/* auto | on | off, booleans accepted (YAML users write those for on/off). */
int cfg_key_tristate(struct cfg_ctx *c, const struct cfg_key *k,
		     yaml_node_t *v, void *base)
{
	int b;

	if (pick(v, cfg_tristate_words) < 0 && v->type == YAML_SCALAR_NODE &&
	    !fring_parse_bool(cfg_scalar(v), &b)) {
		cfg_key_store(base, k, b ? FRING_ON : FRING_OFF);
		note_at(k, v, base);
		return 0;
	}
	return cfg_key_words(c, k, v, base);
}

int cfg_key_size(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v,
		 void *base)
{
	uint64_t size;

	if (v->type != YAML_SCALAR_NODE || fring_parse_size(cfg_scalar(v), &size) ||
	    size < k->lo || size > k->hi)
		return cfg_key_bad(c, k, v);
	cfg_key_store(base, k, size);
	note_at(k, v, base);
	return 0;
}

int cfg_key_bool(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v,
		 void *base)
{
	int b;

	if (v->type != YAML_SCALAR_NODE || fring_parse_bool(cfg_scalar(v), &b))
		return cfg_key_bad(c, k, v);
	cfg_key_store(base, k, (uint64_t)b);
	note_at(k, v, base);
	return 0;
}

int fring_cfg_parse_mode(const char *s, enum fring_transport_mode *out, char **err)
{
	char words[64];

	for (int i = 0; s && cfg_mode_words[i]; i++)
		if (!strcmp(s, cfg_mode_words[i])) {
			*out = (enum fring_transport_mode)i;
			return 0;
		}
	join_words(cfg_mode_words, words, sizeof(words));
	if (err && asprintf(err, "transport mode '%s': expected one of %s",
			    s ? s : "(null)", words) < 0)
		*err = NULL;
	return -EINVAL;
}
