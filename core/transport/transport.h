// SPDX-License-Identifier: MIT
/*
 * What every transport shares with the layer above it, so neither names
 * the other's internals. Downward, the session hands a transport a
 * struct fring_serve: where each request it reads goes (the session's
 * dispatch) and the request layer's state every request points to.
 * Upward, a started transport is a struct fring_transport, whose
 * operations the session calls without knowing which transport it is
 * (devfuse.h, uring.h: each embeds one as its first member).
 */
#ifndef FRING_TRANSPORT_H
#define FRING_TRANSPORT_H

#include <stddef.h>

#include "../proto/proto.h"
#include "../request/request.h"

/* Where a transport's requests go. arrived() takes a request that was
 * fring_req_init'ed with rq: `in` is its header, arg/arglen and
 * payload/paylen as for fring_decode (payload NULL: a contiguous /dev/fuse
 * request); the request is finished (replied or dropped) or handed to the
 * plugin when it returns. */
struct fring_serve {
	struct fring_reqs *rq;
	void (*arrived)(struct fring_request *r,
			const struct fuse_in_header *in, const void *arg,
			size_t arglen, const void *payload, size_t paylen);
};

struct fring_transport;

/* A started transport, as the session's stop path drives it. */
/* One queue's transport counters (fring stats, and the log at stop reads
 * the same ones). */
struct fring_tq_stats {
	uint32_t qid;
	uint64_t requests;
	uint64_t pool_bufs, pool_in_use;
	uint64_t pool_waits; /* the pool's last buffer taken: payloads wait */
	uint64_t zc_reads, zc_writes;
	uint64_t zc_fallbacks; /* copied by the kernel, or refused */
	uint64_t polls, poll_ns;
};

struct fring_transport_ops {
	const char *name; /* "devfuse", "uring" */
	/* After the unmount (or an abort): wait up to timeout_ms for the
	 * transport's threads to end; how many still run. */
	unsigned (*join)(struct fring_transport *t, unsigned timeout_ms);
	/* Last resort after join timed out: the number of threads abandoned
	 * (then t is leaked, never freed). */
	unsigned (*cancel)(struct fring_transport *t);
	/* One FRING_LOG=debug summary of the transport's counters. */
	void (*log_stats)(struct fring_transport *t, const char *name);
	/* Optional: the counters of its queues, for statistics (any thread,
	 * while it serves): up to max into q, the number of queues returned;
	 * *placement_changes the times its threads moved. */
	unsigned (*stats)(struct fring_transport *t, struct fring_tq_stats *q,
			  unsigned max, uint64_t *placement_changes);
	/* Free everything; only once no request it served is outstanding. */
	void (*free)(struct fring_transport *t);
};

struct fring_transport {
	const struct fring_transport_ops *ops;
};

#endif /* FRING_TRANSPORT_H */
