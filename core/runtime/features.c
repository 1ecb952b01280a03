// SPDX-License-Identifier: MIT
/* Plugin features and the mount; see features.h. */
#include "features.h"

#include <errno.h>

#include "../base/log.h"

int fring_features_check(const struct fring_plugin *d, const char *name,
			 char **err)
{
	if (!(d->features & ~(uint64_t)FRING_FEATURES_KNOWN))
		return 0;
	*err = fring_strf("plugin '%s': unknown feature bits 0x%llx (this host "
			  "speaks ABI %u.%u)", name,
			  (unsigned long long)(d->features &
					       ~(uint64_t)FRING_FEATURES_KNOWN),
			  FRING_ABI_MAJOR, FRING_ABI_MINOR);
	return -EINVAL;
}

int fring_features_default_permissions(const struct fring_plugin *d,
				       const char *mountpoint,
				       int default_permissions, int allow_other,
				       int trust_plugin_permissions)
{
	if (default_permissions || !allow_other)
		return default_permissions;
	if (d->features & FRING_FEATURE_CHECKS_PERMISSIONS) {
		fring_info("%s: allow_other: default_permissions left off (the "
			   "plugin checks permissions itself)", mountpoint);
		return 0;
	}
	if (trust_plugin_permissions) {
		fring_warn("%s: allow_other: default_permissions left off (mount "
			   "option trust_plugin_permissions): every local user may "
			   "do what the plugin lets the server's uid do",
			   mountpoint);
		return 0;
	}
	fring_info("%s: allow_other: default_permissions turned on (the plugin "
		   "does not check permissions)", mountpoint);
	return 1;
}
