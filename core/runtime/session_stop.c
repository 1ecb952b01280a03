// SPDX-License-Identifier: MIT
/* Stopping a session within its time bound; see session.h. */
#define _GNU_SOURCE
#include "session.h"
#include "session_internal.h"
#include "stats_server.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "../base/log.h"
#include "../mount/fusectl.h"
#include "../mount/mountinfo.h"
#include "flush.h"

/* Stop must end within 2 s (SIGTERM contract). With the writeback cache,
 * dirty pages are flushed first (flush.h), while everything still serves.
 * After the (lazy) unmount the workers end at once unless files are still
 * open on the detached mount; then the connection lives as long as they
 * do, so waiting longer gains nothing: abort it. An abort fails only
 * requests whose reply was not yet sent, so nothing the plugin
 * acknowledged is lost (with a writeback cache, pages still dirty after
 * the flush budget are: only fsync'd data is safe for certain there). */
#define STOP_SYNC_MS 800  /* writeback cache: syncfs budget */
#define STOP_JOIN_MS 300  /* then abort the connection via fusectl */
#define STOP_ABORT_MS 400 /* then cancel / abandon workers */
#define STOP_DRAIN_MS 300 /* plugin replies still in flight after the join */

unsigned fring_session_join(struct fring_session *s, unsigned timeout_ms)
{
	unsigned left = 0;

	for (int i = 0; i < FRING_TRANSPORTS_MAX; i++)
		if (s->ts.t[i])
			left += s->ts.t[i]->ops->join(s->ts.t[i], timeout_ms);
	return left;
}

void fring_session_cancel(struct fring_session *s)
{
	for (int i = 0; i < FRING_TRANSPORTS_MAX; i++)
		if (s->ts.t[i] && s->ts.t[i]->ops->cancel)
			s->stuck += s->ts.t[i]->ops->cancel(s->ts.t[i]);
}

void fring_session_close(struct fring_session *s)
{
	for (int i = 0; i < FRING_TRANSPORTS_MAX; i++) {
		if (s->ts.t[i])
			s->ts.t[i]->ops->free(s->ts.t[i]);
		s->ts.t[i] = NULL;
	}
	s->ts.df = NULL;
	s->ts.uo.u = NULL;
	/* The fd may be reused once closed: no backing ioctls after this. */
	atomic_store(&s->dx.mount.passthrough, 0);
	fring_kmount_close(s->km);
	s->km = NULL;
}

/* Undo a half-done mount: the unmount ends any started thread. */
void fring_session_rollback(struct fring_session *s)
{
	fring_stats_server_stop(s->stats_srv);
	s->stats_srv = NULL;
	fring_kmount_unmount(s->km);
	/* io_uring: after the unmount its entries are gone (-ENOTCONN). */
	if (fring_session_join(s, STOP_JOIN_MS))
		fring_session_cancel(s);
	fring_session_close(s); /* a stuck /dev/fuse worker's state leaks */
}

static void abort_connection(struct fring_session *s)
{
	if (s->conn_id && fring_fusectl_abort(s->conn_id) == 0)
		fring_warn("%s: files still open on the unmounted file system "
			   "(or requests in progress); aborted connection %u",
			   s->mountpoint, s->conn_id);
}

/* io_uring: a queue thread's rings must not stop while the connection
 * lives, or the kernel ends each request it then hands their entries with
 * ECANCELED (fs/fuse/dev_uring.c fuse_uring_send_in_task: the task is
 * gone), an error a client sees. After the unmount the connection ends by
 * itself once no file is open on the detached mount; the rings serve until
 * then, for STOP_JOIN_MS at most, and an abort (ECONNABORTED, ENOTCONN
 * after it) ends it otherwise, as /dev/fuse workers' join does. */
static void end_before_rings(struct fring_session *s)
{
	struct timespec ts = { 0, 5 * 1000000L };
	int alive = 1;

	if (!s->conn_id)
		return;
	for (int waited = 0; waited < STOP_JOIN_MS; waited += 5) {
		alive = fring_fusectl_alive(s->conn_id);
		if (alive <= 0)
			break;
		nanosleep(&ts, NULL);
	}
	if (alive)
		abort_connection(s);
}

/* Where our connection is mounted (mountinfo.h). Without mountinfo, the
 * mountpoint's device is the best guess: ours on top, else covered. */
static int kmount_where(const struct fring_session *s)
{
	const char *path = s->dx.mount.path ? s->dx.mount.path : s->mountpoint;
	int where = fring_kmount_where(s->conn_id, path);

	if (where >= 0)
		return where;
	return fring_fusectl_id(s->mountpoint) == s->conn_id
		       ? FRING_KMOUNT_TOP
		       : FRING_KMOUNT_COVERED;
}

int fring_session_still_mounted(const struct fring_session *s)
{
	return s->conn_id && kmount_where(s) == FRING_KMOUNT_TOP;
}

/* umount2 works by path and takes whatever mount is on top: only unmount
 * when that is still ours. Unmounted from outside, ours is gone and the
 * path is someone else's: just close. Covered (or moved), abort our
 * connection instead of unmounting, if it still exists. */
static void unmount_own(struct fring_session *s)
{
	int where = s->conn_id ? kmount_where(s) : FRING_KMOUNT_TOP;
	int ret;

	if (where == FRING_KMOUNT_TOP) {
		fring_kmount_unmount(s->km);
		return;
	}
	if (where == FRING_KMOUNT_GONE) {
		/* Sever it quietly (it is going away anyway): libfuse's unmount
		 * then sees POLLERR and only closes and frees, never touching
		 * the path, which is no longer ours. Without fusectl, disown
		 * (libfuse's copy of the path leaks) rather than risk that. */
		ret = fring_fusectl_abort(s->conn_id);
		if (ret == 0 || ret == -ENOENT)
			fring_kmount_unmount(s->km);
		else
			fring_kmount_disown(s->km);
		return;
	}
	/* libfuse never unmounts by path a connection that is severed (POLLERR
	 * on its fd): sever ours, then the unmount only closes and frees. */
	ret = fring_fusectl_abort(s->conn_id);
	if (ret == 0)
		fring_warn(
			"%s: another mount now covers ours (or ours was "
			"moved); aborted our connection instead of unmounting "
			"by path (clear it later with: umount -l %s)",
			s->mountpoint, s->mountpoint);
	if (ret == 0 || ret == -ENOENT) /* severed now, or gone already */
		fring_kmount_unmount(s->km);
	else
		fring_kmount_disown(s->km);
}

/* Give replies the plugin still owes a bounded time to arrive. */
static long drain(struct fring_session *s)
{
	struct timespec ts = {0, 10 * 1000000L};
	long left;

	for (int waited = 0; waited < STOP_DRAIN_MS; waited += 10) {
		left = fring_dispatch_outstanding(&s->dx);
		if (left <= 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return fring_dispatch_outstanding(&s->dx);
}

/* Writeback cache: the kernel holds acknowledged writes the plugin has
 * not seen; have them written back while the queues still serve. */
static void flush_writeback(struct fring_session *s)
{
	int ret;

	if (!(s->init.want & FUSE_WRITEBACK_CACHE) ||
	    !fring_session_still_mounted(s))
		return;
	ret = fring_flush_mount(s->mountpoint, STOP_SYNC_MS);
	if (ret == -ETIMEDOUT)
		fring_warn(
			"%s: dirty pages still being written back after %u ms; "
			"unmounting anyway (what is not on the backing store "
			"yet is lost; fsync'd data is safe)",
			s->mountpoint, STOP_SYNC_MS);
	else if (ret)
		fring_warn("%s: flushing the writeback cache: %s",
			   s->mountpoint, strerror(-ret));
}

void fring_session_stop(struct fring_session *s)
{
	struct fring_request *r;
	long unanswered;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->stopped) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	s->stopped = 1;
	pthread_mutex_unlock(&s->lock);
	/* First: it reads the transports the stop frees. */
	fring_stats_server_stop(s->stats_srv);
	s->stats_srv = NULL;

	if (s->mounted) {
		flush_writeback(s);
		unmount_own(s);
		if (fring_transports_rings(&s->ts))
			end_before_rings(s);
		/* io_uring: threads end on -ENOTCONN; its stop is the bound. */
		if (fring_session_join(s, STOP_JOIN_MS)) {
			abort_connection(s);
			if (fring_session_join(s, STOP_ABORT_MS))
				fring_session_cancel(s);
		}
		unanswered = drain(s);
		if (unanswered > 0)
			fring_warn(
				"%s: %ld request(s) still unanswered at stop "
				"(in the plugin when the connection ended)",
				s->mountpoint, unanswered);
		fring_session_log_stats(s);
	}
	fring_dispatch_quiesce(&s->dx);
	if (s->stuck) {
		/* A worker may still be inside the plugin: no destroy. */
		fring_warn("%s: plugin destroy skipped (%u thread(s) stuck)",
			   s->mountpoint, s->stuck);
		return;
	}
	fring_session_plugin_destroy(s);
	/* After destroy no reply can come: release what was never answered. */
	while ((r = fring_inflight_pop(&s->dx.rq.inflight)))
		fring_req_abandon(r);
	fring_session_close(s); /* every request is finished now */
	s->mounted = 0;
}
