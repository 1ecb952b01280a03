// SPDX-License-Identifier: MIT
/*
 * The fake transport of the runtime-side tests (test_dispatch.c,
 * test_request_claim.c, the fuzz_decode harness): the struct fring_req_ops
 * a request carries when no kernel is there. Its send joins the iovecs of
 * a reply into one buffer and its release counts, and each refuses a
 * second send or release of the same request (what the exactly-once claim
 * promises). Not the fake host (fakehost.h), which stands in for the
 * runtime a plugin calls; this one stands in for /dev/fuse or a ring
 * under the runtime.
 */
#ifndef FRING_TESTS_FAKETRANSPORT_H
#define FRING_TESTS_FAKETRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "request/request.h"

struct ft_req;

struct fake_transport {
	struct fring_reqs *rq;
	int sends, releases;  /* over all its requests; a test may zero them */
	uint8_t *reply;       /* the last reply, iovecs joined */
	size_t reply_len, reply_cap;
	/* Optional, called after the counts: a reply checker (the fuzz
	 * harness's) and a release hook. */
	void (*check)(struct ft_req *q, const struct iovec *iov, int n);
	void (*released)(struct ft_req *q);
	struct ft_req *done;  /* blocks of ft_req_new, freed by ft_fini */
};

/* One request of the fake: the runtime's request first (r.tdata points
 * here), then what the fake counted for it. */
struct ft_req {
	struct fring_request r;
	struct fake_transport *ft;
	int sends, releases;
	int refs;             /* ft_req_new's: the release and the test */
	struct ft_req *done_next;
};

/* reply_cap: the largest reply it takes (joined); more aborts. */
void ft_init(struct fake_transport *ft, struct fring_reqs *rq, size_t reply_cap);
/* Frees the reply buffer and every block ft_req_new made. */
void ft_fini(struct fake_transport *ft);

/* A new generation of a request in the caller's memory (q->r recycled
 * with fring_req_init, as a ring entry's is): the counts start at 0. */
void ft_req_init(struct fake_transport *ft, struct ft_req *q);

/* A request block with buflen bytes for the request at *buf. Like
 * devfuse's, it is done with when both its release and the test
 * (ft_req_put) are, and its memory lives on to ft_fini: a host call may
 * still hold a reference while the reply releases it (request.h). */
struct ft_req *ft_req_new(struct fake_transport *ft, size_t buflen, uint8_t **buf);
void ft_req_put(struct ft_req *q);

/* The request of r (from its tdata). */
static inline struct ft_req *ft_req_of(struct fring_request *r)
{
	return (struct ft_req *)r->tdata;
}

extern const struct fring_req_ops ft_req_ops;

#endif
