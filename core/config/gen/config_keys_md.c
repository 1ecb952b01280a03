// SPDX-License-Identifier: MIT
/* fring-config-keys: prints the README's YAML key table (config_doc.c).
 * After editing config_keys.c: build, then paste its output between the
 * README's "config keys" markers (test_config_keys checks they agree). */
#include "config/config.h"

int main(void)
{
	fring_cfg_keys_markdown(stdout);
	return 0;
}
