// SPDX-License-Identifier: MIT
/* s3_text.c: the text helpers of the S3 requests (no network, no fs). */
#ifndef S3_TEXT_H
#define S3_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct s3_buf {
	char *p;
	size_t len, cap;
};

/* Append n bytes, keeping p NUL-terminated; 0 or -ENOMEM. */
int s3_buf_add(struct s3_buf *b, const void *p, size_t n);
/* Canonical query string (SigV4): pairs sorted by key, %-encoded.
 * kv: key, value, key, value, ..., NULL. Returns malloc'ed. */
char *s3_query(const char *const *kv);
/* %-encode s keeping unreserved characters (and '/' if keep_slash). */
char *s3_uri_encode(const char *s, size_t n, bool keep_slash);
/* Seconds since the epoch; 0 if s cannot be parsed. */
int64_t s3_parse_http_date(const char *s);
int64_t s3_parse_iso_date(const char *s);

#endif /* S3_TEXT_H */
