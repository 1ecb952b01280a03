// SPDX-License-Identifier: MIT
/*
 * SETATTR: chmod, chown, truncate, utimes. Every check runs before the
 * first change so that a failing call changes nothing.
 */
#include <string.h>
#include <unistd.h>

#include "ops.h"

#define SET_TIMES_EXPLICIT(v)                                                 \
	((((v) & FRING_SET_ATIME) && !((v) & FRING_SET_ATIME_NOW)) ||         \
	 (((v) & FRING_SET_MTIME) && !((v) & FRING_SET_MTIME_NOW)))

static int check_owner_changes(const struct mfs_inode *in,
			       const struct fring_setattr_args *a,
			       const struct mfs_cred *c)
{
	bool root = c->uid == 0, owner = root || c->uid == in->uid;

	/* Only root gives files away; the owner may "chown" to itself. */
	if ((a->valid & FRING_SET_UID) &&
	    (a->uid != in->uid ? !root : !owner))
		return -EPERM;
	/* The owner may change the group to one of its own groups. */
	if ((a->valid & FRING_SET_GID) && !root &&
	    (!owner || (a->gid != in->gid && !mfs_in_group(c, a->gid))))
		return -EPERM;
	return 0;
}

/* The mode to set, or -EPERM. A non-owner may only drop setuid/setgid: the
 * kernel sends that on behalf of writers and truncaters (privilege kill). */
static int64_t new_mode(const struct mfs_inode *in,
			const struct fring_setattr_args *a,
			const struct mfs_cred *c, uint32_t gid_after)
{
	uint32_t old = in->mode & 07777, mode = a->mode & 07777;

	if (c->uid != 0 && c->uid != in->uid) {
		if ((mode & ~old) || ((old & ~mode) & ~(uint32_t)(S_ISUID | S_ISGID)))
			return -EPERM;
	} else if (c->uid != 0 && !mfs_in_group(c, gid_after)) {
		mode &= ~(uint32_t)S_ISGID;
	}
	return (in->mode & S_IFMT) | mode;
}

static int check_times(const struct mfs_inode *in,
		       const struct fring_setattr_args *a,
		       const struct mfs_cred *c)
{
	bool owner = c->uid == 0 || c->uid == in->uid;
	uint32_t v = a->valid;

	if (!(v & (FRING_SET_ATIME | FRING_SET_MTIME | FRING_SET_ATIME_NOW |
		   FRING_SET_MTIME_NOW)))
		return 0;
	if (SET_TIMES_EXPLICIT(v))
		return owner ? 0 : -EPERM;
	/* "Now" is also allowed to anyone who may write the file. */
	return owner ? 0 : mfs_may(in, c, W_OK);
}

static void set_time(struct timespec *t, int64_t sec, uint32_t nsec,
		     const struct timespec *now, bool use_now)
{
	if (use_now) {
		*t = *now;
	} else {
		t->tv_sec = sec;
		t->tv_nsec = nsec;
	}
}

void mfs_op_setattr(void *inst, fring_req *r,
		    const struct fring_setattr_args *a)
{
	struct memfs *fs = inst;
	uint32_t v = a->valid;
	struct mfs_inode *in;
	struct fring_attr attr;
	struct timespec now;
	struct mfs_cred c;
	int64_t mode = -1;
	int err;

	mfs_cred(r, &c);
	pthread_rwlock_wrlock(&fs->lock);
	in = mfs_iget(fs, a->nodeid);
	if (!in) {
		err = -ENOENT;
		goto out;
	}
	err = check_owner_changes(in, a, &c);
	if (!err && (v & FRING_SET_MODE)) {
		mode = new_mode(in, a, &c,
				(v & FRING_SET_GID) ? a->gid : in->gid);
		if (mode < 0)
			err = (int)mode;
	}
	if (!err && (v & FRING_SET_SIZE)) {
		if (S_ISDIR(in->mode))
			err = -EISDIR;
		else if (!S_ISREG(in->mode))
			err = -EINVAL;
		else if (a->file_size > MFS_MAX_FILE_SIZE)
			err = -EFBIG;
		else if (!(v & FRING_SET_FH)) /* ftruncate: open checked */
			err = mfs_check(fs, in, &c, W_OK);
	}
	if (!err)
		err = check_times(in, a, &c);
	if (err)
		goto out;

	mfs_now(&now);
	if ((v & FRING_SET_SIZE) && a->file_size != in->size) {
		mfs_data_truncate(fs, &in->data, in->size, a->file_size);
		in->size = a->file_size;
		in->mtime = now;
	}
	if (v & (FRING_SET_UID | FRING_SET_GID)) {
		if (v & FRING_SET_UID)
			in->uid = a->uid;
		if (v & FRING_SET_GID)
			in->gid = a->gid;
		/* Like chown(2) on Linux: a new owner loses the privileges. */
		if (!S_ISDIR(in->mode))
			in->mode = mfs_kill_suidgid(in->mode);
	}
	if (mode >= 0)
		in->mode = (uint32_t)mode;
	if (v & FRING_SET_KILL_SUIDGID)
		in->mode = mfs_kill_suidgid(in->mode);
	if (v & (FRING_SET_ATIME | FRING_SET_ATIME_NOW))
		set_time(&in->atime, a->atime_sec, a->atime_nsec, &now,
			 v & FRING_SET_ATIME_NOW);
	if (v & (FRING_SET_MTIME | FRING_SET_MTIME_NOW))
		set_time(&in->mtime, a->mtime_sec, a->mtime_nsec, &now,
			 v & FRING_SET_MTIME_NOW);
	set_time(&in->ctime, a->ctime_sec, a->ctime_nsec, &now,
		 !(v & FRING_SET_CTIME));
	mfs_fill_attr(in, &attr);
out:
	pthread_rwlock_unlock(&fs->lock);
	if (err)
		mfs_err(r, err);
	else
		fring_host->reply_attr(r, &attr, fs->attr_ns);
}
