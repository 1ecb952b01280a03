// SPDX-License-Identifier: MIT
/*
 * Which transports serve one connection, so the session never asks.
 * /dev/fuse always serves (FORGET, INTERRUPT and whatever comes before
 * the rings are ready arrive there); io_uring queues serve beside it when
 * transport.mode allows, the ring buffers can be pinned, and INIT and the
 * machine offer it.
 *
 * Order of use, by the session:
 *   1. fring_transports_init: the mount's config, before anything mounts;
 *      fring_transports_precheck refuses (or, for auto, drops io_uring)
 *      where the ring buffers cannot be pinned;
 *   2. fring_transports_offer: once the connection exists, what INIT
 *      tells the plugin (fring_init_params: transport, nr_queues) and the
 *      hook that sets the rings up before the INIT reply
 *      (fring_transports_init_hook, ud = the struct);
 *   3. fring_transports_start: after the INIT reply, the rings' REGISTERs
 *      and the /dev/fuse workers; t[] lists what serves, in the order
 *      the session stops and frees them (transport.h), from the moment
 *      each exists.
 */
#ifndef FRING_TRANSPORT_CHOICE_H
#define FRING_TRANSPORT_CHOICE_H

#include <stdint.h>

#include "../config/config.h"
#include "devfuse.h"
#include "transport.h"
#include "uring.h"

#define FRING_TRANSPORTS_MAX 2

struct fring_transports {
	struct fring_cfg_transport
		cfg; /* the mount's; mode may drop to devfuse */
	const char *mountpoint;
	unsigned nr_workers; /* /dev/fuse workers asked for, 0: default */
	int handover; /* the rings' memory may be handed over (takeover) */
	struct fring_serve sv;
	/* For INIT (fring_transports_offer): FRING_TRANSPORT_* and queues. */
	uint32_t conn_transport, nr_queues;
	struct fring_uring_offer
		uo; /* uo.u: the rings, once INIT set them up */
	struct fring_devfuse *df;
	/* What serves, in the order the session stops them (NULL: not
	 * serving): /dev/fuse, set by fring_transports_start, then the
	 * rings, set by the INIT hook once they are set up. */
	struct fring_transport *t[FRING_TRANSPORTS_MAX];
};

/* cfg is copied (cpus is not: it must outlive ts). */
void fring_transports_init(struct fring_transports *ts,
			   const struct fring_cfg_transport *cfg,
			   const char *mountpoint, unsigned nr_workers,
			   const struct fring_serve *sv);

/* Ring buffers that cannot be pinned are refused before the mount exists
 * (uring, bufpool on) or make auto choose /dev/fuse, with the reason.
 * 0 or -ENOMEM + *err. */
int fring_transports_precheck(struct fring_transports *ts, char **err);

/* The connection is open (fd, fusectl id conn_id or 0): fill
 * conn_transport, nr_queues and the ring parameters for the hook. */
void fring_transports_offer(struct fring_transports *ts, int fd,
			    uint32_t conn_id);

/* INIT's before_reply hook (ud = ts): sets the rings up and adds
 * FUSE_OVER_IO_URING, or falls back, or fails INIT (uring.h). */
int fring_transports_init_hook(void *ud, const struct fring_init_result *res,
			       struct fuse_init_out *out, char **err);

/* After the INIT reply (res: what it settled): start the rings' REGISTERs
 * and the /dev/fuse workers (on_exit as fring_devfuse_params). 0, or
 * -errno + *err; t[] holds whatever exists either way. */
int fring_transports_start(struct fring_transports *ts,
			   const struct fring_init_result *res, int fd,
			   void (*on_exit)(void *ud), void *ud, char **err);

/* A takeover's new server: set up rings on the connection fd (fusectl id
 * conn_id) that an old server served over io_uring, adopting its entry
 * memory shm_fd (taken), as INIT settled in res; they serve once
 * fring_transports_start_adopted runs. 0, or -errno + *err. */
int fring_transports_adopt(struct fring_transports *ts,
			   const struct fring_init_result *res, int fd,
			   uint32_t conn_id, int shm_fd, char **err);
void fring_transports_start_adopted(struct fring_transports *ts);

/* 1 when io_uring queues serve (beside /dev/fuse). */
int fring_transports_rings(const struct fring_transports *ts);
/* "uring" when io_uring queues serve, else "devfuse". */
const char *fring_transports_name(const struct fring_transports *ts);
/* 1 if the rings serve zero-copy (valid from the INIT hook on). */
int fring_transports_zero_copy(const struct fring_transports *ts);
/* The FRING_LOG=debug lines of what serves ("serving with N /dev/fuse
 * workers...", "io_uring: N queues on M threads..."). */
void fring_transports_log(const struct fring_transports *ts,
			  uint32_t max_write);

#endif /* FRING_TRANSPORT_CHOICE_H */
