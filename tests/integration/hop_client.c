// SPDX-License-Identifier: MIT
/*
 * A deep client that hops between CPUs, for test_placement.py: one thread
 * keeps DEPTH 4 KiB O_DIRECT writes in flight through io_uring on FILE
 * for SECONDS, and moves itself to the next CPU of CPUS every HOP_MS
 * (what the scheduler does to a client sharing its CPU with a queue
 * thread, made regular). Block i always gets the bytes of pattern(i), so
 * at the end the file is read back and every written block checked.
 *
 *   hop_client FILE SIZE_MIB CPUS SECONDS HOP_MS [DEPTH]
 *
 * CPUS is "0,1". Prints "hop_client: N writes, M hops, K blocks checked"
 * and exits 0, or prints what failed and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BS 4096
#define MAX_DEPTH 64
#define MAX_CPUS 64

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void pattern(uint64_t block, unsigned char *buf)
{
	for (size_t i = 0; i < BS; i += 8) {
		uint64_t v = (block + 1) * 0x9e3779b97f4a7c15ull ^ i;

		memcpy(buf + i, &v, 8);
	}
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "hop_client: %s: %s\n", what, strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	unsigned char *bufs, *check, *written;
	int cpus[MAX_CPUS], ncpus = 0, at = 0, fd, depth, inflight = 0;
	int free_slot[MAX_DEPTH];
	uint64_t nblocks, writes = 0, hops = 0, checked = 0, end, next_hop;
	unsigned hop_ms;
	char *s, *tok;

	if (argc < 6) {
		fprintf(stderr, "usage: hop_client FILE SIZE_MIB CPUS SECONDS HOP_MS [DEPTH]\n");
		return 2;
	}
	nblocks = strtoull(argv[2], NULL, 10) * (1 << 20) / BS;
	for (s = argv[3]; (tok = strsep(&s, ",")) && ncpus < MAX_CPUS;)
		cpus[ncpus++] = atoi(tok);
	end = now_ms() + strtoull(argv[4], NULL, 10) * 1000;
	hop_ms = (unsigned)atoi(argv[5]);
	depth = argc > 6 ? atoi(argv[6]) : 8;
	if (!nblocks || !ncpus || depth < 1 || depth > MAX_DEPTH)
		return 2;
	fd = open(argv[1], O_RDWR | O_CREAT | O_DIRECT, 0644);
	if (fd < 0)
		return fail(argv[1], errno);
	if (posix_memalign((void **)&bufs, BS, (size_t)BS * (MAX_DEPTH + 1)))
		return fail("memory", ENOMEM);
	check = bufs + (size_t)BS * MAX_DEPTH;
	written = calloc(nblocks, 1);
	if (!written || io_uring_queue_init((unsigned)depth, &ring, 0))
		return fail("io_uring", ENOMEM);
	if (pin(cpus[0]))
		return fail("sched_setaffinity", errno);
	next_hop = now_ms() + hop_ms;
	srand(1);
	for (int i = 0; i < depth; i++)
		free_slot[i] = i;
	for (;;) {
		struct io_uring_cqe *cqe;
		uint64_t t = now_ms();

		if (t >= next_hop) {
			at = (at + 1) % ncpus;
			if (pin(cpus[at]))
				return fail("sched_setaffinity", errno);
			hops++;
			next_hop = t + hop_ms;
		}
		while (t < end && inflight < depth) {
			uint64_t b = ((uint64_t)rand() << 16 ^ (uint64_t)rand()) % nblocks;
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			int slot = free_slot[depth - 1 - inflight];
			unsigned char *buf = bufs + (size_t)BS * (unsigned)slot;

			pattern(b, buf);
			io_uring_prep_write(sqe, fd, buf, BS, b * BS);
			io_uring_sqe_set_data64(sqe, (uint64_t)slot);
			written[b] = 1;
			inflight++;
		}
		if (!inflight)
			break;
		if (io_uring_submit_and_wait(&ring, 1) < 0)
			return fail("io_uring wait", EIO);
		/* Reap every completion there is, as fio does. */
		while (!io_uring_peek_cqe(&ring, &cqe)) {
			if (cqe->res != BS)
				return fail("write", cqe->res < 0 ? -cqe->res : EIO);
			inflight--;
			free_slot[depth - 1 - inflight] = (int)io_uring_cqe_get_data64(cqe);
			io_uring_cqe_seen(&ring, cqe);
			writes++;
		}
	}
	for (uint64_t b = 0; b < nblocks; b++) {
		unsigned char want[BS];

		if (!written[b])
			continue;
		if (pread(fd, check, BS, (off_t)(b * BS)) != BS)
			return fail("read back", errno ? errno : EIO);
		pattern(b, want);
		if (memcmp(check, want, BS)) {
			fprintf(stderr, "hop_client: block %llu differs\n",
				(unsigned long long)b);
			return 1;
		}
		checked++;
	}
	printf("hop_client: %llu writes, %llu hops, %llu blocks checked\n",
	       (unsigned long long)writes, (unsigned long long)hops,
	       (unsigned long long)checked);
	io_uring_queue_exit(&ring);
	close(fd);
	free(written);
	free(bufs);
	return 0;
}
