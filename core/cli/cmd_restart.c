// SPDX-License-Identifier: MIT
/* fring restart CONFIG|MOUNTPOINT: ask the supervisor of the running
 * `fring run CONFIG` / `fring mount ... MOUNTPOINT` for a takeover over
 * its control socket (super_ctl.c) and print its one-line answer. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/log.h"
#include "cli.h"
#include "super.h"

/* Longer than every step of super_takeover.c together. */
#define RESTART_WAIT_MS 120000

int cmd_restart(int argc, char **argv)
{
	const char *key = NULL;
	char *path, line[2048];
	struct pollfd pfd = { .events = POLLIN };
	size_t len = 0;
	int rc;

	rc = cli_parse_one_file(argc, argv, &key);
	if (rc)
		return rc;
	path = super_ctl_path(key);
	if (!path)
		return cli_fail(fring_strf("restart: %s: %s", key, strerror(errno)));
	pfd.fd = super_ctl_connect(path);
	if (pfd.fd < 0) {
		rc = pfd.fd;
		return cli_fail(fring_strf("restart: no fring serves %s (control "
					   "socket %s: %s)", key, path,
					   strerror(-rc)));
	}
	free(path);
	if (write(pfd.fd, "restart\n", 8) != 8)
		return cli_fail(fring_strf("restart: %s", strerror(errno)));
	while (len < sizeof(line) - 1 && poll(&pfd, 1, RESTART_WAIT_MS) > 0) {
		ssize_t n = read(pfd.fd, line + len, sizeof(line) - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(pfd.fd);
	line[len] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (!len)
		return cli_fail(fring_strf("restart: the supervisor of %s gave no "
					   "answer", key));
	printf("fring: restart: %s\n", line);
	return strncmp(line, "ok: ", 4) ? CLI_EXIT_ERR : CLI_EXIT_OK;
}
