// SPDX-License-Identifier: MIT
/* fring mount PLUGIN MOUNTPOINT [-o key=value]... [-O opt[,opt]]...
 * [-t mode]: one mount without a YAML file, served like `run`. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../config/config.h"
#include "../embed/embed.h"
#include "cli.h"

/* Keys are copies (argv is left intact: it shows in ps); values point
 * into argv. */
struct kv_list {
	struct fring_kv *v;
	uint32_t n;
};

static int kv_push(struct kv_list *l, const char *key, size_t keylen,
		   const char *value)
{
	struct fring_kv *v = realloc(l->v, (l->n + 1) * sizeof(*v));
	char *k = strndup(key, keylen);

	if (v)
		l->v = v;
	if (!v || !k) {
		free(k);
		return cli_fail(strdup("out of memory"));
	}
	v[l->n++] = (struct fring_kv){ .key = k, .value = value };
	return 0;
}

static void kv_free(struct kv_list *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		free((char *)l->v[i].key);
	free(l->v);
}

static int __attribute__((format(printf, 1, 2)))
mount_usage_error(const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return cli_command_usage_error("mount", what);
}

/* "-o key=value", split at the first '='. Each key once: a YAML file
 * refuses a key given twice too, and keeping the last would hide a typo. */
static int add_option(struct kv_list *l, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : 0;
	char *err = NULL;

	if (!eq && !fring_mount_option_check(arg, &err))
		return mount_usage_error("-o expects KEY=VALUE (a plugin option); "
					 "'%s' is a mount option: use -O %s", arg,
					 arg);
	free(err);
	if (!eq || eq == arg)
		return mount_usage_error("-o expects KEY=VALUE (a plugin option), "
					 "got '%s'; mount options such as ro or "
					 "allow_other go with -O", arg);
	for (uint32_t i = 0; i < l->n; i++)
		if (strlen(l->v[i].key) == klen && !strncmp(l->v[i].key, arg, klen))
			return mount_usage_error("-o %s given twice; each plugin "
						 "option takes one value (first "
						 "'%s')", l->v[i].key,
						 l->v[i].value);
	return kv_push(l, arg, klen, eq + 1);
}

/* The part of a mount option before '=' matches (fsname=a, fsname=b). */
static int same_named(const char *a, const char *b)
{
	size_t la = strcspn(a, "="), lb = strcspn(b, "=");

	return a[la] == '=' && b[lb] == '=' && la == lb && !strncmp(a, b, la);
}

/* "-O a,b=c": each comma-separated item is one mount option. A bad one
 * is a usage error (exit 2), checked by the parser add_mount uses. */
static int add_mount_options(struct kv_list *l, const char *arg)
{
	const char *p = arg;

	for (;;) {
		size_t len = strcspn(p, ",");
		char *err = NULL;
		int rc;

		if (!len)
			return mount_usage_error("-O '%s': empty mount option (a "
						 "stray comma?)", arg);
		rc = kv_push(l, p, len, NULL);
		if (rc)
			return rc;
		if (fring_mount_option_check(l->v[l->n - 1].key, &err)) {
			rc = cli_command_usage_error("mount", err ? err :
						     "bad mount option");
			free(err);
			return rc;
		}
		/* As in YAML: fsname and subtype take one value. */
		for (uint32_t i = 0; i + 1 < l->n; i++)
			if (same_named(l->v[i].key, l->v[l->n - 1].key))
				return mount_usage_error("mount option '%.*s' given "
							 "twice", (int)strcspn(
							 l->v[i].key, "="),
							 l->v[i].key);
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static int parse_args(int argc, char **argv, struct fring_mount_spec *spec,
		      struct kv_list *opts, struct kv_list *mopts)
{
	static const struct option longopts[] = {
		{ "option", required_argument, NULL, 'o' },
		{ "mount-option", required_argument, NULL, 'O' },
		{ "transport", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:O:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			rc = add_option(opts, optarg);
			break;
		case 'O':
			rc = add_mount_options(mopts, optarg);
			break;
		case 't': {
			enum fring_transport_mode mode;

			/* transport.mode's words (config's parser). */
			if (fring_cfg_parse_mode(optarg, &mode, NULL))
				return cli_command_usage_error("mount", "-t expects "
							       "auto, uring or "
							       "devfuse");
			spec->transport_mode = optarg;
			rc = 0;
			break;
		}
		case 'h':
			return cli_command_help("mount");
		default:
			return cli_getopt_error("mount", c, argv);
		}
		if (rc)
			return rc;
	}
	if (argc - optind != 2)
		return cli_command_usage_error("mount", "mount expects PLUGIN and "
					       "MOUNTPOINT");
	spec->plugin = argv[optind];
	spec->mountpoint = argv[optind + 1];
	return 0;
}

int cmd_mount(int argc, char **argv)
{
	struct fring_mount_spec spec = { .size = sizeof(spec) };
	struct kv_list opts = { 0 }, mopts = { 0 };
	fring_runtime *rt = NULL;
	char *err = NULL;
	int rc;

	rc = parse_args(argc, argv, &spec, &opts, &mopts);
	if (rc)
		goto out;
	spec.options = opts.v;
	spec.nr_options = opts.n;
	spec.mount_options = mopts.v;
	spec.nr_mount_options = mopts.n;
	rc = cli_prepare_serving(spec.mountpoint);
	if (rc)
		goto out;
	rt = fring_runtime_new(&err);
	if (!rt)
		rc = cli_fail(err);
	else if (fring_runtime_add_mount(rt, &spec, &err) < 0)
		rc = cli_fail(err);
	else
		rc = cli_serve(rt);
out:
	fring_runtime_free(rt);
	kv_free(&opts);
	kv_free(&mopts);
	return rc;
}
