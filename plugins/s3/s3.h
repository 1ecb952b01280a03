// SPDX-License-Identifier: MIT
/*
 * s3: serves an S3 bucket (or a prefix of it). Shared declarations.
 *
 * s3_http.c    one signed request (curl, SigV4), retries with backoff
 * s3_error.c   an S3 error answer: errno, retry or not, logged once
 * s3_text.c    text helpers: buffer, %-encoding, query string, dates
 * s3_list.c    ListObjectsV2 with delimiter, every page, XML parsed
 * s3_meta.c    the inode table: key <-> node id, attributes with a TTL
 * s3_work.c    the worker threads that do all network I/O
 * s3_read.c    OPEN/READ by ranged GET, with readahead
 * s3_upload.c  WRITE/FLUSH: a new body as one PUT or a multipart upload
 * s3_change.c  CREATE, MKDIR, UNLINK, RMDIR, RENAME, SETATTR, refusals
 * s3_ops.c     LOOKUP, GETATTR, directories
 * s3_creds.c   credentials: options, a credentials file, AWS_* env
 * s3_plugin.c  options, descriptor, lifecycle
 */
#ifndef S3_H
#define S3_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include <fring/plugin-helpers.h>

#include "s3_text.h"

#define S3_ROOT 1 /* FUSE_ROOT_ID */

struct s3_cfg {
	char *endpoint; /* scheme://host[:port], no trailing slash */
	char *region;
	char *bucket;
	char *prefix;        /* "" or ends in '/' */
	char *access_key;    /* never logged */
	char *secret_key;    /* never logged */
	char *session_token; /* never logged */
	char *credentials_file;
	char *profile;
	char *ca_file;
	bool path_style;
	bool tls_verify;
	bool readonly;
	uint64_t connect_timeout_ms;
	uint64_t timeout_ms;
	uint32_t retries;
	uint32_t threads;
	uint64_t part_size;
	uint32_t readahead_parts;
	uint32_t upload_parts; /* multipart parts in flight per file */
	uint64_t meta_ttl_ns;
	uint64_t attr_timeout_ns;
	uint64_t entry_timeout_ns;
	uint32_t uid, gid;
	uint32_t file_mode, dir_mode;
};

/* One node: a key (file) or a key prefix (directory), relative to
 * cfg.prefix, without a trailing slash; "" is the root. */
struct s3_node {
	struct s3_node *id_next, *path_next; /* hash chains */
	uint64_t ino;
	uint64_t nlookup;
	char *path;
	bool dir;
	uint64_t size;
	int64_t mtime;
	uint64_t fetched_ns; /* when size/mtime/dir were last seen in S3 */
	uint32_t writers;    /* open handles uploading a new body */
};

struct s3_meta {
	pthread_mutex_t lock;
	struct s3_node **by_id, **by_path;
	size_t buckets;
	size_t count;
	uint64_t next_ino;
};

struct s3_work;

struct s3_fs {
	fring_mount *mount;
	struct s3_cfg cfg;
	struct s3_meta meta;
	struct s3_work *work;
	char *base_url;                  /* the bucket's URL, no trailing '/' */
	struct curl_slist *auth_headers; /* x-amz-content-sha256 and token */
	char *userpwd;
	char *sigv4;
	uint32_t logged_kinds; /* S3_ERR_* already logged once (atomic) */
	int64_t started; /* mtime of directories, which S3 does not keep */
};

/* ---- s3_http.c ---- */

/* Error kinds, each logged once per mount with its request id. */
enum {
	S3_ERR_NOT_FOUND,
	S3_ERR_DENIED,
	S3_ERR_THROTTLED,
	S3_ERR_SERVER,
	S3_ERR_NETWORK,
	S3_ERR_OTHER,
	S3_ERR_KINDS
};

struct s3_call {
	const char *method; /* GET, HEAD, PUT, POST, DELETE */
	const char
		*key; /* object key relative to cfg.prefix; NULL: the bucket */
	bool raw_key; /* key is the full key, without cfg.prefix */
	const char *query;             /* canonical: from s3_query */
	uint64_t range_off, range_len; /* range_len 0: no Range */
	const void *body;
	size_t body_len;
	const char *copy_source; /* x-amz-copy-source, already encoded */
	/* Data sink for GET: bytes land here instead of the body buffer. */
	char *sink;
	size_t sink_cap;
	bool quiet; /* the caller logs a failure itself */
};

struct s3_resp {
	long status;
	struct s3_buf body;
	size_t sink_len;
	char request_id[96];
	char code[64];
	char etag[96];
	uint64_t content_length;
	int64_t last_modified;
	bool has_length;
};

int s3_http_global_init(void);
CURL *s3_curl_new(struct s3_fs *fs);
/* 0 on 2xx, else -errno (resp->code, request_id say why). */
int s3_http(struct s3_fs *fs, CURL *c, const struct s3_call *call,
	    struct s3_resp *resp);
void s3_resp_free(struct s3_resp *resp);
int s3_http_setup(struct s3_fs *fs);
void s3_http_teardown(struct s3_fs *fs);

/* ---- s3_error.c ---- */

/* resp->code from an error body's <Code>. */
void s3_error_code(struct s3_resp *r);
/* The errno of a non-2xx answer; *kind: its S3_ERR_* kind. */
int s3_status_errno(const struct s3_resp *r, int *kind);
bool s3_retryable(const struct s3_resp *r);
/* Log a failure once per kind per mount (not-found and quiet calls:
 * never); curl_err: a network failure's reason, else NULL. */
void s3_log_once(struct s3_fs *fs, int kind, const struct s3_call *call,
		 const struct s3_resp *r, const char *curl_err, int err);

/* ---- s3_list.c ---- */

struct s3_entry {
	char *name; /* relative to the listed directory, no slash */
	bool dir;
	uint64_t size;
	int64_t mtime;
};

struct s3_listing {
	struct s3_entry *e;
	size_t n, cap;
};

/* Every entry of directory `path` (all pages), sorted by name, a
 * directory shadowing a file of the same name. max 0: all; else stop
 * after that many (a probe). */
int s3_list_dir(struct s3_fs *fs, CURL *c, const char *path, size_t max,
		struct s3_listing *out);
void s3_listing_free(struct s3_listing *l);
/* A directory exists when anything lies under "path/". 1, 0 or -errno. */
int s3_dir_exists(struct s3_fs *fs, CURL *c, const char *path);

/* ---- s3_meta.c ---- */

int s3_meta_init(struct s3_meta *m);
void s3_meta_destroy(struct s3_meta *m);
/* Lock held by the caller for all of these. */
struct s3_node *s3_node_get(struct s3_meta *m, uint64_t ino);
struct s3_node *s3_node_find(struct s3_meta *m, const char *path);
struct s3_node *s3_node_make(struct s3_meta *m, const char *path);
/* n takes path (rename); a node that had it keeps only its id. */
int s3_node_move(struct s3_meta *m, struct s3_node *n, const char *path);
/* The files of directory dir being written (not in S3 until their
 * close, an empty one until its release): *inos malloc'ed. */
int s3_node_writing(struct s3_meta *m, const char *dir, uint64_t **inos,
		    size_t *count);
void s3_node_set(struct s3_node *n, bool dir, uint64_t size, int64_t mtime,
		 uint64_t now_ns);
bool s3_node_fresh(const struct s3_fs *fs, const struct s3_node *n,
		   uint64_t now_ns);
void s3_node_attr(const struct s3_fs *fs, const struct s3_node *n,
		  struct fring_attr *a);
void s3_node_entry(const struct s3_fs *fs, const struct s3_node *n,
		   struct fring_entry *e);
void s3_forget(void *inst, const struct fring_forget_one *items,
	       uint32_t count);
/* "dir/name" (or "name" in the root), malloc'ed. */
char *s3_child_path(const char *dir, const char *name, size_t namelen);
uint64_t s3_now_ns(void);

/* ---- s3_work.c ---- */

typedef void (*s3_job_fn)(struct s3_fs *fs, CURL *c, void *arg);
int s3_work_create(struct s3_fs *fs);
void s3_work_start(struct s3_fs *fs);
void s3_work_destroy(struct s3_fs *fs);
/* Run fn(arg) on a worker; -ENOMEM if it could not be queued. */
int s3_submit(struct s3_fs *fs, s3_job_fn fn, void *arg);
/* Answer r with the errno of a failed submit (its job never runs). */
void s3_reply_submit_err(fring_req *r, int err);

/* ---- s3_ops.c, s3_read.c, s3_upload.c, s3_change.c ---- */

void s3_lookup(void *inst, fring_req *r, const struct fring_name_args *a);
void s3_getattr(void *inst, fring_req *r, const struct fring_getattr_args *a);
void s3_opendir(void *inst, fring_req *r, const struct fring_open_args *a);
void s3_readdir(void *inst, fring_req *r, const struct fring_read_args *a);
void s3_releasedir(void *inst, fring_req *r,
		   const struct fring_release_args *a);
void s3_statfs(void *inst, fring_req *r, const struct fring_node_args *a);
void s3_open(void *inst, fring_req *r, const struct fring_open_args *a);
void s3_read(void *inst, fring_req *r, const struct fring_read_args *a);
void s3_release(void *inst, fring_req *r, const struct fring_release_args *a);
void s3_flush(void *inst, fring_req *r, const struct fring_release_args *a);
void s3_create(void *inst, fring_req *r, const struct fring_make_args *a);
void s3_write(void *inst, fring_req *r, const struct fring_write_args *a);
void s3_setattr(void *inst, fring_req *r, const struct fring_setattr_args *a);
void s3_mkdir(void *inst, fring_req *r, const struct fring_make_args *a);
void s3_unlink(void *inst, fring_req *r, const struct fring_name_args *a);
void s3_rmdir(void *inst, fring_req *r, const struct fring_name_args *a);
void s3_rename(void *inst, fring_req *r, const struct fring_rename_args *a);
void s3_refuse_make(void *inst, fring_req *r, const struct fring_make_args *a);
void s3_refuse_link(void *inst, fring_req *r, const struct fring_link_args *a);

/* ---- s3_creds.c ---- */

int s3_creds_resolve(struct s3_fs *fs);

#endif /* S3_H */
