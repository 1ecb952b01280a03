// SPDX-License-Identifier: MIT
/* fring.yaml(5)'s key reference, from the key table: what
 * `fring-config-keys` prints and tests/unit/test_config_keys.c compares
 * with man/fring.yaml.5.scd. The rows' texts use `code` spans; here they
 * become scdoc bold, and scdoc's own marks are escaped. */
#include <stdio.h>

#include "config/config_internal.h"

static void text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '`')
			fputc('*', out);
		else if (*s == '*' || *s == '_' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else
			fputc(*s, out);
	}
}

static void words(FILE *out, const char *const *w)
{
	for (int i = 0; w[i]; i++)
		fprintf(out, "%s*%s*", i ? " | " : "", w[i]);
}

static void type(FILE *out, const struct cfg_key *k)
{
	if (k->type)
		text(out, k->type);
	else if (k->parse == cfg_key_uint)
		fprintf(out, "integer %llu..%llu%s%s%s", (unsigned long long)k->lo,
			(unsigned long long)k->hi, k->unit ? " (" : "",
			k->unit ? k->unit : "", k->unit ? ")" : "");
	else if (k->parse == cfg_key_uint_auto)
		fprintf(out, "*auto* | %llu..%llu", (unsigned long long)k->lo,
			(unsigned long long)k->hi);
	else if (k->parse == cfg_key_bool)
		fputs("boolean (*true*/*false*, *yes*/*no*, *on*/*off*, *1*/*0*)", out);
	else if (k->words) {
		words(out, k->words);
		if (k->parse == cfg_key_tristate)
			fputs(" (booleans accepted)", out);
	}
}

static void dflt(FILE *out, const struct cfg_key *k)
{
	if (k->dflt)
		text(out, k->dflt);
	else if (k->required)
		fputs("required", out);
	else if (k->words)
		fprintf(out, "*%s*", k->words[k->def]);
	else if (k->parse == cfg_key_bool)
		fputs(k->def ? "*true*" : "*false*", out);
	else
		fprintf(out, "*%llu*", (unsigned long long)k->def);
}

void fring_cfg_keys_scdoc(FILE *out)
{
	for (size_t i = 0; i < cfg_nr_keys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		char path[64];

		fputc('*', out);
		text(out, cfg_key_path(k, path, sizeof(path)));
		fputs("*\n\tType: ", out);
		type(out, k);
		fputs(". Default: ", out);
		dflt(out, k);
		fprintf(out, ". Used by: %s.\n\n\t",
			k->uring_only     ? "io_uring only"
			: k->devfuse_only ? "/dev/fuse only"
					  : "both transports");
		text(out, k->doc);
		fputs(".\n\n", out);
	}
}
