/*
 * One in-flight FUSE request (the object behind the ABI's opaque fring_req):
 * its lifetime, the exactly-once reply state and the plugin-facing handles.
 * The in-flight table INTERRUPT looks requests up in is inflight.h; the
 * reply path (out-header + body iovecs handed to the transport's send
 * function) is reply.h. Both are included here for the request's users.
 *
 * A transport embeds a struct fring_req in its own per-request object, fills
 * send/release/tdata/fd with fring_req_init, and hands it to dispatch. The
 * request (and the buffer its decoded args point into) stays alive until
 * release() is called, which happens exactly once: right after the reply,
 * or at once for requests that get no reply (FORGET, INTERRUPT, ...).
 */
#ifndef FRING_REQUEST_H
#define FRING_REQUEST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <fring/plugin.h>

#include "../proto/proto.h"
#include "inflight.h"
#include "reply.h"

struct fring_dispatch;

/* Transport hook: deliver one reply (iov[0] is the fuse_out_header). Returns
 * 0 or -errno (-ENOENT: the kernel no longer waits for this request). */
typedef int (*fring_send_fn)(struct fring_req *r, const struct iovec *iov,
			     int iovcnt);
/* Transport hook: the request is finished; its memory may be reused. */
typedef void (*fring_release_fn)(struct fring_req *r);
/* Optional transport hooks for the data-path services (req_read_fd,
 * req_write_fd), called with the plugin's handle after the host checked
 * it, the opcode, fd and length but before anything claimed the request
 * (claim through the handle). Same contract as the ABI: 0 means
 * accepted (the transport replies when the I/O completes), -errno means
 * not accepted and the request is still unanswered; -EOPNOTSUPP sends the
 * host to its synchronous pread/pwrite path. NULL: synchronous path. */
typedef int (*fring_read_fd_fn)(fring_req *h, int fd, uint64_t off,
				uint32_t len);
typedef int (*fring_write_fd_fn)(fring_req *h, int fd, uint64_t off);

/* Reply states, in the low 8 bits of fring_req.state (the bits above hold
 * the request's generation, see handles below). EXPIRING/EXPIRED/LATE: the
 * runtime answered an interrupted request for the plugin at its deadline
 * (expiry.h) and keeps it alive until the plugin's own reply (dropped) or
 * the session's end. */
#define FRING_REQ_PENDING 0
#define FRING_REQ_REPLIED 1
#define FRING_REQ_EXPIRING 2 /* the runtime is sending EINTR */
#define FRING_REQ_EXPIRED 3  /* EINTR sent; the plugin still holds it */
#define FRING_REQ_LATE 4     /* the plugin replied while EXPIRING */
/* fring_req_init is recycling the memory: it waits for every reference
 * (xrefs) to go before it rewrites a field; a caller that sees this state
 * after taking its reference reads nothing else and gets -EALREADY. */
#define FRING_REQ_RECYCLING 5
#define FRING_REQ_ST(s) ((unsigned)(s) & 0xffu)

/* Plugin-facing handles. Transports recycle a request's memory for the
 * next request as soon as it is answered, so a plugin that replies again
 * later (a second reply from another thread, a reply after the runtime's
 * interrupt deadline...) must not reach the new request. The handle a
 * plugin gets is the request's address with a 16-bit generation in bits
 * 48..63 (user addresses on x86_64 and arm64 fit in 48 bits); every reply
 * and inspection checks it against the request, and the claim compares it
 * in the same atomic step, so a stale handle gets -EALREADY, exactly.
 * Untagged pointers (generation 0: the runtime's own calls) are not
 * checked. Request memory must stay allocated while a plugin may hold a
 * handle: the transports never free it before the session ends. */
#define FRING_REQ_HANDLE_SHIFT 48
#define FRING_REQ_ADDR_MASK ((UINT64_C(1) << FRING_REQ_HANDLE_SHIFT) - 1)

static inline struct fring_req *fring_req_ptr(fring_req *h)
{
	return (struct fring_req *)(uintptr_t)((uintptr_t)h & FRING_REQ_ADDR_MASK);
}

static inline uint32_t fring_req_hgen(const fring_req *h)
{
	return (uint32_t)((uintptr_t)h >> FRING_REQ_HANDLE_SHIFT);
}

struct fring_req {
	/* The transport's identity of this request memory, the same for every
	 * request it holds: fring_req_init (and fring_req_set_owner /
	 * fring_req_set_fd_hooks) store a field only where it differs, so a
	 * late caller on another thread (a reply that lost, a stale handle)
	 * that reads them while the memory is recycled never sees them
	 * cleared or written (tests/integration/test_owner_race.py saw a
	 * NULL dx there under ASan). */
	struct fring_dispatch *dx;
	fring_send_fn send;
	fring_release_fn release;
	fring_read_fd_fn read_fd;   /* optional, see above */
	fring_write_fd_fn write_fd; /* optional */
	void *tdata;     /* transport's own data */
	/* Transport's fd for replies (devfuse), else -1. fd >= 0 also means a
	 * reply does not give the request's memory back to the kernel, so
	 * the runtime may answer for the plugin (interrupt deadline). */
	int fd;
	uint32_t queue;  /* worker / queue index, for req_ctx */
	/* Owners (ring requests; NULL owner: any thread, no references).
	 * The owning queue thread may claim with a plain store where the
	 * transport allows it (fring_req_claim_owner); every other thread
	 * holds a reference in xrefs through each host call it makes
	 * (fring_req_enter) and from its claim until it hands the request
	 * back (fring_req_xref_put), so the owner, before it commits or
	 * recycles (fring_req_quiesce), sees a caller still inside and waits
	 * for it. */
	const void *owner;

	/* From here to state: this request's own, zeroed by fring_req_init. */
	/* Zero-copied READ/WRITE (io_uring, Linux 7.3): the data sits in the
	 * client's pages, reachable only by the transport's read_fd/write_fd
	 * hooks. Set by the transport after fring_req_init. */
	int zero_copy;

	uint64_t unique;
	uint64_t nodeid;
	uint32_t opcode;
	uint32_t uid, gid, pid;
	uint32_t in_len; /* fuse_in_header.len, for messages */
	struct fring_decoded d;

	atomic_int interrupted; /* set by INTERRUPT */
	int tracked;            /* in the in-flight table, counted outstanding */
	struct fring_req *hnext;

	/* READDIR(PLUS) reply under construction. scratch is transport memory
	 * the dir buffer may live in (the unused tail of the read buffer). */
	void *scratch;
	size_t scratch_cap;
	char *dirbuf;
	size_t dir_used, dir_cap;
	int dir_malloced;
	int dir_refused; /* an entry was refused (entry_check.h): reply EIO */

	/* The winning claim took an atomic read-modify-write (stats); written
	 * by the winner only, 0 after fring_req_init. */
	int claim_rmw;

	/* From here on: never cleared by fring_req_init, only written
	 * atomically, because a late caller (a stale handle, an off-thread
	 * claim that lost) may read them while the request is recycled. */
	atomic_uint state;      /* generation << 8 | FRING_REQ_* */
	/* The generation the owner claimed through its fast path (a plain
	 * store, fring_req_claim_owner), which an off-thread claim checks
	 * after taking its reference. Stale values name an older generation. */
	atomic_uint oclaim;
	atomic_int xrefs;       /* off-thread callers inside (see above) */
};

/* The transport identity of the calling thread (its queue thread object),
 * compared with fring_req.owner. NULL on threads of no transport. */
extern __thread const void *fring_req_thread;

/* Drop the reference the calling thread's fring_req_claim took on r, if
 * any (the thread's last claim was r and it was not r's owner). Returns 1
 * if a reference was dropped. */
int fring_req_xref_put(struct fring_req *r);

/* Claim on the owner thread without an atomic read-modify-write: a plain
 * store, one full fence and a load (request.c, "The owner's fast path",
 * has the argument). Only for a transport that calls it on r's owner
 * thread, whose other claimants all go through fring_req_claim (so hold
 * a reference; the runtime's interrupt expiry never claims a request with
 * an owner, those have fd < 0), and that waits for xrefs to drop to 0
 * before it commits or recycles r (owner_commit_check in uring_serve.c).
 * Falls back to fring_req_claim otherwise. Same results as
 * fring_req_claim. */
int fring_req_claim_owner(fring_req *h);

void fring_req_init(struct fring_req *r, struct fring_dispatch *dx,
		    fring_send_fn send, fring_release_fn release, void *tdata,
		    int fd, uint32_t queue);

/* The first step of fring_req_init, for a transport that rewrites its own
 * memory of r (an entry's payload pointer, its zero-copy flag) before it:
 * mark r RECYCLING and wait until no late caller holds a reference
 * (fring_req_enter). Callers that come later see RECYCLING and leave. */
void fring_req_quiesce(struct fring_req *r);

/* The rest of r's identity (see struct fring_req), after fring_req_init:
 * its owning thread, and the transport's req_read_fd / req_write_fd
 * hooks. Stored only where they differ. */
void fring_req_set_owner(struct fring_req *r, const void *owner);
void fring_req_set_fd_hooks(struct fring_req *r, fring_read_fd_fn read_fd,
			    fring_write_fd_fn write_fd);

/* Enter the request in the in-flight table and the outstanding count; done
 * by dispatch before the plugin sees it. */
void fring_req_track(struct fring_req *r);

/* The handle to give the plugin for r (tagged with r's generation). */
fring_req *fring_req_handle(struct fring_req *r);

/* The request behind handle h (tagged or not), or NULL if h is stale: its
 * request was answered and the memory now holds another one (logged).
 * Without a reference: for the owner thread, or where the request cannot
 * be recycled meanwhile. */
struct fring_req *fring_req_get(fring_req *h);

/* A host call's way in through a plugin's handle h: as fring_req_get, but
 * a caller other than r's owner thread (every caller, for a request
 * without owner: /dev/fuse) first takes a reference (xrefs, *ref = 1), so
 * every field it reads stays as it was until fring_req_leave: the
 * transport does not recycle r (fring_req_init waits) while it is held.
 * NULL if h is stale or its request is being recycled (then no reference
 * is held). */
struct fring_req *fring_req_enter(fring_req *h, int *ref);
void fring_req_leave(struct fring_req *r, int ref);

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
void fring_req_expire(struct fring_dispatch *dx, uint64_t unique,
		      unsigned waited_ms);

/* After the reply or drop: leave the table, free the dir buffer, give the
 * memory back to the transport. Nothing may touch r afterwards. For the
 * reply path (reply.c); everyone else finishes through fring_req_send,
 * fring_req_drop or fring_req_abandon. */
void fring_req_finish(struct fring_req *r);

/* Finish a request that gets no reply (FORGET, INTERRUPT, NOTIFY_REPLY). */
void fring_req_drop(struct fring_req *r);

/* Release a request popped from the in-flight table without replying
 * (teardown of requests the plugin never answered). */
void fring_req_abandon(struct fring_req *r);

#endif /* FRING_REQUEST_H */
