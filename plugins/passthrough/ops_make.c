// SPDX-License-Identifier: MIT
/*
 * Operations that create names: mknod, mkdir, symlink, create, tmpfile,
 * link. New inodes are made with the caller's fsuid/fsgid so they belong
 * to it.
 */
#include "pt.h"

#include <linux/magic.h>
#include <sys/vfs.h>

#include <stdlib.h>
#include <unistd.h>

enum make_kind { MAKE_NOD, MAKE_DIR, MAKE_SYMLINK };

/* The kernel applied the caller's umask to mode; our process umask would
 * strip more. Put back the permission bits it took (keeping bits the file
 * system added, such as an inherited setgid). */
static void fix_mode(struct pt_fs *fs, int fd, bool opath, uint32_t mode)
{
	mode_t lost = mode & 0777 & fs->umask;
	char proc[32];
	struct stat st;

	if (!lost || fstat(fd, &st) || S_ISLNK(st.st_mode) ||
	    (st.st_mode & lost) == lost)
		return;
	pt_proc_path(proc, fd);
	if (opath)
		chmod(proc, (st.st_mode & 07777) | lost);
	else
		fchmod(fd, (st.st_mode & 07777) | lost);
}

static void make_node(struct pt_fs *fs, fring_req *r,
		      const struct fring_make_args *a, enum make_kind kind)
{
	struct pt_creds cr;
	struct fring_entry e;
	struct pt_ref p;
	int err = pt_ref_get(fs, a->parent, &p);
	int res, fd;

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	pt_creds_enter(r, &cr);
	if (kind == MAKE_DIR)
		res = mkdirat(p.fd, a->name, a->mode & 07777);
	else if (kind == MAKE_SYMLINK)
		res = symlinkat(a->link_target, p.fd, a->name);
	else
		res = mknodat(p.fd, a->name, a->mode, (dev_t)a->rdev);
	err = res ? -errno : 0;
	pt_creds_leave(&cr);

	if (!err) {
		fd = openat(p.fd, a->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
		} else {
			fix_mode(fs, fd, true, a->mode);
			err = pt_make_entry(fs, p.ino, a->name, fd, true, &e);
		}
	}
	pt_ref_put(fs, &p);
	if (err)
		fring_host->reply_err(r, err);
	else if (fring_host->reply_entry(r, &e) < 0)
		pt_forget_one(fs, e.ino, 1);
}

void pt_mknod(void *inst, fring_req *r, const struct fring_make_args *a)
{
	make_node(inst, r, a, MAKE_NOD);
}

void pt_mkdir(void *inst, fring_req *r, const struct fring_make_args *a)
{
	make_node(inst, r, a, MAKE_DIR);
}

void pt_symlink(void *inst, fring_req *r, const struct fring_make_args *a)
{
	make_node(inst, r, a, MAKE_SYMLINK);
}

/* With the write-back cache the kernel may read pages of a file opened
 * write-only and handles O_APPEND itself. */
int pt_open_flags(struct pt_fs *fs, uint32_t flags)
{
	/* O_DIRECT stays the caller's (FOPEN_DIRECT_IO, see pt_open_out): the
	 * backing file is opened without it, since the runtime's request
	 * buffers and page writeback at EOF are not block aligned. */
	flags &= ~(uint32_t)(O_NOFOLLOW | O_NOCTTY | O_DIRECT);
	if (fs->writeback_on) {
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~(uint32_t)O_ACCMODE) | O_RDWR;
		flags &= ~(uint32_t)O_APPEND;
	}
	return (int)flags | O_CLOEXEC;
}

/* CREATE's and TMPFILE's reply: the new inode's entry (one lookup
 * reference, dropped again on any failure) with fd open as its file
 * handle. fd is the caller's until here, ours after. */
static void reply_opened(struct pt_fs *fs, fring_req *r, uint32_t flags, int fd,
			 int oflags, const struct fring_entry *e)
{
	struct fring_open_out o;
	int err = pt_open_out(fs, flags, fd, oflags, e->ino, &o);

	if (err) {
		close(fd);
		pt_forget_one(fs, e->ino, 1);
		fring_host->reply_err(r, err);
		return;
	}
	pt_backing_attach(fs, e->ino, &o);
	pt_open_zero_copy(fs, S_ISREG(e->attr.mode), fd, &o);
	if (fring_host->reply_create(r, e, &o) < 0) {
		pt_backing_detach(fs, e->ino, o.fh);
		pt_fh_free(fs, o.fh);
		close(fd);
		pt_forget_one(fs, e->ino, 1);
	}
}

/* File systems without a ->flush: close() there reports no error and
 * drops only POSIX locks, which this server never takes on backing files
 * (locks are the kernel's, README), so FLUSH would cost a round trip per
 * close(2) for nothing: FOPEN_NOFLUSH. (The kernel still flushes with the
 * writeback cache on.) Network file systems keep FLUSH, for their
 * deferred write errors. */
static bool flush_is_noop(int fd)
{
	struct statfs st;

	if (fstatfs(fd, &st))
		return false;
	switch ((unsigned long)st.f_type) {
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
		return true;
	}
	return false;
}

int pt_open_out(struct pt_fs *fs, uint32_t flags, int fd, int oflags,
		uint64_t nodeid, struct fring_open_out *o)
{
	/* What a takeover reopens it with (state_save.c, state_load.c): never creating or
	 * truncating again. */
	uint32_t keep = (uint32_t)oflags &
			~(uint32_t)(O_CREAT | O_EXCL | O_TRUNC | O_TMPFILE);
	int err;

	memset(o, 0, sizeof(*o));
	err = pt_fh_new(fs, fd, keep, nodeid, NULL, &o->fh);
	if (err)
		return err;
	if (flush_is_noop(fd))
		o->open_flags |= FRING_FOPEN_NOFLUSH;
	/* O_DIRECT callers bypass the page cache here too, and their writes
	 * to one file may run in parallel (no per-inode serialisation in the
	 * kernel): the backing file orders them. */
	if (flags & O_DIRECT)
		o->open_flags |= FRING_FOPEN_DIRECT_IO |
				 FRING_FOPEN_PARALLEL_DIRECT_WRITES;
	else if (fs->keep_cache)
		/* The kernel still drops the cache when it sees the size or
		 * mtime change (AUTO_INVAL_DATA). */
		o->open_flags |= FRING_FOPEN_KEEP_CACHE;
	return 0;
}

void pt_create(void *inst, fring_req *r, const struct fring_make_args *a)
{
	struct pt_fs *fs = inst;
	struct pt_creds cr;
	struct fring_entry e;
	struct pt_ref p;
	int err = pt_ref_get(fs, a->parent, &p);
	int fd, oflags;

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	pt_creds_enter(r, &cr);
	oflags = pt_open_flags(fs, a->flags) | O_CREAT;
	fd = openat(p.fd, a->name, oflags, a->mode & 07777);
	err = fd < 0 ? -errno : 0;
	pt_creds_leave(&cr);
	if (!err) {
		fix_mode(fs, fd, false, a->mode);
		err = pt_make_entry(fs, p.ino, a->name, fd, false, &e);
		if (err)
			close(fd);
	}
	pt_ref_put(fs, &p);
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	reply_opened(fs, r, a->flags, fd, oflags, &e);
}

/* O_TMPFILE (FUSE_TMPFILE, Linux 6.1+): an unnamed file in the backing
 * directory, made as the caller like create's. Its inode has no name to
 * be found again by, so it keeps an O_PATH fd pinned (pt_cache_pin_locked)
 * until LINK gives it one or the kernel forgets it (last close). */
void pt_tmpfile(void *inst, fring_req *r, const struct fring_make_args *a)
{
	struct pt_fs *fs = inst;
	struct pt_creds cr;
	struct fring_entry e;
	struct pt_ref p;
	char proc[32];
	int err = pt_ref_get(fs, a->parent, &p);
	int fd, opath, oflags;

	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	pt_creds_enter(r, &cr);
	/* a->flags hold O_TMPFILE already; O_EXCL (never linkable) is kept
	 * for the backing file too. "." of an O_PATH directory fd is fine. */
	oflags = (pt_open_flags(fs, a->flags) & ~O_CREAT) | O_TMPFILE;
	fd = openat(p.fd, ".", oflags, a->mode & 07777);
	err = fd < 0 ? -errno : 0;
	pt_creds_leave(&cr);
	pt_ref_put(fs, &p);
	if (err) {
		/* A backing file system without O_TMPFILE: say so as the
		 * kernel does for a local one. */
		fring_host->reply_err(r, err == -EISDIR ? -EOPNOTSUPP : err);
		return;
	}
	fix_mode(fs, fd, false, a->mode);
	pt_proc_path(proc, fd);
	opath = open(proc, O_PATH | O_CLOEXEC);
	err = opath < 0 ? -errno : pt_make_tmpfile_entry(fs, fd, opath, &e);
	if (err) {
		close(fd);
		fring_host->reply_err(r, err);
		return;
	}
	reply_opened(fs, r, a->flags, fd, oflags, &e);
}

/* A hard link creates no inode, so it runs as root: linkat(AT_EMPTY_PATH)
 * needs CAP_DAC_READ_SEARCH; the /proc form is the fallback. */
void pt_link(void *inst, fring_req *r, const struct fring_link_args *a)
{
	struct pt_fs *fs = inst;
	struct fring_entry e;
	struct pt_ref n, p;
	char proc[32];
	int err, fd;

	err = pt_ref_get(fs, a->nodeid, &n);
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	err = pt_ref_get(fs, a->newparent, &p);
	if (err) {
		pt_ref_put(fs, &n);
		fring_host->reply_err(r, err);
		return;
	}
	if (linkat(n.fd, "", p.fd, a->newname, AT_EMPTY_PATH)) {
		err = -errno;
		if (err == -EPERM || err == -ENOENT) {
			pt_proc_path(proc, n.fd);
			err = linkat(AT_FDCWD, proc, p.fd, a->newname,
				     AT_SYMLINK_FOLLOW) ? -errno : 0;
		}
	}
	if (!err) {
		fd = openat(p.fd, a->newname, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		err = fd < 0 ? -errno
			     : pt_make_entry(fs, p.ino, a->newname, fd, true, &e);
	}
	pt_ref_put(fs, &p);
	pt_ref_put(fs, &n);
	if (!err && e.ino == a->nodeid)
		pt_tmpfile_named(fs, e.ino); /* an O_TMPFILE file linked in */
	if (err)
		fring_host->reply_err(r, err);
	else if (fring_host->reply_entry(r, &e) < 0)
		pt_forget_one(fs, e.ino, 1);
}
