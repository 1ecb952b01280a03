// SPDX-License-Identifier: MIT
/*
 * Text helpers of the S3 requests: a growing buffer, SigV4's
 * %-encoding and canonical query string, and the two date formats S3
 * answers in (Last-Modified headers, ListObjectsV2's LastModified).
 */
#include "s3_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

int s3_buf_add(struct s3_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *q;

		while (cap < b->len + n + 1)
			cap *= 2;
		q = realloc(b->p, cap);
		if (!q)
			return -ENOMEM;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

char *s3_uri_encode(const char *s, size_t n, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = malloc(n * 3 + 1), *o = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (isalnum(ch) || ch == '-' || ch == '_' || ch == '.' ||
		    ch == '~' || (keep_slash && ch == '/')) {
			*o++ = (char)ch;
		} else {
			*o++ = '%';
			*o++ = hex[ch >> 4];
			*o++ = hex[ch & 15];
		}
	}
	*o = '\0';
	return out;
}

struct qpair {
	const char *k, *v;
};

static int qpair_cmp(const void *a, const void *b)
{
	return strcmp(((const struct qpair *)a)->k,
		      ((const struct qpair *)b)->k);
}

char *s3_query(const char *const *kv)
{
	struct qpair pairs[16];
	struct s3_buf b = { 0 };
	size_t n = 0, i;

	while (kv[2 * n] && n < 16) {
		pairs[n].k = kv[2 * n];
		pairs[n].v = kv[2 * n + 1];
		n++;
	}
	qsort(pairs, n, sizeof(pairs[0]), qpair_cmp);
	if (s3_buf_add(&b, "", 0))
		return NULL;
	for (i = 0; i < n; i++) {
		char *k = s3_uri_encode(pairs[i].k, strlen(pairs[i].k), false);
		char *v = s3_uri_encode(pairs[i].v, strlen(pairs[i].v), false);
		int err = !k || !v;

		err = err || (i && s3_buf_add(&b, "&", 1)) ||
		      s3_buf_add(&b, k, strlen(k)) || s3_buf_add(&b, "=", 1) ||
		      s3_buf_add(&b, v, strlen(v));
		free(k);
		free(v);
		if (err) {
			free(b.p);
			return NULL;
		}
	}
	return b.p;
}

int64_t s3_parse_http_date(const char *s)
{
	time_t t = curl_getdate(s, NULL);

	return t < 0 ? 0 : (int64_t)t;
}

int64_t s3_parse_iso_date(const char *s)
{
	struct tm tm = { 0 };

	if (!strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return (int64_t)timegm(&tm);
}
