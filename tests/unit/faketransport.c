// SPDX-License-Identifier: MIT
/* The fake transport (faketransport.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faketransport.h"

/* Shared by Criterion tests and the fuzz harness: a failed check aborts,
 * which Criterion reports as the test's crash. */
#define FT_ASSERT(cond, ...)                                          \
	do {                                                          \
		if (!(cond)) {                                        \
			fprintf(stderr, "faketransport: %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);                 \
			fputc('\n', stderr);                          \
			abort();                                      \
		}                                                     \
	} while (0)

void ft_init(struct fake_transport *ft, struct fring_reqs *rq, size_t reply_cap)
{
	memset(ft, 0, sizeof(*ft));
	ft->rq = rq;
	ft->reply_cap = reply_cap;
	ft->reply = malloc(reply_cap);
	FT_ASSERT(ft->reply, "%zu bytes", reply_cap);
}

void ft_fini(struct fake_transport *ft)
{
	while (ft->done) {
		struct ft_req *q = ft->done;

		ft->done = q->done_next;
		free(q);
	}
	free(ft->reply);
	ft->reply = NULL;
}

void ft_req_init(struct fake_transport *ft, struct ft_req *q)
{
	fring_req_init(&q->r, ft->rq, &ft_req_ops, q, -1, 0);
	q->ft = ft;
	q->sends = q->releases = 0;
	q->refs = 0;
}

struct ft_req *ft_req_new(struct fake_transport *ft, size_t buflen, uint8_t **buf)
{
	struct ft_req *q = calloc(1, sizeof(*q) + buflen + 8);

	FT_ASSERT(q, "%zu bytes", buflen);
	ft_req_init(ft, q);
	q->refs = 2;
	*buf = (uint8_t *)(q + 1);
	return q;
}

void ft_req_put(struct ft_req *q)
{
	FT_ASSERT(q->refs > 0, "request %llu put once too often",
		  (unsigned long long)q->r.unique);
	if (--q->refs == 0) {
		q->done_next = q->ft->done;
		q->ft->done = q;
	}
}

static int ft_send(struct fring_request *r, const struct iovec *iov, int n)
{
	struct ft_req *q = ft_req_of(r);
	struct fake_transport *ft = q->ft;

	FT_ASSERT(++q->sends == 1, "second reply to unique %llu",
		  (unsigned long long)r->unique);
	FT_ASSERT(!q->releases, "reply to unique %llu after its release",
		  (unsigned long long)r->unique);
	ft->sends++;
	ft->reply_len = 0;
	for (int i = 0; i < n; i++) {
		FT_ASSERT(iov[i].iov_base || !iov[i].iov_len, "NULL iov %d", i);
		FT_ASSERT(ft->reply_len + iov[i].iov_len <= ft->reply_cap,
			  "reply over %zu bytes", ft->reply_cap);
		if (iov[i].iov_len)
			memcpy(ft->reply + ft->reply_len, iov[i].iov_base,
			       iov[i].iov_len);
		ft->reply_len += iov[i].iov_len;
	}
	if (ft->check)
		ft->check(q, iov, n);
	return 0;
}

static void ft_release(struct fring_request *r)
{
	struct ft_req *q = ft_req_of(r);

	FT_ASSERT(++q->releases == 1, "unique %llu released twice",
		  (unsigned long long)r->unique);
	q->ft->releases++;
	if (q->ft->released)
		q->ft->released(q);
	if (q->refs)
		ft_req_put(q);
}

const struct fring_req_ops ft_req_ops = {
	.send = ft_send,
	.release = ft_release,
};
