/* fring plugins: a table of every loadable plugin on the search path;
 * broken ones go to stderr with the loader's reason. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../loader/loader.h"
#include "../runtime/host.h"
#include "cli.h"

struct row {
	char *name, *version, *abi, *desc;
};

struct table {
	struct row *rows;
	size_t n;
	int oom;
};

static char *dup_or(const char *s, const char *fallback)
{
	return strdup(s ? s : fallback);
}

static void on_plugin(const struct fring_loaded_plugin *p, void *ud)
{
	struct table *t = ud;
	struct row *rows = realloc(t->rows, (t->n + 1) * sizeof(*rows));
	struct row *r;

	if (!rows) {
		t->oom = 1;
		return;
	}
	t->rows = rows;
	r = &rows[t->n++];
	/* Copies: the loader may reuse its descriptor after the callback. */
	r->name = dup_or(p->desc.name, p->path);
	r->version = dup_or(p->desc.version, "-");
	r->desc = dup_or(p->desc.description, "");
	if (asprintf(&r->abi, "%u.%u", p->desc.abi_major, p->desc.abi_minor) < 0)
		r->abi = NULL;
	if (!r->name || !r->version || !r->desc || !r->abi)
		t->oom = 1;
}

static void on_broken(const char *path, const char *err, void *ud)
{
	fprintf(stderr, "fring: broken plugin %s: %s\n", path, err);
}

static int cmp_rows(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

static void print_table(const struct table *t)
{
	int wn = 4, wv = 7, wa = 3;

	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];

		if ((int)strlen(r->name) > wn)
			wn = (int)strlen(r->name);
		if ((int)strlen(r->version) > wv)
			wv = (int)strlen(r->version);
		if ((int)strlen(r->abi) > wa)
			wa = (int)strlen(r->abi);
	}
	printf("%-*s  %-*s  %-*s  %s\n", wn, "NAME", wv, "VERSION", wa, "ABI",
	       "DESCRIPTION");
	for (size_t i = 0; i < t->n; i++)
		printf("%-*s  %-*s  %-*s  %s\n", wn, t->rows[i].name, wv,
		       t->rows[i].version, wa, t->rows[i].abi, t->rows[i].desc);
}

int cmd_plugins(int argc, char **argv)
{
	struct table t = { 0 };
	int rc = CLI_EXIT_OK;

	if (argc != 1)
		return cli_usage_error("plugins takes no arguments");
	fring_loader_list(fring_host_table(), on_plugin, on_broken, &t);
	if (t.oom) {
		rc = cli_fail(strdup("out of memory"));
	} else if (!t.n) {
		const char *path = getenv("FRING_PLUGIN_PATH");

		fprintf(stderr, "fring: no plugins found (FRING_PLUGIN_PATH=%s, %s)\n",
			path ? path : "", fring_loader_default_dir());
		rc = CLI_EXIT_ERR;
	} else {
		qsort(t.rows, t.n, sizeof(*t.rows), cmp_rows);
		print_table(&t);
	}
	for (size_t i = 0; i < t.n; i++) {
		free(t.rows[i].name);
		free(t.rows[i].version);
		free(t.rows[i].abi);
		free(t.rows[i].desc);
	}
	free(t.rows);
	return rc;
}
