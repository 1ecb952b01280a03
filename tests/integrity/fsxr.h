// SPDX-License-Identifier: MIT
/* fsxr: a random-operation data-integrity tester. One target file is
 * changed by random operations while an in-memory shadow copy records what
 * it must contain; the file is compared with the shadow after every
 * operation. Shared state and the interfaces between its three parts:
 * fsxr.c (options, main loop), fsxr_ops.c (operations), fsxr_check.c
 * (verification, data pattern, reports). */
#ifndef FSXR_H
#define FSXR_H

#include <stdbool.h>
#include <stdint.h>

enum fsxr_op {
	OP_WRITE,
	OP_READ,
	OP_TRUNCATE,
	OP_FALLOC,	/* fallocate mode 0: may extend the size */
	OP_FALLOC_KEEP, /* FALLOC_FL_KEEP_SIZE */
	OP_PUNCH,	/* FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE */
	OP_MAPREAD,
	OP_MAPWRITE,
	OP_COPY,	/* copy_file_range from the source file */
	OP_FSYNC,
	OP_DROP,	/* POSIX_FADV_DONTNEED: later reads reach the fs */
	OP_REOPEN,	/* close + open: FLUSH/RELEASE/OPEN, cache revalidation */
	OP_COUNT
};

/* Result of one operation. */
enum { OP_OK = 0, OP_MISMATCH = 1, OP_FAILED = 2, OP_UNSUPPORTED = 3 };

struct fsxr_log {
	uint64_t n;		/* operation number, from 1 */
	enum fsxr_op op;
	uint64_t off, len, off2; /* off2: source offset (copy) */
	uint64_t size_before, size_after;
	int64_t result;		/* bytes done, or -errno */
};

struct fsxr {
	/* options */
	const char *dir, *name;
	uint64_t nops, seed, maxlen, maxoplen, check_every;
	uint64_t corrupt_at;	/* -X: self-test, spoil a byte after this op */
	unsigned logtail;
	bool direct, verbose, keep;
	bool enabled[OP_COUNT];
	unsigned weight[OP_COUNT];

	/* files and their expected contents */
	char *path, *srcpath;
	int fd, srcfd;
	uint8_t *shadow;	/* maxlen bytes; zero beyond size */
	uint32_t *owner;	/* per byte: the op that last set it (0: never) */
	uint8_t *src;		/* the source file's contents, maxlen bytes */
	uint64_t size;
	uint8_t *buf;		/* read buffer, maxlen + 2 pages */
	uint8_t *wbuf;		/* data being written, maxlen bytes */
	uint8_t *bounce;	/* page-aligned copy for O_DIRECT, maxlen + 2 pages */
	char *cmdline;		/* the options, for the reproduce line */

	/* run state */
	uint64_t rng, opno, counts[OP_COUNT];
	long page;
	struct fsxr_log *log;	/* ring of logtail entries */
};

/* The source file's data is the pattern of this pseudo op number. */
#define FSXR_SRC_OP 0xffffffffu

static inline uint64_t fsxr_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t fsxr_rand(struct fsxr *f)
{
	f->rng += 0x9e3779b97f4a7c15ull;
	return fsxr_mix(f->rng);
}

/* Uniform in [0, n); n > 0. */
static inline uint64_t fsxr_below(struct fsxr *f, uint64_t n)
{
	return fsxr_rand(f) % n;
}

const char *fsxr_op_name(enum fsxr_op op);

/* Data written by operation `op` at file offset `pos` (len bytes). */
void fsxr_pattern(const struct fsxr *f, uint32_t op, uint64_t pos, uint8_t *dst,
		  uint64_t len);

/* Read [off, off+len) of fd fully into dst; returns bytes read (short only
 * at end of file) or -errno. Handles O_DIRECT alignment. */
int64_t fsxr_pread(struct fsxr *f, int fd, uint8_t *dst, uint64_t off, uint64_t len);
int fsxr_pwrite(struct fsxr *f, const uint8_t *src, uint64_t off, uint64_t len);

/* Compare `got` (n bytes read from offset off) with the shadow; `want` is
 * the expected byte count. Reports and returns OP_MISMATCH on difference. */
int fsxr_compare(struct fsxr *f, const char *what, const uint8_t *got, uint64_t off,
		 int64_t n, uint64_t want);

/* The file's size and the whole file (or only [off, off+len)) against the
 * shadow. */
int fsxr_check_file(struct fsxr *f, bool whole, uint64_t off, uint64_t len);
int fsxr_check_source(struct fsxr *f);

/* Open the target file (again), honouring -Z. */
int fsxr_open(struct fsxr *f);

/* Install the SIGBUS handler the mapping ops rely on. */
void fsxr_ops_init(void);
int fsxr_run_op(struct fsxr *f, enum fsxr_op op, struct fsxr_log *e);

void fsxr_log_dump(const struct fsxr *f);
void fsxr_fail(struct fsxr *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
