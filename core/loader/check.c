// SPDX-License-Identifier: MIT
/*
 * The version handshake on a plugin descriptor, and the host's copies of
 * the descriptor and ops table (min(size) bytes, the rest zero, so fields a
 * plugin built against an older minor lacks read as "not provided").
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "loader/loader_internal.h"

/* What an ABI 1.0 plugin must provide: the descriptor up to `ops`, and
 * the ops table up to the last required callback. */
#define DESC_MIN_SIZE (offsetof(struct fring_plugin, ops) + sizeof(void *))
#define OPS_MIN_SIZE                                                          \
	(offsetof(struct fring_fs_ops, getattr) + sizeof(void *))

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Every missing required callback in one message. */
static int check_required(const char *name, const struct fring_loaded_plugin *lp,
			  char **err)
{
	char list[128] = "";
	const struct fring_fs_ops *ops = lp->desc.ops ? &lp->ops : NULL;

	if (!lp->desc.create)
		strcat(list, ", create");
	if (!ops)
		strcat(list, ", ops");
	if (ops && !ops->lookup)
		strcat(list, ", ops.lookup");
	if (ops && !ops->getattr)
		strcat(list, ", ops.getattr");
	if (!list[0])
		return 0;
	*err = fring_strf("plugin '%s': missing required callbacks: %s", name,
			  list + 2);
	return -EINVAL;
}

/* The order matters: identity (magic, major) before anything that reads
 * past the header, and the minor before the size so a newer plugin gets
 * the "upgrade fring" message. Fills lp->desc/ops; 0 or -errno + *err. */
int fring_loader_check(const char *name, const struct fring_plugin *d,
		       struct fring_loaded_plugin *lp, char **err)
{
	const struct fring_fs_ops *ops;

	if (!d) {
		*err = fring_strf("plugin '%s': entry returned NULL", name);
		return -EINVAL;
	}
	if (d->magic != FRING_PLUGIN_MAGIC) {
		*err = fring_strf("plugin '%s': bad magic 0x%08x (not a fring "
				  "plugin descriptor)", name, d->magic);
		return -EPROTO;
	}
	if (d->abi_major != FRING_ABI_MAJOR) {
		*err = fring_strf("plugin '%s': ABI major %u, host speaks %u",
				  name, d->abi_major, FRING_ABI_MAJOR);
		return -EPROTO;
	}
	if (d->abi_minor > FRING_ABI_MINOR) {
		*err = fring_strf("plugin '%s': built against ABI %u.%u, newer "
				  "than this host's %u.%u; upgrade fring",
				  name, d->abi_major, d->abi_minor,
				  FRING_ABI_MAJOR, FRING_ABI_MINOR);
		return -EPROTO;
	}
	if (d->size < DESC_MIN_SIZE) {
		*err = fring_strf("plugin '%s': descriptor size %u, smaller "
				  "than the ABI 1.0 minimum %zu", name, d->size,
				  DESC_MIN_SIZE);
		return -EINVAL;
	}
	memset(&lp->desc, 0, sizeof(lp->desc));
	memcpy(&lp->desc, d, min_size(d->size, sizeof(lp->desc)));
	/* Reserved until a minor gives it a meaning; the host has not. */
	if (lp->desc.flags) {
		*err = fring_strf("plugin '%s': reserved flags 0x%llx set", name,
				  (unsigned long long)lp->desc.flags);
		return -EINVAL;
	}
	if (lp->desc.thread_model != FRING_THREAD_SERIALIZE &&
	    lp->desc.thread_model != FRING_THREAD_PARALLEL) {
		*err = fring_strf("plugin '%s': unknown thread model %u", name,
				  lp->desc.thread_model);
		return -EINVAL;
	}
	memset(&lp->ops, 0, sizeof(lp->ops));
	ops = lp->desc.ops;
	if (ops && ops->size < OPS_MIN_SIZE) {
		*err = fring_strf("plugin '%s': ops table size %u, smaller "
				  "than the ABI 1.0 minimum %zu", name,
				  ops->size, OPS_MIN_SIZE);
		return -EINVAL;
	}
	if (ops)
		memcpy(&lp->ops, ops, min_size(ops->size, sizeof(lp->ops)));
	if (check_required(name, lp, err))
		return -EINVAL;
	/* A takeover needs both sides; one alone is a plugin's mistake. */
	if (!lp->desc.state_save != !lp->desc.state_load) {
		*err = fring_strf("plugin '%s': %s without %s (ABI 1.7 takeover "
				  "hooks: both or neither)", name,
				  lp->desc.state_save ? "state_save" : "state_load",
				  lp->desc.state_save ? "state_load" : "state_save");
		return -EINVAL;
	}
	/* Never let the host read past an older plugin's shorter table. */
	lp->desc.ops = &lp->ops;
	return 0;
}
