// SPDX-License-Identifier: MIT
/*
 * Option io_threads: READ and WRITE are served on the plugin's own worker
 * threads. The callbacks queue (request, fh, offset, length) and return
 * at once; a worker then calls the same code the callbacks run inline
 * (pt_serve_read / pt_serve_write: req_read_fd / req_write_fd, else
 * pread / pwrite), from a thread that is not the request's queue thread.
 *
 * The descriptor must stay open until the request is answered. The
 * kernel sends RELEASE only once no request on that open file is
 * outstanding, except over /dev/fuse when the host answered an
 * interrupted request itself (after 1 s): the caller may then close the
 * file while the item still waits here. So each queued item counts one
 * reference on its fd, and a RELEASE that finds references leaves the
 * close to the worker that drops the last one; until then the fd number
 * stays taken and cannot name another file. The reference covers the
 * item until req_*_fd returns: on /dev/fuse the I/O is done then, and
 * on io_uring the I/O was handed to the queue's ring while the request
 * was outstanding, which keeps RELEASE away as above.
 *
 * destroy stops the workers and joins them. Items still queued get no
 * reply (the host abandons unanswered requests at unmount and a plugin
 * must not answer once destroy has returned). A worker already inside
 * a host call finishes it before destroy returns; the host is to refuse
 * a call for a request of a mount going away with a negative errno,
 * which pt_serve_* handle like any refusal.
 */
#include "pt.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pt_io_item {
	struct pt_io_item *next;
	fring_req *r;
	const void *data; /* WRITE: the request's data (args stay valid) */
	uint64_t fh;      /* for its flags; fd is what it names at submit */
	int fd;
	uint64_t off;
	uint32_t len;
	bool write;
};

struct pt_io {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pt_io_item *head, *tail;
	bool stop;
	uint32_t nthreads; /* started */
	pthread_t *threads;
	/* Per fd: queued items using it, and a RELEASE waiting for them. */
	uint32_t *refs;
	uint8_t *closing;
	size_t cap;
};

int pt_io_create(struct pt_fs *fs)
{
	struct pt_io *io;

	if (!fs->io_threads)
		return 0;
	io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	io->threads = calloc(fs->io_threads, sizeof(*io->threads));
	if (!io->threads) {
		free(io);
		return -ENOMEM;
	}
	pthread_mutex_init(&io->lock, NULL);
	pthread_cond_init(&io->cond, NULL);
	fs->io = io;
	return 0;
}

/* Lock held. Drop one reference on fd; returns true if the caller must
 * now close it (a RELEASE came meanwhile). */
static bool fd_unref_locked(struct pt_io *io, int fd)
{
	if (--io->refs[fd] || !io->closing[fd])
		return false;
	io->closing[fd] = 0;
	return true;
}

static bool fd_ref_locked(struct pt_io *io, int fd)
{
	if ((size_t)fd >= io->cap) {
		size_t cap = io->cap ? io->cap : 256;
		uint32_t *refs;
		uint8_t *closing;

		while (cap <= (size_t)fd)
			cap *= 2;
		refs = realloc(io->refs, cap * sizeof(*refs));
		if (!refs)
			return false;
		io->refs = refs;
		closing = realloc(io->closing, cap);
		if (!closing)
			return false;
		io->closing = closing;
		memset(io->refs + io->cap, 0, (cap - io->cap) * sizeof(*refs));
		memset(io->closing + io->cap, 0, cap - io->cap);
		io->cap = cap;
	}
	io->refs[fd]++;
	return true;
}

static void *worker(void *arg)
{
	struct pt_io *io = arg;
	struct pt_io_item *it;
	bool do_close;
	int fd;

	pthread_mutex_lock(&io->lock);
	for (;;) {
		while (!io->head && !io->stop)
			pthread_cond_wait(&io->cond, &io->lock);
		if (io->stop)
			break;
		it = io->head;
		io->head = it->next;
		if (!io->head)
			io->tail = NULL;
		pthread_mutex_unlock(&io->lock);

		if (it->write)
			pt_serve_write(it->r, it->fd, it->fh, it->off, it->data,
				       it->len);
		else
			pt_serve_read(it->r, it->fd, it->fh, it->off, it->len);
		fd = it->fd;
		free(it);

		pthread_mutex_lock(&io->lock);
		do_close = fd_unref_locked(io, fd);
		if (do_close) {
			/* Still ours: no other open can hold this number. */
			pthread_mutex_unlock(&io->lock);
			close(fd);
			pthread_mutex_lock(&io->lock);
		}
	}
	pthread_mutex_unlock(&io->lock);
	return NULL;
}

void pt_io_start(struct pt_fs *fs)
{
	struct pt_io *io = fs->io;
	sigset_t all, old;
	char name[16];
	uint32_t i;
	int err = 0;

	if (!io || io->nthreads)
		return;
	/* Signals stay with the host's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&io->lock);
	for (i = 0; i < fs->io_threads; i++) {
		err = pthread_create(&io->threads[i], NULL, worker, io);
		if (err)
			break;
		snprintf(name, sizeof(name), "pt-io%u", i);
		pthread_setname_np(io->threads[i], name);
		io->nthreads++;
	}
	pthread_mutex_unlock(&io->lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		fring_logf(fs->mount, FRING_LOG_WARN,
			   "passthrough: io_threads: started %u of %u threads: %s%s",
			   io->nthreads, fs->io_threads, strerror(err),
			   io->nthreads ? "" : "; reads and writes run inline");
	else
		fring_logf(fs->mount, FRING_LOG_DEBUG,
			   "passthrough: %u I/O threads", io->nthreads);
}

bool pt_io_submit(struct pt_fs *fs, fring_req *r, bool write, int fd,
		  uint64_t fh, uint64_t off, uint32_t len, const void *data)
{
	struct pt_io *io = fs->io;
	struct pt_io_item *it;

	if (!io || fd < 0)
		return false;
	it = malloc(sizeof(*it));
	if (!it)
		return false;
	*it = (struct pt_io_item){ .r = r,
				   .data = data,
				   .fh = fh,
				   .fd = fd,
				   .off = off,
				   .len = len,
				   .write = write };
	pthread_mutex_lock(&io->lock);
	if (io->stop || !io->nthreads || !fd_ref_locked(io, fd)) {
		pthread_mutex_unlock(&io->lock);
		free(it);
		return false; /* served inline */
	}
	if (io->tail)
		io->tail->next = it;
	else
		io->head = it;
	io->tail = it;
	pthread_cond_signal(&io->cond);
	pthread_mutex_unlock(&io->lock);
	return true;
}

void pt_io_close(struct pt_fs *fs, int fd)
{
	struct pt_io *io = fs->io;

	if (io) {
		pthread_mutex_lock(&io->lock);
		if ((size_t)fd < io->cap && io->refs[fd]) {
			io->closing[fd] = 1; /* the last worker closes it */
			pthread_mutex_unlock(&io->lock);
			return;
		}
		pthread_mutex_unlock(&io->lock);
	}
	close(fd);
}

void pt_io_destroy(struct pt_fs *fs)
{
	struct pt_io *io = fs->io;
	struct pt_io_item *it;
	uint32_t i, dropped = 0;

	if (!io)
		return;
	pthread_mutex_lock(&io->lock);
	io->stop = true;
	pthread_cond_broadcast(&io->cond);
	pthread_mutex_unlock(&io->lock);
	for (i = 0; i < io->nthreads; i++)
		pthread_join(io->threads[i], NULL);
	/* Queued, never started: no reply (the host abandoned them). */
	while ((it = io->head)) {
		int fd = it->fd;

		io->head = it->next;
		if (fd_unref_locked(io, fd))
			close(fd);
		free(it);
		dropped++;
	}
	if (dropped)
		fring_logf(fs->mount, FRING_LOG_DEBUG,
			   "passthrough: %u queued reads/writes dropped at unmount",
			   dropped);
	pthread_cond_destroy(&io->cond);
	pthread_mutex_destroy(&io->lock);
	free(io->refs);
	free(io->closing);
	free(io->threads);
	free(io);
	fs->io = NULL;
}
