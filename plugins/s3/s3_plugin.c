// SPDX-License-Identifier: MIT
/*
 * s3: serves an S3 bucket, or a prefix of it. Options, the descriptor and
 * the lifecycle; the bucket is checked with one listing before the mount
 * is made, so bad credentials or a missing bucket refuse the mount with
 * one line instead of mounting something broken.
 */
#include "s3.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

static int s3_create_inst(fring_mount *m, void **inst)
{
	struct s3_fs *fs = calloc(1, sizeof(*fs));
	struct s3_cfg *c;

	if (!fs)
		return -ENOMEM;
	fs->mount = m;
	fs->started = (int64_t)time(NULL);
	c = &fs->cfg;
	c->path_style = true;
	c->tls_verify = true;
	c->connect_timeout_ms = 10000;
	c->timeout_ms = 60000;
	c->retries = 4;
	c->threads = 16;
	c->part_size = 8u << 20;
	c->readahead_parts = 4;
	c->upload_parts = 4;
	c->meta_ttl_ns = 5000000000ull;
	c->attr_timeout_ns = 1000000000ull;
	c->entry_timeout_ns = 1000000000ull;
	c->uid = (uint32_t)getuid();
	c->gid = (uint32_t)getgid();
	c->file_mode = 0644;
	c->dir_mode = 0755;
	*inst = fs;
	return 0;
}

static int bad(struct s3_fs *fs, const char *key, const char *what,
	       const char *v)
{
	fring_logf(fs->mount, FRING_LOG_ERROR, "s3: %s: expected %s, got '%s'",
		   key, what, v);
	return -EINVAL;
}

static int opt_seconds(struct s3_fs *fs, const char *key, const char *v,
		       uint64_t *ns)
{
	char *end;
	double s = strtod(v, &end);

	if (end == v || *end || !isfinite(s) || s < 0 || s > 1e6)
		return bad(fs, key, "seconds >= 0", v);
	*ns = (uint64_t)(s * 1e9);
	return 0;
}

static int opt_count(struct s3_fs *fs, const char *key, const char *v,
		     unsigned long min, unsigned long max, uint32_t *out)
{
	char *end;
	unsigned long n = *v >= '0' && *v <= '9' ? strtoul(v, &end, 10) : 0;

	if (*v < '0' || *v > '9' || *end || n < min || n > max) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "s3: %s: expected a count %lu..%lu, got '%s'", key,
			   min, max, v);
		return -EINVAL;
	}
	*out = (uint32_t)n;
	return 0;
}

static int opt_bool(struct s3_fs *fs, const char *key, const char *v, bool *out)
{
	int32_t b;

	if (fring_host->parse_bool(v, &b))
		return bad(fs, key, "a boolean", v);
	*out = b != 0;
	return 0;
}

static int opt_str(char **dst, const char *v)
{
	free(*dst);
	*dst = strdup(v);
	return *dst ? 0 : -ENOMEM;
}

static int opt_mode(struct s3_fs *fs, const char *key, const char *v,
		    uint32_t *out)
{
	char *end;
	unsigned long m = strtoul(v, &end, 8);

	if (end == v || *end || m > 07777)
		return bad(fs, key, "an octal mode", v);
	*out = (uint32_t)m;
	return 0;
}

static int s3_config(void *inst, const char *key, const char *v)
{
	struct s3_fs *fs = inst;
	struct s3_cfg *c = &fs->cfg;
	uint64_t ns;
	int err;

	if (!strcmp(key, "endpoint"))
		return opt_str(&c->endpoint, v);
	if (!strcmp(key, "region"))
		return opt_str(&c->region, v);
	if (!strcmp(key, "bucket"))
		return opt_str(&c->bucket, v);
	if (!strcmp(key, "prefix"))
		return opt_str(&c->prefix, v);
	if (!strcmp(key, "access_key"))
		return opt_str(&c->access_key, v);
	if (!strcmp(key, "secret_key"))
		return opt_str(&c->secret_key, v);
	if (!strcmp(key, "session_token"))
		return opt_str(&c->session_token, v);
	if (!strcmp(key, "credentials_file"))
		return opt_str(&c->credentials_file, v);
	if (!strcmp(key, "profile"))
		return opt_str(&c->profile, v);
	if (!strcmp(key, "ca_file"))
		return opt_str(&c->ca_file, v);
	if (!strcmp(key, "path_style"))
		return opt_bool(fs, key, v, &c->path_style);
	if (!strcmp(key, "tls_verify"))
		return opt_bool(fs, key, v, &c->tls_verify);
	if (!strcmp(key, "readonly"))
		return opt_bool(fs, key, v, &c->readonly);
	if (!strcmp(key, "connect_timeout") || !strcmp(key, "timeout")) {
		err = opt_seconds(fs, key, v, &ns);
		if (!err && ns < 1000000)
			err = bad(fs, key, "at least 0.001 s", v);
		if (!err)
			*(key[0] == 'c' ? &c->connect_timeout_ms
					: &c->timeout_ms) = ns / 1000000;
		return err;
	}
	if (!strcmp(key, "retries"))
		return opt_count(fs, key, v, 0, 20, &c->retries);
	if (!strcmp(key, "threads"))
		return opt_count(fs, key, v, 1, MAX_THREADS, &c->threads);
	if (!strcmp(key, "readahead_parts"))
		return opt_count(fs, key, v, 1, 64, &c->readahead_parts);
	if (!strcmp(key, "upload_parts"))
		return opt_count(fs, key, v, 1, 64, &c->upload_parts);
	if (!strcmp(key, "part_size")) {
		/* S3 parts: 5 MiB at least (but the last), 5 GiB at most. */
		if (fring_host->parse_size(v, &c->part_size) ||
		    c->part_size < (5u << 20) || c->part_size > (1ull << 30))
			return bad(fs, key, "a size 5MiB..1GiB", v);
		return 0;
	}
	if (!strcmp(key, "meta_ttl"))
		return opt_seconds(fs, key, v, &c->meta_ttl_ns);
	if (!strcmp(key, "attr_timeout"))
		return opt_seconds(fs, key, v, &c->attr_timeout_ns);
	if (!strcmp(key, "entry_timeout"))
		return opt_seconds(fs, key, v, &c->entry_timeout_ns);
	if (!strcmp(key, "uid"))
		return opt_count(fs, key, v, 0, 4294967294ul, &c->uid);
	if (!strcmp(key, "gid"))
		return opt_count(fs, key, v, 0, 4294967294ul, &c->gid);
	if (!strcmp(key, "file_mode"))
		return opt_mode(fs, key, v, &c->file_mode);
	if (!strcmp(key, "dir_mode"))
		return opt_mode(fs, key, v, &c->dir_mode);
	fring_logf(fs->mount, FRING_LOG_ERROR,
		   "s3: unknown option '%s' (fring plugins shows them all)",
		   key);
	return -EINVAL;
}

/* prefix: no leading '/', one trailing '/' unless empty. */
static int normalize(struct s3_fs *fs)
{
	struct s3_cfg *c = &fs->cfg;
	const char *p = c->prefix ? c->prefix : "";
	size_t n, e;
	char *np;

	while (*p == '/')
		p++;
	n = strlen(p);
	while (n && p[n - 1] == '/')
		n--;
	np = malloc(n + 2);
	if (!np)
		return -ENOMEM;
	memcpy(np, p, n);
	np[n] = '/';
	np[n ? n + 1 : 0] = '\0';
	free(c->prefix);
	c->prefix = np;
	if (!c->region && opt_str(&c->region, "us-east-1"))
		return -ENOMEM;
	if (!c->endpoint) {
		char buf[256];

		snprintf(buf, sizeof(buf), "https://s3.%s.amazonaws.com",
			 c->region);
		if (opt_str(&c->endpoint, buf))
			return -ENOMEM;
	}
	e = strlen(c->endpoint);
	while (e && c->endpoint[e - 1] == '/')
		c->endpoint[--e] = '\0';
	return 0;
}

/* One listing of a single key under the prefix: the bucket exists and
 * the credentials work, or the mount is refused with the reason. */
static int check_bucket(struct s3_fs *fs)
{
	const char *kv[] = { "list-type",    "2", "max-keys", "1", "prefix",
			     fs->cfg.prefix, NULL };
	struct s3_call call = { .method = "GET", .quiet = true };
	CURL *c = s3_curl_new(fs);
	struct s3_resp resp;
	char *q = s3_query(kv);
	int err = c && q ? 0 : -ENOMEM;

	call.query = q;
	if (!err)
		err = s3_http(fs, c, &call, &resp);
	if (err && err != -ENOMEM) {
		const char *hint =
			err == -EACCES
				? ": check access_key/secret_key (or the credentials "
				  "they came from) and the bucket's policy"
			: err == -ENOENT ? ": no such bucket"
					 : "";

		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "s3: bucket '%s' at %s: %s (HTTP %ld %s, request "
			   "id %s)%s",
			   fs->cfg.bucket, fs->cfg.endpoint, strerror(-err),
			   resp.status, *resp.code ? resp.code : "-",
			   *resp.request_id ? resp.request_id : "-", hint);
	}
	if (q)
		s3_resp_free(&resp);
	free(q);
	if (c)
		curl_easy_cleanup(c);
	return err;
}

static int s3_config_complete(void *inst)
{
	struct s3_fs *fs = inst;
	int err;

	if (!fs->cfg.bucket || !*fs->cfg.bucket) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "s3: option 'bucket' is required");
		return -EINVAL;
	}
	err = normalize(fs);
	if (!err)
		err = s3_creds_resolve(fs);
	if (!err)
		err = s3_http_setup(fs);
	if (!err)
		err = s3_meta_init(&fs->meta);
	if (!err)
		err = check_bucket(fs);
	if (!err)
		err = s3_work_create(fs); /* threads start in init */
	if (err)
		return err;
	fring_logf(fs->mount, FRING_LOG_INFO,
		   "s3: serving bucket %s%s%s at %s (%s, %u threads)",
		   fs->cfg.bucket, *fs->cfg.prefix ? "/" : "", fs->cfg.prefix,
		   fs->cfg.endpoint,
		   fs->cfg.readonly ? "read-only" : "read-write",
		   fs->cfg.threads);
	return 0;
}

static int s3_init(void *inst, struct fring_conn *conn)
{
	s3_work_start(inst);
	return 0;
}

static void free_secret(char *s)
{
	if (s)
		memset(s, 0, strlen(s));
	free(s);
}

static void s3_destroy(void *inst)
{
	struct s3_fs *fs = inst;
	struct s3_cfg *c = &fs->cfg;

	s3_work_destroy(fs); /* first: its workers may still be answering */
	if (fs->meta.by_id)
		s3_meta_destroy(&fs->meta);
	s3_http_teardown(fs);
	free(c->endpoint);
	free(c->region);
	free(c->bucket);
	free(c->prefix);
	free_secret(c->access_key);
	free_secret(c->secret_key);
	free_secret(c->session_token);
	free(c->credentials_file);
	free(c->profile);
	free(c->ca_file);
	free(fs);
}

static const struct fring_fs_ops s3_ops = {
	FRING_OPS_HEADER,      .lookup = s3_lookup,
	.forget = s3_forget,   .getattr = s3_getattr,
	.setattr = s3_setattr, .mknod = s3_refuse_make,
	.mkdir = s3_mkdir,     .symlink = s3_refuse_make,
	.unlink = s3_unlink,   .rmdir = s3_rmdir,
	.rename = s3_rename,   .link = s3_refuse_link,
	.open = s3_open,       .read = s3_read,
	.write = s3_write,     .flush = s3_flush,
	.release = s3_release, .opendir = s3_opendir,
	.readdir = s3_readdir, .releasedir = s3_releasedir,
	.statfs = s3_statfs,   .create = s3_create,
};

static struct fring_plugin s3_plugin = {
	FRING_PLUGIN_HEADER,
	.thread_model = FRING_THREAD_PARALLEL,
	.name = "s3",
	.version = "0.1",
	.description = "an S3 bucket (or a prefix of it), over HTTP(S)",
	.config_help =
		"bucket: name: the bucket to serve (required)\n"
		"prefix: key prefix: serve only keys under it, as the root (\"\")\n"
		"endpoint: URL: scheme://host[:port] of the S3 service "
		"(https://s3.REGION.amazonaws.com)\n"
		"region: name: SigV4 signing region (us-east-1; \"default\" "
		"on Ceph RGW)\n"
		"path_style: bool: endpoint/bucket/key URLs, else "
		"bucket.host/key (true)\n"
		"access_key: string: access key id (else credentials_file, "
		"AWS_ACCESS_KEY_ID, ~/.aws/credentials); never logged\n"
		"secret_key: string: secret access key, with access_key; "
		"never logged\n"
		"session_token: string: temporary credentials' token "
		"(AWS_SESSION_TOKEN); never logged\n"
		"credentials_file: path: AWS CLI credentials file to read "
		"keys from\n"
		"profile: name: its section (AWS_PROFILE, else default)\n"
		"tls_verify: bool: verify the endpoint's certificate (true)\n"
		"ca_file: path: CA certificates to verify it with (system's)\n"
		"connect_timeout: seconds: to connect (10)\n"
		"timeout: seconds: one whole request at most (60)\n"
		"retries: count 0..20: retries of a request failing with a "
		"5xx, SlowDown or a network error, with backoff (4)\n"
		"threads: count 1..256: worker threads, the requests in "
		"flight to S3 (16)\n"
		"part_size: size 5MiB..1GiB: multipart upload part, readahead "
		"unit (8MiB)\n"
		"readahead_parts: count 1..64: a sequential reader's window, "
		"in parts (4)\n"
		"upload_parts: count 1..64: parts of one file uploading at "
		"once (4)\n"
		"meta_ttl: seconds: trust a listed size/type this long (5)\n"
		"attr_timeout: seconds: kernel attribute cache lifetime (1)\n"
		"entry_timeout: seconds: kernel name cache lifetime (1)\n"
		"readonly: bool: refuse every change with EROFS (false)\n"
		"uid: number: owner of every file (the server's)\n"
		"gid: number: group of every file (the server's)\n"
		"file_mode: octal: permissions of files (0644)\n"
		"dir_mode: octal: permissions of directories (0755)\n",
	.create = s3_create_inst,
	.config = s3_config,
	.config_complete = s3_config_complete,
	.init = s3_init,
	.destroy = s3_destroy,
	.ops = &s3_ops,
	/* open starts a new body on O_TRUNC itself: no SETATTR size 0. */
	.features = FRING_FEATURE_ATOMIC_O_TRUNC,
};

FRING_PLUGIN_DEFINE(s3_plugin)
