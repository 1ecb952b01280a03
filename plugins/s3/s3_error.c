// SPDX-License-Identifier: MIT
/*
 * A failed S3 answer: its error code (from the XML body), the errno it
 * maps to, whether it is worth a retry, and one log line per kind of
 * failure per mount, with the request id.
 */
#include "s3.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* The S3 error code of an error body: <Code>X</Code>. */
void s3_error_code(struct s3_resp *r)
{
	const char *s, *e;
	size_t n;

	if (!r->body.p || !(s = strstr(r->body.p, "<Code>")))
		return;
	s += 6;
	e = strstr(s, "</Code>");
	if (!e)
		return;
	n = (size_t)(e - s) < sizeof(r->code) - 1 ? (size_t)(e - s)
						  : sizeof(r->code) - 1;
	memcpy(r->code, s, n);
	r->code[n] = '\0';
}

int s3_status_errno(const struct s3_resp *r, int *kind)
{
	const char *c = r->code;

	if (!strcmp(c, "SlowDown") || r->status == 429) {
		*kind = S3_ERR_THROTTLED;
		return -EAGAIN;
	}
	switch (r->status) {
	case 404: *kind = S3_ERR_NOT_FOUND; return -ENOENT;
	case 401:
	case 403: *kind = S3_ERR_DENIED; return -EACCES;
	case 400:
		*kind = S3_ERR_OTHER;
		return !strcmp(c, "EntityTooLarge") ? -EFBIG : -EINVAL;
	case 409:
		*kind = S3_ERR_OTHER;
		return !strcmp(c, "BucketNotEmpty") ? -ENOTEMPTY : -EBUSY;
	case 412: *kind = S3_ERR_OTHER; return -EAGAIN;
	case 416: *kind = S3_ERR_OTHER; return -EINVAL;
	}
	*kind = r->status >= 500 ? S3_ERR_SERVER : S3_ERR_OTHER;
	return -EIO;
}

bool s3_retryable(const struct s3_resp *r)
{
	return r->status >= 500 || r->status == 429 ||
	       !strcmp(r->code, "SlowDown");
}

void s3_log_once(struct s3_fs *fs, int kind, const struct s3_call *call,
		 const struct s3_resp *r, const char *curl_err, int err)
{
	uint32_t bit = 1u << kind;

	/* Not-found is an answer, not a fault: never logged. */
	if (kind == S3_ERR_NOT_FOUND || call->quiet ||
	    atomic_fetch_or((_Atomic uint32_t *)&fs->logged_kinds, bit) & bit)
		return;
	if (curl_err)
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "s3: %s %s%s: %s (%s; logged once per kind)",
			   call->method, fs->cfg.prefix,
			   call->key ? call->key : "", curl_err,
			   strerror(-err));
	else
		fring_logf(
			fs->mount, FRING_LOG_ERROR,
			"s3: %s %s%s: HTTP %ld %s, request id %s (%s; logged "
			"once per kind)",
			call->method, fs->cfg.prefix,
			call->key ? call->key : "", r->status,
			*r->code ? r->code : "-",
			*r->request_id ? r->request_id : "-", strerror(-err));
}
