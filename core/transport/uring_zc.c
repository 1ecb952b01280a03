// SPDX-License-Identifier: MIT
/*
 * Linux 7.3 zero-copy (FUSE 7.46; README "Zero-copy", core/transport/
 * README.md for the kernel's rules).
 *
 * A queue added with FUSE_URING_ZERO_COPY (CAP_SYS_ADMIN, and a buffer pool
 * before any REGISTER) registers each entry with a slot of the ring's own
 * fixed-buffer table (ent_zero_copy_buf_index). For a READ or WRITE of a
 * file opened with FOPEN_IO_URING_ZERO_COPY, the kernel puts the client's
 * pages into that slot while the request is in userspace and flags the
 * request FUSE_URING_ENT_ZERO_COPY: the data never goes through a server
 * buffer. The server moves it with READ_FIXED / WRITE_FIXED against the
 * slot (address 0 is the slot's first byte), and the commit unregisters
 * it. So the slot's I/O must complete before the commit, and only the
 * owner's ring can reach it: both hold because the data-path services do
 * that I/O on the owner's ring and commit from its completion.
 *
 * A zero-copied READ has no pool buffer (nothing to copy either way) and
 * its reply is just a count (payload_sz); a zero-copied WRITE's payload_sz
 * counts the page bytes, and its fuse_write_out reply still goes through
 * the pool buffer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>

#include "../base/log.h"
#include "../config/config.h"
#include "uring_internal.h"

char uring_zc_body[1];

const char *fring_uring_zc_why_not(int zero_copy, int bufpool_offered,
				   int pool, int cap_sys_admin)
{
	if (zero_copy == FRING_OFF)
		return "transport.zero_copy off";
	if (!bufpool_offered)
		return "the kernel has no io_uring zero-copy (FUSE 7.46, Linux 7.3)";
	if (!pool)
		return "it needs a buffer pool (transport.bufpool is off)";
	if (!cap_sys_admin)
		return "CAP_SYS_ADMIN is not in the effective set";
	return NULL;
}

int uring_zc_plan(struct fring_uring *u, const struct fring_uring_params *p,
		  char **err)
{
	const char *why = fring_uring_zc_why_not(p->cfg->zero_copy,
						 p->bufpool_offered,
						 u->pool_bufs != 0,
						 uring_cap_effective(CAP_SYS_ADMIN));

	u->zc = 0;
	if (!why) {
		u->zc = 1;
		u->zc_why[0] = 0;
		return 0;
	}
	snprintf(u->zc_why, sizeof(u->zc_why), "%s", why);
	if (p->cfg->zero_copy == FRING_ON) {
		*err = fring_strf("transport.zero_copy on: %s", why);
		return -EOPNOTSUPP;
	}
	return 0;
}

uint64_t uring_table_slots(uint32_t nq, uint32_t depth, uint32_t payload_sz,
			   int pool, int zc)
{
	uint32_t per_buf = uring_entries_per_buf(payload_sz);
	uint64_t bufs = pool ? 1 : (depth + (uint64_t)per_buf - 1) / per_buf;

	return (uint64_t)nq * (bufs + (zc ? depth : 0));
}

int uring_table_fit(uint32_t nq, uint32_t depth, uint32_t payload_sz, int pool,
		    int zero_copy, int *zc, char *why, size_t len)
{
	uint64_t sq = (uint64_t)nq * depth + URING_SQ_EXTRA;
	uint64_t need = uring_table_slots(nq, depth, payload_sz, pool, *zc);
	uint64_t bare = uring_table_slots(nq, depth, payload_sz, pool, 0);

	if (sq > URING_MAX_ENTRIES) {
		snprintf(why, len, "a queue thread serving %u queues x %u entries "
			 "needs %llu ring entries, more than io_uring's %u: lower "
			 "transport.queue_depth or raise transport.queues", nq,
			 depth, (unsigned long long)sq, URING_MAX_ENTRIES);
		return -E2BIG;
	}
	if (need <= URING_MAX_REG_BUFFERS)
		return 0;
	snprintf(why, len, "a queue thread serving %u queues x %u entries needs "
		 "%llu fixed-buffer slots%s, more than io_uring's %u: lower "
		 "transport.queue_depth or raise transport.queues", nq, depth,
		 (unsigned long long)need, *zc ? " (one per entry for zero-copy)"
					       : "", URING_MAX_REG_BUFFERS);
	if (*zc && bare <= URING_MAX_REG_BUFFERS && zero_copy != FRING_ON) {
		*zc = 0; /* auto: serve without zero-copy, why says so */
		return 0;
	}
	return -E2BIG;
}

int uring_zc_fit(struct fring_uring *u, const struct fring_uring_params *p,
		 char **err)
{
	uint32_t nq = 0;
	char why[256];
	int zc = u->zc, ret;

	for (uint32_t i = 0; i < u->nr_threads; i++)
		if (u->threads[i].nq > nq)
			nq = u->threads[i].nq;
	ret = uring_table_fit(nq, u->depth, u->payload_sz, u->pool_bufs != 0,
			      p->cfg->zero_copy, &zc, why, sizeof(why));
	if (ret) {
		*err = u->zc && p->cfg->zero_copy == FRING_ON
			       ? fring_strf("transport.zero_copy on: %s", why)
			       : fring_strf("ring setup failed: %s", why);
		return ret;
	}
	if (zc != u->zc) {
		u->zc = 0;
		snprintf(u->zc_why, sizeof(u->zc_why), "%s", why);
		fring_warn("%s: zero-copy turned off: %s",
			   u->mountpoint ? u->mountpoint : "?", why);
	}
	return 0;
}

void uring_zc_describe(const struct fring_uring *u, char *buf, size_t len)
{
	if (u->zc)
		snprintf(buf, len, "on (%u slots per queue)", u->depth);
	else
		snprintf(buf, len, "off (%s)", u->zc_why);
}

int fring_uring_zero_copy(const struct fring_uring *u)
{
	return u && u->zc;
}

uint64_t uring_zc_add_flags(const struct uring_queue *q)
{
	return q->zc ? FUSE_URING_ZERO_COPY : 0;
}

void uring_zc_register_sqe(const struct uring_ent *e, struct io_uring_sqe *sqe)
{
	/* The kernel refuses a slot on a queue added without zero-copy. */
	if (e->q->zc)
		((struct fuse_uring_cmd_req *)sqe->cmd)->ent_zero_copy_buf_index =
			e->zc_slot;
}

uint32_t uring_zc_slots(struct uring_thread *t, uint32_t base)
{
	uint32_t n = 0;

	if (!t->u->zc)
		return 0;
	for (uint32_t i = 0; i < t->nq; i++) {
		struct uring_queue *q = &t->queues[i];

		q->zc = 1;
		for (uint32_t j = 0; j < q->depth; j++)
			q->ents[j].zc_slot = (uint16_t)(base + n++);
	}
	return n;
}

void uring_zc_arrived(struct uring_ent *e, uint64_t flags, uint32_t opcode)
{
	int io = opcode == FUSE_READ || opcode == FUSE_WRITE;

	e->zc = io && (flags & FUSE_URING_ENT_ZERO_COPY);
	/* A READ/WRITE the kernel copied on a zero-copy queue: the file was
	 * not opted in, or the request had no pages (writeback...). */
	if (io && e->q->zc && !e->zc)
		ctr_inc(&e->q->ctr.zc_copied);
}

void uring_zc_prep_io(struct uring_ent *e, struct io_uring_sqe *sqe)
{
	if (e->action == ACT_READ)
		io_uring_prep_read_fixed(sqe, e->io_fd, NULL, e->io_len,
					 e->io_off, e->zc_slot);
	else
		io_uring_prep_write_fixed(sqe, e->io_fd, NULL, e->io_len,
					  e->io_off, e->zc_slot);
}
