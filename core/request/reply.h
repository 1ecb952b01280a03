// SPDX-License-Identifier: MIT
/*
 * Replies the runtime makes for a plugin: error sanitizing, misuse, and
 * the synchronous data-path services. Each function here works on a
 * request whose single reply is claimed (request.h) and finishes it; the
 * reply itself goes out through fring_req_send (request.h).
 */
#ifndef FRING_REPLY_H
#define FRING_REPLY_H

#include <stdint.h>
#include <sys/uio.h>

#include <fring/plugin.h>

#include "request.h"

/* Claim (through handle h) + send an error (sanitized). Returns -EALREADY
 * if already answered, else the send result. */
int fring_req_reply_error(fring_req *h, int32_t neg_errno);

/* A plugin bug: wrong reply kind or bad value. Claims (through handle h),
 * logs (rate limited), sends EIO. Returns -EINVAL, or -EALREADY if already
 * answered. */
int fring_req_reply_misuse(fring_req *h, const char *what);

/* req_read_fd / req_write_fd without a transport hook, on a claimed
 * request: pread up to len bytes of fd at off and reply them (short at EOF,
 * the errno if nothing was read); pwrite the WRITE's data and reply the
 * count (partial if an error came after some bytes). */
void fring_req_read_fd_sync(struct fring_request *r, int fd, uint64_t off,
			    uint32_t len);
void fring_req_write_fd_sync(struct fring_request *r, int fd, uint64_t off);

#endif /* FRING_REPLY_H */
