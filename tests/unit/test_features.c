// SPDX-License-Identifier: MIT
/*
 * Plugin features (ABI 1.4, core/runtime/features.h): unknown bits are
 * refused, and an allow_other mount gets default_permissions unless the
 * plugin checks permissions itself or the mount trusts it explicitly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "runtime/features.h"

static struct fring_plugin desc(uint64_t features)
{
	return (struct fring_plugin){ .size = sizeof(struct fring_plugin),
				      .features = features };
}

Test(features, unknown_bits_are_refused)
{
	struct fring_plugin d = desc(FRING_FEATURE_CHECKS_PERMISSIONS);
	char *err = NULL, want[128];

	cr_expect_eq(fring_features_check(&d, "p", &err), 0);
	cr_expect_null(err);
	d = desc(FRING_FEATURE_CHECKS_PERMISSIONS | FRING_FEATURE_ATOMIC_O_TRUNC);
	cr_expect_eq(fring_features_check(&d, "p", &err), 0); /* ABI 1.6 */
	cr_expect_null(err);
	d = desc(FRING_FEATURE_CHECKS_PERMISSIONS | 1ull << 40);
	cr_expect_eq(fring_features_check(&d, "p", &err), -EINVAL);
	snprintf(want, sizeof(want), "plugin 'p': unknown feature bits "
		 "0x10000000000 (this host speaks ABI %d.%d)", FRING_ABI_MAJOR,
		 FRING_ABI_MINOR);
	cr_expect_str_eq(err, want);
	free(err);
}

Test(features, allow_other_brings_default_permissions)
{
	struct fring_plugin plain = desc(0);
	struct fring_plugin checks = desc(FRING_FEATURE_CHECKS_PERMISSIONS);

	/* default_permissions, allow_other, trust_plugin_permissions */
	cr_expect_eq(fring_features_default_permissions(&plain, "/m", 0, 1, 0), 1);
	cr_expect_eq(fring_features_default_permissions(&plain, "/m", 0, 1, 1), 0);
	cr_expect_eq(fring_features_default_permissions(&checks, "/m", 0, 1, 0), 0);
	cr_expect_eq(fring_features_default_permissions(&plain, "/m", 1, 1, 1), 1);
	cr_expect_eq(fring_features_default_permissions(&plain, "/m", 0, 0, 0), 0);
	cr_expect_eq(fring_features_default_permissions(&plain, "/m", 1, 0, 0), 1);
}
