/*
 * One in-flight FUSE request (the object behind the ABI's opaque fring_req)
 * and the transport-independent reply machinery: exactly-once reply state,
 * out-header + body iovecs handed to the transport's send function, and the
 * in-flight table INTERRUPT looks requests up in.
 *
 * A transport embeds a struct fring_req in its own per-request object, fills
 * send/release/tdata/fd with fring_req_init, and hands it to dispatch. The
 * request (and the buffer its decoded args point into) stays alive until
 * release() is called, which happens exactly once: right after the reply,
 * or at once for requests that get no reply (FORGET, INTERRUPT, ...).
 */
#ifndef FRING_REQUEST_H
#define FRING_REQUEST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <fring/plugin.h>

#include "../proto/proto.h"

struct fring_dispatch;

/* Transport hook: deliver one reply (iov[0] is the fuse_out_header). Returns
 * 0 or -errno (-ENOENT: the kernel no longer waits for this request). */
typedef int (*fring_send_fn)(struct fring_req *r, const struct iovec *iov,
			     int iovcnt);
/* Transport hook: the request is finished; its memory may be reused. */
typedef void (*fring_release_fn)(struct fring_req *r);
/* Optional transport hooks for the data-path services (req_read_fd,
 * req_write_fd), called after the host checked opcode, fd and length but
 * before anything claimed the request. Same contract as the ABI: 0 means
 * accepted (the transport replies when the I/O completes), -errno means
 * not accepted and the request is still unanswered; -EOPNOTSUPP sends the
 * host to its synchronous pread/pwrite path. NULL: synchronous path. */
typedef int (*fring_read_fd_fn)(struct fring_req *r, int fd, uint64_t off,
				uint32_t len);
typedef int (*fring_write_fd_fn)(struct fring_req *r, int fd, uint64_t off);

/* Reply states. EXPIRING/EXPIRED/LATE: the runtime answered an interrupted
 * request for the plugin at its deadline (expiry.h) and keeps it alive
 * until the plugin's own reply (dropped) or the session's end. */
#define FRING_REQ_PENDING 0
#define FRING_REQ_REPLIED 1
#define FRING_REQ_EXPIRING 2 /* the runtime is sending EINTR */
#define FRING_REQ_EXPIRED 3  /* EINTR sent; the plugin still holds it */
#define FRING_REQ_LATE 4     /* the plugin replied while EXPIRING */

struct fring_req {
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

	uint64_t unique;
	uint64_t nodeid;
	uint32_t opcode;
	uint32_t uid, gid, pid;
	uint32_t in_len; /* fuse_in_header.len, for messages */
	struct fring_decoded d;

	atomic_int state;       /* FRING_REQ_PENDING -> FRING_REQ_REPLIED */
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
};

/* In-flight table: requests awaiting a reply, by unique. Striped locks so
 * workers rarely contend. An INTERRUPT can overtake its target when another
 * worker read the target but has not entered it yet; such interrupts wait
 * in `pending` (a short list, entries expire) for the target to arrive. */
#define FRING_INFLIGHT_BUCKETS 64
#define FRING_PENDING_INTERRUPTS 32
struct fring_inflight {
	struct {
		pthread_mutex_t lock;
		struct fring_req *head;
	} b[FRING_INFLIGHT_BUCKETS];
	pthread_mutex_t pending_lock;
	atomic_int npending;
	struct {
		uint64_t unique;
		int64_t when_ms; /* 0: free slot */
	} pending[FRING_PENDING_INTERRUPTS];
};

void fring_inflight_init(struct fring_inflight *t);
void fring_inflight_destroy(struct fring_inflight *t);
/* Set the interrupted flag of the request `unique`: 0 if it is in the
 * table, else 1 (remembered briefly in case the target is about to be
 * entered; if it was answered already, the entry just expires). */
int fring_inflight_interrupt(struct fring_inflight *t, uint64_t unique);
/* Remove and return any one request still in the table, or NULL (for the
 * teardown of requests a plugin never answered). */
struct fring_req *fring_inflight_pop(struct fring_inflight *t);

void fring_req_init(struct fring_req *r, struct fring_dispatch *dx,
		    fring_send_fn send, fring_release_fn release, void *tdata,
		    int fd, uint32_t queue);

/* Enter the request in the in-flight table and the outstanding count; done
 * by dispatch before the plugin sees it. */
void fring_req_track(struct fring_req *r);

/* Claim the single reply. 0, or -EALREADY (logged) if already answered.
 * A late reply to a request the runtime answered at its interrupt deadline
 * also gets -EALREADY, and finishes the request. */
int fring_req_claim(struct fring_req *r);

/* The interrupt deadline of request `unique` passed (expiry.h): if it is
 * still unanswered, answer EINTR for the plugin (where fd >= 0) and log. */
void fring_req_expire(struct fring_dispatch *dx, uint64_t unique,
		      unsigned waited_ms);

/* Send a claimed request's reply: error (0 or -errno, already sane) and
 * body parts (ignored when error != 0), then finish it. Returns the
 * transport's result. */
int fring_req_send(struct fring_req *r, int32_t error, const struct iovec *body,
		   int nbody);

/* Claim + send an error (sanitized). Returns -EALREADY if already answered,
 * else the send result. */
int fring_req_reply_error(struct fring_req *r, int32_t neg_errno);

/* A plugin bug: wrong reply kind or bad value. Claims, logs (rate
 * limited), sends EIO. Returns -EINVAL, or -EALREADY if already answered. */
int fring_req_reply_misuse(struct fring_req *r, const char *what);

/* Finish a request that gets no reply (FORGET, INTERRUPT, NOTIFY_REPLY). */
void fring_req_drop(struct fring_req *r);

/* Release a request popped from the in-flight table without replying
 * (teardown of requests the plugin never answered). */
void fring_req_abandon(struct fring_req *r);

/* req_read_fd / req_write_fd without a transport hook, on a claimed
 * request: pread up to len bytes of fd at off and reply them (short at EOF,
 * the errno if nothing was read); pwrite the WRITE's data and reply the
 * count (partial if an error came after some bytes). */
void fring_req_read_fd_sync(struct fring_req *r, int fd, uint64_t off,
			    uint32_t len);
void fring_req_write_fd_sync(struct fring_req *r, int fd, uint64_t off);

#endif /* FRING_REQUEST_H */
