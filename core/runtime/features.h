// SPDX-License-Identifier: MIT
/*
 * What a plugin's fring_plugin.features (ABI 1.4) mean for a mount.
 *
 * With allow_other every local user reaches the plugin, which runs as the
 * server's uid (root, often): without default_permissions the kernel checks
 * no mode bits, so unless the plugin checks them itself any user may read
 * and write whatever the server may. That must not be one forgotten word
 * away, so allow_other brings default_permissions along, unless the plugin
 * declares FRING_FEATURE_CHECKS_PERMISSIONS or the mount says
 * trust_plugin_permissions.
 */
#ifndef FRING_FEATURES_H
#define FRING_FEATURES_H

#include <fring/plugin.h>

/* The FRING_FEATURE_* bits this host knows. */
#define FRING_FEATURES_KNOWN                                                 \
	(FRING_FEATURE_CHECKS_PERMISSIONS | FRING_FEATURE_ATOMIC_O_TRUNC)

/* 0, or -EINVAL and *err when the plugin sets bits this host does not
 * know (it would rely on behaviour the host does not have). */
int fring_features_check(const struct fring_plugin *d, const char *name,
			 char **err);

/* Whether the mount gets default_permissions; for an allow_other mount
 * without it, logs one info line saying which way and why. */
int fring_features_default_permissions(const struct fring_plugin *d,
				       const char *mountpoint,
				       int default_permissions, int allow_other,
				       int trust_plugin_permissions);

#endif /* FRING_FEATURES_H */
