// SPDX-License-Identifier: MIT
/*
 * One S3 request over a worker's own curl handle (connections are kept
 * alive across requests). curl signs it (CURLOPT_AWS_SIGV4); the
 * payload is not hashed (x-amz-content-sha256: UNSIGNED-PAYLOAD, which
 * curl 7.88 signs as given but does not add itself) and the query string
 * must already be canonical (s3_query): curl signs it as written.
 *
 * Retried with exponential backoff: network errors, 5xx and SlowDown
 * (s3_error.c says which, maps the answer to an errno and logs it).
 * Also the mount's signing set-up: credentials, region, the bucket URL.
 */
#include "s3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000

int s3_http_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

CURL *s3_curl_new(struct s3_fs *fs)
{
	return curl_easy_init();
}

void s3_resp_free(struct s3_resp *resp)
{
	free(resp->body.p);
	memset(resp, 0, sizeof(*resp));
}

struct xfer {
	const struct s3_call *call;
	struct s3_resp *resp;
	size_t sent;
	bool overflow;
};

static size_t on_data(char *p, size_t sz, size_t nm, void *arg)
{
	struct xfer *x = arg;
	size_t n = sz * nm;

	/* A 2xx GET into a sink is data; an error body goes to the buffer. */
	if (x->call->sink && x->resp->status / 100 == 2) {
		if (x->resp->sink_len + n > x->call->sink_cap) {
			x->overflow = true;
			return 0;
		}
		memcpy(x->call->sink + x->resp->sink_len, p, n);
		x->resp->sink_len += n;
		return n;
	}
	return s3_buf_add(&x->resp->body, p, n) ? 0 : n;
}

static size_t on_upload(char *p, size_t sz, size_t nm, void *arg)
{
	struct xfer *x = arg;
	size_t n = sz * nm, left = x->call->body_len - x->sent;

	if (n > left)
		n = left;
	memcpy(p, (const char *)x->call->body + x->sent, n);
	x->sent += n;
	return n;
}

static void header_value(const char *h, size_t n, const char *name, char *out,
			 size_t cap)
{
	size_t k = strlen(name), len;

	if (n <= k || strncasecmp(h, name, k) || h[k] != ':')
		return;
	h += k + 1;
	n -= k + 1;
	while (n && (*h == ' ' || *h == '\t')) {
		h++;
		n--;
	}
	while (n && (h[n - 1] == '\r' || h[n - 1] == '\n' || h[n - 1] == ' '))
		n--;
	len = n < cap - 1 ? n : cap - 1;
	memcpy(out, h, len);
	out[len] = '\0';
}

static size_t on_header(char *h, size_t sz, size_t nm, void *arg)
{
	struct xfer *x = arg;
	struct s3_resp *r = x->resp;
	size_t n = sz * nm;
	char v[96] = "";

	if (n > 5 && !strncmp(h, "HTTP/", 5)) {
		/* A new response (after 100 Continue): its own headers. */
		const char *sp = memchr(h, ' ', n);

		r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		return n;
	}
	header_value(h, n, "x-amz-request-id", r->request_id,
		     sizeof(r->request_id));
	header_value(h, n, "ETag", r->etag, sizeof(r->etag));
	header_value(h, n, "Content-Length", v, sizeof(v));
	if (*v) {
		r->content_length = strtoull(v, NULL, 10);
		r->has_length = true;
		*v = '\0';
	}
	header_value(h, n, "Last-Modified", v, sizeof(v));
	if (*v)
		r->last_modified = s3_parse_http_date(v);
	return n;
}

static char *call_url(struct s3_fs *fs, const struct s3_call *call)
{
	struct s3_buf b = { 0 };
	const char *pre = call->raw_key ? "" : fs->cfg.prefix;
	char *key = NULL;
	int err;

	if (call->key) {
		struct s3_buf k = { 0 };

		if (s3_buf_add(&k, pre, strlen(pre)) ||
		    s3_buf_add(&k, call->key, strlen(call->key))) {
			free(k.p);
			return NULL;
		}
		key = s3_uri_encode(k.p, k.len, true);
		free(k.p);
		if (!key)
			return NULL;
	}
	/* Path style signs "/bucket" for the bucket itself, not "/bucket/". */
	err = s3_buf_add(&b, fs->base_url, strlen(fs->base_url)) ||
	      ((key || !fs->cfg.path_style) && s3_buf_add(&b, "/", 1)) ||
	      (key && s3_buf_add(&b, key, strlen(key))) ||
	      (call->query && *call->query &&
	       (s3_buf_add(&b, "?", 1) ||
		s3_buf_add(&b, call->query, strlen(call->query))));
	free(key);
	if (err) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static struct curl_slist *call_headers(struct s3_fs *fs,
				       const struct s3_call *call)
{
	struct curl_slist *h = NULL, *t;
	const struct curl_slist *a;
	char line[512];

	for (a = fs->auth_headers; a; a = a->next) {
		t = curl_slist_append(h, a->data);
		if (!t)
			goto fail;
		h = t;
	}
	if (call->range_len) {
		snprintf(line, sizeof(line), "Range: bytes=%llu-%llu",
			 (unsigned long long)call->range_off,
			 (unsigned long long)(call->range_off +
					      call->range_len - 1));
		if (!(t = curl_slist_append(h, line)))
			goto fail;
		h = t;
	}
	if (call->copy_source) {
		struct s3_buf b = { 0 };

		if (s3_buf_add(&b, "x-amz-copy-source: ", 19) ||
		    s3_buf_add(&b, call->copy_source,
			       strlen(call->copy_source))) {
			free(b.p);
			goto fail;
		}
		t = curl_slist_append(h, b.p);
		free(b.p);
		if (!t)
			goto fail;
		h = t;
	}
	return h;
fail:
	curl_slist_free_all(h);
	return NULL;
}

static CURLcode perform(struct s3_fs *fs, CURL *c, const struct s3_call *call,
			const char *url, struct curl_slist *hdrs,
			struct xfer *x)
{
	const struct s3_cfg *cfg = &fs->cfg;

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_AWS_SIGV4, fs->sigv4);
	curl_easy_setopt(c, CURLOPT_USERPWD, fs->userpwd);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)cfg->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)cfg->timeout_ms);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, cfg->tls_verify ? 1L : 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, cfg->tls_verify ? 2L : 0L);
	if (cfg->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, cfg->ca_file);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	if (!strcmp(call->method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(call->method, "PUT")) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_upload);
		curl_easy_setopt(c, CURLOPT_READDATA, x);
		/* No waiting for 100-continue ("Expect:" cannot be removed:
		 * curl would sign the empty header it then leaves out). */
		curl_easy_setopt(c, CURLOPT_EXPECT_100_TIMEOUT_MS, 1L);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE,
				 (curl_off_t)call->body_len);
	} else if (!strcmp(call->method, "POST")) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS,
				 call->body ? call->body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)call->body_len);
	} else if (strcmp(call->method, "GET")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, call->method);
	}
	return curl_easy_perform(c);
}

int s3_http(struct s3_fs *fs, CURL *c, const struct s3_call *call,
	    struct s3_resp *resp)
{
	struct curl_slist *hdrs = call_headers(fs, call);
	char *url = call_url(fs, call);
	uint32_t attempt;
	int err = -EIO, kind = S3_ERR_OTHER;
	const char *curl_err = NULL;

	memset(resp, 0, sizeof(*resp));
	if (!hdrs || !url) {
		curl_slist_free_all(hdrs);
		free(url);
		return -ENOMEM;
	}
	for (attempt = 0;; attempt++) {
		struct xfer x = { .call = call, .resp = resp };
		CURLcode cc;
		uint64_t ms;

		s3_resp_free(resp);
		cc = perform(fs, c, call, url, hdrs, &x);
		curl_err = NULL;
		if (cc == CURLE_OK && resp->status / 100 == 2) {
			err = 0;
			break;
		}
		if (cc != CURLE_OK && !(x.overflow)) {
			curl_err = curl_easy_strerror(cc);
			kind = S3_ERR_NETWORK;
			/* read(2) and write(2) know EIO, not ETIMEDOUT:
			 * curl's reason goes to the log line */
			err = -EIO;
		} else if (x.overflow) {
			curl_err = "more data than asked for";
			kind = S3_ERR_OTHER;
			err = -EIO;
			break;
		} else {
			s3_error_code(resp);
			err = s3_status_errno(resp, &kind);
			if (!s3_retryable(resp))
				break;
		}
		if (attempt >= fs->cfg.retries)
			break;
		ms = (uint64_t)BACKOFF_FIRST_MS << (attempt < 6 ? attempt : 6);
		if (ms > BACKOFF_MAX_MS)
			ms = BACKOFF_MAX_MS;
		ms += (uint64_t)rand() %
		      (ms / 2 + 1); /* jitter: spread retries */
		usleep((useconds_t)(ms * 1000));
	}
	if (err)
		s3_log_once(fs, kind, call, resp, curl_err, err);
	curl_slist_free_all(hdrs);
	free(url);
	return err;
}

int s3_http_setup(struct s3_fs *fs)
{
	struct s3_cfg *cfg = &fs->cfg;
	struct s3_buf b = { 0 };
	struct curl_slist *t;
	const char *host;
	int err = 0;

	if (s3_http_global_init())
		return -EIO;
	/* userpwd: "access:secret", never logged. */
	if (s3_buf_add(&b, cfg->access_key, strlen(cfg->access_key)) ||
	    s3_buf_add(&b, ":", 1) ||
	    s3_buf_add(&b, cfg->secret_key, strlen(cfg->secret_key)))
		return -ENOMEM;
	fs->userpwd = b.p;
	memset(&b, 0, sizeof(b));
	if (s3_buf_add(&b, "aws:amz:", 8) ||
	    s3_buf_add(&b, cfg->region, strlen(cfg->region)) ||
	    s3_buf_add(&b, ":s3", 3))
		return -ENOMEM;
	fs->sigv4 = b.p;
	memset(&b, 0, sizeof(b));
	/* base_url: path style endpoint/bucket, else scheme://bucket.host */
	host = strstr(cfg->endpoint, "://");
	host = host ? host + 3 : cfg->endpoint;
	if (cfg->path_style)
		err = s3_buf_add(&b, cfg->endpoint, strlen(cfg->endpoint)) ||
		      s3_buf_add(&b, "/", 1) ||
		      s3_buf_add(&b, cfg->bucket, strlen(cfg->bucket));
	else
		err = s3_buf_add(&b, cfg->endpoint,
				 (size_t)(host - cfg->endpoint)) ||
		      s3_buf_add(&b, cfg->bucket, strlen(cfg->bucket)) ||
		      s3_buf_add(&b, ".", 1) ||
		      s3_buf_add(&b, host, strlen(host));
	if (err)
		return -ENOMEM;
	fs->base_url = b.p;
	t = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
	if (!t)
		return -ENOMEM;
	fs->auth_headers = t;
	if (cfg->session_token) {
		memset(&b, 0, sizeof(b));
		if (s3_buf_add(&b, "x-amz-security-token: ", 22) ||
		    s3_buf_add(&b, cfg->session_token,
			       strlen(cfg->session_token)))
			return -ENOMEM;
		t = curl_slist_append(fs->auth_headers, b.p);
		free(b.p);
		if (!t)
			return -ENOMEM;
	}
	return 0;
}

void s3_http_teardown(struct s3_fs *fs)
{
	curl_slist_free_all(fs->auth_headers);
	if (fs->userpwd)
		memset(fs->userpwd, 0, strlen(fs->userpwd));
	free(fs->userpwd);
	free(fs->sigv4);
	free(fs->base_url);
}
