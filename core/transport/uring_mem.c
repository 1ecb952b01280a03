// SPDX-License-Identifier: MIT
/*
 * One NUMA-local region per qid, carved into ring entries: for each entry
 * a 4 KiB header buffer followed by its payload buffer (a page multiple),
 * so every payload is page aligned for O_DIRECT backing I/O.
 *
 * Called from the queue thread after it pinned itself: the local-node
 * policy (libnuma) plus MADV_POPULATE_WRITE places every page on the
 * thread's node now, not at
 * first touch by the kernel's copy, and fails setup (before the INIT reply)
 * rather than a request later when memory is short.
 *
 * The region is registered as fixed buffers in chunks of at most 1 GiB
 * (the io_uring limit per buffer), each covering whole entries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <numa.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uring_internal.h"

#define FIXED_BUF_MAX URING_MAX_BUF_BYTES

static size_t stride_of(uint32_t payload_sz)
{
	return (size_t)FRING_URING_HEADER_SZ + payload_sz;
}

uint32_t uring_entries_per_buf(uint32_t payload_sz)
{
	size_t n = FIXED_BUF_MAX / stride_of(payload_sz);

	return n ? (uint32_t)n : 1;
}

#define HUGE_SZ (2ull << 20)

/* Node-local pages when the system has NUMA (the local-node policy set
 * before the pages are populated), aligned to 2 MiB and advised for
 * transparent huge pages: the kernel copies every payload through this
 * memory, and huge pages spare it most TLB misses (advised, so THP
 * "madvise" systems use them too; 1 MiB reads here gained a few per cent,
 * within the noise of two 5 s runs). Free with munmap. */
void *uring_map_local(size_t len, int node)
{
	size_t span = len + HUGE_SZ;
	char *raw, *p;
	size_t head, tail;

	raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1));
	head = (size_t)(p - raw);
	tail = span - head - len;
	if (head)
		munmap(raw, head);
	if (tail)
		munmap(p + len, tail);
	madvise(p, len, MADV_HUGEPAGE); /* advice: EINVAL without THP is fine */
	/* On the queue's own node, also when its thread may run on several
	 * (queues 1 on two nodes would else fill it wherever it ran). */
	if (numa_available() >= 0) {
		if (node >= 0)
			numa_tonode_memory(p, len, node);
		else
			numa_setlocal_memory(p, len);
	}
	return p;
}

static void region_free(void *p, size_t len)
{
	munmap(p, len);
}

int uring_populate(void *p, size_t len)
{
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (errno != EINVAL)
		return -errno; /* ENOMEM: fail setup rather than OOM later */
	memset(p, 0, len); /* pre-5.14 kernels: touch every page */
	return 0;
}

int uring_ents_alloc(struct uring_queue *q, uint32_t depth)
{
	if (posix_memalign((void **)&q->ents, 64, sizeof(*q->ents) * depth))
		return -ENOMEM;
	memset(q->ents, 0, sizeof(*q->ents) * depth);
	q->depth = depth;
	for (uint32_t i = 0; i < depth; i++) {
		q->ents[i].q = q;
		q->ents[i].qid = q->qid;
		atomic_init(&q->ents[i].state, ENT_IDLE);
	}
	return 0;
}

int uring_region_alloc(struct uring_queue *q, uint32_t depth,
		       uint32_t payload_sz, uint16_t buf_base, void *at)
{
	size_t stride = stride_of(payload_sz);
	uint32_t per_buf = uring_entries_per_buf(payload_sz);
	void *p = at;
	int ret;

	q->region_sz = stride * depth;
	if (at && numa_available() >= 0 && q->node >= 0)
		numa_tonode_memory(at, q->region_sz, q->node);
	else if (!at)
		p = uring_map_local(q->region_sz, q->node);
	if (!p)
		return -ENOMEM;
	ret = at ? uring_shm_populate(p, q->region_sz)
		 : uring_populate(p, q->region_sz);
	if (!ret)
		ret = uring_ents_alloc(q, depth);
	if (ret) {
		if (!at)
			region_free(p, q->region_sz);
		return ret;
	}
	q->region_shared = at != NULL;
	q->region = p;
	q->buf_base = buf_base;
	q->nbufs = (depth + per_buf - 1) / per_buf;
	for (uint32_t i = 0; i < depth; i++) {
		struct uring_ent *e = &q->ents[i];
		char *base = (char *)p + stride * i;

		e->hdr = (struct fuse_uring_req_header *)base;
		e->payload = base + FRING_URING_HEADER_SZ;
		e->payload_cap = payload_sz;
		e->buf_index = (uint16_t)(buf_base + i / per_buf);
		e->reg_iov[0].iov_base = e->hdr;
		e->reg_iov[0].iov_len = FRING_URING_HEADER_SZ;
		e->reg_iov[1].iov_base = e->payload;
		e->reg_iov[1].iov_len = payload_sz;
	}
	return 0;
}

/* The fixed-buffer iovecs of q, q->nbufs of them, into iov. */
void uring_region_bufs(const struct uring_queue *q, uint32_t payload_sz,
		       struct iovec *iov)
{
	size_t stride = stride_of(payload_sz);
	uint32_t per_buf = uring_entries_per_buf(payload_sz);

	for (uint32_t b = 0; b < q->nbufs; b++) {
		uint32_t first = b * per_buf;
		uint32_t n = q->depth - first < per_buf ? q->depth - first : per_buf;

		iov[b].iov_base = (char *)q->region + stride * first;
		iov[b].iov_len = stride * n;
	}
}

int uring_shm_populate(void *p, size_t len)
{
	/* A shared region an old server used keeps its bytes: populating
	 * maps its pages (never the clearing fallback of uring_populate). */
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0 || errno == EINVAL)
		return 0;
	return -errno;
}

void uring_region_free(struct uring_queue *q)
{
	if (q->region && !q->region_shared)
		region_free(q->region, q->region_sz);
	q->region = NULL;
	if (q->pool && !q->region_shared)
		region_free(q->pool, q->pool_sz);
	q->pool = NULL;
	free(q->ents);
	q->ents = NULL;
}
