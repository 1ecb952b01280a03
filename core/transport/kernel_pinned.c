// SPDX-License-Identifier: MIT
/*
 * The memory a mount's ring buffers pin, from the facts of this machine
 * (kernel_probe.h), counted as the io_uring transport sizes them
 * (uring_budget_need), so that `fring check` and `run` agree with the
 * rings a mount would set up.
 */
#include <stdio.h>

#include "../proto/fring_uapi.h"
#include "kernel_probe_internal.h"
#include "uring.h"
#include "uring_internal.h"

uint32_t kernel_payload_size(void)
{
	uint32_t p = fring_uring_max_payload(FRING_DEFAULT_MAX_WRITE,
					     FRING_DEFAULT_MAX_WRITE / 4096);

	return (p + 4095u) & ~4095u;
}

int kernel_uring_used(const struct fring_cfg_transport *t,
		      const struct fring_kernel_facts *k)
{
	char why[160];

	if (t->mode == FRING_MODE_DEVFUSE)
		return 0;
	if (kernel_offered(k))
		return !fring_uring_unavailable(k->offer->capable, k->offer->minor,
						why, sizeof(why));
	return k->uring_enabled;
}

int kernel_pools_offered(const struct fring_kernel_facts *k)
{
	return kernel_offered(k) ? !!(k->offer->capable & FUSE_HAS_IO_URING_BUFPOOL)
			  : k->pools_likely;
}

uint64_t kernel_pool_bufs(const struct fring_cfg_transport *t,
			  const struct fring_kernel_facts *k, uint32_t payload)
{
	uint32_t depth = t->queue_depth ? t->queue_depth : FRING_URING_DEFAULT_DEPTH;
	uint64_t n;

	if (t->bufpool == FRING_OFF || !kernel_pools_offered(k))
		return 0;
	n = t->bufpool_size ? t->bufpool_size / payload : (depth < 8 ? depth : 8);
	if (n > depth)
		n = depth;
	return n ? n : 1;
}

uint64_t fring_kernel_pinned(const struct fring_cfg_transport *t,
			     const struct fring_kernel_facts *k, char *what,
			     size_t len)
{
	uint32_t depth = t->queue_depth ? t->queue_depth : FRING_URING_DEFAULT_DEPTH;
	uint32_t payload = kernel_payload_size();
	uint64_t bufs, pinned, total;

	if (len)
		what[0] = '\0';
	if (!kernel_uring_used(t, k) || !k->qids)
		return 0;
	bufs = kernel_pool_bufs(t, k, payload);
	uring_budget_need(k->qids, depth, payload, (uint32_t)bufs, &pinned, &total);
	if (bufs)
		snprintf(what, len, "%u queues x a pool of %llu x %u KiB", k->qids,
			 (unsigned long long)bufs, payload >> 10);
	else
		snprintf(what, len, "%u queues x %u entries x %u KiB", k->qids,
			 depth, (payload + FRING_URING_HEADER_SZ) >> 10);
	return pinned;
}

uint64_t fring_kernel_pinned_threshold(uint64_t mem_total)
{
	return mem_total && mem_total / 4 < GIB ? mem_total / 4 : GIB;
}
