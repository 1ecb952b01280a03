// SPDX-License-Identifier: MIT
/*
 * Takeover state, the load (ABI 1.7 state_load, and the crash restart's
 * pt_state_load_mem): the format and what each record means are in
 * state_save.c. Node ids are reserved as saved, inodes reopened by handle
 * or path (or /proc/OLDPID/fd/N where pinned), open files reopened and
 * checked against their inode; one that cannot be is kept as lost (EIO).
 */
#include "pt.h"
#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The load reads the memfd mapped: a cursor, no stdio per field. */
struct pt_in {
	const char *p, *end;
};

static int get(struct pt_in *f, void *p, size_t n)
{
	if ((size_t)(f->end - f->p) < n)
		return -EPROTO;
	memcpy(p, f->p, n);
	f->p += n;
	return 0;
}

/* Room for nodeid in the id table (free_ids keeps room for every id). */
static int ids_reserve(struct pt_fs *fs, uint64_t nodeid)
{
	size_t n = fs->nids;
	struct pt_inode **ids;
	uint64_t *fr;

	if (nodeid < n)
		return 0;
	while (n <= nodeid)
		n *= 2;
	ids = realloc(fs->ids, n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	memset(ids + fs->nids, 0, (n - fs->nids) * sizeof(*ids));
	fs->ids = ids;
	fs->nids = n;
	fr = realloc(fs->free_ids, n * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	fs->free_ids = fr;
	fs->free_cap = n;
	return 0;
}

static void ids_rebuild_free(struct pt_fs *fs)
{
	fs->nfree = 0;
	for (uint64_t i = fs->nids - 1; i > PT_ROOT_ID; i--)
		if (!fs->ids[i])
			fs->free_ids[fs->nfree++] = i;
}

/* What the second pass needs of one loaded inode. */
struct pt_loaded {
	struct pt_inode *in;
	uint64_t parent;
	int32_t oldfd; /* pinned: the old process's O_PATH fd */
};

static int load_inode(struct pt_fs *fs, struct pt_in *f, struct pt_loaded *l)
{
	struct pt_state_inode si;
	struct pt_inode *in;

	if (get(f, &si, sizeof(si)) || si.nodeid <= PT_ROOT_ID ||
	    si.nodeid > UINT32_MAX || si.name_len > 255 ||
	    si.handle_bytes > MAX_HANDLE_SZ)
		return -EPROTO;
	if (ids_reserve(fs, si.nodeid))
		return -ENOMEM;
	if (fs->ids[si.nodeid])
		return -EPROTO;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	*in = (struct pt_inode){
		.nodeid = si.nodeid,
		.generation = si.generation,
		.dev = (dev_t)si.dev,
		.ino = (ino_t)si.ino,
		.type = si.type,
		.nlookup = si.nlookup,
		.fd = -1,
		.tmpfile = si.flags & SI_TMPFILE,
		.backing_id = si.backing_id,
		.backing_opens = si.backing_opens,
		.plain_opens = si.plain_opens,
	};
	fs->ids[si.nodeid] = in; /* the table frees it from here on */
	*l = (struct pt_loaded){ .in = in,
				 .parent = si.parent,
				 .oldfd = si.flags & SI_PINNED ? si.fd : -1 };
	if (si.name_len) {
		in->name = calloc(1, si.name_len + 1);
		if (!in->name)
			return -ENOMEM;
		if (get(f, in->name, si.name_len))
			return -EPROTO;
	}
	if (si.handle_bytes) {
		in->handle = malloc(sizeof(*in->handle) + si.handle_bytes);
		if (!in->handle)
			return -ENOMEM;
		in->handle->handle_bytes = si.handle_bytes;
		in->handle->handle_type = si.handle_type;
		if (get(f, in->handle->f_handle, si.handle_bytes))
			return -EPROTO;
	}
	if (si.flags & SI_HASHED) {
		if (pt_inode_find(fs, in->dev, in->ino))
			return -EPROTO;
		pt_inode_hash(fs, in);
	}
	return 0;
}

/* Path-mode parents hold a reference from each child, as in set_path. */
static int link_parents(struct pt_fs *fs, struct pt_loaded *l, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		struct pt_inode *p;

		if (!l[i].parent)
			continue;
		p = pt_inode_by_id(fs, l[i].parent);
		if (!p || !l[i].in->name)
			return -EPROTO;
		p->refs++;
		l[i].in->parent = p;
	}
	return 0;
}

/* path, opened with flags, if it is still the file (dev, ino). */
static int open_checked(const char *path, int flags, const struct stat *want)
{
	struct stat st;
	int fd = open(path, flags | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_dev != want->st_dev ||
	    st.st_ino != want->st_ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* The old process's descriptor oldfd, opened anew with flags. */
static int open_old(pid_t pid, int oldfd, int flags, const struct pt_inode *in)
{
	struct stat want = { .st_dev = in->dev, .st_ino = in->ino };
	char path[64];

	if (oldfd < 0)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, oldfd);
	return open_checked(path, flags, &want);
}

/* Pinned inodes get their O_PATH fd back; without one they stay
 * unpinned and an operation on them fails with ESTALE. */
static void load_pins(struct pt_fs *fs, pid_t pid, struct pt_loaded *l,
		      uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		int fd, extra;

		if (l[i].oldfd < 0)
			continue;
		fd = open_old(pid, l[i].oldfd, O_PATH, l[i].in);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&fs->lock);
		extra = pt_cache_pin_locked(fs, l[i].in, fd);
		pthread_mutex_unlock(&fs->lock);
		if (extra >= 0)
			close(extra);
	}
}

/* One open file or directory, reopened; fd -1 keeps it as lost. */
static int load_open(struct pt_fs *fs, pid_t pid,
		     const struct pt_state_open *so, uint32_t *lost)
{
	struct pt_inode *in;
	struct pt_dir *d = NULL;
	struct pt_ref ref;
	char proc[32];
	int fd = -1, err;

	pthread_mutex_lock(&fs->lock);
	in = pt_inode_by_id(fs, so->nodeid);
	pthread_mutex_unlock(&fs->lock);
	if (!in)
		return -EPROTO;
	fd = open_old(pid, so->fd, (int)so->flags, in);
	if (fd < 0 && !pt_ref_get_inode(fs, in, &ref)) {
		struct stat want = { .st_dev = in->dev, .st_ino = in->ino };

		pt_proc_path(proc, ref.fd);
		fd = open_checked(proc, (int)so->flags, &want);
		pt_ref_put(fs, &ref);
	}
	if (fd >= 0 && so->dir && !(d = pt_dir_adopt(fs, fd))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		fd = -1;
		(*lost)++;
	}
	pthread_mutex_lock(&fs->lock);
	err = pt_fh_put_locked(fs, so->slot, fd, so->flags, so->nodeid, d);
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static int load_all(struct pt_fs *fs, struct pt_in *f,
		    const struct pt_state_hdr *h)
{
	struct pt_loaded *l = calloc(h->ninodes ? h->ninodes : 1, sizeof(*l));
	uint32_t lost = 0;
	int ret = l ? 0 : -ENOMEM;

	pthread_mutex_lock(&fs->lock);
	/* Sized once: growing them inode by inode rehashed and copied the
	 * tables a dozen times over. */
	if (!ret && h->nids > PT_ROOT_ID + 1 && h->nids <= (1ull << 32))
		ret = ids_reserve(fs, h->nids - 1);
	ret = ret ?: pt_table_reserve(fs, h->ninodes);
	for (uint64_t i = 0; !ret && i < h->ninodes; i++)
		ret = load_inode(fs, f, &l[i]);
	ret = ret ?: link_parents(fs, l, h->ninodes);
	fs->next_generation = h->next_generation;
	ids_rebuild_free(fs);
	pthread_mutex_unlock(&fs->lock);
	if (!ret)
		load_pins(fs, h->pid, l, h->ninodes);
	free(l);
	for (uint64_t i = 0; !ret && i < h->nopens; i++) {
		struct pt_state_open so;

		ret = get(f, &so, sizeof(so))
			      ?: load_open(fs, h->pid, &so, &lost);
	}
	pthread_mutex_lock(&fs->lock);
	ret = ret ?: pt_fh_rebuild_free_locked(fs);
	pthread_mutex_unlock(&fs->lock);
	if (lost)
		fring_logf(
			fs->mount, FRING_LOG_WARN,
			"passthrough: takeover: %u of %llu open files could "
			"not be reopened; their reads and writes fail with EIO",
			lost, (unsigned long long)h->nopens);
	return ret;
}

int pt_state_load_mem(struct pt_fs *fs, const void *p, size_t len,
		      uint32_t version, uint64_t n[2])
{
	struct pt_state_hdr h;
	struct pt_in in = { p, (const char *)p + len }, *f = &in;
	int ret = get(f, &h, sizeof(h));

	if (!ret && (h.magic != PT_STATE_MAGIC || h.version != version))
		ret = -EPROTO;
	if (!ret &&
	    (h.root_dev != fs->root.dev || h.root_ino != fs->root.ino)) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: takeover state is of another source "
			   "directory than %s",
			   fs->source);
		ret = -EINVAL;
	}
	if (!ret && h.handles && !fs->handles) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: takeover state names inodes by file "
			   "handle, which this instance cannot open (handles: "
			   "false, or no CAP_DAC_READ_SEARCH)");
		ret = -EOPNOTSUPP;
	}
	if (!ret && (fs->ninodes != 1 || fs->opens_top))
		ret = -EBUSY; /* not a fresh instance */
	ret = ret ?: load_all(fs, f, &h);
	if (ret)
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: cannot read the takeover state: %s",
			   strerror(-ret));
	n[0] = ret ? 0 : h.ninodes;
	n[1] = ret ? 0 : h.nopens;
	return ret;
}

int32_t pt_state_load(void *inst, int fd, uint32_t version)
{
	struct pt_fs *fs = inst;
	struct pt_clock t0 = pt_clock_now(), t1;
	struct stat st;
	uint64_t n[2];
	void *map;
	int ret;

	if (version != PT_STATE_VERSION) {
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "passthrough: takeover state version %u, this "
			   "passthrough reads version %u only",
			   version, PT_STATE_VERSION);
		return -EPROTO;
	}
	if (fstat(fd, &st))
		return -errno;
	map = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ,
				MAP_PRIVATE, fd, 0)
			 : MAP_FAILED;
	if (map == MAP_FAILED)
		return st.st_size ? -errno : -EPROTO;
	ret = pt_state_load_mem(fs, map, (size_t)st.st_size, version, n);
	munmap(map, (size_t)st.st_size);
	if (ret)
		return ret;
	/* bench/takeover/pt_state.py reads this line. */
	t1 = pt_clock_now();
	fring_logf(fs->mount, FRING_LOG_INFO,
		   "passthrough: took over %llu inodes and %llu open files in "
		   "%.1f ms (%.1f ms CPU)",
		   (unsigned long long)n[0], (unsigned long long)n[1],
		   t1.wall - t0.wall, t1.cpu - t0.cpu);
	return 0;
}
