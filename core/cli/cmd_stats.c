// SPDX-License-Identifier: MIT
/* fring stats [MOUNTPOINT] [--json] [--watch SECONDS]: a serving mount's
 * live statistics, asked on its control socket (runtime/stats_server.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/ctl_sock.h"
#include "cli.h"

/* One mount's answer printed; 0, or -errno (reason in *why). */
static int ask(const char *path, int json, int first, const char **why)
{
	char *reply = NULL;
	int rc = fring_ctl_call(path, json ? "json" : "text", &reply);

	if (!rc && !strncmp(reply, "error: ", 7))
		rc = -EAGAIN;
	if (rc) {
		static char msg[256];

		snprintf(msg, sizeof(msg), "%s",
			 reply && *reply ? reply : strerror(-rc));
		msg[strcspn(msg, "\n")] = '\0';
		*why = msg;
		free(reply);
		return rc;
	}
	if (json && !first)
		fputs(",\n", stdout);
	else if (!json && !first)
		fputc('\n', stdout);
	fputs(reply, stdout);
	free(reply);
	return 0;
}

static int one(const char *mp, int json)
{
	char real[PATH_MAX], path[108];
	const char *why = NULL;
	int rc;

	if (!realpath(mp, real))
		snprintf(real, sizeof(real), "%s", mp);
	rc = fring_ctl_path(path, sizeof(path), "stats", real, 0);
	if (!rc && !ask(path, json, 1, &why))
		return CLI_EXIT_OK;
	fprintf(stderr,
		"fring: stats: %s: no statistics from a serving fring "
		"(%s: %s)\n",
		real, path, why ? why : strerror(-rc));
	return CLI_EXIT_ERR;
}

/* Every socket of the runtime directory that answers. */
static int all(int json)
{
	char dir[108], path[512];
	struct dirent *d;
	DIR *dp;
	int n = 0;

	if (fring_ctl_dir(dir, sizeof(dir), 0) || !(dp = opendir(dir))) {
		if (json)
			puts("[]");
		return CLI_EXIT_OK;
	}
	if (json)
		fputs("[", stdout);
	while ((d = readdir(dp))) {
		const char *why;

		if (strncmp(d->d_name, "stats-", 6) ||
		    !strstr(d->d_name, ".sock"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (!ask(path, json, !n, &why))
			n++;
	}
	closedir(dp);
	if (json)
		fputs("]\n", stdout);
	else if (!n)
		puts("no mount serves statistics here");
	return CLI_EXIT_OK;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "watch", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *mp = NULL;
	unsigned long watch = 0;
	int c, json = 0, rc;
	char *end;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'j') {
			json = 1;
		} else if (c == 'w') {
			watch = strtoul(optarg, &end, 10);
			if (*end || !watch || watch > 86400)
				return cli_command_usage_error(
					"stats",
					"stats: --watch takes a number "
					"of seconds 1..86400");
		} else if (c == 'h') {
			return cli_command_help("stats");
		} else {
			return cli_getopt_error("stats", c, argv);
		}
	}
	if (argc - optind > 1)
		return cli_command_usage_error("stats", "stats takes at most "
							"one MOUNTPOINT");
	if (optind < argc)
		mp = argv[optind];
	for (;;) {
		if (watch && !json)
			fputs("\033[H\033[2J", stdout);
		rc = mp ? one(mp, json) : all(json);
		fflush(stdout);
		if (!watch || rc != CLI_EXIT_OK)
			return rc;
		sleep((unsigned)watch);
	}
}
