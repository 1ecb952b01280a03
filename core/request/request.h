// SPDX-License-Identifier: MIT
/*
 * One in-flight FUSE request (struct fring_request, req.h; plugins hold a
 * handle to it, the ABI's fring_req *): its lifetime, the exactly-once
 * reply state and the plugin-facing handles.
 * The object itself is req.h; the in-flight table INTERRUPT looks requests
 * up in is inflight.h; the reply helpers (errors, misuse, the synchronous
 * data-path services) are reply.h.
 *
 * A transport embeds a struct fring_request in its own per-request object,
 * fills ops/tdata/fd with fring_req_init, and hands it to whoever the
 * session named to receive requests (dispatch). The request (and the buffer its
 * decoded args point into) stays alive until ops->release() is called, which happens
 * exactly once: right after the reply, or at once for requests that get no reply (FORGET, INTERRUPT, ...).
 */
#ifndef FRING_REQUEST_H
#define FRING_REQUEST_H

#include <stdint.h>
#include <sys/uio.h>

#include "expiry.h"
#include "inflight.h"
#include "latency.h"
#include "req.h"
#include "stats.h"

/* The request layer's share of one mount: what request lifetime, replies
 * and the interrupt deadline need, and nothing of the plugin. Dispatch
 * embeds it (struct fring_dispatch.rq); every request points to it. */
struct fring_reqs {
	const char *name; /* log prefix: the mountpoint */
	struct fring_stats stats[FRING_STAT_SHARDS];
	/* Latency per shard (as stats), NULL with statistics off: then no
	 * clock is read per request. */
	struct fring_lat *lat;
	struct fring_inflight inflight;
	struct fring_expiry expiry; /* interrupt deadlines */
};

void fring_reqs_init(struct fring_reqs *rq, const char *name);
/* Statistics on: latency histograms and request ages. -ENOMEM. */
int fring_reqs_enable_latency(struct fring_reqs *rq);
void fring_reqs_destroy(struct fring_reqs *rq);

/* Drop the reference the calling thread's fring_req_claim took on r, if
 * any (the thread's last claim was r and it was not r's owner). Returns 1
 * if a reference was dropped. */
int fring_req_xref_put(struct fring_request *r);

/* Claim on the owner thread without an atomic read-modify-write: a plain
 * store, one full fence and a load (request_claim.c, "The owner's fast path",
 * has the argument). Only for a transport that calls it on r's owner
 * thread, whose other claimants all go through fring_req_claim (so hold
 * a reference; the runtime's interrupt expiry never claims a request with
 * an owner, those have fd < 0), and that waits for xrefs to drop to 0
 * before it commits or recycles r (owner_commit_check in uring_serve.c).
 * Falls back to fring_req_claim otherwise. Same results as
 * fring_req_claim. */
int fring_req_claim_owner(fring_req *h);

void fring_req_init(struct fring_request *r, struct fring_reqs *rq,
		    const struct fring_req_ops *ops, void *tdata, int fd,
		    uint32_t queue);

/* The first step of fring_req_init, for a transport that rewrites its own
 * memory of r (an entry's payload pointer, its zero-copy flag) before it:
 * mark r RECYCLING and wait until no late caller holds a reference
 * (fring_req_enter). Callers that come later see RECYCLING and leave. */
void fring_req_quiesce(struct fring_request *r);

/* The rest of r's identity (see struct fring_request), after fring_req_init:
 * its owning thread. Stored only where it differs. */
void fring_req_set_owner(struct fring_request *r, const void *owner);

/* Enter the request in the in-flight table and the outstanding count; done
 * by dispatch before the plugin sees it. */
void fring_req_track(struct fring_request *r);

/* The handle to give the plugin for r (tagged with r's generation). */
fring_req *fring_req_handle(struct fring_request *r);

/* The request behind handle h (tagged or not), or NULL if h is stale: its
 * request was answered and the memory now holds another one (logged).
 * Without a reference: for the owner thread, or where the request cannot
 * be recycled meanwhile. */
struct fring_request *fring_req_get(fring_req *h);

/* A host call's way in through a plugin's handle h: as fring_req_get, but
 * a caller other than r's owner thread (every caller, for a request
 * without owner: /dev/fuse) first takes a reference (xrefs, *ref = 1), so
 * every field it reads stays as it was until fring_req_leave: the
 * transport does not recycle r (fring_req_init waits) while it is held.
 * NULL if h is stale or its request is being recycled (then no reference
 * is held). */
struct fring_request *fring_req_enter(fring_req *h, int *ref);
void fring_req_leave(struct fring_request *r, int ref);

/* 1 if h's request still waits for its reply (its generation, PENDING),
 * 0 once answered or recycled. Not logged: for deciding after the fact
 * whether a refusal read fields another thread's reply was changing. */
int fring_req_pending(fring_req *h);

/* Claim the single reply through handle h (tagged, or a plain pointer from
 * the runtime itself). 0, or -EALREADY (logged) if already answered or h is
 * stale. A late reply to a request the runtime answered at its interrupt
 * deadline also gets -EALREADY, and finishes the request. */
int fring_req_claim(fring_req *h);

/* The interrupt deadline of request `unique` passed (expiry.h): if it is
 * still unanswered, answer EINTR for the plugin (where fd >= 0) and log. */
void fring_req_expire(struct fring_reqs *rq, uint64_t unique,
		      unsigned waited_ms);

/* Send a claimed request's reply: error (0 or -errno, already sane) and
 * body parts (ignored when error != 0), then finish it. Returns the
 * transport's result. */
int fring_req_send(struct fring_request *r, int32_t error,
		   const struct iovec *body, int nbody);

/* Hand the reply to the transport, without finishing r. For the interrupt
 * deadline (fring_req_expire), which answers for the plugin and keeps r. */
int fring_req_send_raw(struct fring_request *r, int32_t error,
		       const struct iovec *body, int nbody);

/* After the reply or drop: leave the table, free the dir buffer, give the
 * memory back to the transport. Nothing may touch r afterwards. For the
 * reply path (reply.c); everyone else finishes through fring_req_send,
 * fring_req_drop or fring_req_abandon. */
void fring_req_finish(struct fring_request *r);

/* Finish a request that gets no reply (FORGET, INTERRUPT, NOTIFY_REPLY). */
void fring_req_drop(struct fring_request *r);

/* Release a request popped from the in-flight table without replying
 * (teardown of requests the plugin never answered). */
void fring_req_abandon(struct fring_request *r);

#endif /* FRING_REQUEST_H */
