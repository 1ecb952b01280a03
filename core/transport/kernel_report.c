// SPDX-License-Identifier: MIT
/*
 * `fring probe`: what this machine offers a FUSE server, before any YAML
 * (kernel_probe.h). Every line is read from the facts and decisions the
 * mounts use (the probe mount's INIT, fring_uring_unavailable, the pool
 * and zero-copy rules, fring_uring_reduced_queues, the memory estimate
 * and fring_uring_precheck), at the default transport, so what it says
 * `auto` picks is what a mount with the defaults would pick.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <numa.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "../proto/fring_uapi.h"
#include "devfuse.h"
#include "kernel_probe_internal.h"
#include "uring.h"
#include "uring_internal.h"

#define FUSE_PARAMS "/sys/module/fuse/parameters/"

static void add(struct fring_probe *r, const char *group, const char *name,
		const char *why, const char *fmt, ...)
{
	struct fring_probe_line *l;
	va_list ap;

	if (r->n == FRING_PROBE_LINES)
		return;
	l = &r->l[r->n++];
	l->group = group;
	l->name = name;
	snprintf(l->why, sizeof(l->why), "%s", why ? why : "");
	va_start(ap, fmt);
	vsnprintf(l->value, sizeof(l->value), fmt, ap);
	va_end(ap);
}

static void human(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)b / (1ull << 30));
	else
		snprintf(buf, len, "%.1f MiB", (double)b / (1u << 20));
}

static void kernel(struct fring_probe *r, const struct fring_kernel_facts *k)
{
	static const struct {
		const char *name, *flag;
		uint64_t bit;
	} flags[] = {
		{ "io_uring", "FUSE_OVER_IO_URING, FUSE 7.42", FUSE_OVER_IO_URING },
		{ "bufpool", "FUSE_HAS_IO_URING_BUFPOOL, FUSE 7.46, Linux 7.3",
		  FUSE_HAS_IO_URING_BUFPOOL },
		{ "zero_copy", "FUSE_URING_ZERO_COPY queues come with buffer "
		  "pools, FUSE 7.46, Linux 7.3", FUSE_HAS_IO_URING_BUFPOOL },
		{ "passthrough", "FUSE_PASSTHROUGH, kernel passthrough",
		  FUSE_PASSTHROUGH },
		{ "reduced_queues", "FUSE_URING_REDUCED_Q, the provisional INIT "
		  "bit 44, in no released kernel", FUSE_URING_REDUCED_Q },
		{ "request_timeout", "FUSE_REQUEST_TIMEOUT, FUSE 7.43",
		  FUSE_REQUEST_TIMEOUT },
		{ "resend", "FUSE_HAS_RESEND, FUSE 7.40", FUSE_HAS_RESEND },
	};
	const struct fring_kernel_offer *o = k->offer;
	struct utsname u;

	add(r, "kernel", "release", NULL, "%s", uname(&u) == 0 ? u.release : "?");
	if (!kernel_offered(k)) {
		add(r, "kernel", "fuse", o ? o->why_unknown : "not probed",
		    "unknown");
		return;
	}
	add(r, "kernel", "fuse", "read from the INIT of a probe mount in a "
	    "private mount namespace, gone with it", "%u.%u", o->major, o->minor);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		add(r, "init", flags[i].name, flags[i].flag, "%s",
		    o->capable & flags[i].bit ? "offered" : "not offered");
	/* A notification, no INIT bit: the protocol minor tells. */
	add(r, "init", "epoch", "FUSE_NOTIFY_INC_EPOCH, FUSE 7.44: a "
	    "notification, known by the protocol minor", "%s",
	    o->minor >= 44 ? "offered" : "not offered");
}

static void module(struct fring_probe *r, const struct fring_kernel_facts *k)
{
	static const char *const params[][2] = {
		{ "max_user_bgreq", "the most max_background an unprivileged "
		  "server may ask for in its INIT reply" },
		{ "max_user_congthresh", "the most congestion_threshold an "
		  "unprivileged server may ask for in its INIT reply" },
	};
	char path[128], v[32];
	FILE *f;

	f = fopen(FUSE_PARAMS "enable_uring", "re");
	add(r, "module", "enable_uring", k->uring_enabled ? NULL :
	    "FUSE-over-io_uring is off: echo Y > " FUSE_PARAMS "enable_uring "
	    "(or io_uring is disabled by sysctl)", "%s",
	    !f ? "absent" : fgetc(f) == 'Y' ? "Y" : "N");
	if (f)
		fclose(f);
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), FUSE_PARAMS "%s", params[i][0]);
		f = fopen(path, "re");
		if (!f || !fgets(v, sizeof(v), f))
			snprintf(v, sizeof(v), "unknown");
		v[strcspn(v, "\n")] = '\0';
		if (f)
			fclose(f);
		add(r, "module", params[i][0], params[i][1], "%s", v);
	}
}

static void process(struct fring_probe *r, const struct fring_kernel_facts *k,
		    const struct fring_cfg_transport *def)
{
	uint32_t entry = kernel_payload_size() + FRING_URING_HEADER_SZ;
	char what[96], need[32], have[32], why[320];
	uint64_t pinned = fring_kernel_pinned(def, k, what, sizeof(what));
	int ipc = uring_cap_effective(CAP_IPC_LOCK);
	struct rlimit rl;

	add(r, "process", "cap_sys_admin", "zero-copy, kernel passthrough and "
	    "the probe mount need it", "%s", k->cap_sys_admin ? "yes" : "no");
	add(r, "process", "cap_ipc_lock", "with it, pinned ring memory is not "
	    "charged to RLIMIT_MEMLOCK", "%s", ipc ? "yes" : "no");
	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0) {
		add(r, "process", "rlimit_memlock", NULL, "unknown");
		return;
	}
	human(pinned, need, sizeof(need));
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(have, sizeof(have), "unlimited");
	else
		human(rl.rlim_cur, have, sizeof(have));
	if (ipc || rl.rlim_cur == RLIM_INFINITY) {
		snprintf(why, sizeof(why), "the default transport pins %s (%s), "
			 "%s", need, what, ipc ? "not charged to it (CAP_IPC_LOCK)"
					       : "within it");
		add(r, "process", "rlimit_memlock", why, "%s", have);
		return;
	}
	if (fring_uring_precheck(def, why, sizeof(why)) == 0)
		snprintf(why, sizeof(why), "the default transport pins %s (%s): "
			 "it fits", need, what);
	snprintf(why + strlen(why), sizeof(why) - strlen(why), "; per-entry "
		 "buffers allow queue_depth up to %llu on %u queues",
		 (unsigned long long)(rl.rlim_cur / entry / (k->qids ? k->qids : 1)),
		 k->qids);
	add(r, "process", "rlimit_memlock", why, "%s", have);
}

static void machine(struct fring_probe *r, const struct fring_kernel_facts *k)
{
	cpu_set_t mine;
	int usable = sched_getaffinity(0, sizeof(mine), &mine) == 0 ? CPU_COUNT(&mine) : 0;

	add(r, "machine", "cpus", "possible CPUs (each a kernel queue on "
	    "today's kernels) and those this process may run on", "%u possible, "
	    "%d usable", k->qids, usable);
	add(r, "machine", "numa_nodes", numa_available() < 0 ? "no NUMA support"
	    : NULL, "%d", numa_available() < 0 ? 1 : numa_num_configured_nodes());
}

/* What `auto` picks for each key at the defaults, and why. */
static void autos(struct fring_probe *r, const struct fring_kernel_facts *k,
		  const struct fring_cfg_transport *def)
{
	const struct fring_kernel_offer *o = k->offer;
	int known = kernel_offered(k), uring = kernel_uring_used(def, k);
	int pools = uring && kernel_pools_offered(k), reduced = 0;
	const char *zc;
	char why[320];

	if (known && !uring)
		add(r, "auto", "transport.mode", fring_uring_unavailable(
			    o->capable, o->minor, why, sizeof(why)), "devfuse");
	else if (uring && fring_uring_precheck(def, why, sizeof(why)) != 0) {
		uring = pools = 0; /* mode auto serves over /dev/fuse then */
		add(r, "auto", "transport.mode", why, "devfuse");
	} else
		add(r, "auto", "transport.mode", uring ? (known ?
		    "the kernel offers FUSE_OVER_IO_URING" : "enable_uring is Y "
		    "(INIT decides: not probed)") : "enable_uring is not Y",
		    "%s", uring ? "uring" : "devfuse");
	if (known && uring)
		reduced = fring_uring_reduced_queues(FRING_AUTO, o->capable,
						     o->minor, why, sizeof(why));
	else
		snprintf(why, sizeof(why), uring ? "INIT decides" : "no io_uring");
	add(r, "auto", "transport.reduced_queues", why, "%s", reduced ? "on" : "off");
	snprintf(why, sizeof(why), reduced ? "one registered queue per node to "
		 "start, more as clients share them" : "every CPU's queue "
		 "registered (%u), one thread per usable CPU", k->qids);
	if (uring)
		add(r, "auto", "transport.queues", why, "%u threads",
		    k->busiest ? k->qids / k->busiest : k->qids);
	else
		add(r, "auto", "transport.queues", "/dev/fuse workers, two per "
		    "online CPU", "%u threads", fring_devfuse_default_threads());
	add(r, "auto", "transport.bufpool", pools ? (known ? "the kernel offers "
	    "FUSE_HAS_IO_URING_BUFPOOL" : "Linux 7.3 or later (INIT decides: "
	    "not probed)") : uring ? "the kernel has no io_uring buffer pools "
	    "(FUSE 7.46, Linux 7.3)" : "no io_uring", "%s", pools ? "on" : "off");
	zc = uring ? fring_uring_zc_why_not(FRING_AUTO, pools, pools,
					    k->cap_sys_admin) : "no io_uring";
	add(r, "auto", "transport.zero_copy", zc ? zc : "buffer pools and "
	    "CAP_SYS_ADMIN", "%s", zc ? "off" : "on");
	add(r, "auto", "transport.request_timeout", known && !(o->capable &
	    FUSE_REQUEST_TIMEOUT) ? "ignored: the kernel does not offer "
	    "FUSE_REQUEST_TIMEOUT" : NULL, "%u s", def->request_timeout);
}

void fring_kernel_probe_report(struct fring_probe *r)
{
	struct fring_cfg_transport def, want;
	struct fring_kernel_facts k;

	memset(r, 0, sizeof(*r));
	fring_cfg_transport_defaults(&def);
	/* mode uring makes the facts probe the kernel (as root). */
	want = def;
	want.mode = FRING_MODE_URING;
	fring_kernel_facts_get(&want, &k);
	kernel(r, &k);
	module(r, &k);
	process(r, &k, &def);
	machine(r, &k);
	autos(r, &k, &def);
}
