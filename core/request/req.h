// SPDX-License-Identifier: MIT
/*
 * The request object (struct fring_request) and the transport's operations
 * on it: what a transport fills and what the in-flight table links. Its
 * lifetime and the exactly-once claim are request.h.
 *
 * A plugin never sees this type: it holds a handle, the ABI's opaque
 * fring_req *, which is the request's address tagged with a generation.
 * The two are distinct C types, so the compiler refuses one where the
 * other belongs (-Werror=incompatible-pointer-types, tests/types/): a
 * handle becomes the request by fring_req_ptr(), a request a handle by
 * fring_req_handle() (request.h; for a plugin) or fring_req_untagged()
 * (the runtime's own calls into the host's reply functions).
 */
#ifndef FRING_REQ_H
#define FRING_REQ_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <fring/plugin.h>

#include "../proto/proto.h"

struct fring_request;
struct fring_reqs;

/* A transport's operations on the requests it serves: one table per
 * transport, so a request carries a single pointer to it (fring_req.ops). */
struct fring_req_ops {
	/* Deliver one reply (iov[0] is the fuse_out_header). 0 or -errno
	 * (-ENOENT: the kernel no longer waits for this request). */
	int (*send)(struct fring_request *r, const struct iovec *iov,
		    int iovcnt);
	/* The request is finished; its memory may be reused. */
	void (*release)(struct fring_request *r);
	/* Optional: the data-path services (req_read_fd, req_write_fd),
	 * called with the plugin's handle after the host checked it, the
	 * opcode, fd and length but before anything claimed the request
	 * (claim through the handle). Same contract as the ABI: 0 means
	 * accepted (the transport replies when the I/O completes), -errno
	 * means not accepted and the request is still unanswered;
	 * -EOPNOTSUPP sends the host to its synchronous pread/pwrite path.
	 * NULL: synchronous path. */
	int (*read_fd)(fring_req *h, int fd, uint64_t off, uint32_t len);
	int (*write_fd)(fring_req *h, int fd, uint64_t off);
};

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
#define FRING_REQ_ST(s) ((unsigned)(s)&0xffu)

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

static inline struct fring_request *fring_req_ptr(fring_req *h)
{
	return (struct fring_request *)(uintptr_t)((uintptr_t)h &
					       FRING_REQ_ADDR_MASK);
}

/* The runtime's own handle to r: untagged (generation 0, never taken for
 * stale), for the host's reply functions called on the runtime's behalf.
 * A plugin gets fring_req_handle(r) (request.h), tagged. */
static inline fring_req *fring_req_untagged(struct fring_request *r)
{
	return (fring_req *)r;
}

static inline uint32_t fring_req_hgen(const fring_req *h)
{
	return (uint32_t)((uintptr_t)h >> FRING_REQ_HANDLE_SHIFT);
}

struct fring_request {
	/* The transport's identity of this request memory, the same for every
	 * request it holds: fring_req_init (and fring_req_set_owner) store a
	 * field only where it differs, so a
	 * late caller on another thread (a reply that lost, a stale handle)
	 * that reads them while the memory is recycled never sees them
	 * cleared or written (tests/integration/test_owner_race.py saw a
	 * NULL dx there under ASan). */
	struct fring_reqs *rq;
	const struct fring_req_ops *ops;
	void *tdata; /* transport's own data */
	/* Transport's fd for replies (devfuse), else -1. fd >= 0 also means a
	 * reply does not give the request's memory back to the kernel, so
	 * the runtime may answer for the plugin (interrupt deadline). */
	int fd;
	uint32_t queue; /* worker / queue index, for req_ctx */
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
	 * client's pages, reachable only by the transport's ops->read_fd/
	 * write_fd. Set by the transport after fring_req_init. */
	int zero_copy;

	uint64_t unique;
	uint64_t nodeid;
	/* When dispatch took it (CLOCK_MONOTONIC ns), with statistics on;
	 * else 0. For its latency and, in flight, its age. */
	uint64_t t0_ns;
	uint32_t opcode;
	uint32_t uid, gid, pid;
	uint32_t in_len; /* fuse_in_header.len, for messages */
	struct fring_decoded d;

	atomic_int interrupted; /* set by INTERRUPT */
	int tracked; /* in the in-flight table, counted outstanding */
	struct fring_request *hnext;

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
	atomic_uint state; /* generation << 8 | FRING_REQ_* */
	/* The generation the owner claimed through its fast path (a plain
	 * store, fring_req_claim_owner), which an off-thread claim checks
	 * after taking its reference. Stale values name an older generation. */
	atomic_uint oclaim;
	atomic_int xrefs; /* off-thread callers inside (see above) */
};

/* The transport identity of the calling thread (its queue thread object),
 * compared with fring_req.owner. NULL on threads of no transport. */
extern __thread const void *fring_req_thread;

#endif /* FRING_REQ_H */
