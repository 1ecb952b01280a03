// SPDX-License-Identifier: MIT
/*
 * Decode a request and hand it to the plugin (or answer it with the host
 * default when the plugin leaves the op NULL). Transport independent: the
 * /dev/fuse workers and the io_uring queues both call fring_dispatch().
 * The state it works on, struct fring_dispatch, is dispatch_state.h.
 */
#ifndef FRING_DISPATCH_H
#define FRING_DISPATCH_H

#include <stddef.h>

#include "../proto/proto.h"
#include "../request/request.h"
#include "dispatch_state.h"

/* Handle one request already read into transport memory: `in` is the
 * header, arg/arglen and payload/paylen as for fring_decode. The request
 * must have been fring_req_init'ed; it is always finished (replied or
 * dropped) or handed to the plugin when this returns. */
void fring_dispatch(struct fring_dispatch *dx, struct fring_request *r,
		    const struct fuse_in_header *in, const void *arg,
		    size_t arglen, const void *payload, size_t paylen);

/* fring_dispatch for the request's own dispatch state (fring_req_dx): the
 * session's struct fring_serve.arrived, which the transports call. */
void fring_dispatch_arrived(struct fring_request *r,
			    const struct fuse_in_header *in, const void *arg,
			    size_t arglen, const void *payload, size_t paylen);

/* One contiguous request of `len` bytes, as /dev/fuse reads it (for tests
 * and fuzzers; the transport splits it itself). */
void fring_dispatch_buf(struct fring_dispatch *dx, struct fring_request *r,
			const void *buf, size_t len);

#endif /* FRING_DISPATCH_H */
