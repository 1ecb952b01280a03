// SPDX-License-Identifier: MIT
/* fring probe [--json]: what this machine offers a FUSE server, before
 * any YAML (core/transport/kernel_report.c gathers it; this prints it as
 * "GROUP.NAME: VALUE (WHY)" lines, or one JSON object for scripts). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../transport/kernel_probe.h"
#include "cli.h"

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* {"GROUP": {"NAME": {"value": V, "why": W}, ...}, ...}; the lines of a
 * group are adjacent. */
static void print_json(const struct fring_probe *r)
{
	const char *group = NULL;

	putchar('{');
	for (int i = 0; i < r->n; i++) {
		const struct fring_probe_line *l = &r->l[i];

		if (!group || strcmp(group, l->group)) {
			printf("%s", group ? "}, " : "");
			json_str(l->group);
			printf(": {");
			group = l->group;
		} else {
			printf(", ");
		}
		json_str(l->name);
		printf(": {\"value\": ");
		json_str(l->value);
		printf(", \"why\": ");
		json_str(l->why);
		putchar('}');
	}
	printf("%s}\n", group ? "}" : "");
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct fring_probe r;
	int c, json = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'h')
			return cli_command_help("probe");
		else
			return cli_getopt_error("probe", c, argv);
	}
	if (optind != argc)
		return cli_command_usage_error("probe", "probe takes no arguments "
					       "besides --json");
	fring_kernel_probe_report(&r);
	if (json) {
		print_json(&r);
		return CLI_EXIT_OK;
	}
	for (int i = 0; i < r.n; i++)
		printf("%s.%s: %s%s%s%s\n", r.l[i].group, r.l[i].name,
		       r.l[i].value, *r.l[i].why ? " (" : "", r.l[i].why,
		       *r.l[i].why ? ")" : "");
	return CLI_EXIT_OK;
}
