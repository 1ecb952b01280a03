// SPDX-License-Identifier: MIT
/* fsxr: the data pattern, full reads and writes, comparing the file with
 * the shadow, and the reports printed when they differ. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsxr.h"

static const char *const names[OP_COUNT] = {
	[OP_WRITE] = "write",	       [OP_READ] = "read",
	[OP_TRUNCATE] = "truncate",    [OP_FALLOC] = "fallocate",
	[OP_FALLOC_KEEP] = "falloc_keep", [OP_PUNCH] = "punch_hole",
	[OP_MAPREAD] = "mapread",      [OP_MAPWRITE] = "mapwrite",
	[OP_COPY] = "copy_range",      [OP_FSYNC] = "fsync",
	[OP_DROP] = "drop_cache",      [OP_REOPEN] = "reopen",
};

const char *fsxr_op_name(enum fsxr_op op)
{
	return names[op];
}

/* Every (op, 8-byte word) pair gets its own pseudo-random word, so data
 * from the wrong op or the wrong offset never looks right by accident. */
void fsxr_pattern(const struct fsxr *f, uint32_t op, uint64_t pos, uint8_t *dst,
		  uint64_t len)
{
	uint64_t base = fsxr_mix(f->seed ^ ((uint64_t)op << 32));
	uint64_t p = pos, end = pos + len;

	while (p < end) {
		uint64_t word = fsxr_mix(base + (p >> 3));

		do
			*dst++ = (uint8_t)(word >> ((p & 7) * 8));
		while (++p < end && (p & 7));
	}
}

/* len bytes at off, or fewer at EOF; -errno on an error. */
static int64_t pread_full(int fd, uint8_t *dst, uint64_t len, uint64_t off)
{
	uint64_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, dst + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (uint64_t)n;
	}
	return (int64_t)got;
}

/* O_DIRECT needs aligned offsets, lengths and memory: read the enclosing
 * aligned span into the bounce buffer. A length past EOF is fine. */
static int64_t pread_direct(struct fsxr *f, int fd, uint8_t *dst, uint64_t off,
			    uint64_t len)
{
	uint64_t a = (uint64_t)f->page, start = off & ~(a - 1);
	uint64_t span = (off + len - start + a - 1) & ~(a - 1), got;
	int64_t n = pread_full(fd, f->bounce, span, start);

	if (n < 0)
		return n;
	got = (uint64_t)n;
	if (got <= off - start)
		return 0;
	got -= off - start;
	if (got > len)
		got = len;
	memcpy(dst, f->bounce + (off - start), got);
	return (int64_t)got;
}

int64_t fsxr_pread(struct fsxr *f, int fd, uint8_t *dst, uint64_t off, uint64_t len)
{
	if (f->direct && fd == f->fd)
		return pread_direct(f, fd, dst, off, len);
	return pread_full(fd, dst, len, off);
}

/* In -Z mode the callers pick aligned offsets and lengths. */
int fsxr_pwrite(struct fsxr *f, const uint8_t *src, uint64_t off, uint64_t len)
{
	uint64_t done = 0;

	if (f->direct) {
		memcpy(f->bounce, src, len);
		src = f->bounce;
	}
	while (done < len) {
		ssize_t n = pwrite(f->fd, src + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += (uint64_t)n;
	}
	return 0;
}

static void hexline(const char *label, const uint8_t *p, uint64_t n)
{
	printf("fsxr:   %-8s", label);
	for (uint64_t i = 0; i < n; i++)
		printf(" %02x", p[i]);
	printf("\n");
}

/* Name what the wrong bytes look like: zeros, or the data some logged op
 * wrote at this very offset (stale data, lost update), or source data. */
static void explain(const struct fsxr *f, const uint8_t *got, uint64_t pos, uint64_t n)
{
	uint8_t pat[16];
	uint64_t first = f->opno > f->logtail ? f->opno - f->logtail + 1 : 1;
	uint64_t i;

	if (n > sizeof(pat))
		n = sizeof(pat);
	for (i = 0; i < n && !got[i]; i++)
		;
	if (i == n) {
		printf("fsxr:   the wrong bytes are zeros\n");
		return;
	}
	for (uint64_t k = f->opno; k >= first; k--) {
		const struct fsxr_log *e = &f->log[(k - 1) % f->logtail];

		if (e->op != OP_WRITE && e->op != OP_MAPWRITE)
			continue;
		fsxr_pattern(f, (uint32_t)k, pos, pat, n);
		if (!memcmp(pat, got, n)) {
			printf("fsxr:   the wrong bytes are what op #%" PRIu64 " (%s) wrote "
			       "at this offset\n", k, fsxr_op_name(e->op));
			return;
		}
	}
	for (uint64_t s = 0; s + n <= f->maxlen; s++)
		if (!memcmp(f->src + s, got, n)) {
			printf("fsxr:   the wrong bytes are source file data from offset "
			       "0x%" PRIx64 "\n", s);
			return;
		}
	printf("fsxr:   the wrong bytes match nothing fsxr wrote recently\n");
}

static int differ(struct fsxr *f, const char *what, const uint8_t *got,
		  const uint8_t *want, const uint32_t *owner, uint64_t off, uint64_t n)
{
	uint64_t i = 0, last = 0, bad = 0, ctx;

	if (!memcmp(got, want, n))
		return OP_OK;
	while (got[i] == want[i])
		i++;
	for (uint64_t j = i; j < n; j++)
		if (got[j] != want[j]) {
			bad++;
			last = j;
		}
	printf("fsxr: MISMATCH in %s after op #%" PRIu64 ": first bad offset 0x%" PRIx64
	       ", last bad 0x%" PRIx64 ", %" PRIu64 " bad bytes in 0x%" PRIx64
	       "..0x%" PRIx64 "\n", what, f->opno, off + i, off + last, bad, off, off + n);
	if (owner) {
		uint32_t o = owner[off + i];

		if (o)
			printf("fsxr:   expected byte last set by op #%" PRIu32 "\n", o);
		else
			printf("fsxr:   expected byte never written (zero)\n");
	}
	ctx = n - i < 16 ? n - i : 16;
	hexline("expected", want + i, ctx);
	hexline("got", got + i, ctx);
	explain(f, got + i, off + i, ctx);
	return OP_MISMATCH;
}

int fsxr_compare(struct fsxr *f, const char *what, const uint8_t *got, uint64_t off,
		 int64_t n, uint64_t want)
{
	if (n < 0) {
		fsxr_fail(f, "%s at 0x%" PRIx64 ": %s", what, off, strerror((int)-n));
		return OP_FAILED;
	}
	if ((uint64_t)n != want) {
		printf("fsxr: MISMATCH in %s after op #%" PRIu64 ": %" PRId64 " bytes at 0x%"
		       PRIx64 ", expected %" PRIu64 " (file size should be 0x%" PRIx64 ")\n",
		       what, f->opno, n, off, want, f->size);
		if ((uint64_t)n > want)
			n = (int64_t)want;
		differ(f, what, got, f->shadow + off, f->owner, off, (uint64_t)n);
		return OP_MISMATCH;
	}
	return differ(f, what, got, f->shadow + off, f->owner, off, want);
}

int fsxr_check_file(struct fsxr *f, bool whole, uint64_t off, uint64_t len)
{
	struct stat st;
	uint64_t want;

	if (fstat(f->fd, &st)) {
		fsxr_fail(f, "fstat: %s", strerror(errno));
		return OP_FAILED;
	}
	if ((uint64_t)st.st_size != f->size) {
		printf("fsxr: MISMATCH after op #%" PRIu64 ": file size 0x%" PRIx64
		       ", expected 0x%" PRIx64 "\n", f->opno, (uint64_t)st.st_size, f->size);
		return OP_MISMATCH;
	}
	if (whole) {
		off = 0;
		len = f->size + (uint64_t)f->page; /* asks past EOF: must stop at EOF */
	}
	if (off > f->maxlen)
		off = f->maxlen;
	if (len > f->maxlen + (uint64_t)f->page - off)
		len = f->maxlen + (uint64_t)f->page - off;
	want = off < f->size ? (f->size - off < len ? f->size - off : len) : 0;
	return fsxr_compare(f, whole ? "whole-file check" : "range check", f->buf, off,
			    fsxr_pread(f, f->fd, f->buf, off, len), want);
}

int fsxr_check_source(struct fsxr *f)
{
	int64_t n = fsxr_pread(f, f->srcfd, f->buf, 0, f->maxlen + 1);

	if (n < 0) {
		fsxr_fail(f, "reading the source file: %s", strerror((int)-n));
		return OP_FAILED;
	}
	if ((uint64_t)n != f->maxlen) {
		printf("fsxr: MISMATCH: source file has 0x%" PRIx64 " bytes, expected 0x%"
		       PRIx64 "\n", (uint64_t)n, f->maxlen);
		return OP_MISMATCH;
	}
	return differ(f, "source file", f->buf, f->src, NULL, 0, f->maxlen);
}

void fsxr_log_dump(const struct fsxr *f)
{
	uint64_t first = f->opno > f->logtail ? f->opno - f->logtail + 1 : 1;

	printf("fsxr: last %" PRIu64 " ops (seed %" PRIu64 "):\n", f->opno - first + 1,
	       f->seed);
	for (uint64_t k = first; k <= f->opno; k++) {
		const struct fsxr_log *e = &f->log[(k - 1) % f->logtail];

		printf("fsxr:   #%-7" PRIu64 " %-11s off 0x%06" PRIx64 " len 0x%05" PRIx64,
		       e->n, fsxr_op_name(e->op), e->off, e->len);
		if (e->op == OP_COPY)
			printf(" src 0x%06" PRIx64, e->off2);
		printf("  size 0x%06" PRIx64 " -> 0x%06" PRIx64 "  = %" PRId64 "\n",
		       e->size_before, e->size_after, e->result);
	}
}

void fsxr_fail(struct fsxr *f, const char *fmt, ...)
{
	va_list ap;

	printf("fsxr: FAILED at op #%" PRIu64 ": ", f->opno);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}
