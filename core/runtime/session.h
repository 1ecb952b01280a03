// SPDX-License-Identifier: MIT
/*
 * A session is one mount: the /dev/fuse connection, the negotiated INIT
 * parameters, the plugin instance and the threads serving it.
 *
 * Lifecycle: fring_session_new (plugin create + config + config_complete;
 * nothing mounted) -> fring_session_mount (mount(2) or fusermount3, start
 * the transport, wait until INIT is answered) -> serve -> fring_session_stop
 * (unmount, join threads, plugin destroy) -> fring_session_free.
 */
#ifndef FRING_SESSION_H
#define FRING_SESSION_H

#include <stddef.h>

#include "../config/config.h"
#include "../loader/loader.h"

struct fring_session;

struct fring_session_params {
	const char *mountpoint;
	struct fring_loaded_plugin *plugin;
	const struct fring_cfg_option *options; /* plugin options, in order */
	size_t nr_options;
	const char *config_file; /* for "file:line:col" in option errors; may be NULL */
	/* mount(2)'s options; fsname/subtype may be NULL (the plugin's
	 * name), the session keeps copies */
	struct fring_kmount_opts kmount;
	/* allow_other without default_permissions although the plugin does
	 * not declare FRING_FEATURE_CHECKS_PERMISSIONS (features.h) */
	int trust_plugin_permissions;
	unsigned
		blksize; /* st_blksize of every attribute reply, 0: the plugin's */
	struct fring_cfg_transport transport;
	struct fring_cfg_stats stats;
	unsigned nr_threads; /* /dev/fuse worker threads, 0 = default */
	uint32_t restart;    /* FRING_RESTART_* (config.h) */
};

/* Create the plugin instance and hand it its options. 0 or -errno + *err. */
int fring_session_new(const struct fring_session_params *p,
		      struct fring_session **out, char **err);

/* Mount and start serving; returns once the kernel's INIT is answered (or
 * failed). 0 or -errno + *err; on error nothing stays mounted. */
int fring_session_mount(struct fring_session *s, char **err);

/* "devfuse" or "uring": the transport actually serving. */
const char *fring_session_transport(const struct fring_session *s);
const char *fring_session_mountpoint(const struct fring_session *s);

/* An fd that becomes readable when the session ended on its own (unmounted
 * from outside, connection aborted). */
int fring_session_done_fd(const struct fring_session *s);

/* 1 if the mount on the mountpoint is still this session's connection
 * (after the session ended on its own: it was aborted, not unmounted). */
int fring_session_still_mounted(const struct fring_session *s);

/* Unmount (if still mounted), stop and join every thread, call the
 * plugin's destroy. Bounded: gives up waiting after a few seconds and logs.
 * Idempotent. */
void fring_session_stop(struct fring_session *s);
void fring_session_free(struct fring_session *s);

#endif /* FRING_SESSION_H */
