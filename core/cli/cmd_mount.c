/* fring mount PLUGIN MOUNTPOINT [-o key=value]... [-O opt[,opt]]...
 * [-t mode]: one mount without a YAML file, served like `run`. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/embed.h"
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

/* "-o key=value", split at the first '='. */
static int add_option(struct kv_list *l, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg)
		return cli_usage_error("-o expects KEY=VALUE");
	return kv_push(l, arg, (size_t)(eq - arg), eq + 1);
}

/* "-O a,b=c": each comma-separated item is one mount option. */
static int add_mount_options(struct kv_list *l, const char *arg)
{
	while (*arg) {
		size_t len = strcspn(arg, ",");
		int rc = len ? kv_push(l, arg, len, NULL) : 0;
		char *err = NULL;

		if (rc)
			return rc;
		/* A bad -O is a usage error (exit 2), not a runtime one. */
		if (len && fring_mount_option_check(l->v[l->n - 1].key, &err)) {
			rc = cli_usage_error(err ? err : "bad mount option");
			free(err);
			return rc;
		}
		arg += len + (arg[len] == ',');
	}
	return 0;
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
	while ((c = getopt_long(argc, argv, "o:O:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			rc = add_option(opts, optarg);
			break;
		case 'O':
			rc = add_mount_options(mopts, optarg);
			break;
		case 't':
			if (strcmp(optarg, "auto") && strcmp(optarg, "uring") &&
			    strcmp(optarg, "devfuse"))
				return cli_usage_error("-t expects auto, uring or "
						       "devfuse");
			spec->transport_mode = optarg;
			rc = 0;
			break;
		case 'h':
			cli_usage(stdout);
			exit(CLI_EXIT_OK);
		default:
			return cli_usage_error("mount: bad option or missing argument");
		}
		if (rc)
			return rc;
	}
	if (argc - optind != 2)
		return cli_usage_error("mount expects PLUGIN and MOUNTPOINT");
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
	rc = cli_prepare_serving();
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
