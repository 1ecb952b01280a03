// SPDX-License-Identifier: MIT
/* fring restart CONFIG|MOUNTPOINT: ask the supervisor of the running
 * `fring run CONFIG` / `fring mount ... MOUNTPOINT` for a takeover over
 * its control socket (super_ctl.c) and print its one-line answer. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "cli.h"
#include "super.h"

/* Longer than every step of super_takeover.c together. */
#define RESTART_WAIT_MS 120000

int cmd_restart(int argc, char **argv)
{
	const char *key = NULL;
	char *path, *reply = NULL;
	int rc;

	rc = cli_parse_one_file(argc, argv, &key);
	if (rc)
		return rc;
	path = super_ctl_path(key, 0);
	if (!path)
		return cli_fail(
			fring_strf("restart: %s: %s", key, strerror(errno)));
	rc = super_ctl_call(path, RESTART_WAIT_MS, &reply);
	if (rc < 0 || !reply || !*reply) {
		char *msg = rc < 0 ? fring_strf("restart: no fring serves %s "
						"(control socket %s: %s)",
						key, path, strerror(-rc))
				   : fring_strf("restart: the supervisor of %s "
						"gave no answer",
						key);

		free(path);
		free(reply);
		return cli_fail(msg);
	}
	free(path);
	reply[strcspn(reply, "\n")] = '\0';
	printf("fring: restart: %s\n", reply);
	rc = strncmp(reply, "ok: ", 4) ? CLI_EXIT_ERR : CLI_EXIT_OK;
	free(reply);
	return rc;
}
