// SPDX-License-Identifier: MIT
/* Usage texts (the whole command line, and each command's for its --help
 * and its usage errors) and the option parsing every command shares. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name, *text;
} commands[] = {
	{ "run",
	  "usage: fring run CONFIG\n"
	  "\n"
	  "Validate the YAML file CONFIG (every mountpoint included), load every\n"
	  "plugin and hand each mount its options; any error mounts nothing.\n"
	  "Then mount every entry and serve in the foreground until SIGINT or\n"
	  "SIGTERM (SIGHUP, SIGUSR1 and SIGUSR2 are logged and ignored).\n" },
	{ "mount",
	  "usage: fring mount PLUGIN MOUNTPOINT [-o KEY=VALUE]... [-O MOUNTOPT[,MOUNTOPT]...]...\n"
	  "                   [-t auto|uring|devfuse]\n"
	  "\n"
	  "Mount one plugin without a YAML file and serve it like `run`.\n"
	  "  -o, --option KEY=VALUE       a plugin option, each key once\n"
	  "                               (fring plugins -v lists each plugin's)\n"
	  "  -O, --mount-option MOUNTOPT  default_permissions, allow_other, ro, rw,\n"
	  "                               nosuid, suid, nodev, dev, noexec, exec,\n"
	  "                               noatime, atime, max_read=N, blksize=N,\n"
	  "                               auto_unmount, fsname=NAME, subtype=NAME,\n"
	  "                               trust_plugin_permissions (with allow_other:\n"
	  "                               no default_permissions although the plugin\n"
	  "                               does not check permissions; any local user\n"
	  "                               may then do what the server's uid may)\n"
	  "  -t, --transport MODE         auto (default), uring or devfuse\n" },
	{ "check",
	  "usage: fring check CONFIG\n"
	  "\n"
	  "Validate CONFIG and load and configure its plugins as `run` does,\n"
	  "mounting nothing; prints \"CONFIG: OK (N mounts)\".\n" },
	{ "plugins",
	  "usage: fring plugins [-v]\n"
	  "\n"
	  "List the plugins on the search path. NAME is what PLUGIN and\n"
	  "`plugin:` take; the file name without .so (FILE, shown when it\n"
	  "differs) works too.\n"
	  "  -v, --verbose  also list each plugin's options\n" },
	{ "probe",
	  "usage: fring probe [--json]\n"
	  "\n"
	  "What this machine offers a FUSE server: the kernel's FUSE version and\n"
	  "INIT flags (as root, from a private probe mount that leaves nothing\n"
	  "behind), the fuse module's parameters, capabilities, RLIMIT_MEMLOCK,\n"
	  "CPUs and NUMA nodes, and what each transport key's auto picks here.\n"
	  "  --json  one JSON object: {GROUP: {NAME: {value, why}}}\n" },
	{ "restart",
	  "usage: fring restart CONFIG|MOUNTPOINT\n"
	  "\n"
	  "Take over the mounts of the running `fring run CONFIG` (or `fring mount\n"
	  "... MOUNTPOINT`) with a new serving process, started from the fring\n"
	  "binary and the plugins on disk now, without unmounting: open files,\n"
	  "working directories and mmaps stay. /dev/fuse mounts only. Prints one\n"
	  "line; exit status 0 when the new process serves, 1 when the takeover\n"
	  "was refused (the old process still serves) or failed.\n" },
	{ "stats",
	  "usage: fring stats [MOUNTPOINT] [--json] [--watch SECONDS]\n"
	  "\n"
	  "Live statistics of a serving mount (of each, without MOUNTPOINT),\n"
	  "asked on its control socket: requests, errors and latency per opcode,\n"
	  "bytes, pool buffers, zero-copy, busy-poll, placement, requests in\n"
	  "flight; per mount and per queue. Root or the serving uid only.\n"
	  "  --json             JSON (fring(1), STATISTICS); an array without MOUNTPOINT\n"
	  "  --watch SECONDS    print again every SECONDS until interrupted\n" },
	{ "new",
	  "usage: fring new c|rust|python NAME [DIR]\n"
	  "\n"
	  "Make a plugin project in DIR (default ./NAME, which must not exist or\n"
	  "be empty) from the SDK template of that language, renamed to NAME (a\n"
	  "C identifier), with a README and a test.sh that mounts it; prints the\n"
	  "commands that build, mount and test it.\n" },
	{ "help", "usage: fring help [COMMAND]\n"
		  "\n"
		  "The usage of fring, or of one command.\n" },
};

void cli_usage(FILE *f)
{
	fputs("usage: fring COMMAND [ARGS]\n"
	      "\n"
	      "  run CONFIG            mount every entry of the YAML file CONFIG and\n"
	      "                        serve in the foreground until SIGINT/SIGTERM\n"
	      "  mount PLUGIN MOUNTPOINT [-o KEY=VALUE]... [-O MOUNTOPT[,...]]...\n"
	      "        [-t auto|uring|devfuse]\n"
	      "                        mount one plugin without a YAML file:\n"
	      "                        -o/--option        a plugin option (each key once)\n"
	      "                        -O/--mount-option  default_permissions, allow_other,\n"
	      "                                           ro, rw, nosuid, suid, nodev, dev,\n"
	      "                                           noexec, exec, noatime, atime,\n"
	      "                                           max_read=N, blksize=N, auto_unmount,\n"
	      "                                           fsname=NAME, subtype=NAME,\n"
	      "                                           trust_plugin_permissions\n"
	      "                        -t/--transport     transport mode (default auto)\n"
	      "  check CONFIG          validate CONFIG and load its plugins (no mount)\n"
	      "  plugins [-v]          list the plugins on the search path (-v: and\n"
	      "                        their options)\n"
	      "  probe [--json]        what this machine offers a FUSE server\n"
	      "  restart CONFIG|MOUNTPOINT\n"
	      "                        a new serving process takes the mounts over\n"
	      "  stats [MOUNTPOINT] [--json] [--watch SECONDS]\n"
	      "                        live statistics of serving mounts\n"
	      "  new c|rust|python NAME [DIR]\n"
	      "                        a new plugin project from the SDK templates\n"
	      "  help [COMMAND]        this text, or one command's (also COMMAND --help)\n"
	      "  --version             print the version\n"
	      "\n"
	      "Plugins are found by name (as `fring plugins` lists it, or the file name\n"
	      "without .so) in FRING_PLUGIN_PATH (colon-separated), then in the\n"
	      "built-in plugin directory; a name with '/' or ending in .so is a path.\n"
	      "Exit status: 0 success, 1 error, 2 bad usage.\n",
	      f);
}

int cli_command_usage(FILE *f, const char *cmd)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(commands[i].name, cmd)) {
			fputs(commands[i].text, f);
			return 0;
		}
	}
	return -1;
}

int cli_usage_error(const char *what)
{
	fprintf(stderr, "fring: %s\n", what);
	cli_usage(stderr);
	return CLI_EXIT_USAGE;
}

int cli_command_usage_error(const char *cmd, const char *what)
{
	fprintf(stderr, "fring: %s\n", what);
	cli_command_usage(stderr, cmd);
	return CLI_EXIT_USAGE;
}

int cli_command_help(const char *cmd)
{
	cli_command_usage(stdout, cmd);
	return CLI_HELP;
}

int cli_getopt_error(const char *cmd, int c, char **argv)
{
	char what[256];

	/* optstrings start with ':', so a missing argument is ':'. */
	if (c == ':')
		snprintf(what, sizeof(what), "%s: %s needs an argument", cmd,
			 argv[optind - 1]);
	else if (optopt)
		snprintf(what, sizeof(what), "%s: unknown option '-%c'", cmd,
			 optopt);
	else
		snprintf(what, sizeof(what), "%s: unknown option '%s'", cmd,
			 argv[optind - 1]);
	return cli_command_usage_error(cmd, what);
}

int cli_parse_one_file(int argc, char **argv, const char **file)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *cmd = argv[0];
	char what[64];
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h')
			return cli_command_help(cmd);
		return cli_getopt_error(cmd, c, argv);
	}
	if (argc - optind != 1) {
		snprintf(what, sizeof(what), "%s expects exactly one CONFIG file",
			 cmd);
		return cli_command_usage_error(cmd, what);
	}
	*file = argv[optind];
	return 0;
}
