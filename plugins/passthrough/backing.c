// SPDX-License-Identifier: MIT
/*
 * Kernel passthrough (option kernel_passthrough, ABI 1.3): regular files
 * are opened with FOPEN_PASSTHROUGH, and the kernel then reads, writes and
 * maps the backing file itself; READ and WRITE never reach the plugin.
 *
 * The kernel takes one backing file per inode at a time, and an inode's
 * opens are either all passthrough or all cached (mixing fails the open
 * with ETXTBSY), so the backing id lives in the inode: its first open
 * registers one, later opens reuse it, and the last RELEASE closes it. A
 * RELEASE comes only after the kernel has processed that open's reply, so
 * no reply still on its way names a closed id. The registration is the
 * first open's own fd: the kernel opens a backing file per FUSE open with
 * that caller's flags, so read-only and read-write opens share one id.
 */
#include "pt.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define HAS_BACKING                                                           \
	(FRING_HAS_FIELD(fring_host, struct fring_host_api, backing_close) &&  \
	 fring_host->backing_open && fring_host->backing_close)

bool pt_backing_supported(void)
{
	return HAS_BACKING;
}

void pt_backing_attach(struct pt_fs *fs, uint64_t nodeid,
		       struct fring_open_out *o)
{
	struct pt_inode *ino;
	int fd = pt_fh_fd(fs, o->fh), id, err = 0;

	if (!fs->kernel_passthrough)
		return;
	pthread_mutex_lock(&fs->lock);
	if (!fs->passthrough_on)
		goto out;
	ino = pt_inode_by_id(fs, nodeid);
	if (!ino || ino->type != S_IFREG)
		goto out;
	if (ino->plain_opens)
		goto plain;
	if (!ino->backing_id) {
		/* The open's own fd: the kernel opens a backing file per FUSE
		 * open with that caller's flags (backing_file_open), so the
		 * registration only names the inode. */
		id = fring_host->backing_open(fs->mount, fd, 0);
		if (id < 0) {
			err = id;
			/* Not negotiated or not allowed: no later open can. */
			if (err == -EOPNOTSUPP || err == -EPERM)
				fs->passthrough_on = false;
			goto plain;
		}
		ino->backing_id = id;
	}
	ino->backing_opens++;
	o->backing_id = ino->backing_id;
	/* FOPEN_DIRECT_IO would override passthrough; O_DIRECT callers get
	 * direct I/O on the backing file instead (the kernel passes each
	 * caller's flags down). */
	o->open_flags &= ~(FRING_FOPEN_DIRECT_IO | FRING_FOPEN_KEEP_CACHE |
			   FRING_FOPEN_PARALLEL_DIRECT_WRITES);
	o->open_flags |= FRING_FOPEN_PASSTHROUGH;
	o->fh |= PT_FH_BACKING;
	goto out;
plain:
	ino->plain_opens++;
	o->fh |= PT_FH_PLAIN;
out:
	pthread_mutex_unlock(&fs->lock);
	if (err == -EOPNOTSUPP || err == -EPERM) {
		fring_logf(fs->mount, FRING_LOG_WARN,
			   "passthrough: kernel passthrough unavailable (%s); "
			   "reads and writes go through fring", strerror(-err));
	} else if (err) {
		fring_logf(fs->mount, FRING_LOG_DEBUG,
			   "passthrough: node %llu served without kernel "
			   "passthrough: %s", (unsigned long long)nodeid,
			   strerror(-err));
	}
}

void pt_backing_detach(struct pt_fs *fs, uint64_t nodeid, uint64_t fh)
{
	struct pt_inode *ino;
	int id = 0;

	if (!(fh & (PT_FH_BACKING | PT_FH_PLAIN)))
		return;
	pthread_mutex_lock(&fs->lock);
	ino = pt_inode_by_id(fs, nodeid);
	if (ino && (fh & PT_FH_PLAIN) && ino->plain_opens) {
		ino->plain_opens--;
	} else if (ino && (fh & PT_FH_BACKING) && ino->backing_opens &&
		   --ino->backing_opens == 0) {
		id = ino->backing_id;
		ino->backing_id = 0;
	}
	pthread_mutex_unlock(&fs->lock);
	if (id > 0)
		fring_host->backing_close(fs->mount, id);
}
