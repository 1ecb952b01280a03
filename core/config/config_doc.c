// SPDX-License-Identifier: MIT
/* The README's key table, from the key table: what `fring-config-keys`
 * prints and tests/unit/test_config_keys.c compares with README.md. */
#include <stdio.h>

#include "config/config_internal.h"

static void words(FILE *out, const char *const *w)
{
	for (int i = 0; w[i]; i++)
		fprintf(out, "%s`%s`", i ? " \\| " : "", w[i]);
}

static void type(FILE *out, const struct cfg_key *k)
{
	if (k->type)
		fputs(k->type, out);
	else if (k->parse == cfg_key_uint)
		fprintf(out, "integer %llu..%llu%s%s%s", (unsigned long long)k->lo,
			(unsigned long long)k->hi, k->unit ? " (" : "",
			k->unit ? k->unit : "", k->unit ? ")" : "");
	else if (k->parse == cfg_key_uint_auto)
		fprintf(out, "`auto` \\| %llu..%llu", (unsigned long long)k->lo,
			(unsigned long long)k->hi);
	else if (k->parse == cfg_key_bool)
		fputs("boolean (`true/false`, `yes/no`, `on/off`, `1/0`)", out);
	else if (k->words) {
		words(out, k->words);
		if (k->parse == cfg_key_tristate)
			fputs(" (booleans accepted)", out);
	}
}

static void dflt(FILE *out, const struct cfg_key *k)
{
	if (k->dflt)
		fputs(k->dflt, out);
	else if (k->required)
		fputs("required", out);
	else if (k->words)
		fprintf(out, "`%s`", k->words[k->def]);
	else if (k->parse == cfg_key_bool)
		fputs(k->def ? "`true`" : "`false`", out);
	else
		fprintf(out, "`%llu`", (unsigned long long)k->def);
}

void fring_cfg_keys_markdown(FILE *out)
{
	fputs("| key | type | default | used by | meaning |\n"
	      "|---|---|---|---|---|\n", out);
	for (size_t i = 0; i < cfg_nr_keys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		char path[64];

		fprintf(out, "| `%s` | ", cfg_key_path(k, path, sizeof(path)));
		type(out, k);
		fputs(" | ", out);
		dflt(out, k);
		fprintf(out, " | %s | %s |\n", k->uring_only ? "io_uring" : "both",
			k->doc);
	}
}
