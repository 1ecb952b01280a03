// SPDX-License-Identifier: MIT
/*
 * struct fring_dispatch: the per-mount state the plugin side needs (the
 * plugin, its instance, the host side of the mount it sees, the
 * negotiated protocol facts) around the request layer's own (rq:
 * statistics, in-flight table, interrupt deadlines). A session owns one;
 * the unit tests build one alone. Routing a request to the plugin is
 * dispatch.h; the services plugins call back are host.c.
 */
#ifndef FRING_DISPATCH_STATE_H
#define FRING_DISPATCH_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <fring/plugin.h>

#include "../proto/proto.h"
#include "../request/request.h"

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
	 * does an open reply keep FOPEN_IO_URING_ZERO_COPY (host_reply.c). */
	_Atomic int zero_copy;
	/* mount option blksize: the st_blksize of every attribute reply
	 * (fuse_fillattr takes a non-zero one), 0: the plugin's */
	uint32_t blksize;
};

struct fring_dispatch {
	const struct fring_plugin *desc;
	const struct fring_fs_ops *ops;
	void *inst;
	struct fring_mount mount;
	struct fring_proto_conn conn; /* valid once INIT is answered */
	int serialize;		      /* FRING_THREAD_SERIALIZE */
	pthread_mutex_t serial;
	struct fring_reqs
		rq; /* statistics, in-flight table, interrupt deadlines */
};

/* The dispatch state r belongs to (every request dispatch sees points to
 * its struct fring_dispatch's rq). */
static inline struct fring_dispatch *fring_req_dx(const struct fring_request *r)
{
	return (struct fring_dispatch *)((char *)r->rq -
					 offsetof(struct fring_dispatch, rq));
}

/* The shards summed into *out (a snapshot, not atomic as a whole). */
static inline void fring_dispatch_stats(const struct fring_dispatch *dx,
					struct fring_stats *out)
{
	fring_stats_sum(dx->rq.stats, out);
}

/* Tracked requests not yet finished, over every shard. */
static inline long fring_dispatch_outstanding(const struct fring_dispatch *dx)
{
	return fring_stats_outstanding(dx->rq.stats);
}

/* desc/ops are the loader's host copies; name is copied. */
int fring_dispatch_init(struct fring_dispatch *dx,
			const struct fring_plugin *desc,
			const struct fring_fs_ops *ops, const char *name);
void fring_dispatch_destroy(struct fring_dispatch *dx);
/* No more interrupt deadlines: call once the transport stopped, before
 * the plugin's destroy and the abandoning of unanswered requests. */
void fring_dispatch_quiesce(struct fring_dispatch *dx);

#endif /* FRING_DISPATCH_STATE_H */
