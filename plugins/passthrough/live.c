// SPDX-License-Identifier: MIT
/*
 * restart: on_crash (ABI 1.8 state_live): the node-id and open-file
 * tables kept, as they change, in a memfd the supervisor holds, so that a
 * new instance started after this process died gives every node id,
 * generation and fh the kernel holds the same meaning.
 *
 * The memfd: a header page, then two regions (sparse; only what is
 * written takes memory). The active one is a log of records, appended
 * under fs->lock after the tables changed: an inode's whole record (as
 * state_save.c saves it), an inode gone, an open, a close; the last record of
 * a node id or slot wins. A record's first word (type, length) is stored
 * last, so one cut short by a crash ends the log. When the log outgrows
 * twice what the tables hold, the tables are written afresh into the
 * other region, which then becomes the active one by one store.
 *
 * Recovery turns the log into a state_save.c stream (version 1) and loads it:
 * inodes come back by file handle or path, open files are reopened the
 * same way (the dead process's descriptors are gone: an open file that
 * was unlinked, or an O_TMPFILE, is lost and its I/O fails with EIO).
 */
#include "pt.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define LIVE_MAGIC 0x564c5450u /* "PTLV" */
#define LIVE_HDR 4096ull
#define LIVE_REGION (1ull << 30)
#define LIVE_SIZE (LIVE_HDR + 2 * LIVE_REGION)
#define LIVE_MIN_COMPACT (4ull << 20)

struct live_hdr {
	uint32_t magic, handles;
	uint64_t root_dev, root_ino;
	_Atomic uint64_t next_generation; /* at the last compaction */
	_Atomic uint32_t active;          /* region of the log; 2: broken */
};

struct pt_live {
	int fd;
	char *map;
	uint32_t region;
	uint64_t tail, limit;
};

static struct live_hdr *hdr_of(const struct pt_live *l)
{
	return (struct live_hdr *)l->map;
}

static char *region(const struct pt_live *l, uint32_t r)
{
	return l->map + LIVE_HDR + r * LIVE_REGION;
}

static int put_rec(char *base, uint64_t *tail, uint32_t type,
		   const struct iovec *iov, int n)
{
	size_t len = 8, o = 8;
	char *p = base + *tail;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	len = (len + 7) & ~(size_t)7;
	if (*tail + len + 8 > LIVE_REGION)
		return -ENOSPC;
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len)
			memcpy(p + o, iov[i].iov_base, iov[i].iov_len);
		o += iov[i].iov_len;
	}
	atomic_store_explicit((_Atomic uint64_t *)p, (uint64_t)type << 32 | len,
			      memory_order_release);
	*tail += len;
	return 0;
}

static int put_inode(char *base, uint64_t *tail, const struct pt_inode *in)
{
	struct pt_state_inode si;
	struct iovec iov[3];

	pt_state_inode_of(in, &si);
	si.fd = -1;      /* a pinned fd dies with this process */
	si.flags &= ~2u; /* nor is an O_TMPFILE pinned any more */
	iov[0] = (struct iovec){ &si, sizeof(si) };
	iov[1] = (struct iovec){ in->name, si.name_len };
	iov[2] = (struct iovec){ in->handle ? in->handle->f_handle : NULL,
				 si.handle_bytes };
	return put_rec(base, tail, PT_LIVE_INODE, iov, 3);
}

static int put_open(char *base, uint64_t *tail, uint32_t slot, uint32_t flags,
		    uint64_t nodeid, bool dir)
{
	struct pt_state_open so = { .slot = slot,
				    .flags = flags,
				    .nodeid = nodeid,
				    .fd = -1,
				    .dir = dir };
	struct iovec iov = { &so, sizeof(so) };

	return put_rec(base, tail, PT_LIVE_OPEN, &iov, 1);
}

static void punch(struct pt_live *l, uint32_t r)
{
	fallocate(l->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		  (off_t)(LIVE_HDR + r * LIVE_REGION), (off_t)LIVE_REGION);
}

/* Write the tables into the other region and make it the log (lock held;
 * also after a change the log could not take: the tables have it). */
static void compact(struct pt_fs *fs)
{
	struct pt_live *l = fs->live;
	uint32_t other = !l->region;
	char *base = region(l, other);
	uint64_t t = 0;
	int ret = 0;

	punch(l, other);
	for (size_t i = 0; !ret && i < fs->nids; i++)
		if (fs->ids[i] && fs->ids[i] != &fs->root)
			ret = put_inode(base, &t, fs->ids[i]);
	for (uint32_t s = 0; !ret && s < fs->opens_top; s++) {
		const struct pt_open *o = pt_fh_get(fs, s);

		if (o)
			ret = put_open(base, &t, s, o->flags, o->nodeid,
				       o->dir != NULL);
	}
	if (ret) {
		/* A recovery from here would be wrong: none at all. */
		atomic_store(&hdr_of(l)->active, 2);
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: the crash-restart state outgrew %llu "
			   "MiB: a crash now aborts the mount",
			   LIVE_REGION >> 20);
		return;
	}
	atomic_store(&hdr_of(l)->next_generation, fs->next_generation);
	atomic_store(&hdr_of(l)->active, other);
	punch(l, l->region);
	l->region = other;
	l->tail = t;
	l->limit = 2 * t > LIVE_MIN_COMPACT ? 2 * t : LIVE_MIN_COMPACT;
}

/* fs->live set (pt.h's inline test), and the log not given up. */
static bool live_on(const struct pt_fs *fs)
{
	return atomic_load(&hdr_of(fs->live)->active) < 2;
}

/* The log takes a change, or the tables are written afresh (they have
 * it already). */
static bool room(struct pt_fs *fs)
{
	if (fs->live->tail <= fs->live->limit)
		return true;
	compact(fs);
	return false;
}

void pt_live_inode_rec(struct pt_fs *fs, const struct pt_inode *in)
{
	if (!live_on(fs) || in == &fs->root || !room(fs))
		return;
	if (put_inode(region(fs->live, fs->live->region), &fs->live->tail, in))
		compact(fs);
}

void pt_live_id_rec(struct pt_fs *fs, uint32_t type, uint64_t id)
{
	struct iovec iov = { &id, sizeof(id) };

	if (!live_on(fs) || !room(fs))
		return;
	if (put_rec(region(fs->live, fs->live->region), &fs->live->tail, type,
		    &iov, 1))
		compact(fs);
}

void pt_live_open_rec(struct pt_fs *fs, uint32_t slot, uint32_t flags,
		      uint64_t nodeid, bool dir)
{
	if (!live_on(fs) || !room(fs))
		return;
	if (put_open(region(fs->live, fs->live->region), &fs->live->tail, slot,
		     flags, nodeid, dir))
		compact(fs);
}

/* ---- recovery: the log as a saved-state stream ---- */

struct scan {
	const char **ino;  /* by node id: its last PT_LIVE_INODE body, NULL */
	const char **open; /* by slot: its last PT_LIVE_OPEN body, NULL */
	uint64_t nids, nslots, maxgen;
};

/* Each record of the log in order: fn(type, body, body length). */
static void walk(const char *base,
		 void (*fn)(struct scan *, uint32_t, const char *, size_t),
		 struct scan *sc)
{
	for (uint64_t t = 0; t + 8 <= LIVE_REGION;) {
		uint64_t w = atomic_load_explicit(
			(const _Atomic uint64_t *)(base + t),
			memory_order_acquire);
		uint32_t len = (uint32_t)w, type = (uint32_t)(w >> 32);

		if (!w || len < 16 || t + len > LIVE_REGION)
			return;
		fn(sc, type, base + t + 8, len - 8);
		t += len;
	}
}

static uint64_t rec_id(uint32_t type, const char *b)
{
	uint64_t id;

	if (type == PT_LIVE_INODE)
		return ((const struct pt_state_inode *)b)->nodeid;
	if (type == PT_LIVE_OPEN)
		return ((const struct pt_state_open *)b)->slot;
	memcpy(&id, b, sizeof(id));
	return id;
}

static void size_one(struct scan *sc, uint32_t type, const char *b, size_t n)
{
	uint64_t id = rec_id(type, b);

	if ((type == PT_LIVE_INODE || type == PT_LIVE_GONE) &&
	    id < UINT32_MAX && id >= sc->nids)
		sc->nids = id + 1;
	if ((type == PT_LIVE_OPEN || type == PT_LIVE_CLOSE) &&
	    id < UINT32_MAX && id >= sc->nslots)
		sc->nslots = id + 1;
	if (type == PT_LIVE_INODE && n >= sizeof(struct pt_state_inode) &&
	    ((const struct pt_state_inode *)b)->generation > sc->maxgen)
		sc->maxgen = ((const struct pt_state_inode *)b)->generation;
}

static void index_one(struct scan *sc, uint32_t type, const char *b, size_t n)
{
	uint64_t id = rec_id(type, b);

	if (type == PT_LIVE_INODE && n >= sizeof(struct pt_state_inode) &&
	    id < sc->nids)
		sc->ino[id] = b;
	else if (type == PT_LIVE_GONE && id < sc->nids)
		sc->ino[id] = NULL;
	else if (type == PT_LIVE_OPEN && n >= sizeof(struct pt_state_open) &&
		 id < sc->nslots)
		sc->open[id] = b;
	else if (type == PT_LIVE_CLOSE && id < sc->nslots)
		sc->open[id] = NULL;
}

static size_t inode_len(const char *b)
{
	const struct pt_state_inode *si = (const void *)b;

	return sizeof(*si) + si->name_len + si->handle_bytes;
}

/* The stream state_load.c loads: header, inodes, opens. */
static char *stream_of(const struct scan *sc, const struct live_hdr *h,
		       size_t *len)
{
	struct pt_state_hdr sh = { .magic = PT_STATE_MAGIC,
				   .version = PT_STATE_VERSION,
				   .handles = h->handles,
				   .root_dev = h->root_dev,
				   .root_ino = h->root_ino,
				   .nids = sc->nids };
	size_t n = sizeof(sh);
	char *buf, *p;

	sh.next_generation = atomic_load(&h->next_generation);
	if (sc->maxgen + 1 > sh.next_generation)
		sh.next_generation = sc->maxgen + 1;
	for (uint64_t i = 0; i < sc->nids; i++)
		if (sc->ino[i]) {
			n += inode_len(sc->ino[i]);
			sh.ninodes++;
		}
	for (uint64_t i = 0; i < sc->nslots; i++)
		if (sc->open[i]) {
			n += sizeof(struct pt_state_open);
			sh.nopens++;
		}
	buf = malloc(n);
	if (!buf)
		return NULL;
	memcpy(buf, &sh, sizeof(sh));
	p = buf + sizeof(sh);
	for (uint64_t i = 0; i < sc->nids; i++)
		if (sc->ino[i]) {
			memcpy(p, sc->ino[i], inode_len(sc->ino[i]));
			p += inode_len(sc->ino[i]);
		}
	for (uint64_t i = 0; i < sc->nslots; i++)
		if (sc->open[i]) {
			memcpy(p, sc->open[i], sizeof(struct pt_state_open));
			p += sizeof(struct pt_state_open);
		}
	*len = n;
	return buf;
}

static int recover(struct pt_fs *fs, const struct pt_live *l)
{
	const struct live_hdr *h = hdr_of(l);
	uint32_t active = atomic_load(&h->active);
	struct scan sc = { 0 };
	uint64_t n[2] = { 0, 0 };
	size_t len = 0;
	char *buf;
	int ret;

	if (h->magic != LIVE_MAGIC || active > 1) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: no usable crash-restart state "
			   "(%s)",
			   h->magic != LIVE_MAGIC
				   ? "not passthrough's"
				   : "it had outgrown its space");
		return -EPROTO;
	}
	walk(region(l, active), size_one, &sc);
	if (sc.nids < PT_ROOT_ID + 2)
		sc.nids = PT_ROOT_ID + 2;
	sc.ino = calloc(sc.nids, sizeof(*sc.ino));
	sc.open = calloc(sc.nslots ? sc.nslots : 1, sizeof(*sc.open));
	ret = sc.ino && sc.open ? 0 : -ENOMEM;
	if (!ret)
		walk(region(l, active), index_one, &sc);
	buf = ret ? NULL : stream_of(&sc, h, &len);
	if (!ret && !buf)
		ret = -ENOMEM;
	ret = ret ?: pt_state_load_mem(fs, buf, len, PT_STATE_VERSION, n);
	free(buf);
	free(sc.ino);
	free(sc.open);
	if (!ret)
		fring_logf(fs->mount, FRING_LOG_INFO,
			   "passthrough: recovered %llu inodes and %llu open "
			   "files after a crash",
			   (unsigned long long)n[0], (unsigned long long)n[1]);
	return ret;
}

int32_t pt_state_live(void *inst, int fd, uint32_t flags)
{
	struct pt_fs *fs = inst;
	struct pt_live *l;
	struct stat st;
	int ret = 0;

	if (fstat(fd, &st))
		return -errno;
	if (!(flags & FRING_STATE_LIVE_RECOVER) && st.st_size == 0 &&
	    ftruncate(fd, (off_t)LIVE_SIZE))
		return -errno;
	if ((flags & FRING_STATE_LIVE_RECOVER) && st.st_size != LIVE_SIZE)
		return -EPROTO;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->fd = fd;
	l->map = mmap(NULL, LIVE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      0);
	if (l->map == MAP_FAILED) {
		ret = -errno;
		free(l);
		return ret;
	}
	if (flags & FRING_STATE_LIVE_RECOVER) {
		ret = recover(fs, l);
		l->region = atomic_load(&hdr_of(l)->active);
	} else {
		*hdr_of(l) = (struct live_hdr){ .magic = LIVE_MAGIC,
						.handles = fs->handles,
						.root_dev = fs->root.dev,
						.root_ino = fs->root.ino };
	}
	if (ret) {
		munmap(l->map, LIVE_SIZE);
		free(l);
		return ret;
	}
	pthread_mutex_lock(&fs->lock);
	fs->live = l;
	compact(fs); /* the tables as they are now: fresh, loaded, recovered */
	pthread_mutex_unlock(&fs->lock);
	return 0;
}

void pt_live_destroy(struct pt_fs *fs)
{
	if (!fs->live)
		return;
	munmap(fs->live->map, LIVE_SIZE);
	free(fs->live);
	fs->live = NULL;
}
