// SPDX-License-Identifier: MIT
/* fsxr: the operations. Each picks its arguments from the seeded
 * generator, applies itself to the file, then to the shadow; operations
 * that read check what they read on the spot. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fsxr.h"

static sigjmp_buf bus_jump;
static volatile sig_atomic_t bus_armed;

/* A mapping beyond what the file really holds raises SIGBUS: turn that
 * into a report instead of a crash. */
static void on_sigbus(int sig)
{
	if (bus_armed)
		siglongjmp(bus_jump, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* memcpy that returns false instead of dying when the mapping faults. */
static bool copy_guarded(uint8_t *dst, const uint8_t *src, uint64_t n)
{
	if (sigsetjmp(bus_jump, 1)) {
		bus_armed = 0;
		return false;
	}
	bus_armed = 1;
	memcpy(dst, src, n);
	bus_armed = 0;
	return true;
}

void fsxr_ops_init(void)
{
	struct sigaction sa = { .sa_handler = on_sigbus };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t page_down(const struct fsxr *f, uint64_t v)
{
	return v & ~((uint64_t)f->page - 1);
}

static uint64_t page_up(const struct fsxr *f, uint64_t v)
{
	return page_down(f, v + (uint64_t)f->page - 1);
}

static int io_error(struct fsxr *f, struct fsxr_log *e, const char *what, int err)
{
	e->result = -err;
	fsxr_fail(f, "%s %s off 0x%" PRIx64 " len 0x%" PRIx64 ": %s", fsxr_op_name(e->op),
		  what, e->off, e->len, strerror(err));
	return OP_FAILED;
}

static void shadow_set(struct fsxr *f, uint64_t off, const uint8_t *data, uint64_t len,
		       uint64_t op)
{
	memcpy(f->shadow + off, data, len);
	for (uint64_t i = off; i < off + len; i++)
		f->owner[i] = (uint32_t)op;
	if (off + len > f->size)
		f->size = off + len;
}

static void shadow_zero(struct fsxr *f, uint64_t off, uint64_t len, uint64_t op)
{
	memset(f->shadow + off, 0, len);
	for (uint64_t i = off; i < off + len; i++)
		f->owner[i] = (uint32_t)op;
}

/* The size moves to `size`; new bytes read as zeros, dropped bytes become
 * zeros in the shadow (which stays zero beyond EOF). */
static void shadow_resize(struct fsxr *f, uint64_t size, uint64_t op)
{
	if (size > f->size)
		shadow_zero(f, f->size, size - f->size, op);
	else
		memset(f->shadow + size, 0, f->size - size);
	f->size = size;
}

/* Lengths: mostly up to -o, sometimes tiny, sometimes whole pages. */
static uint64_t pick_len(struct fsxr *f)
{
	uint64_t r = fsxr_below(f, 8), pages = f->maxoplen / (uint64_t)f->page;

	if (r == 0)
		return 1 + fsxr_below(f, 16);
	if (r == 1 && pages)
		return (1 + fsxr_below(f, pages)) * (uint64_t)f->page;
	return 1 + fsxr_below(f, f->maxoplen);
}

/* Offsets: anywhere, often around EOF or on a page boundary, where page
 * cache and size handling have their edge cases. */
static uint64_t pick_off(struct fsxr *f)
{
	uint64_t r = fsxr_below(f, 8), pg = (uint64_t)f->page;

	if (r < 2) {
		uint64_t d = fsxr_below(f, 2 * pg);

		return f->size + pg > d ? f->size + pg - d : 0;
	}
	if (r == 2)
		return fsxr_below(f, f->maxlen / pg + 1) * pg;
	return fsxr_below(f, f->maxlen);
}

/* A range inside maxlen for an op that may extend the file. */
static void pick_range(struct fsxr *f, struct fsxr_log *e, bool align)
{
	uint64_t off = pick_off(f), len = pick_len(f);

	if (align) {
		off = page_down(f, off);
		len = page_up(f, len);
	}
	if (off >= f->maxlen)
		off = f->maxlen - (align ? (uint64_t)f->page : 1);
	e->off = off;
	e->len = min64(len, f->maxlen - off);
}

/* A range to read: mostly inside the file, now and then across EOF. */
static void pick_read(struct fsxr *f, struct fsxr_log *e)
{
	if (!f->size || !fsxr_below(f, 16)) {
		pick_range(f, e, false);
		return;
	}
	e->off = fsxr_below(f, f->size);
	e->len = min64(pick_len(f), f->size - e->off);
}

static int op_write(struct fsxr *f, struct fsxr_log *e)
{
	int r;

	pick_range(f, e, f->direct);
	fsxr_pattern(f, (uint32_t)e->n, e->off, f->wbuf, e->len);
	r = fsxr_pwrite(f, f->wbuf, e->off, e->len);
	if (r)
		return io_error(f, e, "pwrite", -r);
	e->result = (int64_t)e->len;
	shadow_set(f, e->off, f->wbuf, e->len, e->n);
	return OP_OK;
}

static int op_read(struct fsxr *f, struct fsxr_log *e)
{
	uint64_t want;
	int64_t n;

	pick_read(f, e);
	want = e->off < f->size ? min64(e->len, f->size - e->off) : 0;
	n = fsxr_pread(f, f->fd, f->buf, e->off, e->len);
	e->result = n;
	return fsxr_compare(f, "read", f->buf, e->off, n, want);
}

static int op_truncate(struct fsxr *f, struct fsxr_log *e)
{
	uint64_t r = fsxr_below(f, 4), pg = (uint64_t)f->page, size, d;

	if (r == 0) {
		size = fsxr_below(f, f->maxlen + 1);
	} else if (r == 1) { /* within a page of EOF, either side */
		d = fsxr_below(f, 2 * pg);
		size = f->size + pg > d ? f->size + pg - d : 0;
	} else if (r == 2) {
		size = fsxr_below(f, f->maxlen / pg + 1) * pg;
	} else {
		size = fsxr_below(f, f->size + 1); /* shrink: keeps sizes varied */
	}
	size = min64(size, f->maxlen);
	e->off = size;
	if (ftruncate(f->fd, (off_t)size))
		return io_error(f, e, "ftruncate", errno);
	shadow_resize(f, size, e->n);
	return OP_OK;
}

static int op_fallocate(struct fsxr *f, struct fsxr_log *e, int mode)
{
	pick_range(f, e, false);
	if (fallocate(f->fd, mode, (off_t)e->off, (off_t)e->len)) {
		if (errno == EOPNOTSUPP) {
			e->result = -errno;
			return OP_UNSUPPORTED;
		}
		return io_error(f, e, "fallocate", errno);
	}
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		if (e->off < f->size)
			shadow_zero(f, e->off, min64(e->len, f->size - e->off), e->n);
	} else if (!(mode & FALLOC_FL_KEEP_SIZE) && e->off + e->len > f->size) {
		shadow_resize(f, e->off + e->len, e->n);
	}
	return OP_OK;
}

/* Bytes of the last mapped page past EOF must read as zeros. */
static int check_eof_page(struct fsxr *f, const uint8_t *tail, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (tail[i]) {
			printf("fsxr: MISMATCH in mapread after op #%" PRIu64 ": byte 0x%"
			       PRIx64 " past EOF 0x%" PRIx64 " in the last mapped page is "
			       "0x%02x, expected 0\n", f->opno, f->size + i, f->size, tail[i]);
			return OP_MISMATCH;
		}
	return OP_OK;
}

static int op_mapread(struct fsxr *f, struct fsxr_log *e)
{
	uint64_t pg, maplen, tail = 0;
	uint8_t *map;
	int rc;

	if (!f->size)
		return OP_OK; /* nothing to map */
	e->off = fsxr_below(f, f->size); /* mapping past EOF's page faults */
	e->len = min64(pick_len(f), f->size - e->off);
	pg = page_down(f, e->off);
	maplen = page_up(f, e->off + e->len) - pg;
	if (pg + maplen > f->size)
		tail = pg + maplen - f->size;
	map = mmap(NULL, maplen, PROT_READ, MAP_SHARED, f->fd, (off_t)pg);
	if (map == MAP_FAILED)
		return io_error(f, e, "mmap", errno);
	if (!copy_guarded(f->buf, map + (e->off - pg), e->len) ||
	    !copy_guarded(f->buf + e->len, map + (f->size - pg), tail)) {
		munmap(map, maplen);
		printf("fsxr: MISMATCH in mapread after op #%" PRIu64 ": SIGBUS reading "
		       "0x%" PRIx64 "..0x%" PRIx64 " (file should be 0x%" PRIx64 " bytes)\n",
		       f->opno, e->off, e->off + e->len, f->size);
		return OP_MISMATCH;
	}
	munmap(map, maplen);
	e->result = (int64_t)e->len;
	rc = fsxr_compare(f, "mapread", f->buf, e->off, (int64_t)e->len, e->len);
	return rc ? rc : check_eof_page(f, f->buf + e->len, tail);
}

static int op_mapwrite(struct fsxr *f, struct fsxr_log *e)
{
	uint64_t pg, maplen, end;
	uint8_t *map;

	pick_range(f, e, false);
	end = e->off + e->len;
	if (end > f->size) { /* a mapping cannot extend the file */
		if (ftruncate(f->fd, (off_t)end))
			return io_error(f, e, "ftruncate", errno);
		shadow_resize(f, end, e->n);
	}
	pg = page_down(f, e->off);
	maplen = end - pg;
	map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t)pg);
	if (map == MAP_FAILED)
		return io_error(f, e, "mmap", errno);
	fsxr_pattern(f, (uint32_t)e->n, e->off, f->wbuf, e->len);
	if (!copy_guarded(map + (e->off - pg), f->wbuf, e->len)) {
		munmap(map, maplen);
		printf("fsxr: MISMATCH in mapwrite after op #%" PRIu64 ": SIGBUS writing "
		       "0x%" PRIx64 "..0x%" PRIx64 " (file should be 0x%" PRIx64 " bytes)\n",
		       f->opno, e->off, end, f->size);
		return OP_MISMATCH;
	}
	if (msync(map, maplen, MS_SYNC)) {
		int err = errno;

		munmap(map, maplen);
		return io_error(f, e, "msync", err);
	}
	munmap(map, maplen);
	e->result = (int64_t)e->len;
	shadow_set(f, e->off, f->wbuf, e->len, e->n);
	return OP_OK;
}

static int op_copy(struct fsxr *f, struct fsxr_log *e)
{
	uint64_t done = 0;
	off64_t in, out;

	pick_range(f, e, f->direct);
	e->off2 = fsxr_below(f, f->maxlen);
	if (f->direct)
		e->off2 = min64(page_down(f, e->off2), f->maxlen - (uint64_t)f->page);
	e->len = min64(e->len, f->maxlen - e->off2);
	in = (off64_t)e->off2;
	out = (off64_t)e->off;
	while (done < e->len) {
		ssize_t n = copy_file_range(f->srcfd, &in, f->fd, &out, e->len - done, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !done && (errno == EOPNOTSUPP || errno == EXDEV || errno == ENOSYS)) {
			e->result = -errno;
			return OP_UNSUPPORTED;
		}
		if (n < 0)
			return io_error(f, e, "copy_file_range", errno);
		if (n == 0)
			return io_error(f, e, "copy_file_range (0 bytes before the end)", EIO);
		done += (uint64_t)n;
	}
	e->result = (int64_t)done;
	shadow_set(f, e->off, f->src + e->off2, e->len, e->n);
	return OP_OK;
}

static int op_fsync(struct fsxr *f, struct fsxr_log *e)
{
	bool data = fsxr_below(f, 2);

	e->off2 = data; /* logged: 1 for fdatasync */
	if (data ? fdatasync(f->fd) : fsync(f->fd))
		return io_error(f, e, data ? "fdatasync" : "fsync", errno);
	return OP_OK;
}

/* No fdatasync first: write() leaves no dirty pages on a FUSE mount without
 * write-back cache and mapwrite synced its own; on ext4 it would only add
 * disk flushes (fsync has its own op). */
static int op_drop(struct fsxr *f, struct fsxr_log *e)
{
	int err = posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);

	if (!err)
		err = posix_fadvise(f->srcfd, 0, 0, POSIX_FADV_DONTNEED);
	return err ? io_error(f, e, "posix_fadvise", err) : OP_OK;
}

static int op_reopen(struct fsxr *f, struct fsxr_log *e)
{
	if (close(f->fd))
		return io_error(f, e, "close", errno);
	f->fd = fsxr_open(f);
	if (f->fd < 0)
		return io_error(f, e, "open", errno);
	if (close(f->srcfd))
		return io_error(f, e, "close (source)", errno);
	f->srcfd = open(f->srcpath, O_RDONLY);
	return f->srcfd < 0 ? io_error(f, e, "open (source)", errno) : OP_OK;
}

int fsxr_run_op(struct fsxr *f, enum fsxr_op op, struct fsxr_log *e)
{
	switch (op) {
	case OP_WRITE: return op_write(f, e);
	case OP_READ: return op_read(f, e);
	case OP_TRUNCATE: return op_truncate(f, e);
	case OP_FALLOC: return op_fallocate(f, e, 0);
	case OP_FALLOC_KEEP: return op_fallocate(f, e, FALLOC_FL_KEEP_SIZE);
	case OP_PUNCH:
		return op_fallocate(f, e, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
	case OP_MAPREAD: return op_mapread(f, e);
	case OP_MAPWRITE: return op_mapwrite(f, e);
	case OP_COPY: return op_copy(f, e);
	case OP_FSYNC: return op_fsync(f, e);
	case OP_DROP: return op_drop(f, e);
	case OP_REOPEN: return op_reopen(f, e);
	case OP_COUNT: break;
	}
	return OP_FAILED;
}
