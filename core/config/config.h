// SPDX-License-Identifier: MIT
/*
 * YAML configuration (libyaml). Schema: DESIGN.md "Configuration"; every
 * key, its type, default and meaning is one row of cfg_keys[]
 * (config_keys.c), which the README's key table is generated from
 * (core/config/README.md says how to add one).
 *
 * Every error names "FILE:LINE:COLUMN: what was expected" (1-based).
 * YAML aliases (*x) and multi-document files are rejected: flattening an
 * alias graph could blow up (the "billion laughs" case).
 */
#ifndef FRING_CONFIG_H
#define FRING_CONFIG_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../mount/mount.h"

/* A flattened plugin option: maps become dotted keys, lists repeat the key,
 * lists of maps become key.N.sub. value is the scalar's source text. */
struct fring_cfg_option {
	char *key;
	char *value;
	int is_null; /* YAML null: value is "" */
	unsigned line, column;
};

enum fring_transport_mode { FRING_MODE_AUTO, FRING_MODE_URING, FRING_MODE_DEVFUSE };
enum fring_tristate { FRING_AUTO, FRING_ON, FRING_OFF };
/* transport.placement; the io_uring transport reads these values (place.h). */
enum fring_placement { FRING_PLACEMENT_AUTO, FRING_PLACEMENT_LOCAL };

/* Where a value stood in the file (1-based); line 0: not given. */
struct fring_cfg_at {
	unsigned line, column;
};

struct fring_cfg_transport {
	enum fring_transport_mode mode;
	uint32_t queues;      /* 0 = auto */
	uint32_t queue_depth; /* default 8 */
	enum fring_tristate bufpool; /* io_uring buffer pools; default auto */
	uint64_t bufpool_size;      /* bytes per queue, 0 = default */
	int bufpool_registered;     /* default 1 */
	enum fring_tristate zero_copy;
	enum fring_tristate reduced_queues; /* FUSE_URING_REDUCED_Q; default auto */
	uint32_t request_timeout; /* seconds, 0 = off */
	uint32_t poll_us;         /* io_uring busy-poll budget, 0 = off */
	enum fring_placement placement; /* io_uring queue threads; default auto */
	char *cpus;               /* transport.cpus, a CPU list; NULL = all */
	uint64_t given;           /* bit i: row i of the key table was given */
	/* The values that what the kernel offers may refuse (the kernel
	 * check, core/transport/kernel_probe.c), and the section. */
	struct fring_cfg_at at_section, at_mode, at_queue_depth, at_bufpool,
		at_bufpool_size, at_zero_copy;
};
/* The transport keys `t` gave that a mount served over /dev/fuse does not
 * use ("transport.poll_us, transport.cpus"), in table order, into buf;
 * returns how many. */
int fring_cfg_unused_over_devfuse(const struct fring_cfg_transport *t,
				  char *buf, size_t len);

/* stats: live statistics of the mount (fring stats, Prometheus). */
struct fring_cfg_stats {
	int enabled;      /* latency histograms, request ages, the socket */
	char *prometheus; /* "HOST:PORT" to serve /metrics on, or NULL */
	struct fring_cfg_at at_prometheus;
};

enum { FRING_RESTART_OFF, FRING_RESTART_ON_CRASH };

struct fring_cfg_mount {
	char *mountpoint;
	char *plugin;
	unsigned line, column;         /* of the mount entry */
	struct fring_cfg_at at_mountpoint, at_plugin; /* of their values */
	struct fring_cfg_option *options;
	size_t nr_options;
	/* mount_options: what mount(2) gets, and the runtime's own words */
	struct fring_kmount_opts kmount;
	int trust_plugin_permissions; /* allow_other without default_permissions */
	unsigned blksize; /* st_blksize of every attribute reply; 0: plugin's */
	struct fring_cfg_transport transport;
	struct fring_cfg_stats stats;
	uint32_t
		restart; /* FRING_RESTART_*: after the server dies by a signal */
};

struct fring_config {
	char *path;
	struct fring_cfg_mount *mounts;
	size_t nr_mounts;
};

/* Parse and validate. Returns 0 and *out, or -EINVAL (-errno for I/O) and a
 * malloc'ed message in *err ("file:line:col: ..."). Nothing is returned
 * on error. */
int fring_config_load(const char *path, struct fring_config **out, char **err);
/* Same, from a buffer; `name` is used in messages. */
int fring_config_parse(const char *name, const char *text, size_t len,
		       struct fring_config **out, char **err);
void fring_config_free(struct fring_config *cfg);
/* Frees what an entry holds (not the entry). */
void fring_cfg_mount_free(struct fring_cfg_mount *m);

/* Defaults for a transport section. */
void fring_cfg_transport_defaults(struct fring_cfg_transport *t);
void fring_cfg_stats_defaults(struct fring_cfg_stats *s);
/* "HOST:PORT" (IPv4, or [IPv6]; port 1..65535) as a socket address;
 * -EINVAL if it is none (stats.prometheus). */
int fring_cfg_listen_addr(const char *text, struct sockaddr_storage *out,
			  socklen_t *len);

/* The schema's own parsers for callers without a YAML file (the embed
 * API, the CLI): the same words, checks and messages.
 *
 * transport.mode's words: 0 or -EINVAL and *err (malloc'ed, if err). */
int fring_cfg_parse_mode(const char *s, enum fring_transport_mode *out, char **err);
/* One mount option into m. `opt` is "ro" or "fsname=NAME"; with
 * FRING_MOPT_SPEC, `value` may carry the value instead ("fsname", "x"),
 * and a flag takes a boolean ("ro", "false" or "ro=false"). 0, or -EINVAL
 * (-ENOMEM) and *err malloc'ed. */
#define FRING_MOPT_SPEC 1
int fring_cfg_mount_option(struct fring_cfg_mount *m, const char *opt,
			   const char *value, int flags, char **err);
/* 1 if opt ("ro", "max_read=N") names a mount option word, else 0. */
int fring_cfg_mount_option_known(const char *opt);
/* The mount option words as "ro, rw, ..., max_read=N, fsname=NAME" into
 * buf (the "expected one of" list); the length it needs, as snprintf. */
size_t fring_cfg_mount_option_words(char *buf, size_t len);

/* fring.yaml(5)'s key reference in scdoc (name, type, default,
 * transports, meaning), generated from the key table. */
void fring_cfg_keys_scdoc(FILE *out);

/* Helpers also used by the plugin host table and the CLI.
 * "4096", "64KiB", "64K", "1M", "1MiB", "2G" (binary units); -EINVAL on
 * garbage, -ERANGE on overflow. */
int fring_parse_size(const char *s, uint64_t *out);
int fring_parse_bool(const char *s, int *out);

/* Parse a CPU list ("0-3,8,10-11", as in sysfs and transport.cpus) into
 * a malloc'ed array in the list's order. Returns the count, or -EINVAL
 * (not a list, or empty), -ENOMEM. */
int fring_parse_cpulist(const char *s, int **out);

#endif /* FRING_CONFIG_H */
