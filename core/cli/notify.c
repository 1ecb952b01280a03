// SPDX-License-Identifier: MIT
/*
 * systemd readiness and watchdog (sd_notify(3)), with NOTIFY_SOCKET set:
 * READY=1 once every mount serves, a STATUS= line per change, STOPPING=1
 * at shutdown; with WATCHDOG_USEC set, WATCHDOG=1 every half interval
 * while no queue thread has been busy longer than the interval
 * (base/heartbeat.h), and never again once one has. Nothing is sent
 * without the variables (sd_notify does nothing then).
 *
 * The messages come from the serving process, a child of the supervisor
 * systemd started (supervise.c): the unit needs NotifyAccess=all.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "../base/heartbeat.h"
#include "../base/log.h"
#include "cli.h"

static size_t nr_expected, nr_ready;
static char status[2048];

/* WATCHDOG_USEC, if meant for us: WATCHDOG_PID names the supervisor
 * (systemd's main pid) or this process. 0 if none. */
static uint64_t watchdog_usec(void)
{
	const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end;
	unsigned long long v;

	if (!us || !*us)
		return 0;
	if (pid && *pid) {
		long p = strtol(pid, &end, 10);

		if (*end || (p != getpid() && p != getppid()))
			return 0;
	}
	v = strtoull(us, &end, 10);
	return *end ? 0 : v;
}

static void *watchdog_thread(void *arg)
{
	uint64_t usec = *(uint64_t *)arg;
	struct timespec half = {
		.tv_sec = (time_t)(usec / 2 / 1000000),
		.tv_nsec = (long)(usec / 2 % 1000000 * 1000),
	};
	unsigned n, stuck;

	free(arg);
	for (;;) {
		stuck = fring_hb_stuck(usec * 1000, &n);
		if (stuck) {
			fring_err("watchdog: %u of %u queue threads busy for "
				  "over %llu ms; no more WATCHDOG=1 (systemd "
				  "will act)", stuck, n,
				  (unsigned long long)(usec / 1000));
			return NULL;
		}
		sd_notify(0, "WATCHDOG=1");
		nanosleep(&half, NULL);
	}
}

void cli_notify_init(size_t nr_mounts)
{
	uint64_t usec = watchdog_usec(), *arg;
	pthread_t t;

	nr_expected = nr_mounts;
	if (!usec || !getenv("NOTIFY_SOCKET"))
		return;
	arg = malloc(sizeof(*arg));
	if (!arg)
		return;
	*arg = usec;
	if (pthread_create(&t, NULL, watchdog_thread, arg)) {
		free(arg);
		return;
	}
	pthread_detach(t);
}

void cli_notify_ready(const char *mountpoint, const char *plugin,
		      const char *transport)
{
	size_t used = strlen(status);

	if (!getenv("NOTIFY_SOCKET"))
		return;
	nr_ready++;
	snprintf(status + used, sizeof(status) - used, "%s%s (%s, %s)",
		 used ? "; " : "", mountpoint, plugin, transport);
	if (nr_ready < nr_expected)
		sd_notifyf(0, "STATUS=mounting: %zu of %zu serve: %s", nr_ready,
			   nr_expected, status);
	else
		sd_notifyf(0, "READY=1\nSTATUS=serving %zu mount%s: %s",
			   nr_ready, nr_ready == 1 ? "" : "s", status);
}

void cli_notify_stopping(void)
{
	static atomic_int sent;

	/* Once: on the signal, and again as serving ends. */
	if (atomic_exchange(&sent, 1))
		return;
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}
