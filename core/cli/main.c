/* fring: subcommand dispatch and usage. */
#include <stdio.h>
#include <string.h>

#include <fring/fring.h>

#include "cli.h"

void cli_usage(FILE *f)
{
	fputs("usage: fring COMMAND [ARGS]\n"
	      "\n"
	      "  run CONFIG            mount every entry of the YAML file CONFIG and\n"
	      "                        serve in the foreground until SIGINT/SIGTERM\n"
	      "  mount PLUGIN MOUNTPOINT [-o KEY=VALUE]... [-O MOUNTOPT[,...]]...\n"
	      "        [-t auto|uring|devfuse]\n"
	      "                        mount one plugin without a YAML file:\n"
	      "                        -o/--option        a plugin option (in order)\n"
	      "                        -O/--mount-option  default_permissions, allow_other,\n"
	      "                                           ro, fsname=NAME, subtype=NAME\n"
	      "                        -t/--transport     transport mode (default auto)\n"
	      "  check CONFIG          validate CONFIG and load its plugins (no mount)\n"
	      "  plugins               list the plugins on the search path\n"
	      "  help                  this text\n"
	      "  --version             print the version\n"
	      "\n"
	      "Plugins are found by name in FRING_PLUGIN_PATH (colon-separated), then\n"
	      "in the built-in plugin directory; a name with '/' is a path.\n"
	      "Exit status: 0 success, 1 error, 2 bad usage.\n",
	      f);
}

int cli_usage_error(const char *what)
{
	fprintf(stderr, "fring: %s\n", what);
	cli_usage(stderr);
	return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "run", cmd_run },
		{ "mount", cmd_mount },
		{ "check", cmd_check },
		{ "plugins", cmd_plugins },
	};

	if (argc < 2)
		return cli_usage_error("missing command");
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		cli_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("fring %s (plugin ABI %d.%d)\n", fring_version(),
		       FRING_ABI_MAJOR, FRING_ABI_MINOR);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "fring: unknown command '%s'\n", argv[1]);
	cli_usage(stderr);
	return CLI_EXIT_USAGE;
}
