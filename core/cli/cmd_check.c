// SPDX-License-Identifier: MIT
/* fring check CONFIG: the same validation and plugin loading as `run`
 * (plugin options included), without mounting. */
#include <stdio.h>

#include "../embed/embed.h"
#include "cli.h"

int cmd_check(int argc, char **argv)
{
	const char *file = NULL;
	fring_runtime *rt;
	char *err = NULL;
	size_t n;
	int rc;

	rc = cli_parse_one_file(argc, argv, &file);
	if (rc)
		return rc;
	rt = fring_runtime_new(&err);
	if (!rt)
		return cli_fail(err);
	if (fring_runtime_add_yaml(rt, file, &err) < 0) {
		fring_runtime_free(rt);
		return cli_fail(err);
	}
	n = fring_runtime_nr_mounts(rt);
	fring_runtime_free(rt);
	printf("%s: OK (%zu mount%s)\n", file, n, n == 1 ? "" : "s");
	return CLI_EXIT_OK;
}
