// SPDX-License-Identifier: MIT
/*
 * Every YAML key, once: its section, parser, field, range, default, which
 * transports use it and what it means. Validation, the defaults, the
 * "expected one of" lists, the unused-key note and the README's table
 * (config_doc.c) read these rows; core/config/README.md lists the edits
 * for a new key.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config/config_internal.h"

#define FIELD(type, f)                                                        \
	.off = offsetof(type, f), .size = sizeof(((type *)0)->f)
#define T(f) FIELD(struct fring_cfg_transport, f)
#define T_AT(f) .at = offsetof(struct fring_cfg_transport, f)
#define M(f) FIELD(struct fring_cfg_mount, f)
#define M_AT(f) .at = offsetof(struct fring_cfg_mount, f)
#define S(f) FIELD(struct fring_cfg_stats, f)

static const char *const placement_words[] = { "auto", "local", NULL };
static const char *const restart_words[] = { "off", "on_crash", NULL };

/* One pool buffer holds the largest request, max_write (1 MiB): a pool
 * below that holds no buffer (the kernel says -EINVAL). The pool is one
 * fixed buffer of the ring, and io_uring refuses a registered buffer over
 * 1 GiB (io_uring/rsrc.c, SZ_1G: -EFAULT). */
#define BUFPOOL_MIN (1ull << 20)
#define BUFPOOL_MAX (1ull << 30)

const struct cfg_key cfg_keys[] = {
	{ "mounts", CFG_TOP, cfg_key_mounts, .required = 1,
	  .type = "list of maps, at least one",
	  .doc = "one entry per filesystem served" },
	{ "mountpoint", CFG_MOUNT, cfg_key_string, M(mountpoint),
	  M_AT(at_mountpoint), .required = 1, .type = "string",
	  .doc = "existing directory to mount on; each at most once" },
	{ "plugin", CFG_MOUNT, cfg_key_string, M(plugin), M_AT(at_plugin),
	  .required = 1, .type = "string",
	  .doc = "plugin name on the search path, or a path to a `.so`" },
	{ "options", CFG_MOUNT, cfg_key_options, .type = "map", .dflt = "empty",
	  .doc = "handed to the plugin as key/value strings, flattened "
		 "(see below); see each plugin's page, fring-NAME(1)" },
	{ "mount_options", CFG_MOUNT, cfg_key_mount_options,
	  .type = "list of strings", .dflt = "none",
	  .doc = "`default_permissions`, `allow_other`, "
		 "`trust_plugin_permissions`, `ro`/`rw`, `nosuid`/`suid`, "
		 "`nodev`/`dev`, `noexec`/`exec`, `noatime`/`atime`, "
		 "`max_read=N`, `blksize=N`, `auto_unmount`, `fsname=NAME`, "
		 "`subtype=NAME` (see MOUNT OPTIONS)" },
	{ "transport", CFG_MOUNT, cfg_key_transport, M(transport),
	  .type = "map", .dflt = "all defaults",
	  .doc = "how the mount is served: the `transport.*` keys" },
	{ "stats", CFG_MOUNT, cfg_key_stats, M(stats), .type = "map",
	  .dflt = "all defaults",
	  .doc = "live statistics (`fring stats`, Prometheus): the `stats.*` "
		 "keys" },
	{ "restart", CFG_MOUNT, cfg_key_words, M(restart),
	  .words = restart_words, .def = FRING_RESTART_OFF, .devfuse_only = 1,
	  .doc = "`on_crash`: when the serving process dies by a signal, the "
		 "supervisor starts a new one on the same connection (a plugin "
		 "with the `state_live` hook; 3 crashes in 10 s abort); a "
		 "mount served over io_uring gets a warning at start and is "
		 "aborted at a crash, as with `off`: the connection is "
		 "aborted (ENOTCONN)" },
	{ "mode", CFG_TRANSPORT, cfg_key_words, T(mode), T_AT(at_mode),
	  .words = cfg_mode_words, .def = FRING_MODE_AUTO,
	  .doc = "`auto` uses FUSE-over-io_uring when the kernel offers it, "
		 "else `/dev/fuse`" },
	{ "queues", CFG_TRANSPORT, cfg_key_uint_auto, T(queues), .lo = 1,
	  .hi = 1024, .dflt = "`auto` (one per usable CPU)",
	  .doc = "io_uring queue threads (or registered queues, with reduced "
		 "queues); /dev/fuse worker threads" },
	{ "queue_depth", CFG_TRANSPORT, cfg_key_uint, T(queue_depth),
	  T_AT(at_queue_depth), .lo = 1, .hi = 4096, .def = 8, .uring_only = 1,
	  .doc = "io_uring ring entries (requests in flight) per queue" },
	{ "bufpool", CFG_TRANSPORT, cfg_key_bufpool, T(bufpool),
	  T_AT(at_bufpool), .words = cfg_tristate_words, .def = FRING_AUTO,
	  .uring_only = 1,
	  .expect = "one of auto, on, off or a mapping { mode, size, "
		    "registered }",
	  .type = "`auto` | `on` | `off` (booleans accepted), or a map "
		  "`{ mode, size, registered }`",
	  .doc = "io_uring buffer pools (Linux 7.3): one payload pool per "
		 "queue instead of a buffer per entry" },
	{ "mode", CFG_BUFPOOL, cfg_key_tristate, T(bufpool), T_AT(at_bufpool),
	  .words = cfg_tristate_words, .def = FRING_AUTO, .uring_only = 1,
	  .doc = "the same switch inside the map form" },
	{ "size", CFG_BUFPOOL, cfg_key_size, T(bufpool_size),
	  T_AT(at_bufpool_size), .lo = BUFPOOL_MIN, .hi = BUFPOOL_MAX,
	  .uring_only = 1,
	  .expect = "a size 1MiB..1GiB such as 64MiB (at least one 1MiB "
		    "buffer, the largest request; io_uring registers at most "
		    "1GiB as one buffer)",
	  .type = "size 1MiB..1GiB (`4096`, `64KiB`, `64K`, `1M`, `1GiB`; "
		  "binary units)",
	  .dflt = "`min(queue_depth, 8)` buffers",
	  .doc = "the pool of each queue, in 1 MiB buffers (the largest "
		 "request)" },
	{ "registered", CFG_BUFPOOL, cfg_key_bool, T(bufpool_registered),
	  .def = 1, .uring_only = 1,
	  .doc = "tell the kernel the pool is a fixed buffer of the ring "
		 "(`IORING_URING_CMD_FIXED`)" },
	{ "zero_copy", CFG_TRANSPORT, cfg_key_tristate, T(zero_copy),
	  T_AT(at_zero_copy), .words = cfg_tristate_words, .def = FRING_AUTO,
	  .uring_only = 1,
	  .doc = "io_uring zero-copy READ and WRITE (Linux 7.3) for files "
		 "the plugin opts in" },
	{ "request_timeout", CFG_TRANSPORT, cfg_key_uint, T(request_timeout),
	  .lo = 0, .hi = 65535, .def = 300, .unit = "seconds",
	  .doc = "the kernel aborts the connection when a request stays "
		 "unanswered this long (FUSE 7.43+); `0` = never" },
	{ "poll_us", CFG_TRANSPORT, cfg_key_uint, T(poll_us), .lo = 0,
	  .hi = 1000, .def = 1000, .unit = "microseconds", .uring_only = 1,
	  .doc = "how long a queue thread polls its ring when it runs dry, "
		 "before it sleeps; `0` = sleep at once" },
	{ "placement", CFG_TRANSPORT, cfg_key_words, T(placement),
	  .words = placement_words, .def = FRING_PLACEMENT_AUTO,
	  .uring_only = 1,
	  .doc = "where io_uring queue threads run: `auto` moves them by "
		 "load, `local` keeps each on its queue's CPU" },
	{ "cpus", CFG_TRANSPORT, cfg_key_cpus, T(cpus), .uring_only = 1,
	  .expect = "a CPU list such as 0-3,8",
	  .type = "CPU list (`0-3,8`; quote it inside a `{ }` flow map)",
	  .dflt = "all", .doc = "the CPUs io_uring queue threads may use" },
	{ "reduced_queues", CFG_TRANSPORT, cfg_key_tristate, T(reduced_queues),
	  .words = cfg_tristate_words, .def = FRING_AUTO, .uring_only = 1,
	  .doc = "whether to trust the provisional `FUSE_URING_REDUCED_Q` "
		 "(INIT bit 44) and register fewer queues than CPUs" },
	{ "enabled", CFG_STATS, cfg_key_bool, S(enabled), .def = 1,
	  .doc = "latency per opcode, request ages and the control socket "
		 "`fring stats` asks; `false` keeps only the plain counters" },
	{ "prometheus", CFG_STATS, cfg_key_listen, S(prometheus),
	  .at = offsetof(struct fring_cfg_stats, at_prometheus),
	  .expect = "an address HOST:PORT such as 127.0.0.1:9464 (HOST an "
		    "IPv4 address or [IPv6 address])",
	  .type = "string `HOST:PORT` (IPv4 or `[IPv6]`)", .dflt = "none (off)",
	  .doc = "serve the statistics in the Prometheus text format on "
		 "`http://HOST:PORT/metrics`" },
};
const size_t cfg_nr_keys = sizeof(cfg_keys) / sizeof(cfg_keys[0]);
_Static_assert(sizeof(cfg_keys) / sizeof(cfg_keys[0]) <= 64,
	       "fring_cfg_transport.given has a bit per row");

void fring_cfg_transport_defaults(struct fring_cfg_transport *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < cfg_nr_keys; i++)
		if ((cfg_keys[i].section == CFG_TRANSPORT ||
		     cfg_keys[i].section == CFG_BUFPOOL) &&
		    cfg_keys[i].def)
			cfg_key_store(t, &cfg_keys[i], cfg_keys[i].def);
}

void fring_cfg_stats_defaults(struct fring_cfg_stats *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < cfg_nr_keys; i++)
		if (cfg_keys[i].section == CFG_STATS && cfg_keys[i].def)
			cfg_key_store(s, &cfg_keys[i], cfg_keys[i].def);
}

int fring_cfg_unused_over_devfuse(const struct fring_cfg_transport *t,
				  char *buf, size_t len)
{
	size_t used = 0;
	int n = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < cfg_nr_keys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		char path[64];

		if (k->section != CFG_TRANSPORT || !k->uring_only ||
		    !(t->given & (1ull << i)))
			continue;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 n ? ", " : "",
						 cfg_key_path(k, path,
							      sizeof(path)));
		n++;
	}
	return n;
}
