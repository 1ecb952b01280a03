// SPDX-License-Identifier: MIT
/*
 * Classic /dev/fuse transport: a pool of worker threads, each with its own
 * cloned fd (FUSE_DEV_IOC_CLONE), looping read -> dispatch. Replies are
 * writev()s on the worker's fd from whatever thread answers.
 */
#ifndef FRING_DEVFUSE_H
#define FRING_DEVFUSE_H

#include <stddef.h>

#include "transport.h"

struct fring_devfuse;

struct fring_devfuse_params {
	int session_fd;        /* the mounted connection (not owned) */
	unsigned nr_threads;   /* 0: 2 x online CPUs, at least 2 */
	size_t bufsize;        /* read buffer: max_write + 4096 */
	/* Takeover (fring restart): nr_threads fds to read from instead of
	 * new clones, owned by the transport once it started. */
	const int *fds;
	/* Called once, from the last worker to exit, when every worker has
	 * stopped (unmount or abort). */
	void (*on_all_exited)(void *ud);
	void *ud;
};

/* Default worker count for nr_threads == 0. */
unsigned fring_devfuse_default_threads(void);

/* Start the workers. 0 or -errno + *err (nothing left running). */
int fring_devfuse_start(const struct fring_serve *sv,
			const struct fring_devfuse_params *p,
			struct fring_devfuse **out, char **err);

unsigned fring_devfuse_nr_threads(const struct fring_devfuse *t);

/* Wait up to timeout_ms for the workers to end (they do once reads fail
 * with ENODEV, i.e. after the unmount or an abort). Returns how many are
 * still running. */
unsigned fring_devfuse_join(struct fring_devfuse *t, unsigned timeout_ms);

/* Last resort after a join timed out: cancel workers blocked in read(),
 * abandon (detach, logged "worker N did not stop") those stuck elsewhere.
 * Returns the number abandoned; then t must be leaked, not freed. */
unsigned fring_devfuse_cancel(struct fring_devfuse *t);

/* Takeover: the workers' fds, in worker order (at most cap); how many. */
unsigned fring_devfuse_fds(const struct fring_devfuse *t, int *fds,
			   unsigned cap);

/* Takeover: end the workers without ending the mount (on_all_exited is
 * not called): each stops reading, a busy one after its reply. Waits up
 * to timeout_ms; returns how many still run. A request read but not yet
 * handled stays on its fd's processing list for FUSE_NOTIFY_RESEND. The
 * fds stay open until fring_devfuse_free. */
unsigned fring_devfuse_pause(struct fring_devfuse *t, unsigned timeout_ms);

/* t as the session drives it (transport.h: join, cancel, free). */
struct fring_transport *fring_devfuse_transport(struct fring_devfuse *t);

/* Close the fds and free the buffers. Call only when no request is still
 * waiting for a reply (replies use the worker fds). */
void fring_devfuse_free(struct fring_devfuse *t);

#endif /* FRING_DEVFUSE_H */
