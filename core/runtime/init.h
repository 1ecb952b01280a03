// SPDX-License-Identifier: MIT
/*
 * FUSE_INIT negotiation (fs/fuse/inode.c fuse_send_init and
 * process_init_reply are the kernel's side): read the kernel's INIT from
 * the session fd before any worker runs, agree on version and flags with
 * the kernel and the plugin, answer it, and record what the decoder and the
 * transports need.
 */
#ifndef FRING_INIT_H
#define FRING_INIT_H

#include <stddef.h>
#include <stdint.h>

#include "../proto/init_facts.h"
#include "../proto/proto.h"
#include "dispatch.h"

/* What the transport tells the plugin (fring_conn.transport/nr_queues),
 * and an optional hook run between building the reply and writing it: the
 * io_uring transport sets its rings up there and adds FUSE_OVER_IO_URING to
 * out->flags2 (everything must be ready before the reply: the kernel
 * accepts ring commands only after it, and on 6.18 a connection that
 * offered io_uring waits for every qid; core/transport/README.md, "Linux
 * 6.18 (FUSE 7.45): the baseline"). A negative
 * return fails INIT with that error and *err. */
struct fring_init_params {
	uint32_t transport;
	uint32_t nr_queues;
	/* Seconds for FUSE_REQUEST_TIMEOUT (7.43) when the kernel offers it;
	 * 0 = none. The kernel aborts the connection when any request stays
	 * unanswered that long: the safety net for a hung server. */
	uint32_t request_timeout;
	fring_init_hook_fn before_reply;
	void *ud;
};

/* Pure part: build the INIT reply for the kernel's `in` (arglen bytes of
 * fuse_init_in), calling the plugin's init. Returns:
 *   0        *out (*outlen bytes) is the reply body, *res and dx->conn are set;
 *   1        kernel major > 7: *out is a "major 7" reply, expect INIT again;
 *   -errno   reply that error; *err says why. */
int fring_init_build(struct fring_dispatch *dx, const void *in, size_t arglen,
		     const struct fring_init_params *p, struct fuse_init_out *out,
		     size_t *outlen, struct fring_init_result *res, char **err);

/* Read INIT from fd, answer it (looping for a major > 7 kernel). Returns 0,
 * or -errno with a one-line *err; on error the kernel has been answered
 * with an error where possible, which fails the mount. */
int fring_init_handshake(int fd, struct fring_dispatch *dx,
			 const struct fring_init_params *p,
			 struct fring_init_result *res, char **err);

#endif /* FRING_INIT_H */
