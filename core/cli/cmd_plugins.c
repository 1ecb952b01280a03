// SPDX-License-Identifier: MIT
/* fring plugins [-v]: a table of every loadable plugin on the search path
 * (each loaded in a child first, so one that crashes is only reported);
 * broken ones and names two plugins share go to stderr. -v adds each
 * plugin's options, from its descriptor's config_help. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../loader/loader.h"
#include "../runtime/host.h"
#include "cli.h"

static const char *name_of(const struct fring_plugin_file *e)
{
	return e->info->name ? e->info->name : e->stem;
}

/* The file, when the name users see is not the file's: both work. */
static const char *file_col(const struct fring_plugin_file *e)
{
	const char *slash = strrchr(e->file, '/');

	return strcmp(name_of(e), e->stem) ? slash + 1 : "-";
}

static int cmp_files(const void *a, const void *b)
{
	const struct fring_plugin_file *x = *(const struct fring_plugin_file *const *)a;
	const struct fring_plugin_file *y = *(const struct fring_plugin_file *const *)b;

	return strcmp(name_of(x), name_of(y));
}

static int width(int w, const char *s)
{
	return (int)strlen(s) > w ? (int)strlen(s) : w;
}

static void print_table(const struct fring_plugin_file **v, size_t n)
{
	int wn = 4, wv = 7, wa = 3, wf = 4;
	char abi[32];

	for (size_t i = 0; i < n; i++) {
		snprintf(abi, sizeof(abi), "%u.%u", v[i]->info->abi_major,
			 v[i]->info->abi_minor);
		wn = width(wn, name_of(v[i]));
		wv = width(wv, v[i]->info->version ? v[i]->info->version : "-");
		wa = width(wa, abi);
		wf = width(wf, file_col(v[i]));
	}
	printf("%-*s  %-*s  %-*s  %-*s  %s\n", wn, "NAME", wv, "VERSION", wa,
	       "ABI", wf, "FILE", "DESCRIPTION");
	for (size_t i = 0; i < n; i++) {
		const struct fring_plugin_info *p = v[i]->info;

		snprintf(abi, sizeof(abi), "%u.%u", p->abi_major, p->abi_minor);
		printf("%-*s  %-*s  %-*s  %-*s  %s\n", wn, name_of(v[i]), wv,
		       p->version ? p->version : "-", wa, abi, wf,
		       file_col(v[i]), p->description ? p->description : "");
	}
}

/* -v: "NAME  PATH", then the config_help lines, indented. */
static void print_options(const struct fring_plugin_file **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *h = v[i]->info->config_help;

		printf("\n%s  %s\n", name_of(v[i]), v[i]->path);
		if (!h || !*h) {
			printf("  (describes no options)\n");
			continue;
		}
		while (*h) {
			size_t len = strcspn(h, "\n");

			printf("  %.*s\n", (int)len, h);
			h += len + (h[len] == '\n');
		}
	}
}

/* Broken files, then names that two plugins answer to (lookups by such a
 * name fail, so say it here first). */
static void report_problems(const struct fring_plugin_file *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!e[i].info)
			fprintf(stderr, "fring: %s\n", e[i].err);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			const char *name = fring_loader_shared_name(&e[i], &e[j]);

			if (name)
				fprintf(stderr, "fring: plugins %s and %s both "
					"answer to the name '%s'; looking it up "
					"fails (rename one, or use a path)\n",
					e[i].file, e[j].file, name);
		}
	}
}

static int parse_args(int argc, char **argv, int *verbose)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
		if (c == 'v')
			*verbose = 1;
		else if (c == 'h')
			return cli_command_help("plugins");
		else
			return cli_getopt_error("plugins", c, argv);
	}
	if (optind != argc)
		return cli_command_usage_error("plugins", "plugins takes no "
					       "arguments besides -v");
	return 0;
}

int cmd_plugins(int argc, char **argv)
{
	const struct fring_plugin_file **good;
	struct fring_plugin_file *e;
	int rc, verbose = 0;
	size_t n, ngood = 0;

	rc = parse_args(argc, argv, &verbose);
	if (rc)
		return rc;
	if (fring_loader_list(fring_host_table(), &e, &n))
		return cli_fail(strdup("out of memory"));
	good = calloc(n ? n : 1, sizeof(*good));
	if (!good) {
		fring_loader_list_free(e, n);
		return cli_fail(strdup("out of memory"));
	}
	for (size_t i = 0; i < n; i++)
		if (e[i].info)
			good[ngood++] = &e[i];
	report_problems(e, n);
	if (!ngood) {
		const char *path = getenv("FRING_PLUGIN_PATH");

		fprintf(stderr, "fring: no plugins found (FRING_PLUGIN_PATH=%s, %s)\n",
			path ? path : "", fring_loader_default_dir());
		rc = CLI_EXIT_ERR;
	} else {
		qsort(good, ngood, sizeof(*good), cmp_files);
		print_table(good, ngood);
		if (verbose)
			print_options(good, ngood);
		rc = CLI_EXIT_OK;
	}
	free(good);
	fring_loader_list_free(e, n);
	return rc;
}
