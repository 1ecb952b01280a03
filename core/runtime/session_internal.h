// SPDX-License-Identifier: MIT
/*
 * One session's state, shared by its files: session.c (create, mount,
 * free), session_stop.c (the bounded stop), session_stats.c (the counters
 * at the end), session_notes.c (what the config gave that the chosen
 * transport does not use).
 */
#ifndef FRING_SESSION_INTERNAL_H
#define FRING_SESSION_INTERNAL_H

#include <pthread.h>

#include "../mount/mount.h"
#include "../proto/init_facts.h"
#include "../transport/choice.h"
#include "dispatch.h"

struct fring_adopt; /* session_adopt.h */

struct fring_session {
	char *mountpoint, *config_file;
	struct fring_kmount_opts kmount; /* fsname, subtype: our copies */
	int trust_plugin_permissions;
	unsigned nr_threads;
	struct fring_cfg_transport transport;
	struct fring_cfg_stats stats;         /* prometheus: our copy */
	struct fring_stats_server *stats_srv; /* while mounted */
	struct fring_loaded_plugin *plugin;

	struct fring_dispatch dx;
	int created;   /* plugin create() succeeded */
	int destroyed; /* plugin destroy() ran */

	struct fring_kmount *km;
	struct fring_transports ts; /* what serves (transport/choice.h) */
	struct fring_init_result init;
	unsigned conn_id; /* fusectl directory (fring_fusectl_id), 0 unknown */
	int done_fd;

	pthread_mutex_t lock;
	int mounted, stopped;
	unsigned stuck; /* threads abandoned at stop: leak, never free */
	struct fring_adopt
		*adopt; /* a taken-over connection (session_adopt.c) */
	uint32_t restart; /* FRING_RESTART_* */
	int live_fd;      /* the plugin's state_live memfd, -1: none */
};

/* fring_session_mount's work for an adopted session (session_adopt.c):
 * FUSE_NOTIFY_RESEND, then the workers on the adopted fds. */
int fring_session_adopt_mount(struct fring_session *s, char **err);

/* A takeover's new server over io_uring: start the fillers, per qid as
 * many blocking LOOKUPs from its CPU as the qid has entries, so that the
 * old server's entries all fill and it may exit (session_fill.c). 0, or
 * -errno + *err. */
int fring_session_fill(struct fring_session *s, char **err);

/* The plugin's name, else its path. */
const char *fring_session_plugin_name(const struct fring_session *s);

/* restart: on_crash (session_live.c), once the transport is known and
 * before any request but INIT: over /dev/fuse start the plugin's live
 * state; over io_uring (rings) warn that a crash aborts, and start none. */
void fring_session_live_begin(struct fring_session *s, int rings);
/* Give the plugin's state_live its
 * memfd, fd (taken; -1: a new one) with flags. 0, or -errno + *err
 * when a recovery failed; a plugin without the hook, or a fresh start
 * that fails, is logged and leaves live_fd -1 (a crash aborts). */
int fring_session_live_start(struct fring_session *s, int fd, uint32_t flags,
			     char **err);

/* The /dev/fuse workers' on_all_exited: the session ended on its own. */
void fring_session_workers_exited(void *ud);

/* The plugin's destroy, once and only after a successful create. */
void fring_session_plugin_destroy(struct fring_session *s);

/* Wait for every transport's threads after the unmount (timeout_ms
 * each); how many still run. Then, if any, fring_session_cancel. */
unsigned fring_session_join(struct fring_session *s, unsigned timeout_ms);
void fring_session_cancel(struct fring_session *s);
/* Undo a half-done mount: unmount, join, free (session_stop.c). */
void fring_session_rollback(struct fring_session *s);

/* Free every transport and close the connection (no backing ioctls
 * after this: the fd may be reused). */
void fring_session_close(struct fring_session *s);

/* The counters, the dispatch's and each transport's (session_stats.c). */
void fring_session_log_stats(const struct fring_session *s);

/* Served over /dev/fuse only: log the io_uring-only keys the config gave
 * (session_notes.c). */
void fring_session_note_unused_keys(const struct fring_session *s);

#endif /* FRING_SESSION_INTERNAL_H */
