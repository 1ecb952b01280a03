// SPDX-License-Identifier: MIT
/* fring run CONFIG: everything is validated, loaded and created before the
 * first mount, so a bad file mounts nothing. */
#include <stdlib.h>

#include "cli.h"

int cmd_run(int argc, char **argv)
{
	const char *file = NULL;
	fring_runtime *rt;
	char *err = NULL;
	int rc;

	rc = cli_parse_one_file(argc, argv, &file);
	if (rc)
		return rc;
	rc = cli_prepare_serving(file);
	if (rc)
		return rc;
	rt = fring_runtime_new(&err);
	if (!rt)
		return cli_fail(err);
	if (fring_runtime_add_yaml(rt, file, &err) < 0)
		rc = cli_fail(err);
	else
		rc = cli_serve(rt);
	fring_runtime_free(rt);
	return rc;
}
