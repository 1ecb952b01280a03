// SPDX-License-Identifier: MIT
/*
 * Handing io_uring queues to a new server without unmounting: the *fill,
 * exit, adopt* sequence of core/transport/README.md (E6a, measured on 6.18
 * and 7.3).
 *
 * Entry memory (each qid's headers and payloads) lives in one memfd that
 * every generation maps at the same address, since the kernel keeps the
 * addresses each entry was registered with. Page 0 of the memfd describes
 * the layout (struct shm_hdr); the regions follow, one 2 MiB-aligned slot
 * per qid. A server clears an entry's commit_id in its header when it
 * commits, so a nonzero commit_id marks a request held there.
 *
 * The old server holds (stops dispatching what arrives) until every entry
 * holds a request: then nothing of its ring is armed, its exit cancels
 * nothing, and it may go. The new server maps the memfd, sets up its own
 * rings with no REGISTER, and dispatches every held request; each of its
 * commits fetches what queued meanwhile, so the entries are its own from
 * then on. An entry found empty (an old server that died without filling)
 * was cancelled with its ring and is registered again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "uring_internal.h"

#define SHM_MAGIC 0x6d68732d676e6972ull /* "ring-shm" */
#define SHM_VERSION 1u
#define SHM_HDR_SZ 4096u
#define SLOT_ALIGN (2ull << 20)
/* Where the first generation asks for its regions: below where the
 * kernel puts mmap(NULL) mappings (mmap_base is within 1 TiB of the top
 * with the default 28 random bits), above the heap and the binary, so
 * that the new process, exec'd with a fresh randomized layout, finds the
 * range free; and inside what ASan and TSan take for application memory
 * (TSan aborts on a mapping at 0x3e0000000000, in its shadow). Further
 * tries go down. */
#define SHM_HINT 0x7e9000000000ull
#define SHM_HINT_TRIES 16

struct shm_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t nr_qids, depth, payload_sz;
	uint64_t base; /* address of qid 0's slot in every generation */
	uint64_t slot; /* bytes per qid */
	uint32_t pool_bufs, pool_registered; /* 7.3 buffer pools, 0: none */
};

/* A qid's slot: per-entry headers and payloads, or (7.3 buffer pools)
 * the pool's headers then the pool, which the kernel knows by address. */
static uint64_t slot_of(const struct fring_uring *u)
{
	uint64_t sz = u->pool_bufs
			      ? uring_pool_region_sz(u->depth) +
					(uint64_t)u->pool_bufs * u->payload_sz
			      : ((uint64_t)FRING_URING_HEADER_SZ +
				 u->payload_sz) *
					u->depth;

	return (sz + SLOT_ALIGN - 1) & ~(SLOT_ALIGN - 1);
}

static void *map_at(int fd, uint64_t addr, uint64_t len)
{
	void *p = mmap((void *)(uintptr_t)addr, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, SHM_HDR_SZ);

	if (p == MAP_FAILED)
		return NULL;
	if ((uint64_t)(uintptr_t)p != addr) {
		/* A kernel without MAP_FIXED_NOREPLACE takes it as a hint. */
		munmap(p, len);
		errno = EEXIST;
		return NULL;
	}
	return p;
}

int uring_shm_create(struct fring_uring *u)
{
	struct shm_hdr h = {
		.magic = SHM_MAGIC,
		.version = SHM_VERSION,
		.nr_qids = u->nr_qids,
		.depth = u->depth,
		.payload_sz = u->payload_sz,
		.slot = slot_of(u),
		.pool_bufs = u->pool_bufs,
		.pool_registered = (u->pool_registered ? 1u : 0u),
	};
	uint64_t len = h.slot * u->nr_qids;
	int fd = memfd_create("fring-ring-entries", MFD_CLOEXEC), e;
	void *p = NULL;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)(SHM_HDR_SZ + len)) < 0)
		goto fail;
	for (int i = 0; i < SHM_HINT_TRIES && !p; i++)
		p = map_at(fd, SHM_HINT - (uint64_t)i * (len + SLOT_ALIGN) * 4,
			   len);
	if (!p)
		goto fail;
	h.base = (uint64_t)(uintptr_t)p;
	if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		munmap(p, len);
		goto fail;
	}
	u->shm_fd = fd;
	u->shm_base = p;
	u->shm_slot = h.slot;
	return 0;
fail:
	e = errno ? -errno : -EIO;
	close(fd);
	return e;
}

int uring_shm_adopt(struct fring_uring *u, int fd, char **err)
{
	struct shm_hdr h;
	void *p;

	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.magic != SHM_MAGIC) {
		*err = fring_strf("takeover: the ring memory handed over is "
				  "not fring's");
		return -EINVAL;
	}
	if (h.version != SHM_VERSION) {
		*err = fring_strf("takeover: ring memory format %u, this fring "
				  "reads %u",
				  h.version, SHM_VERSION);
		return -EINVAL;
	}
	if (h.nr_qids != u->nr_qids || h.depth != u->depth ||
	    h.payload_sz != u->payload_sz || h.slot != slot_of(u) ||
	    h.pool_bufs != u->pool_bufs ||
	    h.pool_registered != (u->pool_registered ? 1u : 0u)) {
		*err = fring_strf(
			"takeover: the io_uring layout changed (%u qids x %u "
			"entries of %u bytes, pool %u%s served; %u x %u x %u, "
			"pool %u%s here): a takeover keeps transport.queues, "
			"queue_depth and bufpool",
			h.nr_qids, h.depth, h.payload_sz, h.pool_bufs,
			h.pool_registered ? " registered" : "", u->nr_qids,
			u->depth, u->payload_sz, u->pool_bufs,
			u->pool_registered ? " registered" : "");
		return -EINVAL;
	}
	p = map_at(fd, h.base, h.slot * h.nr_qids);
	if (!p) {
		*err = fring_strf("takeover: mapping the ring memory at %#llx: "
				  "%s",
				  (unsigned long long)h.base, strerror(errno));
		return -errno;
	}
	u->shm_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0); /* handed on at MOUNT */
	if (u->shm_fd < 0) {
		munmap(p, h.slot * h.nr_qids);
		*err = fring_strf("takeover: %s", strerror(errno));
		return -EMFILE;
	}
	u->shm_base = p;
	u->shm_slot = h.slot;
	u->adopting = 1;
	return 0;
}

/* Entry memory a takeover can hand over: adopted from an old server, or
 * made shareable when the mount may be handed over later. */
int uring_shm_setup(struct fring_uring *u, const struct fring_uring_params *p,
		    char **err)
{
	int ret;

	/* Not handed over (yet): zero-copy slots (the kernel's, in the old
	 * ring's table), reduced queues (dormant qids), and a pool with
	 * fewer buffers than entries (the fill's LOOKUPs each need one). */
	int can = !u->zc && !u->reduced &&
		  (!u->pool_bufs || u->pool_bufs >= u->depth);

	if (p->adopt) {
		if (!can) {
			*err = fring_strf("takeover: the new configuration "
					  "asks for zero-copy, reduced queues "
					  "or a pool with fewer buffers than "
					  "entries, which a takeover cannot "
					  "adopt yet");
			return -EOPNOTSUPP;
		}
		return uring_shm_adopt(u, p->adopt_fd, err);
	}
	if (!p->handover || !can)
		return 0;
	ret = uring_shm_create(u);
	if (ret)
		fring_warn("%s: uring: no shareable entry memory (%s): this "
			   "mount cannot be taken over",
			   u->mountpoint ? u->mountpoint : "?", strerror(-ret));
	return 0;
}

void *uring_shm_region(const struct fring_uring *u, const struct uring_queue *q)
{
	if (!u->shm_base)
		return NULL;
	return (char *)u->shm_base + u->shm_slot * (uint64_t)(q - u->queues);
}

void uring_shm_free(struct fring_uring *u)
{
	if (u->shm_base)
		munmap(u->shm_base, u->shm_slot * u->nr_qids);
	u->shm_base = NULL;
	if (u->shm_fd >= 0)
		close(u->shm_fd);
	u->shm_fd = -1;
}

int fring_uring_shm_fd(const struct fring_uring *u)
{
	return u ? u->shm_fd : -1;
}

/* ---- the old server: hold until every entry holds a request ---- */

static uint32_t total_entries(const struct fring_uring *u)
{
	return u->nr_qids * u->depth;
}

void fring_uring_hold(struct fring_uring *u)
{
	atomic_store(&u->hold, 1);
}

int fring_uring_wait_full(struct fring_uring *u, unsigned timeout_ms)
{
	struct timespec nap = { 0, 1000000 };

	for (unsigned ms = 0;; ms++) {
		if (atomic_load(&u->nr_held) >= total_entries(u))
			return 0;
		if (ms >= timeout_ms)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
	}
}

int fring_uring_qid_cpu(const struct fring_uring *u, uint32_t qid)
{
	return u->queues[qid].cpu;
}

uint32_t fring_uring_held(const struct fring_uring *u)
{
	return atomic_load(&u->nr_held);
}

void fring_uring_unhold(struct fring_uring *u)
{
	static const uint64_t one = 1;

	atomic_store(&u->hold, 0);
	for (uint32_t i = 0; i < u->nr_threads; i++)
		if (u->threads[i].started &&
		    write(u->threads[i].wake_fd, &one, sizeof(one)) < 0)
			fring_err("uring: waking queue thread %u: %s", i,
				  strerror(errno));
}

/* Owner thread: dispatch what it held, once the hold is lifted. */
void uring_release_held(struct uring_thread *t)
{
	if (!t->nheld || atomic_load(&t->u->hold))
		return;
	for (uint32_t i = 0; i < t->nq; i++) {
		struct uring_queue *q = &t->queues[i];

		for (uint32_t j = 0; j < q->depth; j++) {
			struct uring_ent *e = &q->ents[j];

			if (atomic_load(&e->state) != ENT_HELD)
				continue;
			atomic_store(&e->state, ENT_KERNEL);
			t->nheld--;
			atomic_fetch_sub(&t->u->nr_held, 1);
			uring_request_arrived(t, e);
		}
	}
}

/* ---- the new server: adopt what the entries hold ---- */

int uring_adopt_start(struct uring_thread *t)
{
	uint32_t held = 0, fresh = 0;

	if (!t->u->adopting)
		return 0;
	/* Decided only now: until the old server exited, its entries were
	 * still filling. */
	for (uint32_t i = 0; i < t->nq; i++) {
		struct uring_queue *q = &t->queues[i];

		for (uint32_t j = 0; j < q->depth; j++) {
			struct uring_ent *e = &q->ents[j];

			e->adopt = !!e->hdr->ring_ent_in_out.commit_id;
			if (e->adopt) {
				held++;
				continue;
			}
			/* Cancelled with a dead server's ring: the kernel
			 * keeps that entry unused, so this memory is free
			 * for a new one. */
			fresh++;
			if (uring_prep_register(t, e))
				return -EBUSY;
		}
	}
	for (uint32_t i = 0; i < t->nq; i++) {
		struct uring_queue *q = &t->queues[i];

		for (uint32_t j = 0; j < q->depth; j++) {
			struct uring_ent *e = &q->ents[j];

			if (!e->adopt)
				continue;
			e->adopt = 0;
			uring_request_arrived(t, e);
		}
	}
	fring_dbg("uring: thread %u: adopted %u held request(s), registered "
		  "%u entries anew",
		  t->idx, held, fresh);
	return 0;
}
