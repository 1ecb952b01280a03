// SPDX-License-Identifier: MIT
/* Error and misuse replies, the synchronous data-path services; see reply.h. */
#define _GNU_SOURCE
#include "reply.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../base/log.h"

/* Bad errno values already logged. Each distinct one is logged once: a
 * time-based rate limit would swallow a different one that follows within
 * its window. Past the table, the rate limit. 0 marks a free slot (0 is
 * never bad). */
#define BAD_ERRNO_SLOTS 32
static _Atomic int32_t bad_errno_seen[BAD_ERRNO_SLOTS];

/* 1 the first time v is seen, 0 after, -1 when the table is full. */
static int bad_errno_first(int32_t v)
{
	for (int i = 0; i < BAD_ERRNO_SLOTS; i++) {
		int32_t cur = atomic_load(&bad_errno_seen[i]);

		if (!cur && atomic_compare_exchange_strong(&bad_errno_seen[i],
							   &cur, v))
			return 1;
		if (cur == v)
			return 0;
	}
	return -1;
}

int fring_req_reply_error(fring_req *h, int32_t neg_errno)
{
	struct fring_request *r = fring_req_ptr(h);
	int bad = 0, ret;
	int32_t e = fring_proto_sanitize_error(neg_errno, &bad);

	ret = fring_req_claim(h);
	if (ret)
		return ret;
	if (bad) {
		int first = bad_errno_first(neg_errno);
		char msg[256];

		FRING_STAT_INC(r->rq, r->queue, misuse);
		snprintf(msg, sizeof(msg),
			 "%s: plugin replied %d to %s (unique "
			 "%llu): not a negative errno, sent EIO",
			 r->rq->name, (int)neg_errno,
			 fring_opcode_name(r->opcode),
			 (unsigned long long)r->unique);
		if (first > 0)
			fring_warn("%s", msg);
		else if (first < 0)
			fring_log_ratelimited("bad-errno", FRING_LOG_WARN, "%s", msg);
		fring_req_send(r, e, NULL, 0);
		return -EINVAL;
	}
	return fring_req_send(r, e, NULL, 0);
}

int fring_req_reply_misuse(fring_req *h, const char *what)
{
	struct fring_request *r = fring_req_ptr(h);
	int ret = fring_req_claim(h);

	if (ret)
		return ret;
	FRING_STAT_INC(r->rq, r->queue, misuse);
	fring_log_ratelimited("reply-misuse", FRING_LOG_WARN,
			      "%s: plugin answered %s (unique %llu) with %s; "
			      "sent EIO",
			      r->rq->name, fring_opcode_name(r->opcode),
			      (unsigned long long)r->unique, what);
	fring_req_send(r, -EIO, NULL, 0);
	return -EINVAL;
}

/* ---- data-path services, synchronous (/dev/fuse) ---- */

/* pread into rbuf, or pwrite from wbuf, up to len bytes of fd at off,
 * going on after EINTR and short counts. Returns the count; an error
 * sets *err (sanitized) and ends the loop, EOF just ends it. */
static size_t io_full(int fd, char *rbuf, const char *wbuf, size_t len,
		      uint64_t off, int32_t *err)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = rbuf ? pread(fd, rbuf + done, len - done,
					 (off_t)(off + done))
				 : pwrite(fd, wbuf + done, len - done,
					  (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			*err = fring_proto_sanitize_error(-errno, NULL);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return done;
}

/* Synchronous fallback: read into the request's scratch memory (the unused
 * tail of its read buffer) or a temporary buffer, then reply. */
void fring_req_read_fd_sync(struct fring_request *r, int fd, uint64_t off,
			    uint32_t len)
{
	int own = !(r->scratch && r->scratch_cap >= len);
	char *buf = own ? malloc(len ? len : 1) : r->scratch;
	size_t got;
	int32_t err = 0;

	if (!buf) {
		fring_req_send(r, -ENOMEM, NULL, 0);
		return;
	}
	got = io_full(fd, buf, NULL, len, off, &err);
	if (err && got == 0) {
		fring_req_send(r, err, NULL, 0);
	} else {
		struct iovec iov = { buf, got };

		fring_req_send(r, 0, &iov, 1);
	}
	if (own) /* r may be gone after the send: decided before */
		free(buf);
}

void fring_req_write_fd_sync(struct fring_request *r, int fd, uint64_t off)
{
	const struct fring_write_args *a = &r->d.a.write;
	const char *data = a->data;
	size_t done;
	int32_t err = 0;

	done = io_full(fd, NULL, data, a->len, off, &err);
	if (err && done == 0) {
		fring_req_send(r, err, NULL, 0);
	} else {
		/* Like write(2): a partial count beats losing what was written. */
		struct fuse_write_out wo = { .size = (uint32_t)done };
		struct iovec iov = { &wo, sizeof(wo) };

		fring_req_send(r, 0, &iov, 1);
	}
}
