/* fring run CONFIG: everything is validated, loaded and created before the
 * first mount, so a bad file mounts nothing. */
#include <stdlib.h>

#include "cli.h"

int cmd_run(int argc, char **argv)
{
	fring_runtime *rt;
	char *err = NULL;
	int rc;

	if (argc != 2)
		return cli_usage_error("run expects exactly one CONFIG file");
	rc = cli_prepare_serving();
	if (rc)
		return rc;
	rt = fring_runtime_new(&err);
	if (!rt)
		return cli_fail(err);
	if (fring_runtime_add_yaml(rt, argv[1], &err) < 0)
		rc = cli_fail(err);
	else
		rc = cli_serve(rt);
	fring_runtime_free(rt);
	return rc;
}
