// SPDX-License-Identifier: MIT
/*
 * A program embedding fring through libfring.so and fring.h only, driven
 * by test_embed.py:
 *   embed_prog yaml FILE                 add_yaml + run
 *   embed_prog mount PLUGIN MP [K=V]...  add_mount + run
 *   embed_prog badspec                   add_mount with a bad spec
 * SIGTERM/SIGINT call fring_runtime_stop from a signal handler. Prints
 * "error RC: MESSAGE" and exits 1 on failure.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fring/fring.h>

static fring_runtime *rt;

static void on_signal(int sig)
{
	fring_runtime_stop(rt);
}

static int fail(int rc, char *err)
{
	printf("error %d: %s\n", rc, err ? err : "(no message)");
	free(err);
	fring_runtime_free(rt);
	return 1;
}

static int add_from_args(int argc, char **argv, char **err)
{
	struct fring_kv opts[16];
	struct fring_mount_spec spec = { .size = sizeof(spec) };
	int n = 0;

	for (int i = 4; i < argc && n < 16; i++, n++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			return -22;
		*eq = '\0';
		opts[n] = (struct fring_kv){ argv[i], eq + 1 };
	}
	spec.plugin = argv[2];
	spec.mountpoint = argv[3];
	spec.options = opts;
	spec.nr_options = (uint32_t)n;
	return fring_runtime_add_mount(rt, &spec, err);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char *err = NULL;
	int rc;

	rt = fring_runtime_new(&err);
	if (!rt)
		return fail(-1, err);
	if (argc == 3 && !strcmp(argv[1], "yaml")) {
		rc = fring_runtime_add_yaml(rt, argv[2], &err);
	} else if (argc >= 4 && !strcmp(argv[1], "mount")) {
		rc = add_from_args(argc, argv, &err);
	} else if (argc == 2 && !strcmp(argv[1], "badspec")) {
		struct fring_mount_spec spec = { .size = 4, .plugin = "memfs" };

		rc = fring_runtime_add_mount(rt, &spec, &err);
	} else {
		fprintf(stderr, "usage: see embed_prog.c\n");
		return 2;
	}
	if (rc < 0)
		return fail(rc, err);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("fring %s: running\n", fring_version());
	fflush(stdout);
	rc = fring_runtime_run(rt, &err);
	if (rc < 0)
		return fail(rc, err);
	printf("stopped\n");
	fring_runtime_free(rt);
	return 0;
}
