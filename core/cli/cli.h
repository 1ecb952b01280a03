// SPDX-License-Identifier: MIT
/* The fring command line: one file per subcommand. Exit codes: 0 success,
 * 1 runtime error (message on stderr), 2 bad usage. */
#ifndef FRING_CLI_H
#define FRING_CLI_H

#include <signal.h>
#include <stdio.h>

#include <fring/fring.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_ERR 1
#define CLI_EXIT_USAGE 2

/* Subcommands get argv with argv[0] = the subcommand's name. */
int cmd_run(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_plugins(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_restart(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_new(int argc, char **argv);
/* mount.fring SOURCE MOUNTPOINT [-o OPTIONS] (mount_helper.c): mount(8)'s
 * helper, fring called by that name; argv as mount(8) passes it. */
int cli_mount_helper(int argc, char **argv);

/* Returned by a command's parser after --help printed its usage: the
 * command ends there, and fring exits 0. */
#define CLI_HELP (-1)

void cli_usage(FILE *f);
/* One command's usage; -1 if there is no such command. */
int cli_command_usage(FILE *f, const char *cmd);
/* Print "fring: MSG" on stderr (and free msg); returns CLI_EXIT_ERR. */
int cli_fail(char *msg);
/* Usage error: "fring: WHAT", then the usage, on stderr. CLI_EXIT_USAGE. */
int cli_usage_error(const char *what);
/* The same with the usage of command `cmd` only. */
int cli_command_usage_error(const char *cmd, const char *what);
/* --help of `cmd`: its usage on stdout; returns CLI_HELP. */
int cli_command_help(const char *cmd);
/* A getopt_long error (`c` as it returned it; optstrings start with ':')
 * as a usage error of `cmd`. */
int cli_getopt_error(const char *cmd, int c, char **argv);
/* `run`/`check`: -h/--help, else exactly one CONFIG into *file. 0,
 * CLI_HELP or CLI_EXIT_USAGE. */
int cli_parse_one_file(int argc, char **argv, const char **file);

/* The signals a serving fring takes itself: SIGINT and SIGTERM stop it;
 * SIGHUP (reserved), SIGUSR1 and SIGUSR2 are logged and ignored. */
void cli_serving_signals(sigset_t *set);
/* Block those in this thread (and so in every thread created after),
 * before the runtime starts any, and ignore SIGPIPE. */
void cli_block_signals(void);
/* The log line of an ignored signal; `who` is "supervisor" or "serving
 * process". */
void cli_log_ignored(int sig, const char *who);
/* Before `run`/`mount` load anything: block signals, fork the serving
 * process (cli_supervise). 0 in the serving process, else the exit code.
 * key names the control socket `fring restart KEY` reaches: the CONFIG
 * of `run`, the MOUNTPOINT of `mount`. */
int cli_prepare_serving(const char *key);
/* Mount everything in rt, print the ready lines, serve until SIGINT/SIGTERM
 * or until every mount is gone. Returns the exit code. */
int cli_serve(fring_runtime *rt);

/* Fork the serving process; the parent stays as its supervisor and never
 * returns (it exits with the child's code, or aborts the child's FUSE
 * connections and exits 1 if the child dies by a signal). Returns 0 in the
 * child, or -errno if no child could be made. FRING_NO_SUPERVISOR=1 in the
 * environment serves in-process; FRING_TAKEOVER_FD (set by the supervisor
 * for a takeover, takeover.h) makes this process a new server. */
int cli_supervise(const char *key);

/* systemd's sd_notify (notify.c): no-ops without NOTIFY_SOCKET. init
 * before serving `nr_mounts` mounts (starts the watchdog if WATCHDOG_USEC
 * asks for it); ready once per mount that serves; stopping at shutdown. */
void cli_notify_init(size_t nr_mounts);
void cli_notify_ready(const char *mountpoint, const char *plugin,
		      const char *transport);
void cli_notify_stopping(void);

#endif /* FRING_CLI_H */
