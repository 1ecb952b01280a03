// SPDX-License-Identifier: MIT
/*
 * Takeover state, the save (ABI 1.7 state_save; the load is state_load.c): the node-id table and
 * the open-file table, so a new passthrough instance gives every node id,
 * generation, lookup count and fh the kernel holds the same meaning.
 * Descriptors cannot travel in the memfd, so the state records how to
 * open each again:
 *   inode: its file handle (open_by_handle_at), or in path mode its
 *          parent's node id and name; an inode pinned by its O_PATH fd
 *          (O_TMPFILE, unlinked in path mode) also the old process's fd
 *          number, reopened through /proc/OLDPID/fd/N (the old process
 *          lives until the load has answered).
 *   open:  slot, node id, open(2) flags without O_CREAT/O_EXCL/O_TRUNC,
 *          and the old fd number. Reopened through /proc/OLDPID/fd/N
 *          first (works for a file unlinked while open), else through
 *          the inode; both checked against the inode's (dev, ino). One
 *          that cannot be reopened is kept as lost: its requests get EIO.
 *
 * Format, version 1, native endian (both sides run on the same machine):
 *   header, then ninodes inode records (each followed by its name and
 *   handle bytes), then nopens open records.
 * Another version is refused with -EPROTO (the old server keeps serving).
 */
#include "pt.h"
#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int put(FILE *f, const void *p, size_t n)
{
	if (!n)
		return 0; /* p may be NULL: an empty name or handle */
	return fwrite(p, 1, n, f) == n ? 0 : -EIO;
}

/* A stdio stream on a dup of fd at offset 0 (the caller keeps fd). */
static FILE *stream(int fd, const char *mode)
{
	int d;
	FILE *f;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return NULL;
	d = dup(fd);
	if (d < 0)
		return NULL;
	f = fdopen(d, mode);
	if (!f)
		close(d);
	return f;
}

void pt_state_inode_of(const struct pt_inode *in, struct pt_state_inode *si)
{
	*si = (struct pt_state_inode){
		.nodeid = in->nodeid,
		.generation = in->generation,
		.dev = in->dev,
		.ino = in->ino,
		.nlookup = in->nlookup,
		.parent = in->parent ? in->parent->nodeid : 0,
		.type = in->type,
		.flags = (in->hashed ? SI_HASHED : 0) |
			 (in->tmpfile ? SI_TMPFILE : 0) |
			 (in->pinned ? SI_PINNED : 0),
		.fd = in->pinned ? in->fd : -1,
		.backing_id = in->backing_id,
		.backing_opens = in->backing_opens,
		.plain_opens = in->plain_opens,
		.name_len = in->name ? (uint32_t)strlen(in->name) : 0,
		.handle_bytes = in->handle ? in->handle->handle_bytes : 0,
		.handle_type = in->handle ? in->handle->handle_type : 0,
	};
}

static int save_inode(FILE *f, const struct pt_inode *in)
{
	struct pt_state_inode si;

	pt_state_inode_of(in, &si);
	return put(f, &si, sizeof(si)) ?:
	       put(f, in->name ? in->name : "", si.name_len) ?:
	       put(f, in->handle ? in->handle->f_handle : NULL,
		   si.handle_bytes);
}

static int save_opens(struct pt_fs *fs, FILE *f)
{
	int ret = 0;

	for (uint32_t s = 0; !ret && s < fs->opens_top; s++) {
		const struct pt_open *o = pt_fh_get(fs, s);
		struct pt_state_open so;

		if (!o)
			continue;
		so = (struct pt_state_open){ .slot = s,
					     .flags = o->flags,
					     .nodeid = o->nodeid,
					     .fd = o->fd,
					     .dir = o->dir != NULL };
		ret = put(f, &so, sizeof(so));
	}
	return ret;
}

int32_t pt_state_save(void *inst, int fd, uint32_t *version)
{
	struct pt_fs *fs = inst;
	struct pt_state_hdr h = { .magic = PT_STATE_MAGIC,
				  .version = PT_STATE_VERSION,
				  .pid = getpid(),
				  .handles = fs->handles };
	struct pt_clock t0 = pt_clock_now(), t1;
	FILE *f;
	int ret;

	if (ftruncate(fd, 0) < 0)
		return -errno;
	f = stream(fd, "w");
	if (!f)
		return -errno;
	pthread_mutex_lock(&fs->lock);
	h.root_dev = fs->root.dev;
	h.root_ino = fs->root.ino;
	h.next_generation = fs->next_generation;
	h.nids = fs->nids;
	for (size_t i = 0; i < fs->nids; i++)
		h.ninodes += fs->ids[i] && fs->ids[i] != &fs->root;
	for (uint32_t s = 0; s < fs->opens_top; s++)
		h.nopens += pt_fh_get(fs, s) != NULL;
	ret = put(f, &h, sizeof(h));
	for (size_t i = 0; !ret && i < fs->nids; i++)
		if (fs->ids[i] && fs->ids[i] != &fs->root)
			ret = save_inode(f, fs->ids[i]);
	ret = ret ?: save_opens(fs, f);
	pthread_mutex_unlock(&fs->lock);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret)
		return ret;
	*version = PT_STATE_VERSION;
	/* bench/takeover/pt_state.py reads this line and the load's. */
	t1 = pt_clock_now();
	fring_logf(fs->mount, FRING_LOG_INFO,
		   "passthrough: takeover state saved: %llu inodes, %llu open "
		   "files, %lld bytes in %.1f ms (%.1f ms CPU)",
		   (unsigned long long)h.ninodes, (unsigned long long)h.nopens,
		   (long long)lseek(fd, 0, SEEK_END), t1.wall - t0.wall,
		   t1.cpu - t0.cpu);
	return 0;
}
