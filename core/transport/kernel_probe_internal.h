// SPDX-License-Identifier: MIT
/*
 * What kernel_pinned.c and kernel_refuse.c share: how the facts of this
 * machine (kernel_probe.h) are read by the estimate and the refusals.
 */
#ifndef FRING_KERNEL_PROBE_INTERNAL_H
#define FRING_KERNEL_PROBE_INTERNAL_H

#include <stdint.h>

#include "kernel_probe.h"

#define GIB (1ull << 30)

/* The probe read an INIT (else the decisions guess from the facts). */
static inline int kernel_offered(const struct fring_kernel_facts *k)
{
	return k->offer && k->offer->known;
}

/* kernel_pinned.c */
/* The largest payload fring negotiates (max_write 1 MiB), as the rings
 * size their buffers. */
uint32_t kernel_payload_size(void);
/* Will io_uring serve it (mode auto falls back to /dev/fuse without)? */
int kernel_uring_used(const struct fring_cfg_transport *t,
		      const struct fring_kernel_facts *k);
int kernel_pools_offered(const struct fring_kernel_facts *k);
/* Buffers per queue's pool, as uring_pool_plan counts them; 0 = none. */
uint64_t kernel_pool_bufs(const struct fring_cfg_transport *t,
			  const struct fring_kernel_facts *k, uint32_t payload);

#endif /* FRING_KERNEL_PROBE_INTERNAL_H */
