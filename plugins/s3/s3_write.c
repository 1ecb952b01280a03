// SPDX-License-Identifier: MIT
/*
 * Writes. Not yet: every modifying operation answers EROFS.
 */
#include "s3_file.h"

int s3_upload_begin(struct s3_fs *fs, struct s3_file *f)
{
	return -EROFS;
}

void s3_upload_drop(struct s3_fs *fs, struct s3_file *f)
{
}

void s3_flush(void *inst, fring_req *r, const struct fring_release_args *a)
{
	fring_host->reply_err(r, 0);
}

void s3_create(void *inst, fring_req *r, const struct fring_make_args *a)
{
	fring_host->reply_err(r, -EROFS);
}

void s3_write(void *inst, fring_req *r, const struct fring_write_args *a)
{
	fring_host->reply_err(r, -EROFS);
}

void s3_setattr(void *inst, fring_req *r, const struct fring_setattr_args *a)
{
	fring_host->reply_err(r, -EROFS);
}

void s3_mkdir(void *inst, fring_req *r, const struct fring_make_args *a)
{
	fring_host->reply_err(r, -EROFS);
}

void s3_unlink(void *inst, fring_req *r, const struct fring_name_args *a)
{
	fring_host->reply_err(r, -EROFS);
}

void s3_rmdir(void *inst, fring_req *r, const struct fring_name_args *a)
{
	fring_host->reply_err(r, -EROFS);
}

void s3_rename(void *inst, fring_req *r, const struct fring_rename_args *a)
{
	fring_host->reply_err(r, -EROFS);
}

void s3_refuse_make(void *inst, fring_req *r, const struct fring_make_args *a)
{
	fring_host->reply_err(r, -EROFS);
}

void s3_refuse_link(void *inst, fring_req *r, const struct fring_link_args *a)
{
	fring_host->reply_err(r, -EROFS);
}
