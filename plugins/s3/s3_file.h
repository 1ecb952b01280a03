// SPDX-License-Identifier: MIT
/* An open file: s3_read.c reads it, s3_write.c uploads a new body. */
#ifndef S3_FILE_H
#define S3_FILE_H

#include "s3.h"

struct s3_upload;

struct s3_file {
	uint64_t ino;
	char *path;
	uint64_t size; /* the object's, when opened */
	pthread_mutex_t lock;
	/* Read window: bytes [win_off, win_off + win_len) of the object. */
	char *win;
	uint64_t win_off;
	size_t win_len, win_cap;
	uint64_t next_off;    /* where a sequential reader reads next */
	size_t ahead;         /* the next sequential fetch's size */
	struct s3_upload *up; /* open for writing: the new body */
};

struct s3_file *s3_file_new(uint64_t ino, const char *path, uint64_t size);
void s3_file_free(struct s3_file *f);
/* s3_upload.c: OPEN for writing (O_TRUNC or a new file) starts a new
 * body; drop forgets one never started (no request sent yet); release
 * at RELEASE: true if it took f over (an abort runs on a worker and
 * frees f). */
int s3_upload_begin(struct s3_fs *fs, struct s3_file *f);
void s3_upload_drop(struct s3_fs *fs, struct s3_file *f);
bool s3_upload_release(struct s3_fs *fs, struct s3_file *f);
/* s3_read.c: answer an OPEN or CREATE of a file known to exist. */
void s3_open_reply(struct s3_fs *fs, fring_req *r, uint64_t ino,
		   const char *path, uint64_t size, uint32_t flags,
		   const struct fring_entry *created);

#endif /* S3_FILE_H */
