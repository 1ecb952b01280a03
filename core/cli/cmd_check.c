/* fring check CONFIG: the same validation and plugin loading as `run`
 * (plugin options included), without mounting. */
#include <stdio.h>

#include "../runtime/embed.h"
#include "cli.h"

int cmd_check(int argc, char **argv)
{
	fring_runtime *rt;
	char *err = NULL;
	size_t n;

	if (argc != 2)
		return cli_usage_error("check expects exactly one CONFIG file");
	rt = fring_runtime_new(&err);
	if (!rt)
		return cli_fail(err);
	if (fring_runtime_add_yaml(rt, argv[1], &err) < 0) {
		fring_runtime_free(rt);
		return cli_fail(err);
	}
	n = fring_runtime_nr_mounts(rt);
	fring_runtime_free(rt);
	printf("%s: OK (%zu mount%s)\n", argv[1], n, n == 1 ? "" : "s");
	return CLI_EXIT_OK;
}
