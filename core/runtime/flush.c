// SPDX-License-Identifier: MIT
/* Bounded syncfs of a mount before unmount; see flush.h. */
#define _GNU_SOURCE
#include "flush.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Shared by the waiter and the helper; the last one out frees it. */
struct flush {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int refs, done, err;
	char path[];
};

static void put(struct flush *f)
{
	int last;

	pthread_mutex_lock(&f->lock);
	last = --f->refs == 0;
	pthread_mutex_unlock(&f->lock);
	if (!last)
		return;
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

static void *flush_main(void *arg)
{
	struct flush *f = arg;
	int fd = open(f->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = 0;

	if (fd < 0 || syncfs(fd) != 0)
		err = -errno;
	if (fd >= 0)
		close(fd);
	pthread_mutex_lock(&f->lock);
	f->done = 1;
	f->err = err;
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
	put(f);
	return NULL;
}

int fring_flush_mount(const char *mountpoint, unsigned budget_ms)
{
	size_t len = strlen(mountpoint) + 1;
	struct flush *f = malloc(sizeof(*f) + len);
	pthread_condattr_t ca;
	struct timespec dl;
	pthread_attr_t attr;
	pthread_t tid;
	int ret;

	if (!f)
		return -ENOMEM;
	memcpy(f->path, mountpoint, len);
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cond, &ca);
	pthread_condattr_destroy(&ca);
	f->refs = 2;
	f->done = f->err = 0;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&tid, &attr, flush_main, f);
	pthread_attr_destroy(&attr);
	if (ret) {
		f->refs = 1;
		put(f);
		return -ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += budget_ms / 1000;
	dl.tv_nsec += (long)(budget_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&f->lock);
	while (!f->done &&
	       pthread_cond_timedwait(&f->cond, &f->lock, &dl) != ETIMEDOUT)
		;
	ret = f->done ? f->err : -ETIMEDOUT;
	pthread_mutex_unlock(&f->lock);
	put(f);
	return ret;
}
