// SPDX-License-Identifier: MIT
/*
 * The plugin's own worker threads. Every operation that talks to S3 is
 * queued here and answered from a worker (the host takes replies from any
 * thread), so no queue thread ever waits on the network and as many
 * requests are outstanding against the endpoint as there are workers.
 * Each worker owns one curl handle: its connection stays alive between
 * requests.
 *
 * destroy stops and joins the workers; jobs still queued are dropped
 * unanswered (the host abandons requests open at unmount).
 */
#include "s3.h"

#include <signal.h>
#include <stdlib.h>

struct job {
	struct job *next;
	s3_job_fn fn;
	void *arg;
};

struct s3_work {
	struct s3_fs *fs;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, *tail;
	bool stop;
	uint32_t started;
	pthread_t *threads;
};

int s3_work_create(struct s3_fs *fs)
{
	struct s3_work *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->threads = calloc(fs->cfg.threads, sizeof(*w->threads));
	if (!w->threads) {
		free(w);
		return -ENOMEM;
	}
	w->fs = fs;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	fs->work = w;
	return 0;
}

static void *worker(void *arg)
{
	struct s3_work *w = arg;
	CURL *c = s3_curl_new(w->fs);

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct job *j;

		while (!w->stop && !w->head)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		j = w->head;
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->lock);
		j->fn(w->fs, c, j->arg);
		free(j);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	if (c)
		curl_easy_cleanup(c);
	return NULL;
}

void s3_work_start(struct s3_fs *fs)
{
	struct s3_work *w = fs->work;
	sigset_t all, old;
	uint32_t i;

	if (!w || w->started)
		return;
	/* Signals stay with the runtime's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < fs->cfg.threads; i++) {
		if (pthread_create(&w->threads[w->started], NULL, worker, w))
			break;
		pthread_setname_np(w->threads[w->started], "s3-io");
		w->started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (w->started < fs->cfg.threads)
		fring_logf(fs->mount, FRING_LOG_WARN,
			   "s3: started %u of %u worker threads", w->started,
			   fs->cfg.threads);
}

void s3_work_destroy(struct s3_fs *fs)
{
	struct s3_work *w = fs->work;
	struct job *j, *next;
	uint32_t i;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < w->started; i++)
		pthread_join(w->threads[i], NULL);
	for (j = w->head; j; j = next) {
		next = j->next;
		free(j->arg);
		free(j);
	}
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w->threads);
	free(w);
	fs->work = NULL;
}

int s3_submit(struct s3_fs *fs, s3_job_fn fn, void *arg)
{
	struct s3_work *w = fs->work;
	struct job *j = malloc(sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->next = NULL;
	j->fn = fn;
	j->arg = arg;
	pthread_mutex_lock(&w->lock);
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

void s3_reply_submit_err(fring_req *r, int err)
{
	fring_host->reply_err(r, err);
}
