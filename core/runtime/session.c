/* One mount's lifecycle; see session.h. */
#define _GNU_SOURCE
#include "../mount/fusectl.h"
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../mount/mount.h"
#include "../mount/mountinfo.h"
#include "../mount/stale.h"
#include "../transport/devfuse.h"
#include "../transport/kernel_probe.h"
#include "../transport/uring.h"
#include "dispatch.h"
#include "features.h"
#include "flush.h"
#include "init.h"
#include "log.h"

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

struct fring_session {
	char *mountpoint, *fsname, *subtype, *config_file;
	int default_permissions, allow_other, ro, trust_plugin_permissions;
	unsigned nr_threads;
	struct fring_cfg_transport transport;
	struct fring_loaded_plugin *plugin;

	struct fring_dispatch dx;
	int created;   /* plugin create() succeeded */
	int destroyed; /* plugin destroy() ran */

	struct fring_mount_handle *mh;
	struct fring_devfuse *df;
	struct fring_uring_offer uo; /* io_uring: uo.u once offered in INIT */
	struct fring_init_result init;
	unsigned conn_id; /* fusectl directory (fring_fusectl_id), 0 unknown */
	int done_fd;

	pthread_mutex_t lock;
	int mounted, stopped;
	unsigned stuck; /* workers abandoned at stop: leak, never free */
};

static const char *plugin_name(const struct fring_session *s)
{
	return s->plugin->desc.name ? s->plugin->desc.name : s->plugin->path;
}

static void signal_done(struct fring_session *s)
{
	uint64_t one = 1;

	if (write(s->done_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fring_warn("%s: signalling the session's end: %s", s->mountpoint,
			   strerror(errno));
}

static void on_workers_exited(void *ud)
{
	signal_done(ud);
}

static void request_shutdown(struct fring_mount *m)
{
	struct fring_session *s = m->owner;

	fring_info("%s: plugin asked to shut down", s->mountpoint);
	signal_done(s);
}

static char *dup_or_null(const char *str, int *oom)
{
	char *d;

	if (!str)
		return NULL;
	d = strdup(str);
	if (!d)
		*oom = 1;
	return d;
}

static void plugin_destroy(struct fring_session *s)
{
	if (s->created && !s->destroyed && s->plugin->desc.destroy)
		s->plugin->desc.destroy(s->dx.inst);
	s->destroyed = 1;
}

/* Every option is offered, so one run reports every bad one: the plugin
 * logs each reason; the error names the first rejected key (at its YAML
 * location) and then the others. */
static int configure(struct fring_session *s, const struct fring_session_params *p,
		     char **err)
{
	const struct fring_plugin *d = &s->plugin->desc;
	char *msg = NULL;
	int first = 0;

	for (size_t i = 0; i < p->nr_options; i++) {
		const struct fring_cfg_option *o = &p->options[i];
		int ret = d->config ? d->config(s->dx.inst, o->key,
						o->value ? o->value : "")
				    : -EINVAL;
		char *grown;

		if (ret >= 0)
			continue;
		if (!first && p->config_file)
			grown = fring_strf("%s:%u:%u: plugin '%s' rejected option '%s'",
					   p->config_file, o->line, o->column,
					   plugin_name(s), o->key);
		else if (!first)
			grown = fring_strf("plugin '%s' rejected option '%s'",
					   plugin_name(s), o->key);
		else if (p->config_file)
			grown = fring_strf("%s; also '%s' (line %u)", msg, o->key,
					   o->line);
		else
			grown = fring_strf("%s; also '%s'", msg, o->key);
		free(msg);
		msg = grown;
		if (!first)
			first = ret;
		if (!msg) {
			*err = fring_strf("out of memory");
			return -ENOMEM;
		}
	}
	if (first) {
		*err = msg;
		return first;
	}
	if (d->config_complete) {
		int ret = d->config_complete(s->dx.inst);

		if (ret < 0) {
			*err = fring_strf("plugin '%s': configuration incomplete or "
					  "invalid (see messages above)",
					  plugin_name(s));
			return ret;
		}
	}
	return 0;
}

int fring_session_new(const struct fring_session_params *p,
		      struct fring_session **out, char **err)
{
	struct fring_session *s;
	int oom = 0, ret;

	*out = NULL;
	if (!p || !p->plugin || !p->mountpoint || !*p->mountpoint) {
		*err = fring_strf("session: mountpoint and plugin are required");
		return -EINVAL;
	}
	/* What this kernel cannot serve (bufpool on without pools, ...) is
	 * refused here, at the value's place, for every mount before the
	 * first is made (and by `fring check`); a need of pinned memory
	 * worth a warning is warned about. */
	ret = fring_kernel_check(&p->transport, p->mountpoint, p->config_file, err);
	if (ret < 0)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s) {
		*err = fring_strf("out of memory");
		return -ENOMEM;
	}
	s->done_fd = -1;
	s->plugin = p->plugin;
	s->mountpoint = dup_or_null(p->mountpoint, &oom);
	s->fsname = dup_or_null(p->fsname, &oom);
	s->subtype = dup_or_null(p->subtype, &oom);
	s->config_file = dup_or_null(p->config_file, &oom);
	s->default_permissions = p->default_permissions;
	s->allow_other = p->allow_other;
	s->trust_plugin_permissions = p->trust_plugin_permissions;
	s->ro = p->ro;
	s->nr_threads = p->nr_threads;
	s->transport = p->transport;
	s->transport.cpus = dup_or_null(p->transport.cpus, &oom);
	pthread_mutex_init(&s->lock, NULL);
	s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (oom || s->done_fd < 0 ||
	    fring_dispatch_init(&s->dx, &p->plugin->desc, &p->plugin->ops,
				p->mountpoint)) {
		*err = fring_strf("out of resources creating the session: %s",
				  strerror(oom ? ENOMEM : errno));
		ret = -ENOMEM;
		goto fail;
	}
	s->dx.mount.request_shutdown = request_shutdown;
	s->dx.mount.owner = s;
	s->dx.mount.fuse_fd = -1;

	ret = fring_features_check(&p->plugin->desc, plugin_name(s), err);
	if (ret < 0)
		goto fail;
	if (!p->plugin->desc.create) {
		*err = fring_strf("plugin '%s' has no create()", plugin_name(s));
		ret = -EINVAL;
		goto fail;
	}
	ret = p->plugin->desc.create(&s->dx.mount, &s->dx.inst);
	if (ret < 0) {
		*err = fring_strf("plugin '%s': create failed: %s", plugin_name(s),
				  strerror(-ret));
		goto fail;
	}
	s->created = 1;
	ret = configure(s, p, err);
	if (ret < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	s->stopped = 1; /* nothing mounted; free only destroys */
	fring_session_free(s);
	return ret < 0 ? ret : -EINVAL;
}

const char *fring_session_transport(const struct fring_session *s)
{
	return s->uo.u ? "uring" : "devfuse";
}

const char *fring_session_mountpoint(const struct fring_session *s)
{
	return s->mountpoint;
}

int fring_session_done_fd(const struct fring_session *s)
{
	return s->done_fd;
}

static int check_mountpoint(const char *mp, char **err)
{
	struct stat st;
	int ret = fring_mount_check_stale(mp, err);

	if (ret)
		return ret;
	if (stat(mp, &st) < 0) {
		*err = fring_strf("mountpoint %s: %s", mp, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		*err = fring_strf("mountpoint %s is not a directory", mp);
		return -ENOTDIR;
	}
	return 0;
}

/* Undo a half-done mount: the unmount ends any started worker. */
static void mount_rollback(struct fring_session *s)
{
	fring_mount_unmount(s->mh);
	/* io_uring: after the unmount its entries are gone (-ENOTCONN). */
	fring_uring_free(s->uo.u);
	s->uo.u = NULL;
	if (s->df) {
		if (fring_devfuse_join(s->df, STOP_JOIN_MS))
			s->stuck = fring_devfuse_cancel(s->df);
		if (!s->stuck)
			fring_devfuse_free(s->df);
		s->df = NULL;
	}
	/* The fd may be reused once closed: no backing ioctls after this. */
	atomic_store(&s->dx.mount.passthrough, 0);
	fring_mount_close(s->mh);
	s->mh = NULL;
}

/* Ring buffers that cannot be pinned are refused before the mount exists
 * (uring, bufpool on) or make auto choose /dev/fuse, with the reason. */
static int check_ring_budget(struct fring_session *s, char **err)
{
	struct fring_uring_params p = {
		.queue_depth = s->transport.queue_depth,
		.bufpool = s->transport.bufpool,
		.bufpool_size = s->transport.bufpool_size,
	};
	char why[320];

	if (s->transport.mode == FRING_MODE_DEVFUSE || !fring_uring_enabled() ||
	    !fring_uring_precheck(&p, why, sizeof(why)))
		return 0;
	if (s->transport.mode == FRING_MODE_URING || s->transport.bufpool == FRING_ON) {
		*err = fring_strf("%s: transport uring: io_uring unavailable: %s",
				  s->mountpoint, why);
		return -ENOMEM;
	}
	fring_info("%s: transport devfuse: io_uring not used: %s", s->mountpoint, why);
	s->transport.mode = FRING_MODE_DEVFUSE;
	return 0;
}

/* Served over /dev/fuse (mode devfuse, or auto without io_uring): the
 * io_uring-only keys the config gave do nothing; say which. */
static void note_unused_keys(const struct fring_session *s)
{
	char names[160];

	if (fring_cfg_unused_over_devfuse(&s->transport, names, sizeof(names)))
		fring_info("%s: %s: for io_uring queues only, unused over "
			   "/dev/fuse", s->mountpoint, names);
}

int fring_session_mount(struct fring_session *s, char **err)
{
	struct fring_mount_opts mo = {
		.default_permissions = s->default_permissions,
		.allow_other = s->allow_other,
		.ro = s->ro,
		.fsname = s->fsname ? s->fsname : plugin_name(s),
		.subtype = s->subtype ? s->subtype : plugin_name(s),
	};
	struct fring_init_params ip = { .transport = FRING_TRANSPORT_DEVFUSE };
	struct fring_devfuse_params dp = { 0 };
	char *msg = NULL;
	int fd, ret;

	if (s->mounted || s->stopped) {
		*err = fring_strf("%s: session already %s", s->mountpoint,
				  s->mounted ? "mounted" : "stopped");
		return -EBUSY;
	}
	ret = check_mountpoint(s->mountpoint, err);
	if (!ret)
		ret = check_ring_budget(s, err);
	if (ret)
		return ret;
	mo.default_permissions = fring_features_default_permissions(
		&s->plugin->desc, s->mountpoint, s->default_permissions,
		s->allow_other, s->trust_plugin_permissions);
	ret = fring_mount_open(s->mountpoint, &mo, &fd, &s->mh, err);
	if (ret)
		return ret;
	s->conn_id = fring_fusectl_id(s->mountpoint);
	s->dx.mount.fuse_fd = fd;

	ip.nr_queues = s->nr_threads ? s->nr_threads
				     : fring_devfuse_default_threads();
	ip.request_timeout = s->transport.request_timeout;
	/* io_uring: the hook sets the rings up before the INIT reply. */
	s->uo.mode = s->transport.mode;
	s->uo.p = (struct fring_uring_params){
		.fuse_fd = fd, .dx = &s->dx, .mountpoint = s->mountpoint,
		.conn_id = s->conn_id, .nr_threads = s->transport.queues,
		.queue_depth = s->transport.queue_depth,
		.poll_us = s->transport.poll_us,
		.bufpool = s->transport.bufpool,
		.bufpool_size = s->transport.bufpool_size,
		.bufpool_registered = s->transport.bufpool_registered,
		.zero_copy = s->transport.zero_copy,
		.reduced_queues = s->transport.reduced_queues,
		.placement = (int)s->transport.placement,
		.cpus = s->transport.cpus,
	};
	ip.before_reply = fring_uring_init_hook;
	ip.ud = &s->uo;
	if (s->transport.mode != FRING_MODE_DEVFUSE && fring_uring_enabled() &&
	    fring_uring_possible_cpus() > 0) {
		ip.transport = FRING_TRANSPORT_URING;
		ip.nr_queues = (uint32_t)fring_uring_possible_cpus();
	}
	ret = fring_init_handshake(fd, &s->dx, &ip, &s->init, &msg);
	if (s->uo.u && !ret)
		fring_uring_start(s->uo.u);
	if (ret) {
		*err = fring_strf("%s: FUSE_INIT failed: %s", s->mountpoint,
				  msg ? msg : strerror(-ret));
		free(msg);
		mount_rollback(s);
		return ret;
	}

	dp.session_fd = fd;
	dp.nr_threads = ip.nr_queues;
	dp.bufsize = s->init.bufsize;
	dp.on_all_exited = on_workers_exited;
	dp.ud = s;
	ret = fring_devfuse_start(&s->dx, &dp, &s->df, &msg);
	if (ret) {
		*err = fring_strf("%s: %s", s->mountpoint, msg ? msg : strerror(-ret));
		free(msg);
		mount_rollback(s);
		return ret;
	}
	s->mounted = 1;
	if (!s->uo.u)
		note_unused_keys(s);
	fring_dbg("%s: serving with %u /dev/fuse workers, max_write %u",
		  s->mountpoint, fring_devfuse_nr_threads(s->df),
		  s->init.max_write);
	if (s->uo.u)
		fring_dbg("%s: io_uring: %u queues on %u threads, %u entries "
			  "each, ring %s", s->mountpoint,
			  fring_uring_nr_qids(s->uo.u),
			  fring_uring_nr_threads(s->uo.u),
			  fring_uring_depth(s->uo.u),
			  fring_uring_ring_mode(s->uo.u));
	return 0;
}

static void abort_connection(struct fring_session *s)
{
	if (s->conn_id && fring_fusectl_abort(s->conn_id) == 0)
		fring_warn("%s: files still open on the unmounted file system "
			   "(or requests in progress); aborted connection %u",
			   s->mountpoint, s->conn_id);
}

/* Where our connection is mounted (mountinfo.h). Without mountinfo, the
 * mountpoint's device is the best guess: ours on top, else covered. */
static int mount_place(const struct fring_session *s)
{
	const char *path = s->dx.mount.path ? s->dx.mount.path : s->mountpoint;
	int place = fring_mount_place(s->conn_id, path);

	if (place >= 0)
		return place;
	return fring_fusectl_id(s->mountpoint) == s->conn_id ? FRING_PLACE_TOP
							     : FRING_PLACE_COVERED;
}

int fring_session_still_mounted(const struct fring_session *s)
{
	return s->conn_id && mount_place(s) == FRING_PLACE_TOP;
}

/* umount2 works by path and takes whatever mount is on top: only unmount
 * when that is still ours. Unmounted from outside, ours is gone and the
 * path is someone else's: just close. Covered (or moved), abort our
 * connection instead of unmounting, if it still exists. */
static void unmount_own(struct fring_session *s)
{
	int place = s->conn_id ? mount_place(s) : FRING_PLACE_TOP;
	int ret;

	if (place == FRING_PLACE_TOP) {
		fring_mount_unmount(s->mh);
		return;
	}
	if (place == FRING_PLACE_GONE) {
		/* Sever it quietly (it is going away anyway): libfuse's unmount
		 * then sees POLLERR and only closes and frees, never touching
		 * the path, which is no longer ours. Without fusectl, disown
		 * (libfuse's copy of the path leaks) rather than risk that. */
		ret = fring_fusectl_abort(s->conn_id);
		if (ret == 0 || ret == -ENOENT)
			fring_mount_unmount(s->mh);
		else
			fring_mount_disown(s->mh);
		return;
	}
	/* libfuse never unmounts by path a connection that is severed (POLLERR
	 * on its fd): sever ours, then the unmount only closes and frees. */
	ret = fring_fusectl_abort(s->conn_id);
	if (ret == 0)
		fring_warn("%s: another mount now covers ours (or ours was "
			   "moved); aborted our connection instead of unmounting "
			   "by path (clear it later with: umount -l %s)",
			   s->mountpoint, s->mountpoint);
	if (ret == 0 || ret == -ENOENT) /* severed now, or gone already */
		fring_mount_unmount(s->mh);
	else
		fring_mount_disown(s->mh);
}

/* Give replies the plugin still owes a bounded time to arrive. */
static long drain(struct fring_session *s)
{
	struct timespec ts = { 0, 10 * 1000000L };
	long left;

	for (int waited = 0; waited < STOP_DRAIN_MS; waited += 10) {
		left = fring_dispatch_outstanding(&s->dx);
		if (left <= 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return fring_dispatch_outstanding(&s->dx);
}

static void log_stats(struct fring_session *s)
{
	struct fring_stats sum, *st = &sum;
	unsigned long total = 0;

	fring_dispatch_stats(&s->dx, &sum);
	for (unsigned i = 0; i <= FUSE_OPCODE_MAX; i++)
		total += atomic_load(&st->requests[i]);
	fring_dbg("%s: %lu requests, %lu replies (%lu errors), %lu malformed, "
		  "%lu interrupts, %lu plugin misuses, %lu failed writes",
		  s->mountpoint, total, atomic_load(&st->replies),
		  atomic_load(&st->errors), atomic_load(&st->malformed),
		  atomic_load(&st->interrupts), atomic_load(&st->misuse),
		  atomic_load(&st->send_failures));
	if (fring_log_enabled(FRING_LOG_DEBUG)) {
		char line[1024];
		size_t n = 0;

		for (unsigned i = 0; i <= FUSE_OPCODE_MAX && n < sizeof(line); i++) {
			unsigned long c = atomic_load(&st->requests[i]);

			if (c)
				n += (size_t)snprintf(line + n, sizeof(line) - n,
						      "%s%s %lu", n ? ", " : "",
						      i == FUSE_OPCODE_MAX
							      ? "unknown"
							      : fring_opcode_name(i),
						      c);
		}
		fring_dbg("%s: requests by opcode: %s", s->mountpoint,
			  n ? line : "none");
	}
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
		fring_warn("%s: dirty pages still being written back after %u ms; "
			   "unmounting anyway (what is not on the backing store "
			   "yet is lost; fsync'd data is safe)", s->mountpoint,
			   STOP_SYNC_MS);
	else if (ret)
		fring_warn("%s: flushing the writeback cache: %s", s->mountpoint,
			   strerror(-ret));
}

void fring_session_stop(struct fring_session *s)
{
	struct fring_req *r;
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

	if (s->mounted) {
		flush_writeback(s);
		unmount_own(s);
		if (fring_devfuse_join(s->df, STOP_JOIN_MS)) {
			abort_connection(s);
			if (fring_devfuse_join(s->df, STOP_ABORT_MS))
				s->stuck = fring_devfuse_cancel(s->df);
		}
		/* io_uring: threads end on -ENOTCONN; stop is the bound. */
		fring_uring_stop(s->uo.u);
		unanswered = drain(s);
		if (unanswered > 0)
			fring_warn("%s: %ld request(s) still unanswered at stop "
				   "(in the plugin when the connection ended)",
				   s->mountpoint, unanswered);
		log_stats(s);
		fring_uring_log_stats(s->uo.u, s->mountpoint);
	}
	fring_dispatch_quiesce(&s->dx);
	if (s->stuck) {
		/* A worker may still be inside the plugin: no destroy. */
		fring_warn("%s: plugin destroy skipped (%u worker(s) stuck)",
			   s->mountpoint, s->stuck);
		return;
	}
	plugin_destroy(s);
	/* After destroy no reply can come: release what was never answered. */
	while ((r = fring_inflight_pop(&s->dx.inflight)))
		fring_req_abandon(r);
	fring_devfuse_free(s->df);
	s->df = NULL;
	fring_uring_free(s->uo.u); /* every ring request is finished now */
	s->uo.u = NULL;
	/* The fd may be reused once closed: no backing ioctls after this. */
	atomic_store(&s->dx.mount.passthrough, 0);
	fring_mount_close(s->mh);
	s->mh = NULL;
	s->mounted = 0;
}

void fring_session_free(struct fring_session *s)
{
	if (!s)
		return;
	fring_session_stop(s);
	if (s->stuck)
		return; /* stuck workers still reference the session */
	plugin_destroy(s);
	if (s->dx.mount.name)
		fring_dispatch_destroy(&s->dx);
	if (s->done_fd >= 0)
		close(s->done_fd);
	pthread_mutex_destroy(&s->lock);
	free(s->mountpoint);
	free(s->transport.cpus);
	free(s->fsname);
	free(s->subtype);
	free(s->config_file);
	free(s);
}
