// SPDX-License-Identifier: MIT
/*
 * Operations that look up names or read and change inode attributes.
 */
#include "pt.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <unistd.h>

void pt_lookup(void *inst, fring_req *r, const struct fring_name_args *a)
{
	struct pt_fs *fs = inst;
	struct fring_entry e;
	struct pt_ref p;
	int err = pt_ref_get(fs, a->parent, &p);

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	err = pt_lookup_at(fs, &p, a->name, &e);
	pt_ref_put(fs, &p);
	if (err == -ENOENT && fs->entry_timeout_ns) {
		/* A negative entry: the kernel caches the miss. */
		memset(&e, 0, sizeof(e));
		e.entry_timeout_ns = fs->entry_timeout_ns;
		fring_host->reply_entry(r, &e);
		return;
	}
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	if (fring_host->reply_entry(r, &e) < 0)
		pt_forget_one(fs, e.ino, 1);
}

void pt_forget(void *inst, const struct fring_forget_one *items,
	       uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		pt_forget_one(inst, items[i].nodeid, items[i].nlookup);
}

static void reply_stat(struct pt_fs *fs, fring_req *r, const struct stat *st)
{
	struct fring_attr attr;

	fring_attr_from_stat(st, &attr);
	fring_host->reply_attr(r, &attr, fs->attr_timeout_ns);
}

void pt_getattr(void *inst, fring_req *r, const struct fring_getattr_args *a)
{
	struct pt_fs *fs = inst;
	struct stat st;
	struct pt_ref ref;
	int err;

	/* An fh lost at a takeover (fd -1): the inode's own way. */
	if ((a->flags & FRING_GETATTR_FH) && pt_fh_fd(fs, a->fh) >= 0) {
		if (fstat(pt_fh_fd(fs, a->fh), &st))
			fring_host->reply_err(r, -errno);
		else
			reply_stat(fs, r, &st);
		return;
	}
	err = pt_ref_get(fs, a->nodeid, &ref);
	if (!err) {
		err = pt_stat_ref(&ref, &st);
		pt_ref_put(fs, &ref);
	}
	if (err)
		fring_host->reply_err(r, err);
	else
		reply_stat(fs, r, &st);
}

static struct timespec set_time(uint32_t valid, uint32_t set, uint32_t now,
				int64_t sec, uint32_t nsec)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = UTIME_OMIT };

	if (valid & now) {
		ts.tv_nsec = UTIME_NOW;
	} else if (valid & set) {
		ts.tv_sec = sec;
		ts.tv_nsec = nsec;
	}
	return ts;
}

/* Apply the changes in order mode, owner, size, times; an open fh is used
 * where the kernel gave one, else the inode's O_PATH fd or its /proc path. */
static int do_setattr(struct pt_fs *fs, struct pt_ref *ref,
		      const struct fring_setattr_args *a)
{
	int fh = (a->valid & FRING_SET_FH) ? pt_fh_fd(fs, a->fh) : -1;
	char proc[32];

	pt_proc_path(proc, ref->fd);
	if (a->valid & FRING_SET_MODE) {
		if (fh >= 0 ? fchmod(fh, a->mode & 07777)
			    : chmod(proc, a->mode & 07777))
			return -errno;
	}
	if (a->valid & (FRING_SET_UID | FRING_SET_GID)) {
		uid_t uid = (a->valid & FRING_SET_UID) ? a->uid : (uid_t)-1;
		gid_t gid = (a->valid & FRING_SET_GID) ? a->gid : (gid_t)-1;

		if (fchownat(ref->fd, "", uid, gid,
			     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
			return -errno;
	}
	if (a->valid & FRING_SET_SIZE) {
		if (fh >= 0 ? ftruncate(fh, (off_t)a->file_size)
			    : truncate(proc, (off_t)a->file_size))
			return -errno;
	}
	if (a->valid & (FRING_SET_ATIME | FRING_SET_MTIME | FRING_SET_ATIME_NOW |
			FRING_SET_MTIME_NOW)) {
		struct timespec tv[2];

		tv[0] = set_time(a->valid, FRING_SET_ATIME, FRING_SET_ATIME_NOW,
				 a->atime_sec, a->atime_nsec);
		tv[1] = set_time(a->valid, FRING_SET_MTIME, FRING_SET_MTIME_NOW,
				 a->mtime_sec, a->mtime_nsec);
		if (fh >= 0 ? futimens(fh, tv)
			    : utimensat(ref->fd, "", tv, AT_EMPTY_PATH))
			return -errno;
	}
	return 0;
}

void pt_setattr(void *inst, fring_req *r, const struct fring_setattr_args *a)
{
	struct pt_fs *fs = inst;
	struct stat st;
	struct pt_ref ref;
	int err = pt_ref_get(fs, a->nodeid, &ref);

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	err = do_setattr(fs, &ref, a);
	if (!err)
		err = pt_stat_ref(&ref, &st);
	pt_ref_put(fs, &ref);
	if (err)
		fring_host->reply_err(r, err);
	else
		reply_stat(fs, r, &st);
}

void pt_readlink(void *inst, fring_req *r, const struct fring_node_args *a)
{
	struct pt_fs *fs = inst;
	char buf[PATH_MAX];
	struct pt_ref ref;
	ssize_t n;
	int err = pt_ref_get(fs, a->nodeid, &ref);

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	n = readlinkat(ref.fd, "", buf, sizeof(buf));
	err = n < 0 ? -errno : 0;
	pt_ref_put(fs, &ref);
	if (err)
		fring_host->reply_err(r, err);
	else if (n == sizeof(buf))
		fring_host->reply_err(r, -ENAMETOOLONG);
	else
		fring_host->reply_readlink(r, buf, (uint32_t)n);
}

void pt_statfs(void *inst, fring_req *r, const struct fring_node_args *a)
{
	struct pt_fs *fs = inst;
	struct fring_statfs out;
	struct statfs sf;
	struct pt_ref ref;
	int err = pt_ref_get(fs, a->nodeid, &ref);

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	err = fstatfs(ref.fd, &sf) ? -errno : 0;
	pt_ref_put(fs, &ref);
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	memset(&out, 0, sizeof(out));
	out.blocks = sf.f_blocks;
	out.bfree = sf.f_bfree;
	out.bavail = sf.f_bavail;
	out.files = sf.f_files;
	out.ffree = sf.f_ffree;
	out.bsize = (uint32_t)sf.f_bsize;
	out.namelen = (uint32_t)sf.f_namelen;
	out.frsize = (uint32_t)sf.f_frsize;
	fring_host->reply_statfs(r, &out);
}
