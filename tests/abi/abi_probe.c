// SPDX-License-Identifier: MIT
/*
 * ABI probe: a shared object whose one exported function takes every
 * public type of abi/include/fring, so `abidw` (libabigail) records their
 * full layout from its debug info. tests/abi/check.sh compares it against
 * the committed baseline of the current ABI version (abi/baseline/) and
 * against every older minor of the same major.
 */
#include <fring/fring.h>
#include <fring/plugin.h>

__attribute__((visibility("default"))) void
fring_abi_probe(const struct fring_plugin *plugin,
		const struct fring_host_api *host,
		const struct fring_fs_ops *ops, struct fring_conn *conn,
		struct fring_req_ctx *ctx, struct fring_statx *statx,
		const struct fring_mount_spec *spec, fring_runtime *rt,
		fring_plugin_entry_fn entry)
{
	(void)plugin, (void)host, (void)ops, (void)conn, (void)ctx;
	(void)statx, (void)spec, (void)rt, (void)entry;
}
