// SPDX-License-Identifier: MIT
/*
 * What of a mount's transport this kernel cannot serve, from the facts of
 * this machine (kernel_probe.h), worded as `run` words it at INIT and in
 * fring_uring_setup, and the check that `fring check` and the session
 * run for every mount before the first is made.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../base/log.h"
#include "kernel_probe_internal.h"
#include "uring.h"
#include "uring_internal.h"

/* The place of the first of these values the file gave. */
static void place(struct fring_cfg_at *at, const struct fring_cfg_at *a,
		  const struct fring_cfg_at *b, const struct fring_cfg_at *c)
{
	*at = a && a->line ? *a : b && b->line ? *b : c ? *c : *at;
}

/* The busiest queue thread's fixed-buffer table and SQ (uring_table_fit),
 * as fring_uring_setup checks them before any thread starts. */
static int table_refuses(const struct fring_cfg_transport *t,
			 const struct fring_kernel_facts *k, char *why,
			 size_t len, struct fring_cfg_at *at)
{
	uint32_t depth = t->queue_depth ? t->queue_depth : FRING_URING_DEFAULT_DEPTH;
	uint32_t payload = kernel_payload_size();
	int pool = kernel_pool_bufs(t, k, payload) != 0;
	int zc = pool && t->zero_copy != FRING_OFF && k->cap_sys_admin;
	char reason[256];

	if (!k->busiest || !kernel_uring_used(t, k) ||
	    !uring_table_fit(k->busiest, depth, payload, pool, t->zero_copy, &zc,
			     reason, sizeof(reason)))
		return 0;
	if (zc && t->zero_copy == FRING_ON)
		snprintf(why, len, "transport.zero_copy on: %s", reason);
	else
		snprintf(why, len, "transport uring: io_uring unavailable: ring "
			 "setup failed: %s", reason);
	place(at, &t->at_queue_depth,
	      t->zero_copy == FRING_ON ? &t->at_zero_copy : NULL, &t->at_section);
	return -E2BIG;
}

int fring_kernel_refuses(const struct fring_cfg_transport *t,
			 const struct fring_kernel_facts *k, char *why,
			 size_t len, struct fring_cfg_at *at)
{
	int must = t->mode == FRING_MODE_URING || t->bufpool == FRING_ON ||
		   t->zero_copy == FRING_ON;
	char reason[160];
	const char *no;

	at->line = at->column = 0;
	/* devfuse with bufpool or zero_copy on is a config error already. */
	if (!must || t->mode == FRING_MODE_DEVFUSE)
		return 0;
	if (!kernel_offered(k))
		return table_refuses(t, k, why, len, at);
	/* The order and words of the INIT hook and fring_uring_setup. */
	no = fring_uring_unavailable(k->offer->capable, k->offer->minor, reason,
				     sizeof(reason));
	if (no) {
		snprintf(why, len, "transport uring: io_uring unavailable: %s", no);
		place(at, t->mode == FRING_MODE_URING ? &t->at_mode : NULL,
		      t->bufpool == FRING_ON ? &t->at_bufpool : NULL,
		      t->zero_copy == FRING_ON ? &t->at_zero_copy : &t->at_section);
		if (!at->line)
			*at = t->at_section;
		return -EOPNOTSUPP;
	}
	if (t->bufpool == FRING_ON && !kernel_pools_offered(k)) {
		snprintf(why, len, "transport.bufpool on: the kernel has no io_uring "
			 "buffer pools (they need FUSE 7.46, Linux 7.3)");
		place(at, &t->at_bufpool, &t->at_section, NULL);
		return -EOPNOTSUPP;
	}
	if (t->zero_copy == FRING_ON) {
		no = !kernel_pools_offered(k) ? "the kernel has no io_uring zero-copy "
					 "(FUSE 7.46, Linux 7.3)"
		     : !k->cap_sys_admin ? "CAP_SYS_ADMIN is not in the effective set"
					 : NULL;
		if (no) {
			snprintf(why, len, "transport.zero_copy on: %s", no);
			place(at, &t->at_zero_copy, &t->at_section, NULL);
			return -EOPNOTSUPP;
		}
	}
	return table_refuses(t, k, why, len, at);
}

static void human(uint64_t b, char *buf, size_t len)
{
	if (b >= GIB)
		snprintf(buf, len, "%.1f GiB", (double)b / GIB);
	else
		snprintf(buf, len, "%.1f MiB", (double)b / (1u << 20));
}

static char *placed(const char *file, const struct fring_cfg_at *at,
		    const char *mountpoint, const char *msg)
{
	if (file && at->line)
		return fring_strf("%s:%u:%u: %s: %s", file, at->line, at->column,
				  mountpoint, msg);
	return fring_strf("%s: %s", mountpoint, msg);
}

int fring_kernel_check(const struct fring_cfg_transport *t,
		       const char *mountpoint, const char *file, char **err)
{
	struct fring_kernel_facts k;
	struct fring_cfg_at at = { 0, 0 };
	char why[400], what[96], need[32], limit[32];
	uint64_t pinned, over;
	int rc;

	*err = NULL;
	fring_kernel_facts_get(t, &k);
	rc = fring_kernel_refuses(t, &k, why, sizeof(why), &at);
	pinned = fring_kernel_pinned(t, &k, what, sizeof(what));
	if (!rc && pinned && kernel_offered(&k) &&
	    (t->mode == FRING_MODE_URING || t->bufpool == FRING_ON ||
	     t->zero_copy == FRING_ON)) {
		/* What must be served must fit (RLIMIT_MEMLOCK, memory), as
		 * the mount would check it, but before any mount is made. */
		uint32_t payload = kernel_payload_size();
		char budget[320];

		if (uring_budget_check(k.qids, t->queue_depth ? t->queue_depth
							      : FRING_URING_DEFAULT_DEPTH,
				       payload, (uint32_t)kernel_pool_bufs(t, &k, payload),
				       budget, sizeof(budget))) {
			snprintf(why, sizeof(why), "transport uring: io_uring "
				 "unavailable: %s", budget);
			place(&at, kernel_pool_bufs(t, &k, payload) ? &t->at_bufpool_size
							     : &t->at_queue_depth,
			      &t->at_queue_depth, &t->at_section);
			rc = -ENOMEM;
		}
	}
	if (rc) {
		*err = placed(file, &at, mountpoint, why);
		return *err ? rc : -ENOMEM;
	}
	over = fring_kernel_pinned_threshold(k.mem_total);
	if (pinned > over) {
		char *line;

		human(pinned, need, sizeof(need));
		human(over, limit, sizeof(limit));
		place(&at, &t->at_queue_depth, &t->at_bufpool_size, &t->at_section);
		snprintf(why, sizeof(why), "the ring buffers will pin %s of memory "
			 "(%s) while it is mounted, more than %s (1 GiB, or a "
			 "quarter of the RAM if less): lower %s", need, what, limit,
			 kernel_pool_bufs(t, &k, kernel_payload_size())
				 ? "transport.bufpool.size"
				 : "transport.queue_depth (or use a bufpool on Linux 7.3)");
		line = placed(file, &at, mountpoint, why);
		fring_warn("%s", line ? line : why);
		free(line);
	}
	return 0;
}
