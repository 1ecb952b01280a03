// SPDX-License-Identifier: MIT
/*
 * The reply deadline of interrupted requests. A caller whose request
 * reached the server waits for the answer even against SIGKILL (fs/fuse/
 * dev.c request_wait_answer: a sent request is no longer removed); when the plugin ignores an INTERRUPT, the runtime answers EINTR
 * for it once FRING_INTERRUPT_DEADLINE_MS have passed, keeps the request's
 * memory for the plugin, and drops the plugin's late reply. Only where a
 * reply does not hand the request's memory back to the kernel (/dev/fuse:
 * a write on the worker's fd); a ring entry can only be answered by
 * committing it, so io_uring requests are left to the plugin (logged).
 */
#ifndef FRING_EXPIRY_H
#define FRING_EXPIRY_H

#include <pthread.h>
#include <stdint.h>

#define FRING_INTERRUPT_DEADLINE_MS 1000
#define FRING_EXPIRY_SLOTS 64

/* Called on the timer thread when `unique`'s deadline passed. */
typedef void (*fring_expiry_fn)(void *ud, uint64_t unique, unsigned waited_ms);

struct fring_expiry {
	const char *name; /* log prefix */
	fring_expiry_fn due;
	void *ud;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	pthread_t thread;
	int started, stopping;
	unsigned n;
	struct {
		uint64_t unique;
		int64_t due_ms;
	} q[FRING_EXPIRY_SLOTS];
};

void fring_expiry_init(struct fring_expiry *e, const char *name,
		       fring_expiry_fn due, void *ud);
/* INTERRUPT for `unique` arrived: answer it at the deadline unless the
 * plugin does first. Starts the timer thread on first use. */
void fring_expiry_arm(struct fring_expiry *e, uint64_t unique);
/* Join the timer thread (before the plugin's destroy). Idempotent. */
void fring_expiry_stop(struct fring_expiry *e);
void fring_expiry_destroy(struct fring_expiry *e);

#endif /* FRING_EXPIRY_H */
