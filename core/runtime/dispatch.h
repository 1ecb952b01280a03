/*
 * Decode a request and hand it to the plugin (or answer it with the host
 * default when the plugin leaves the op NULL). Transport independent: the
 * /dev/fuse workers and the io_uring queues both call fring_dispatch().
 *
 * struct fring_dispatch is the per-mount state the request layer needs:
 * the plugin, its instance, the negotiated protocol facts, statistics and
 * the in-flight table. A session owns one; the unit tests build one alone.
 */
#ifndef FRING_DISPATCH_H
#define FRING_DISPATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <fring/plugin.h>

#include "../proto/proto.h"
#include "expiry.h"
#include "request.h"

/* The host side of a mount as plugins see it (opaque fring_mount). */
struct fring_mount {
	char *name; /* log prefix: the mountpoint */
	char *path; /* the mountpoint, absolute (mount_point), or NULL */
	/* Called by the host table's mount_request_shutdown; may be NULL. */
	void (*request_shutdown)(struct fring_mount *m);
	void *owner;
	/* Kernel passthrough: the connection's /dev/fuse fd for the backing
	 * ioctls, valid only while `passthrough` (set when INIT accepted
	 * FUSE_PASSTHROUGH) is non-zero. */
	int fuse_fd;
	_Atomic int passthrough;
	/* The rings serve zero-copy (set before the INIT reply): only then
	 * does an open reply keep FOPEN_IO_URING_ZERO_COPY (host.c). */
	_Atomic int zero_copy;
};

/* Per-mount counters: relaxed atomics, statistics but for `outstanding`
 * (tracked requests not yet finished, which stop waits for). Kept per
 * shard of queues (fring_req.queue), each shard on its own cache lines, so
 * queue threads on different CPUs never write one line per request;
 * fring_dispatch_stats sums them. */
#define FRING_STAT_SHARDS 16
struct fring_stats {
	atomic_ulong requests[FUSE_OPCODE_MAX + 1]; /* [FUSE_OPCODE_MAX]: unknown */
	atomic_ulong replies;
	atomic_ulong errors;    /* replies with error != 0 */
	atomic_ulong malformed; /* requests that failed to decode */
	atomic_ulong interrupts;
	atomic_ulong misuse;    /* plugin replies of the wrong kind/value */
	atomic_ulong send_failures;
	atomic_long outstanding;
} __attribute__((aligned(64)));

struct fring_dispatch {
	const struct fring_plugin *desc;
	const struct fring_fs_ops *ops;
	void *inst;
	struct fring_mount mount;
	struct fring_proto_conn conn; /* valid once INIT is answered */
	int serialize;                /* FRING_THREAD_SERIALIZE */
	pthread_mutex_t serial;
	struct fring_stats stats[FRING_STAT_SHARDS];
	struct fring_inflight inflight;
	struct fring_expiry expiry; /* interrupt deadlines */
};

/* The counters a request of queue `queue` counts in. */
static inline struct fring_stats *fring_stats_of(struct fring_dispatch *dx,
						 uint32_t queue)
{
	return &dx->stats[queue % FRING_STAT_SHARDS];
}

#define FRING_STAT_INC(dx, queue, field)                                    \
	atomic_fetch_add_explicit(&fring_stats_of(dx, queue)->field, 1,     \
				  memory_order_relaxed)

/* The shards summed into *out (a snapshot, not atomic as a whole). */
void fring_dispatch_stats(const struct fring_dispatch *dx,
			  struct fring_stats *out);
/* Tracked requests not yet finished, over every shard. */
long fring_dispatch_outstanding(const struct fring_dispatch *dx);

/* desc/ops are the loader's host copies; name is copied. */
int fring_dispatch_init(struct fring_dispatch *dx,
			const struct fring_plugin *desc,
			const struct fring_fs_ops *ops, const char *name);
void fring_dispatch_destroy(struct fring_dispatch *dx);
/* No more interrupt deadlines: call once the transport stopped, before
 * the plugin's destroy and the abandoning of unanswered requests. */
void fring_dispatch_quiesce(struct fring_dispatch *dx);

/* Handle one request already read into transport memory: `in` is the
 * header, arg/arglen and payload/paylen as for fring_decode. The request
 * must have been fring_req_init'ed; it is always finished (replied or
 * dropped) or handed to the plugin when this returns. */
void fring_dispatch(struct fring_dispatch *dx, struct fring_req *r,
		    const struct fuse_in_header *in, const void *arg,
		    size_t arglen, const void *payload, size_t paylen);

/* Convenience for /dev/fuse: one contiguous request of `len` bytes. */
void fring_dispatch_buf(struct fring_dispatch *dx, struct fring_req *r,
			const void *buf, size_t len);

#endif /* FRING_DISPATCH_H */
