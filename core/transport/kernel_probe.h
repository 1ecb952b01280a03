// SPDX-License-Identifier: MIT
/*
 * What this kernel can serve, known before anything is mounted, so that
 * `fring check` reports what `run` would refuse, and `run` refuses it
 * before its first mount (fring_session_new calls fring_kernel_check for
 * every mount): the probe and the facts in kernel_probe.c, the memory
 * estimate in kernel_pinned.c, the refusals and the check in
 * kernel_refuse.c.
 */
#ifndef FRING_KERNEL_PROBE_H
#define FRING_KERNEL_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "../config/config.h"

/* What a FUSE INIT of this kernel offers, read from a throwaway mount in a
 * private mount namespace (nothing of it outlives the probe's child). */
struct fring_kernel_offer {
	int known;        /* the probe read an INIT; else why_unknown says */
	uint64_t capable; /* INIT flags | flags2 << 32 */
	uint32_t major, minor;
	char why_unknown[128];
};

/* Probed once per process (later calls return the first answer). */
const struct fring_kernel_offer *fring_kernel_offer(void);

/* Everything the decisions below look at, so tests can give their own. */
struct fring_kernel_facts {
	const struct fring_kernel_offer *offer; /* NULL or !known: unknown */
	int uring_enabled;   /* enable_uring Y and io_uring not disabled */
	int pools_likely;    /* without an offer: Linux 7.3 or later */
	int cap_sys_admin;   /* in the effective set (zero-copy) */
	uint32_t qids;       /* kernel queues: the possible CPUs */
	uint32_t busiest;    /* qids of the busiest queue thread, 0 unknown */
	uint64_t mem_total;  /* bytes of RAM, 0 if unknown */
};

/* The facts of this machine and process; the offer is probed only if
 * `t` needs it (something on, or a need worth a warning). */
void fring_kernel_facts_get(const struct fring_cfg_transport *t,
			    struct fring_kernel_facts *k);

/* Memory a mount's ring buffers pin, as fring.yaml(5) says:
 * queues x queue_depth x (1 MiB + 4 KiB) with per-entry buffers, queues x
 * pool size with buffer pools; 0 if it is served over /dev/fuse. *what
 * says how it is made up ("2 queues x 4096 entries x 1028 KiB"). */
uint64_t fring_kernel_pinned(const struct fring_cfg_transport *t,
			     const struct fring_kernel_facts *k, char *what,
			     size_t len);

/* Above this, a configuration is warned about: 1 GiB, or a quarter of
 * the RAM if that is less. */
uint64_t fring_kernel_pinned_threshold(uint64_t mem_total);

/* What of `t` this kernel cannot serve, worded as `run` words it: 0, or
 * -EOPNOTSUPP (-ENOMEM for memory) with the reason in why and in *at the
 * place of the value it is about (line 0 when not in a file). Unknown
 * facts refuse nothing: `run` still checks at INIT. */
int fring_kernel_refuses(const struct fring_cfg_transport *t,
			 const struct fring_kernel_facts *k, char *why,
			 size_t len, struct fring_cfg_at *at);

/* Both, for one mount: the error ("FILE:LINE:COL: MOUNTPOINT: reason",
 * or without the place outside a file) or 0, and the warning line about
 * pinned memory logged. `file` may be NULL. */
int fring_kernel_check(const struct fring_cfg_transport *t,
		       const char *mountpoint, const char *file, char **err);

/* `fring probe`: one line per fact, grouped (kernel, init, module,
 * process, machine, auto: what `auto` picks for each transport key). */
struct fring_probe_line {
	const char *group, *name;
	char value[48];
	char why[320]; /* may be empty */
};
#define FRING_PROBE_LINES 32
struct fring_probe {
	int n;
	struct fring_probe_line l[FRING_PROBE_LINES];
};
void fring_kernel_probe_report(struct fring_probe *r);

#endif /* FRING_KERNEL_PROBE_H */
