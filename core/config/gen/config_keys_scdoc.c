// SPDX-License-Identifier: MIT
/* fring-config-keys: prints fring.yaml(5)'s key reference (config_doc.c).
 * After editing config_keys.c: build, then paste its output between the
 * "config keys" markers of man/fring.yaml.5.scd (test_config_keys checks
 * they agree). */
#include "config/config.h"

int main(void)
{
	fring_cfg_keys_scdoc(stdout);
	return 0;
}
