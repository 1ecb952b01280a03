/*
 * YAML configuration (libyaml). Schema: DESIGN.md "Configuration".
 *
 *   mounts:
 *     - mountpoint: /mnt/data         (required, string)
 *       plugin: passthrough           (required, name or path)
 *       options: { source: /srv }     (optional map, flattened for the plugin)
 *       mount_options: [default_permissions, allow_other, ro,
 *                       trust_plugin_permissions,
 *                       fsname=NAME, subtype=NAME]   (optional list)
 *       transport:                    (optional map)
 *         mode: auto|uring|devfuse
 *         queues: auto|1..1024
 *         placement: auto|local       (queue threads; place.h)
 *         cpus: 0-3,8                 (CPUs queue threads may use)
 *         queue_depth: 1..4096        (default 8)
 *         bufpool: auto|on|off or { mode: auto|on|off, size: 8MiB,
 *                  registered: true }  (Linux 7.3 buffer pools)
 *         zero_copy: auto|on|off
 *         reduced_queues: auto|on|off (trust INIT bit 44, seed 003;
 *                      auto: only with a protocol minor known to carry it)
 *         request_timeout: 0..65535 (seconds the kernel waits for any
 *                      reply before it aborts the connection; 0 = never;
 *                      default 300; used where INIT offers it, 7.43+)
 *
 * Every error names "FILE:LINE:COLUMN: what was expected" (1-based).
 * YAML aliases (*x) and multi-document files are rejected: flattening an
 * alias graph could blow up (the "billion laughs" case).
 */
#ifndef FRING_CONFIG_H
#define FRING_CONFIG_H

#include <stddef.h>
#include <stdint.h>

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
	unsigned uring_keys;      /* bit i: fring_cfg_uring_keys[i] was given */
	/* The values that what the kernel offers may refuse (the kernel
	 * check, core/transport/kernel_probe.c), and the section. */
	struct fring_cfg_at at_section, at_mode, at_queue_depth, at_bufpool,
		at_bufpool_size, at_zero_copy;
};
/* The transport keys that only io_uring queues use (queue_depth, bufpool,
 * zero_copy, poll_us, placement, cpus, reduced_queues), NULL-terminated: given for a mount
 * served over /dev/fuse, they are unused, and fring says so at start. */
extern const char *const fring_cfg_uring_keys[];
#define FRING_DEFAULT_REQUEST_TIMEOUT 300
#define FRING_DEFAULT_POLL_US 1000

struct fring_cfg_mount {
	char *mountpoint;
	char *plugin;
	unsigned line, column;         /* of the mount entry */
	unsigned mountpoint_line, mountpoint_column; /* of its value */
	unsigned plugin_line, plugin_column;
	struct fring_cfg_option *options;
	size_t nr_options;
	/* mount_options */
	int default_permissions, allow_other, ro;
	int trust_plugin_permissions; /* allow_other without default_permissions */
	char *fsname, *subtype;        /* NULL if unset */
	struct fring_cfg_transport transport;
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

/* Defaults for a transport section. */
void fring_cfg_transport_defaults(struct fring_cfg_transport *t);

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
