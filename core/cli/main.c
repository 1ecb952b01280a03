// SPDX-License-Identifier: MIT
/* fring: subcommand dispatch; the usage texts are in usage.c. */
#include <stdio.h>
#include <string.h>

#include <fring/fring.h>

#include "../base/log.h"
#include "cli.h"

static int is_any(const char *s, const char *a, const char *b, const char *c)
{
	return !strcmp(s, a) || !strcmp(s, b) || (c && !strcmp(s, c));
}

/* fring help [COMMAND] (also --help, -h). */
static int cmd_help(int argc, char **argv)
{
	char what[128];

	if (argc == 1) {
		cli_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (argc == 2 && cli_command_usage(stdout, argv[1]) == 0)
		return CLI_EXIT_OK;
	if (argc == 2)
		snprintf(what, sizeof(what), "help: unknown command '%.64s'",
			 argv[1]);
	else
		snprintf(what, sizeof(what), "help takes at most one COMMAND");
	return cli_usage_error(what);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "run", cmd_run },     { "mount", cmd_mount },
		{ "check", cmd_check }, { "plugins", cmd_plugins },
		{ "probe", cmd_probe }, { "restart", cmd_restart },
		{ "stats", cmd_stats }, { "new", cmd_new },
	};

	const char *self = strrchr(argv[0], '/');

	/* Read FRING_LOG now, so a misspelt level is reported even by a
	 * command that never logs. */
	fring_log_enabled(FRING_LOG_ERROR);
	/* Called as mount(8)'s helper (a link named mount.fring). */
	if (!strcmp(self ? self + 1 : argv[0], "mount.fring"))
		return cli_mount_helper(argc, argv);
	if (argc < 2)
		return cli_usage_error("missing command");
	if (is_any(argv[1], "help", "--help", "-h"))
		return cmd_help(argc - 1, argv + 1);
	if (is_any(argv[1], "--version", "version", NULL)) {
		if (argc != 2)
			return cli_usage_error("--version takes no arguments");
		printf("fring %s (plugin ABI %d.%d)\n", fring_version(),
		       FRING_ABI_MAJOR, FRING_ABI_MINOR);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!strcmp(argv[1], cmds[i].name)) {
			int rc = cmds[i].fn(argc - 1, argv + 1);

			return rc == CLI_HELP ? CLI_EXIT_OK : rc;
		}
	}
	fprintf(stderr, "fring: unknown command '%s'\n", argv[1]);
	cli_usage(stderr);
	return CLI_EXIT_USAGE;
}
