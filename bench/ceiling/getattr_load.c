// SPDX-License-Identifier: MIT
/*
 * getattr_load: bench/run's J12 client for the no-op request. THREADS
 * threads each open PATH and call statx(fd, "", AT_EMPTY_PATH |
 * AT_STATX_FORCE_SYNC) in a loop for SECONDS seconds: FORCE_SYNC makes
 * FUSE send a GETATTR every time, whatever the attribute timeout, and an
 * open fd needs no LOOKUP. Prints one JSON line: the calls made, the
 * seconds they took, and the first error if one stopped a thread.
 *
 *     getattr_load PATH THREADS SECONDS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256

static const char *path;
static atomic_int stop;
static atomic_int first_errno;

/* the first error any thread met: it stops the run */
static void note_error(int e)
{
	int none = 0;

	atomic_compare_exchange_strong(&first_errno, &none, e);
}

struct worker {
	pthread_t tid;
	unsigned long long calls;
};

static void *loop(void *arg)
{
	struct worker *w = arg;
	struct statx st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		note_error(errno);
		return NULL;
	}
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC,
			  STATX_BASIC_STATS, &st) != 0) {
			note_error(errno);
			break;
		}
		w->calls++;
	}
	close(fd);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	unsigned long long calls = 0;
	int threads;
	double seconds, t0, dt;

	if (argc != 4 || (threads = atoi(argv[2])) < 1 ||
	    threads > MAX_THREADS || (seconds = atof(argv[3])) <= 0) {
		fprintf(stderr,
			"usage: getattr_load PATH THREADS(1-%d) SECONDS\n",
			MAX_THREADS);
		return 2;
	}
	path = argv[1];
	t0 = now();
	for (int i = 0; i < threads; i++)
		if (pthread_create(&w[i].tid, NULL, loop, &w[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	while (now() - t0 < seconds && !atomic_load(&first_errno))
		usleep(10000);
	atomic_store(&stop, 1);
	for (int i = 0; i < threads; i++) {
		pthread_join(w[i].tid, NULL);
		calls += w[i].calls;
	}
	dt = now() - t0;
	printf("{\"calls\": %llu, \"seconds\": %.6f, \"threads\": %d, \"error\": %s%s%s}\n",
	       calls, dt, threads, first_errno ? "\"" : "",
	       first_errno ? strerror(first_errno) : "null",
	       first_errno ? "\"" : "");
	return first_errno ? 1 : 0;
}
