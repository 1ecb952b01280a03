// SPDX-License-Identifier: MIT
/* Takeover at the session: hand a connection over, or adopt one; see
 * session_adopt.h. /dev/fuse: the supervisor holds every device file the
 * workers read, so what they had read and not answered stays on its
 * processing list, and FUSE_NOTIFY_RESEND brings it back
 * (core/transport/README.md, E1a/E1b). io_uring: fill, exit, adopt (E6a,
 * transport/uring_handover.c), the fill made by session_fill.c. */
#define _GNU_SOURCE
#include "session_adopt.h"
#include "session_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "init.h"

#define PAUSE_MS 2000 /* busy workers and the plugin's owed replies */

int fring_session_export(const struct fring_session *s, struct fring_adopt *a)
{
	memset(a, 0, sizeof(*a));
	a->init = s->init;
	a->conn_id = s->conn_id;
	a->auto_unmount = s->kmount.auto_unmount;
	a->fds[0] = s->dx.mount.fuse_fd;
	a->nfds = 1 + fring_devfuse_fds(s->ts.df, a->fds + 1,
					FRING_ADOPT_MAX_FDS - 1);
	a->shm_fd = fring_uring_shm_fd(s->ts.uo.u);
	a->restart = s->restart;
	/* A crash is survived only where the new server can have what the
	 * dead one had read sent again: over /dev/fuse (no live state is
	 * kept over io_uring, session_live.c). */
	a->live_fd = -1;
	if ((s->init.capable & FUSE_HAS_RESEND) &&
	    !fring_transports_rings(&s->ts))
		a->live_fd = s->live_fd;
	return fring_transports_rings(&s->ts) && a->shm_fd < 0 ? -EOPNOTSUPP
							       : 0;
}

char *fring_session_no_takeover(const struct fring_session *s)
{
	const struct fring_plugin *d = &s->plugin->desc;

	if (!d->state_save || !d->state_load)
		return fring_strf(
			"plugin '%s' has no state_save/state_load hooks "
			"(ABI 1.7): it cannot hand its state over",
			fring_session_plugin_name(s));
	if (!(s->init.capable & FUSE_HAS_RESEND))
		return fring_strf(
			"the kernel (FUSE 7.%u) offers no "
			"FUSE_NOTIFY_RESEND (7.40): requests in flight "
			"would be lost",
			s->init.kernel_minor);
	if (fring_transports_rings(&s->ts) &&
	    fring_uring_shm_fd(s->ts.uo.u) < 0)
		return fring_strf(
			"served over io_uring with ring memory a new server "
			"cannot adopt (zero-copy, reduced queues and a buffer "
			"pool with fewer buffers than entries are not handed "
			"over yet: core/transport/README.md)");
	if (s->kmount.auto_unmount)
		return fring_strf("mounted with auto_unmount: fusermount3 "
				  "unmounts it once the serving process exits");
	return NULL;
}

/* Requests read by workers that ended come again, bit 63 set. */
static void resend(struct fring_session *s)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh),
		.error = FUSE_NOTIFY_RESEND,
	};

	if (write(s->dx.mount.fuse_fd, &oh, sizeof(oh)) != sizeof(oh))
		fring_warn("%s: FUSE_NOTIFY_RESEND: %s", s->mountpoint,
			   strerror(errno));
}

int fring_session_pause(struct fring_session *s, char **err)
{
	struct timespec ts = { 0, 5 * 1000000L };
	unsigned busy;
	long left;

	if (s->ts.uo.u)
		fring_uring_hold(s->ts.uo.u);
	busy = fring_devfuse_pause(s->ts.df, PAUSE_MS);

	if (busy) {
		*err = fring_strf(
			"%s: %u /dev/fuse worker(s) still in the plugin "
			"after %u ms",
			s->mountpoint, busy, PAUSE_MS);
		return -EBUSY;
	}
	for (int waited = 0; waited < PAUSE_MS; waited += 5) {
		left = fring_dispatch_outstanding(&s->dx);
		if (left <= 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	*err = fring_strf("%s: %ld repl%s the plugin owes still missing after "
			  "%u ms",
			  s->mountpoint, left, left == 1 ? "y" : "ies",
			  PAUSE_MS);
	return -EBUSY;
}

static int32_t locked(struct fring_session *s,
		      int32_t (*fn)(struct fring_session *, int, uint32_t *),
		      int fd, uint32_t *version)
{
	int32_t ret;

	if (s->dx.serialize)
		pthread_mutex_lock(&s->dx.serial);
	ret = fn(s, fd, version);
	if (s->dx.serialize)
		pthread_mutex_unlock(&s->dx.serial);
	return ret;
}

static int32_t do_save(struct fring_session *s, int fd, uint32_t *version)
{
	return s->plugin->desc.state_save(s->dx.inst, fd, version);
}

static int32_t do_load(struct fring_session *s, int fd, uint32_t *version)
{
	return s->plugin->desc.state_load(s->dx.inst, fd, *version);
}

int fring_session_save(struct fring_session *s, int fd, uint32_t *version,
		       char **err)
{
	int32_t ret;

	*version = 0;
	ret = locked(s, do_save, fd, version);
	if (ret < 0) {
		*err = fring_strf("%s: plugin '%s': state_save failed: %s",
				  s->mountpoint, fring_session_plugin_name(s),
				  strerror(-ret));
		return ret;
	}
	lseek(fd, 0, SEEK_SET);
	return 0;
}

/* Workers on fds (nr_threads of them, owned by the transport). */
static int start_workers(struct fring_session *s, const int *fds, unsigned n,
			 char **err)
{
	struct fring_devfuse_params dp = {
		.session_fd = s->dx.mount.fuse_fd,
		.nr_threads = n,
		.bufsize = s->init.bufsize,
		.on_all_exited = fring_session_workers_exited,
		.ud = s,
		.fds = fds,
	};
	int ret = fring_devfuse_start(&s->ts.sv, &dp, &s->ts.df, err);

	s->ts.t[0] = fring_devfuse_transport(s->ts.df);
	return ret;
}

int fring_session_exit_ready(struct fring_session *s, unsigned timeout_ms,
			     char **err)
{
	struct fring_uring *u = s->ts.uo.u;

	if (!u || !fring_uring_wait_full(u, timeout_ms))
		return 0;
	*err = fring_strf("%s: only %u of %u io_uring entries held a request "
			  "after %u ms: exiting now would cancel the others",
			  s->mountpoint, fring_uring_held(u),
			  fring_uring_nr_qids(u) * fring_uring_depth(u),
			  timeout_ms);
	return -ETIMEDOUT;
}

int fring_session_resume(struct fring_session *s, char **err)
{
	struct fring_devfuse *old = s->ts.df;
	int fds[FRING_ADOPT_MAX_FDS];
	unsigned n = fring_devfuse_fds(old, fds, FRING_ADOPT_MAX_FDS);
	int ret;

	for (unsigned i = 0; i < n; i++)
		fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
	if (s->ts.uo.u)
		fring_uring_unhold(s->ts.uo.u);
	resend(s);
	ret = start_workers(s, fds, n, err);
	if (ret == 0) {
		/* Every old worker was joined or is busy: fring_devfuse_free
		 * frees only what no stuck worker uses. */
		if (!fring_devfuse_pause(old, 0))
			fring_devfuse_free(old);
		fring_info("%s: takeover refused; serving again",
			   s->mountpoint);
	}
	return ret;
}

static void log_init(const struct fring_session *s, const char *what,
		     const struct fring_init_result *r)
{
	fring_dbg("%s: %s INIT: FUSE 7.%u (kernel %u.%u), want 0x%llx of "
		  "0x%llx, max_write %u, max_pages %u",
		  s->mountpoint, what, r->minor, r->kernel_major,
		  r->kernel_minor, (unsigned long long)r->want,
		  (unsigned long long)r->capable, r->max_write, r->max_pages);
}

/* The plugin's init with the kernel's offer, as at a mount; its answer
 * cannot change the connection, which keeps what the kernel agreed. */
static int replay_init(struct fring_session *s,
		       const struct fring_init_result *k, char **err)
{
	struct fuse_init_in ii = {
		.major = FUSE_KERNEL_VERSION,
		.minor = k->kernel_minor,
		.max_readahead = k->max_readahead,
		.flags = (uint32_t)k->capable,
		.flags2 = (uint32_t)(k->capable >> 32),
	};
	struct fring_init_params ip = {
		.transport = FRING_TRANSPORT_DEVFUSE,
		.nr_queues = 1,
		.request_timeout = s->transport.request_timeout,
	};
	struct fring_init_result res;
	struct fuse_init_out out;
	size_t outlen;
	char *msg = NULL;
	int ret = fring_init_build(&s->dx, &ii, sizeof(ii), &ip, &out, &outlen,
				   &res, &msg);

	if (ret) {
		*err = fring_strf("%s: %s", s->mountpoint, msg ? msg : "INIT");
		free(msg);
		return ret < 0 ? ret : -EPROTO;
	}
	if (res.want != k->want || res.max_write != k->max_write)
		fring_info(
			"%s: this plugin would negotiate want 0x%llx, max_write "
			"%u; the connection keeps the kernel's 0x%llx, %u",
			s->mountpoint, (unsigned long long)res.want,
			res.max_write, (unsigned long long)k->want,
			k->max_write);
	s->init = *k;
	s->dx.conn.minor = k->minor;
	s->dx.conn.setxattr_ext = !!(k->want & FUSE_SETXATTR_EXT);
	s->dx.conn.max_write = k->max_write;
	atomic_store(&s->dx.mount.passthrough, !!(k->want & FUSE_PASSTHROUGH));
	log_init(s, "adopted", k);
	return 0;
}

int fring_session_adopt(struct fring_session *s, const struct fring_adopt *a,
			int state_fd, uint32_t version, char **err)
{
	int32_t ret;

	s->adopt = malloc(sizeof(*s->adopt));
	if (!s->adopt || a->nfds < 2) {
		for (unsigned i = 0; i < a->nfds; i++)
			close(a->fds[i]);
		free(s->adopt);
		s->adopt = NULL;
		*err = fring_strf("%s: %s", s->mountpoint,
				  a->nfds < 2 ? "no /dev/fuse fds handed over"
					      : "out of memory");
		return -EINVAL;
	}
	*s->adopt = *a;
	s->conn_id = a->conn_id;
	ret = replay_init(s, &a->init, err);
	if (ret)
		return ret;
	if (a->crash) {
		ret = fring_session_live_start(s,
					       fcntl(state_fd, F_DUPFD_CLOEXEC,
						     0),
					       FRING_STATE_LIVE_RECOVER, err);
		if (ret)
			return ret;
	} else {
		lseek(state_fd, 0, SEEK_SET);
		ret = locked(s, do_load, state_fd, &version);
		if (ret < 0) {
			*err = fring_strf(
				"%s: plugin '%s' cannot read the state handed "
				"over (version %u): %s",
				s->mountpoint, fring_session_plugin_name(s),
				version, strerror(-ret));
			return ret;
		}
		fring_session_live_begin(s, a->shm_fd >= 0);
	}
	if (a->shm_fd < 0)
		return 0;
	/* io_uring: our rings, ready but quiet until GO; then the fill that
	 * lets the old server exit (session_fill.c). */
	s->adopt->shm_fd = -1; /* taken by the rings */
	ret = fring_transports_adopt(&s->ts, &a->init, a->fds[0], a->conn_id,
				     a->shm_fd, err);
	if (ret)
		return ret;
	return fring_session_fill(s, err);
}

int fring_session_adopted(const struct fring_session *s)
{
	return s->adopt != NULL;
}

int fring_session_adopt_mount(struct fring_session *s, char **err)
{
	struct fring_adopt *a = s->adopt;
	char *msg = NULL;
	int ret = fring_kmount_adopt(s->mountpoint, a->fds[0], &s->km);

	if (ret) {
		*err = fring_strf("%s: out of memory", s->mountpoint);
		return ret;
	}
	s->dx.mount.fuse_fd = a->fds[0];
	/* Its entries' requests first (the fillers' among them). */
	fring_transports_start_adopted(&s->ts);
	/* The old server is gone: what it had read comes again now, before
	 * any worker reads (a request read twice would be resent twice). */
	resend(s);
	ret = start_workers(s, a->fds + 1, a->nfds - 1, &msg);
	if (ret) {
		*err = fring_strf("%s: %s", s->mountpoint,
				  msg ? msg : strerror(-ret));
		free(msg);
		/* Never unmount: the supervisor retries or aborts. */
		fring_kmount_disown(s->km);
		return ret;
	}
	s->mounted = 1;
	fring_transports_log(&s->ts, s->init.max_write);
	return 0;
}
