// SPDX-License-Identifier: MIT
/*
 * Takeover (`fring restart`, issue 25) at the session: the old server's
 * side (what it hands over, stop reading, save, or resume) and the new
 * server's (adopt a live connection: no mount(2), no INIT). The sequence
 * between the processes is core/cli/takeover.h; the kernel's rules are
 * core/transport/README.md, "Takeover".
 */
#ifndef FRING_SESSION_ADOPT_H
#define FRING_SESSION_ADOPT_H

#include <stdint.h>

#include "../proto/init_facts.h"
#include "session.h"

#define FRING_ADOPT_MAX_FDS 64

/* What the supervisor holds of a serving connection. */
struct fring_adopt {
	struct fring_init_result init; /* as the kernel negotiated it */
	unsigned conn_id;
	int auto_unmount; /* mount option: unmount once the server is gone */
	unsigned nfds;
	int fds[FRING_ADOPT_MAX_FDS]; /* [0] the session fd, then every worker's clone */
	int shm_fd; /* served over io_uring: the entry memory's memfd, else -1
		     * (not counted in nfds) */
	int live_fd; /* export: the plugin's state_live memfd (restart:
		      * on_crash), else -1 (not counted in nfds) */
	int crash;   /* adopt: the state is a crashed server's live memfd */
	uint32_t restart; /* export: the mount's FRING_RESTART_* */
};

/* --- the old server --- */

/* What the supervisor must hold (fds are the session's, not dups). 0, or
 * -EOPNOTSUPP when io_uring serves (*a still filled). */
int fring_session_export(const struct fring_session *s, struct fring_adopt *a);
/* NULL if s can be handed over, else why not (malloc'ed; a plugin
 * without the hooks is named with them). */
char *fring_session_no_takeover(const struct fring_session *s);
/* Stop reading (the workers end, the mount stays; over io_uring what
 * arrives stays in its entry) and wait for the plugin's outstanding
 * replies. 0, or -errno + *err (then resume). */
int fring_session_pause(struct fring_session *s, char **err);
/* The plugin's state_save into fd (a memfd). 0 or -errno + *err. */
int fring_session_save(struct fring_session *s, int fd, uint32_t *version,
		       char **err);
/* Before the old server exits: over io_uring, wait (timeout_ms) until
 * every entry holds a request, so that its exit cancels none. 0, or
 * -ETIMEDOUT + *err (then resume). */
int fring_session_exit_ready(struct fring_session *s, unsigned timeout_ms,
			     char **err);
/* After a refused takeover: serve again on the same fds, and have what
 * the stopped workers had read sent again (FUSE_NOTIFY_RESEND). */
int fring_session_resume(struct fring_session *s, char **err);

/* --- the new server --- */

/* Before fring_session_mount: take a over (its fds are the session's from
 * now on, whatever the result), run the plugin's init with the kernel's
 * offer (the reply is not sent: the kernel's negotiated state stays and
 * is logged), then state_load from state_fd, or with a->crash the
 * plugin's recovery from the live memfd state_fd (session_live.c). 0 or
 * -errno + *err. */
int fring_session_adopt(struct fring_session *s, const struct fring_adopt *a,
			int state_fd, uint32_t version, char **err);
/* 1 when fring_session_adopt took a connection for s. */
int fring_session_adopted(const struct fring_session *s);

#endif /* FRING_SESSION_ADOPT_H */
