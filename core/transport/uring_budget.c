// SPDX-License-Identifier: MIT
/*
 * Can the ring buffers be had? io_uring pins every registered buffer and,
 * for a process without CAP_IPC_LOCK, charges it to RLIMIT_MEMLOCK (8 MiB
 * by default: a 2-CPU machine at the default depth already needs 16 MiB).
 * Asking for more than the limit fails late with a bare ENOMEM; asking for
 * more than the machine has blocks the mount's clients while gigabytes are
 * populated (queue_depth 4096 on 2 CPUs is 8 GiB). So the need is computed
 * and checked first, once before mounting (the kernel's offer is not known
 * yet: pools are assumed on Linux 7.3+ unless transport.bufpool is off) and
 * again at INIT with the real mode, and the reason says what to change.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../config/config.h"
#include "../proto/init_facts.h"
#include "uring_internal.h"

#define POOL_HDR_SZ 512u

/* MemAvailable in bytes, or 0 if unknown. */
static uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

static void human(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)b / (1ull << 30));
	else
		snprintf(buf, len, "%.1f MiB", (double)b / (1u << 20));
}

void uring_budget_need(uint32_t qids, uint32_t depth, uint32_t payload_sz,
		       uint32_t pool_bufs, uint64_t *pinned, uint64_t *total)
{
	if (pool_bufs) {
		*pinned = (uint64_t)qids * pool_bufs * payload_sz;
		*total = *pinned + (uint64_t)qids * depth * POOL_HDR_SZ;
	} else {
		*pinned = (uint64_t)qids * depth * ((uint64_t)payload_sz + FRING_URING_HEADER_SZ);
		*total = *pinned;
	}
}

int uring_budget_check(uint32_t qids, uint32_t depth, uint32_t payload_sz,
		       uint32_t pool_bufs, char *why, size_t len)
{
	uint64_t pinned, total, avail = mem_available();
	struct rlimit rl;
	char need[32], have[32], each[48];
	const char *how = pool_bufs ? "lower transport.bufpool.size"
				    : "lower transport.queue_depth (or use a bufpool on Linux 7.3)";

	uring_budget_need(qids, depth, payload_sz, pool_bufs, &pinned, &total);
	human(pinned, need, sizeof(need));
	if (!uring_cap_effective(CAP_IPC_LOCK) && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && pinned > rl.rlim_cur) {
		human(rl.rlim_cur, have, sizeof(have));
		if (pool_bufs)
			snprintf(each, sizeof(each), "a pool of %u x %u KiB",
				 pool_bufs, payload_sz >> 10);
		else
			snprintf(each, sizeof(each), "%u entries x %u KiB", depth,
				 (payload_sz + FRING_URING_HEADER_SZ) >> 10);
		snprintf(why, len, "the ring buffers pin %s (%u queues x %s) but "
			 "RLIMIT_MEMLOCK is %s: %s, or raise the limit (ulimit -l, "
			 "systemd LimitMEMLOCK=)", need, qids, each, have, how);
		return -ENOMEM;
	}
	if (avail && total > avail) {
		human(total, need, sizeof(need));
		human(avail, have, sizeof(have));
		snprintf(why, len, "the ring buffers need %s, more than the %s of "
			 "memory available: %s", need, have, how);
		return -ENOMEM;
	}
	return 0;
}

/* Before mounting: is Linux 7.3+ (pools likely offered) running? */
static int pools_likely(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 0;
	return major > 7 || (major == 7 && minor >= 3);
}

int fring_uring_precheck(const struct fring_cfg_transport *cfg, char *why,
			 size_t len)
{
	int qids = fring_uring_possible_cpus();
	uint32_t depth =
		cfg->queue_depth ? cfg->queue_depth : FRING_URING_DEFAULT_DEPTH;
	/* INIT has not happened: the most fring ever asks for. */
	uint32_t mw = FRING_DEFAULT_MAX_WRITE;
	uint32_t payload = fring_uring_max_payload(mw, (mw + 4095) / 4096);
	uint64_t bufs = 0;

	if (qids <= 0)
		return 0; /* setup reports it */
	if (cfg->bufpool != FRING_OFF && pools_likely()) {
		bufs = cfg->bufpool_size ? cfg->bufpool_size / payload
					 : (depth < 8 ? depth : 8);
		if (bufs > depth)
			bufs = depth;
		if (!bufs)
			bufs = 1;
	}
	return uring_budget_check((uint32_t)qids, depth, payload, (uint32_t)bufs,
				  why, len);
}
