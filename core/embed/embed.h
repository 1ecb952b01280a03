// SPDX-License-Identifier: MIT
/*
 * Internal extensions of the embedding API (fring.h) for the CLI: not
 * exported from libfring.so.
 */
#ifndef FRING_EMBED_H
#define FRING_EMBED_H

#include <stddef.h>

#include <fring/fring.h>

/* Called by fring_runtime_run once per mount, as soon as it serves. */
typedef void (*fring_ready_fn)(void *ud, const char *mountpoint,
			       const char *plugin, const char *transport);
void fring_runtime_on_ready(fring_runtime *rt, fring_ready_fn cb, void *ud);

/* 0 if `opt` ("ro", "fsname=x"...) is a mount option add_mount accepts,
 * else -EINVAL and *err (malloc'ed) says why. */
int fring_mount_option_check(const char *opt, char **err);

/* Number of mounts added so far. */
size_t fring_runtime_nr_mounts(const fring_runtime *rt);

#endif /* FRING_EMBED_H */
