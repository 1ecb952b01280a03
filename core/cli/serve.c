// SPDX-License-Identifier: MIT
/* The foreground serving loop shared by `run` and `mount`. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/log.h"

#include "../embed/embed.h"
#include "cli.h"
#include "takeover.h"

int cli_fail(char *msg)
{
	fprintf(stderr, "fring: %s\n", msg ? msg : "error");
	free(msg);
	return CLI_EXIT_ERR;
}

void cli_serving_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
}

void cli_block_signals(void)
{
	sigset_t set;

	cli_serving_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* A reader that goes away must not kill a serving process. */
	signal(SIGPIPE, SIG_IGN);
}

void cli_log_ignored(int sig, const char *who)
{
	/* SIGHUP is kept for a meaning (a reload, say) it does not have
	 * yet; by default it and SIGUSR1/2 would end fring, which leaves a
	 * dead mount when the serving process gets them. */
	fring_info("SIG%s to the %s (pid %d) ignored%s; SIGINT or SIGTERM stop "
		   "fring", sigabbrev_np(sig), who, (int)getpid(),
		   sig == SIGHUP ? " (reserved)" : "");
}

/* Signals are blocked everywhere and taken here with sigwait, so no queue
 * thread is ever interrupted and the stop path needs no handler. */
static void *signal_thread(void *arg)
{
	fring_runtime *rt = arg;
	sigset_t set;
	int sig;

	cli_serving_signals(&set);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGINT || sig == SIGTERM) {
			cli_notify_stopping();
			fring_runtime_stop(rt);
		}
		else
			cli_log_ignored(sig, "serving process");
	}
	return NULL;
}

static void print_ready(void *ud, const char *mountpoint, const char *plugin,
			const char *transport)
{
	tko_server_report(ud, mountpoint);
	printf("fring: %s ready (plugin %s, transport %s)\n", mountpoint, plugin,
	       transport);
	fflush(stdout);
	cli_notify_ready(mountpoint, plugin, transport);
}

int cli_prepare_serving(const char *key)
{
	int rc;

	cli_block_signals();
	/* Fork before any plugin is loaded or created: a plugin's threads
	 * (started in create/config) would not exist in the child, and in
	 * the supervisor they would take the SIGCHLD it waits for. */
	rc = cli_supervise(key);
	if (rc < 0)
		return cli_fail(fring_strf("cannot start the serving process: %s",
					   strerror(-rc)));
	return 0;
}

int cli_serve(fring_runtime *rt)
{
	pthread_t t;
	char *err = NULL;
	int rc, have_thread;

	fring_runtime_on_ready(rt, print_ready, rt);
	if (tko_server_adopting() && (rc = tko_server_adopt(rt)))
		return rc;
	tko_server_start(rt);
	cli_notify_init(fring_runtime_nr_mounts(rt));
	have_thread = pthread_create(&t, NULL, signal_thread, rt) == 0;
	if (!have_thread)
		return cli_fail(NULL);
	rc = fring_runtime_run(rt, &err);
	pthread_cancel(t);
	pthread_join(t, NULL);
	cli_notify_stopping();
	if (rc < 0)
		return cli_fail(err);
	free(err);
	return CLI_EXIT_OK;
}
