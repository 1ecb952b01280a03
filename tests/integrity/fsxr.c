// SPDX-License-Identifier: MIT
/* fsxr: options, set-up, the main loop and the summary. See
 * tests/integrity/README.md for what it checks and how to run it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsxr.h"

/* Relative frequency of each operation. */
static const unsigned default_weight[OP_COUNT] = {
	[OP_WRITE] = 20,   [OP_READ] = 10,	 [OP_TRUNCATE] = 6,
	[OP_FALLOC] = 3,   [OP_FALLOC_KEEP] = 3, [OP_PUNCH] = 4,
	[OP_MAPREAD] = 8,  [OP_MAPWRITE] = 8,	 [OP_COPY] = 6,
	[OP_FSYNC] = 2,	   [OP_DROP] = 4,	 [OP_REOPEN] = 1,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: fsxr [options] DIR\n"
		"Random operations on DIR/NAME (and copy_file_range from DIR/NAME.src),\n"
		"checked against an in-memory shadow copy after every operation.\n"
		"  -N OPS     number of operations (default 10000)\n"
		"  -S SEED    random seed (default: from the clock; printed)\n"
		"  -l SIZE    maximum file size (default 256k; k/m/g suffixes)\n"
		"  -o SIZE    maximum length of one operation (default 64k)\n"
		"  -c N       check the whole file every N ops, else only the size and\n"
		"             the touched range (default 1; 0: never, only at the end)\n"
		"  -L N       operations shown in the failure log (default 40)\n"
		"  -n NAME    file name (default fsxr.dat)\n"
		"  -Z         O_DIRECT: aligned writes, reads bounced through aligned memory\n"
		"  -k         keep the files; -v print every operation\n"
		"  -X OP      self-test: after operation OP, change one byte of the file\n"
		"             through another descriptor; the run must then fail\n"
		"Leave out operations:\n"
		"  -W mmap write   -R mmap read   -T truncate   -F fallocate (mode 0, KEEP_SIZE)\n"
		"  -H punch hole   -C copy_file_range   -Y fsync   -U cache drop and reopen\n"
		"Exit: 0 no mismatch, 1 mismatch, 2 usage, 3 an operation failed.\n");
}

static int parse_u64(const char *s, uint64_t *v, bool size)
{
	char *end;
	uint64_t mult = 1;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	if (size && *end) {
		switch (*end++) {
		case 'k': case 'K': mult = 1ull << 10; break;
		case 'm': case 'M': mult = 1ull << 20; break;
		case 'g': case 'G': mult = 1ull << 30; break;
		default: return -1;
		}
	}
	if (*end || *v > UINT64_MAX / mult)
		return -1;
	*v *= mult;
	return 0;
}

static int options(struct fsxr *f, int argc, char **argv)
{
	static const char leave_out[] = "WRTFHCYU";
	static const enum fsxr_op left[][2] = {
		{ OP_MAPWRITE, OP_MAPWRITE }, { OP_MAPREAD, OP_MAPREAD },
		{ OP_TRUNCATE, OP_TRUNCATE }, { OP_FALLOC, OP_FALLOC_KEEP },
		{ OP_PUNCH, OP_PUNCH },	      { OP_COPY, OP_COPY },
		{ OP_FSYNC, OP_FSYNC },	      { OP_DROP, OP_REOPEN },
	};
	bool seeded = false;
	uint64_t v;
	int c;

	while ((c = getopt(argc, argv, "N:S:l:o:c:L:n:X:ZkvWRTFHCYUh")) != -1) {
		const char *lo = strchr(leave_out, c);

		if (lo) {
			f->enabled[left[lo - leave_out][0]] = false;
			f->enabled[left[lo - leave_out][1]] = false;
			continue;
		}
		switch (c) {
		case 'N': if (parse_u64(optarg, &f->nops, false)) return -1; break;
		case 'S': if (parse_u64(optarg, &f->seed, false)) return -1; seeded = true; break;
		case 'l': if (parse_u64(optarg, &f->maxlen, true)) return -1; break;
		case 'o': if (parse_u64(optarg, &f->maxoplen, true)) return -1; break;
		case 'c': if (parse_u64(optarg, &f->check_every, false)) return -1; break;
		case 'L':
			if (parse_u64(optarg, &v, false) || !v || v > 100000)
				return -1;
			f->logtail = (unsigned)v;
			break;
		case 'n': f->name = optarg; break;
		case 'X': if (parse_u64(optarg, &f->corrupt_at, false)) return -1; break;
		case 'Z': f->direct = true; break;
		case 'k': f->keep = true; break;
		case 'v': f->verbose = true; break;
		case 'h': usage(stdout); exit(0);
		default: return -1;
		}
	}
	if (optind != argc - 1)
		return -1;
	f->dir = argv[optind];
	if (!seeded)
		f->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	if (f->direct)
		f->maxlen &= ~((uint64_t)f->page - 1);
	if (!f->maxlen || f->maxlen > (1ull << 31) || !f->maxoplen || f->nops >= FSXR_SRC_OP ||
	    (f->direct && f->maxlen < (uint64_t)f->page)) {
		fprintf(stderr, "fsxr: need 0 < -o, 0 < -l <= 2g (-Z: at least a page), "
				"-N < 2^32-1\n");
		return -1;
	}
	if (f->maxoplen > f->maxlen)
		f->maxoplen = f->maxlen;
	return 0;
}

int fsxr_open(struct fsxr *f)
{
	return open(f->path, O_RDWR | (f->direct ? O_DIRECT : 0));
}

static void *alloc(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n)) {
		fprintf(stderr, "fsxr: out of memory\n");
		exit(3);
	}
	memset(p, 0, n);
	return p;
}

/* Fresh target file, and the source file filled with its pattern. */
static int setup(struct fsxr *f)
{
	uint64_t room = f->maxlen + 3 * (uint64_t)f->page, done = 0;
	int fd;

	if (asprintf(&f->path, "%s/%s", f->dir, f->name) < 0 ||
	    asprintf(&f->srcpath, "%s/%s.src", f->dir, f->name) < 0)
		return -1;
	f->shadow = alloc(f->maxlen);
	f->owner = alloc(f->maxlen * sizeof(*f->owner));
	f->src = alloc(f->maxlen);
	f->buf = alloc(room);
	f->wbuf = alloc(f->maxlen);
	f->bounce = alloc(room);
	f->log = alloc(f->logtail * sizeof(*f->log));
	fsxr_pattern(f, FSXR_SRC_OP, 0, f->src, f->maxlen);

	unlink(f->path);
	fd = open(f->srcpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	while (done < f->maxlen) {
		ssize_t n = pwrite(fd, f->src + done, f->maxlen - done, (off_t)done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (uint64_t)n;
	}
	if (fsync(fd) || close(fd))
		return -1;
	f->srcfd = open(f->srcpath, O_RDONLY);
	if (f->srcfd < 0)
		return -1;
	f->fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | (f->direct ? O_DIRECT : 0), 0644);
	return f->fd < 0 ? -1 : 0;
}

static enum fsxr_op pick_op(struct fsxr *f)
{
	unsigned total = 0, r;

	for (int i = 0; i < OP_COUNT; i++)
		total += f->enabled[i] ? f->weight[i] : 0;
	if (!total)
		return OP_COUNT;
	r = (unsigned)fsxr_below(f, total);
	for (int i = 0; i < OP_COUNT; i++) {
		unsigned w = f->enabled[i] ? f->weight[i] : 0;

		if (r < w)
			return (enum fsxr_op)i;
		r -= w;
	}
	return OP_COUNT;
}

/* After a failure: does the file system itself hold the wrong data, or was
 * it only the page cache? Read everything again from the server. */
static void recheck(struct fsxr *f)
{
	fdatasync(f->fd);
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
	close(f->fd);
	f->fd = fsxr_open(f);
	if (f->fd < 0) {
		printf("fsxr: reopening for a re-check failed: %s\n", strerror(errno));
		return;
	}
	printf("fsxr: re-check after dropping the cache and reopening:\n");
	if (fsxr_check_file(f, true, 0, 0) == OP_OK)
		printf("fsxr:   the file now reads as expected: the wrong view came from a cache\n");
	else
		printf("fsxr:   still wrong when read back from the file system\n");
}

/* -X: flip one byte behind fsxr's back (once, in a non-empty file), to
 * show that the checks catch what they are meant to catch. */
static void corrupt(struct fsxr *f)
{
	uint64_t off;
	uint8_t b;
	int fd;

	if (!f->corrupt_at || f->opno < f->corrupt_at || !f->size)
		return;
	f->corrupt_at = 0;
	off = fsxr_mix(f->seed ^ f->opno) % f->size;
	fd = open(f->path, O_RDWR);
	if (fd < 0 || pread(fd, &b, 1, (off_t)off) != 1) {
		printf("fsxr: self-test: cannot read %s: %s\n", f->path, strerror(errno));
	} else {
		b ^= 0x5a;
		if (pwrite(fd, &b, 1, (off_t)off) != 1)
			printf("fsxr: self-test: cannot write: %s\n", strerror(errno));
		else
			printf("fsxr: self-test: changed the byte at 0x%" PRIx64 " after op #%"
			       PRIu64 "\n", off, f->opno);
	}
	if (fd >= 0)
		close(fd);
}

static void summary(const struct fsxr *f)
{
	printf("fsxr: seed %" PRIu64 ", max size 0x%" PRIx64 ":", f->seed, f->maxlen);
	for (int i = 0; i < OP_COUNT; i++)
		printf(" %s %" PRIu64, fsxr_op_name((enum fsxr_op)i), f->counts[i]);
	printf("\n");
}

static int failed(struct fsxr *f, int rc)
{
	fsxr_log_dump(f);
	if (rc == OP_MISMATCH)
		recheck(f);
	summary(f);
	printf("fsxr: files kept: %s %s\n", f->path, f->srcpath);
	printf("fsxr: reproduce: %s -S %" PRIu64 " -N %" PRIu64 "\n", f->cmdline, f->seed,
	       f->opno);
	printf("fsxr: %" PRIu64 " ops, %s\n", f->opno,
	       rc == OP_MISMATCH ? "1 mismatch" : "failed");
	return rc == OP_MISMATCH ? 1 : 3;
}

static int run(struct fsxr *f)
{
	int rc;

	for (f->opno = 1; f->opno <= f->nops;) {
		enum fsxr_op op = pick_op(f);
		struct fsxr_log *e = &f->log[(f->opno - 1) % f->logtail];

		if (op == OP_COUNT) {
			printf("fsxr: every operation is disabled\n");
			return 2;
		}
		*e = (struct fsxr_log){ .n = f->opno, .op = op, .size_before = f->size };
		rc = fsxr_run_op(f, op, e);
		if (rc == OP_UNSUPPORTED) {
			f->enabled[op] = false;
			printf("fsxr: %s disabled: the file system says %s\n", fsxr_op_name(op),
			       strerror((int)-e->result));
			continue;
		}
		e->size_after = f->size;
		f->counts[op]++;
		if (f->verbose)
			printf("fsxr: #%" PRIu64 " %s 0x%" PRIx64 " 0x%" PRIx64 " size 0x%" PRIx64
			       "\n", e->n, fsxr_op_name(op), e->off, e->len, f->size);
		corrupt(f);
		if (rc == OP_OK)
			rc = fsxr_check_file(f, f->check_every && !(f->opno % f->check_every),
					     e->off, e->len);
		if (rc != OP_OK)
			return failed(f, rc);
		f->opno++;
	}
	f->opno = f->nops;
	rc = fsxr_check_file(f, true, 0, 0);
	if (rc == OP_OK)
		rc = fsxr_check_source(f);
	return rc == OP_OK ? 0 : failed(f, rc);
}

static char *join(int argc, char **argv)
{
	size_t n = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	s = alloc(n);
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int main(int argc, char **argv)
{
	struct fsxr f = {
		.name = "fsxr.dat", .nops = 10000, .maxlen = 256 << 10,
		.maxoplen = 64 << 10, .check_every = 1, .logtail = 40,
	};
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	f.page = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < OP_COUNT; i++) {
		f.enabled[i] = true;
		f.weight[i] = default_weight[i];
	}
	if (options(&f, argc, argv)) {
		usage(stderr);
		return 2;
	}
	f.cmdline = join(argc, argv);
	f.rng = f.seed;
	fsxr_ops_init();
	if (setup(&f)) {
		printf("fsxr: setting up %s/%s: %s\n", f.dir, f.name, strerror(errno));
		return 3;
	}
	printf("fsxr: %s, seed %" PRIu64 ", %" PRIu64 " ops, max size 0x%" PRIx64
	       ", max op 0x%" PRIx64 "%s\n", f.path, f.seed, f.nops, f.maxlen, f.maxoplen,
	       f.direct ? ", O_DIRECT" : "");
	if (fsxr_check_source(&f) != OP_OK)
		return failed(&f, OP_MISMATCH);
	rc = run(&f);
	if (rc)
		return rc;
	close(f.fd);
	close(f.srcfd);
	if (!f.keep && (unlink(f.path) || unlink(f.srcpath))) {
		printf("fsxr: removing the files: %s\n", strerror(errno));
		return 3;
	}
	summary(&f);
	printf("fsxr: %" PRIu64 " ops, 0 mismatches\n", f.nops);
	return 0;
}
