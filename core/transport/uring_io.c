// SPDX-License-Identifier: MIT
/*
 * ABI 1.1 data-path services on a ring request: the backing I/O is an
 * IORING_OP_READ_FIXED / WRITE_FIXED on the owning queue's ring, straight
 * between the backing fd and the entry's payload buffer (a slice of the
 * queue's registered region). The reply is committed when its CQE arrives,
 * so the queue thread never blocks on the backing file and every entry of
 * the queue can have its I/O in flight at once.
 *
 * Callable from any thread: the SQE is prepared by the owner, directly if
 * we are it, else through its MPSC list.
 *
 * Fast path first: on the owner thread the I/O is tried with RWF_NOWAIT,
 * which the kernel completes only if it cannot block (data in the page
 * cache, tmpfs); that saves the ring round trip of a fixed op for the
 * common cached case. EAGAIN (would block) or EOPNOTSUPP takes the
 * READ_FIXED/WRITE_FIXED path, so the queue thread still never blocks.
 *
 * Memory-backed files (tmpfs, ramfs, hugetlbfs) answer RWF_NOWAIT with
 * EOPNOTSUPP on Linux 6.18, and io_uring hands their fixed ops to an io-wq
 * worker: a thread hop per request that costs more than the copy itself.
 * Their data is in memory, so there is nothing to wait for: such a file is
 * read or written synchronously, inline. fstatfs tells (about 0.1 us), and
 * only after an EOPNOTSUPP, so filesystems with RWF_NOWAIT never pay it.
 * The queue thread remembers such fds (uring_thread.memfd) and skips both
 * system calls for the next URING_MEMFD_RECHECK uses: 0.2 us a request,
 * 6% of a 4k read here. A plugin may close an fd and reuse its number for
 * another file meanwhile; until the recheck that file is read inline too,
 * which returns the right data and only risks blocking the thread.
 * FRING_URING_NO_INLINE=1 in the environment turns the fast path off.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../base/log.h"
#include "uring_internal.h"

static atomic_int inline_off = -1; /* read by every queue thread */

static int inline_allowed(const struct uring_ent *e)
{
	int off = atomic_load_explicit(&inline_off, memory_order_relaxed);

	if (off < 0) {
		off = getenv("FRING_URING_NO_INLINE") != NULL;
		atomic_store_explicit(&inline_off, off, memory_order_relaxed);
	}
	return !off && uring_self == e->th;
}

/* Files whose data lives in memory: copying it never waits for a device. */
static int memory_backed(int fd)
{
	struct statfs st;

	if (fstatfs(fd, &st) != 0)
		return 0;
	return st.f_type == TMPFS_MAGIC || st.f_type == RAMFS_MAGIC ||
	       st.f_type == HUGETLBFS_MAGIC;
}

/* A plain pread/pwrite of the whole range (short only at EOF or on an
 * error after some bytes, like the synchronous /dev/fuse path). */
static ssize_t sync_rw(int write, int fd, uint64_t off, const void *buf,
		       uint32_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write ? pwrite(fd, (const char *)buf + done,
					   len - done, (off_t)(off + done))
				  : pread(fd, (char *)buf + done, len - done,
					  (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return done ? (ssize_t)done : -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* 1 if the I/O was done without blocking (res set), 0 to go async. */
static int try_nowait(struct uring_ent *e, int write, int fd, uint64_t off,
		      const void *buf, uint32_t len, ssize_t *res)
{
	struct iovec iov = { (void *)buf, len };
	struct uring_memfd *m;

	if (!inline_allowed(e))
		return 0;
	m = &e->th->memfd[(unsigned)fd % URING_MEMFD_SLOTS];
	if (m->fd == fd && m->left) {
		m->left--; /* known memory-backed: no probe */
		*res = sync_rw(write, fd, off, buf, len);
		goto done;
	}
	*res = write ? pwritev2(fd, &iov, 1, (off_t)off, RWF_NOWAIT)
		     : preadv2(fd, &iov, 1, (off_t)off, RWF_NOWAIT);
	if (*res < 0 && errno == EOPNOTSUPP && memory_backed(fd)) {
		m->fd = fd;
		m->left = URING_MEMFD_RECHECK;
		*res = sync_rw(write, fd, off, buf, len);
	}
	/* A short count may only mean "the rest would block" (pages not
	 * cached), which FUSE would take for EOF: redo the whole range as a
	 * fixed op then. 0 from a read is EOF (NOWAIT says EAGAIN instead). */
	else if (*res >= 0 && *res != (ssize_t)len && (write || *res != 0))
		return 0;
	else if (*res < 0 && (errno == EAGAIN || errno == EOPNOTSUPP))
		return 0;
done:
	if (*res < 0) {
		*res = -errno;
		return 1;
	}
	ctr_inc(write ? &e->q->ctr.inline_writes : &e->q->ctr.inline_reads);
	return 1;
}

int fring_uring_owns(const struct fring_request *r)
{
	return uring_is_ent(r);
}

/* Common acceptance checks, then claim the single reply (through the
 * plugin's handle h, already checked by the host).
 *
 * The owner's zero-copy path (a zero-copied request whose plugin calls
 * req_read_fd / req_write_fd on the queue thread) claims with a plain
 * store and a fence (fring_req_claim_owner, where the argument is),
 * moves the entry with plain stores (start_io, ent_release) and commits
 * after a look at xrefs: no atomic read-modify-write for the handle. Any
 * other thread claims with a compare-and-swap while it holds a
 * reference, dropped when it hands the entry to the owner. */
static int accept_io(fring_req *h, uint32_t opcode, int fd)
{
	struct fring_request *r = fring_req_ptr(h);
	struct uring_ent *e;
	int ret;

	if (!uring_is_ent(r))
		return -EOPNOTSUPP;
	if (r->opcode != opcode)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	e = uring_ent_of(r);
	if (atomic_load_explicit(&e->th->u->closed, memory_order_acquire)) {
		fring_log_ratelimited(
			"uring-closed", FRING_LOG_WARN,
			"%s: req_%s_fd on %s (unique %llu) after the "
			"connection's rings stopped: refused "
			"(-ENOTCONN)",
			r->rq->name, opcode == FUSE_READ ? "read" : "write",
			fring_opcode_name(opcode),
			(unsigned long long)r->unique);
		return -ENOTCONN;
	}
	if (uring_self != e->th || !e->zc)
		return fring_req_claim(h);
	ret = fring_req_claim_owner(h);
	/* Written only by a winner: a thread that won instead reads it. */
	if (!ret)
		e->owner_claimed = 1;
	return ret;
}

static void start_io(struct uring_ent *e, int action, int fd, uint64_t off,
		     uint32_t len)
{
	int from = ENT_USER;

	e->io_fd = fd;
	e->io_off = off;
	e->io_len = len;
	/* Claimed above, so nobody else moves the entry out of USER. */
	if (e->owner_claimed && !e->req.claim_rmw)
		atomic_store_explicit(&e->state, ENT_IO, memory_order_relaxed);
	else
		atomic_compare_exchange_strong(&e->state, &from, ENT_IO);
	fring_req_xref_put(&e->req); /* an off-thread caller hands back */
	uring_hand_over(e, action);
}

int fring_uring_read_fd(fring_req *h, int fd, uint64_t offset, uint32_t len)
{
	struct fring_request *r = fring_req_ptr(h);
	struct uring_ent *e;
	ssize_t n;
	int ret;

	/* A zero-copied READ's room is the client's pages: read.len bytes. */
	if (uring_is_ent(r) && r->opcode == FUSE_READ &&
	    (len > r->d.a.read.len ||
	     (!uring_ent_of(r)->zc && len > uring_ent_of(r)->payload_cap)))
		return -EINVAL;
	ret = accept_io(h, FUSE_READ, fd);
	if (ret)
		return ret;
	if (!len) {
		fring_req_send(r, 0, NULL, 0);
		return 0;
	}
	e = uring_ent_of(r);
	if (!e->zc && try_nowait(e, 0, fd, offset, e->payload, len, &n)) {
		struct iovec iov = { e->payload, n > 0 ? (size_t)n : 0 };

		fring_req_send(r, n < 0 ? (int32_t)n : 0, &iov, 1);
		return 0;
	}
	start_io(e, ACT_READ, fd, offset, len);
	return 0;
}

int fring_uring_write_fd(fring_req *h, int fd, uint64_t offset)
{
	struct fring_request *r = fring_req_ptr(h);
	struct uring_ent *e;
	const char *src;
	uint32_t len;
	ssize_t n;
	int ret;

	if (uring_is_ent(r) && r->opcode == FUSE_WRITE) {
		/* WRITE_FIXED must name memory inside the registered region:
		 * the decoder points data into the payload buffer. */
		e = uring_ent_of(r);
		src = r->d.a.write.data;
		len = r->d.a.write.len;
		if (len && !e->zc && (!src || src < e->payload ||
			    src + len > e->payload + e->payload_cap))
			return -EINVAL;
	}
	ret = accept_io(h, FUSE_WRITE, fd);
	if (ret)
		return ret;
	e = uring_ent_of(r);
	src = r->d.a.write.data;
	len = r->d.a.write.len;
	if (!len) {
		struct fuse_write_out wo = { .size = 0 };
		struct iovec iov = { &wo, sizeof(wo) };

		fring_req_send(r, 0, &iov, 1);
		return 0;
	}
	if (!e->zc && try_nowait(e, 1, fd, offset, src, len, &n)) {
		struct fuse_write_out wo = { .size = n > 0 ? (uint32_t)n : 0 };
		struct iovec iov = { &wo, sizeof(wo) };

		fring_req_send(r, n < 0 ? (int32_t)n : 0, &iov, 1);
		return 0;
	}
	e->io_src = src;
	start_io(e, ACT_WRITE, fd, offset, len);
	return 0;
}
