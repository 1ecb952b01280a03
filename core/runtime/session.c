// SPDX-License-Identifier: MIT
/* One mount's lifecycle: create, mount, free; see session.h. */
#define _GNU_SOURCE
#include "session.h"
#include "session_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/log.h"
#include "../mount/fusectl.h"
#include "../mount/stale.h"
#include "../transport/kernel_probe.h"
#include "features.h"
#include "init.h"
#include "stats_server.h"

const char *fring_session_plugin_name(const struct fring_session *s)
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

void fring_session_workers_exited(void *ud)
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

void fring_session_plugin_destroy(struct fring_session *s)
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
			grown = fring_strf(
				"%s:%u:%u: plugin '%s' rejected option '%s'",
				p->config_file, o->line, o->column,
				fring_session_plugin_name(s), o->key);
		else if (!first)
			grown = fring_strf("plugin '%s' rejected option '%s'",
					   fring_session_plugin_name(s),
					   o->key);
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
			*err = fring_strf(
				"plugin '%s': configuration incomplete or "
				"invalid (see messages above)",
				fring_session_plugin_name(s));
			return ret;
		}
	}
	return 0;
}

int fring_session_new(const struct fring_session_params *p,
		      struct fring_session **out, char **err)
{
	struct fring_session *s;
	struct fring_serve sv;
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
	s->live_fd = -1;
	s->restart = p->restart;
	s->plugin = p->plugin;
	s->mountpoint = dup_or_null(p->mountpoint, &oom);
	s->kmount = p->kmount;
	s->kmount.fsname = dup_or_null(p->kmount.fsname, &oom);
	s->kmount.subtype = dup_or_null(p->kmount.subtype, &oom);
	s->config_file = dup_or_null(p->config_file, &oom);
	s->trust_plugin_permissions = p->trust_plugin_permissions;
	s->nr_threads = p->nr_threads;
	s->transport = p->transport;
	s->transport.cpus = dup_or_null(p->transport.cpus, &oom);
	s->stats = p->stats;
	s->stats.prometheus = dup_or_null(p->stats.prometheus, &oom);
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
	if (s->stats.enabled && fring_reqs_enable_latency(&s->dx.rq)) {
		*err = fring_strf("out of memory for the statistics");
		ret = -ENOMEM;
		goto fail;
	}
	sv.rq = &s->dx.rq;
	sv.arrived = fring_dispatch_arrived;
	fring_transports_init(&s->ts, &s->transport, s->mountpoint,
			      s->nr_threads, &sv);
	/* Ring memory a new server can adopt, where a takeover could be
	 * allowed at all (session_adopt.c). */
	s->ts.handover = p->plugin->desc.state_save &&
			 p->plugin->desc.state_load && !s->kmount.auto_unmount;
	s->dx.mount.request_shutdown = request_shutdown;
	s->dx.mount.owner = s;
	s->dx.mount.fuse_fd = -1;
	s->dx.mount.blksize = p->blksize;

	ret = fring_features_check(&p->plugin->desc,
				   fring_session_plugin_name(s), err);
	if (ret < 0)
		goto fail;
	if (!p->plugin->desc.create) {
		*err = fring_strf("plugin '%s' has no create()",
				  fring_session_plugin_name(s));
		ret = -EINVAL;
		goto fail;
	}
	ret = p->plugin->desc.create(&s->dx.mount, &s->dx.inst);
	if (ret < 0) {
		*err = fring_strf("plugin '%s': create failed: %s",
				  fring_session_plugin_name(s), strerror(-ret));
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
	return fring_transports_name(&s->ts);
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
	int ret = fring_kmount_check_stale(mp, err);

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

/* The transport's INIT hook, and then what the plugin's open replies may
 * ask for (host_reply.c): set before the INIT reply. */
static int init_hook(void *ud, const struct fring_init_result *res,
		     struct fuse_init_out *out, char **err)
{
	struct fring_session *s = ud;
	int ret = fring_transports_init_hook(&s->ts, res, out, err);

	if (!ret)
		atomic_store(&s->dx.mount.zero_copy,
			     fring_transports_zero_copy(&s->ts));
	return ret;
}

int fring_session_mount(struct fring_session *s, char **err)
{
	struct fring_kmount_opts mo = s->kmount;
	struct fring_init_params ip;
	char *msg = NULL;
	int fd, ret;

	if (s->mounted || s->stopped) {
		*err = fring_strf("%s: session already %s", s->mountpoint,
				  s->mounted ? "mounted" : "stopped");
		return -EBUSY;
	}
	if (s->adopt)
		return fring_session_adopt_mount(s, err);
	ret = check_mountpoint(s->mountpoint, err);
	if (!ret)
		ret = fring_transports_precheck(&s->ts, err);
	if (!ret && s->stats.enabled)
		ret = fring_stats_server_start(s, s->mountpoint, &s->stats,
					       &s->stats_srv, err);
	if (ret)
		return ret;
	if (!mo.fsname)
		mo.fsname = (char *)fring_session_plugin_name(s);
	if (!mo.subtype)
		mo.subtype = (char *)fring_session_plugin_name(s);
	mo.default_permissions = fring_features_default_permissions(
		&s->plugin->desc, s->mountpoint, s->kmount.default_permissions,
		s->kmount.allow_other, s->trust_plugin_permissions);
	ret = fring_kmount_open(s->mountpoint, &mo, &fd, &s->km, err);
	if (ret) {
		fring_stats_server_stop(s->stats_srv);
		s->stats_srv = NULL;
		return ret;
	}
	s->conn_id = fring_fusectl_id(s->mountpoint);
	s->dx.mount.fuse_fd = fd;

	fring_transports_offer(&s->ts, fd, s->conn_id);
	ip = (struct fring_init_params){
		.transport = s->ts.conn_transport,
		.nr_queues = s->ts.nr_queues,
		.request_timeout = s->transport.request_timeout,
		.before_reply = init_hook,
		.ud = s,
	};
	ret = fring_init_handshake(fd, &s->dx, &ip, &s->init, &msg);
	if (ret) {
		*err = fring_strf("%s: FUSE_INIT failed: %s", s->mountpoint,
				  msg ? msg : strerror(-ret));
		free(msg);
		fring_session_rollback(s);
		return ret;
	}
	/* The transport is known now, and no request but INIT was read. */
	fring_session_live_begin(s, fring_transports_rings(&s->ts));
	ret = fring_transports_start(&s->ts, &s->init, fd,
				     fring_session_workers_exited, s, &msg);
	if (ret) {
		*err = fring_strf("%s: %s", s->mountpoint, msg ? msg : strerror(-ret));
		free(msg);
		fring_session_rollback(s);
		return ret;
	}
	s->mounted = 1;
	fring_stats_server_serving(s->stats_srv);
	if (!fring_transports_rings(&s->ts))
		fring_session_note_unused_keys(s);
	fring_transports_log(&s->ts, s->init.max_write);
	return 0;
}

void fring_session_free(struct fring_session *s)
{
	if (!s)
		return;
	fring_session_stop(s);
	if (s->stuck)
		return; /* stuck workers still reference the session */
	fring_session_plugin_destroy(s);
	if (s->dx.mount.name)
		fring_dispatch_destroy(&s->dx);
	if (s->done_fd >= 0)
		close(s->done_fd);
	free(s->adopt);
	if (s->live_fd >= 0)
		close(s->live_fd);
	pthread_mutex_destroy(&s->lock);
	free(s->mountpoint);
	free(s->transport.cpus);
	free(s->stats.prometheus);
	free(s->kmount.fsname);
	free(s->kmount.subtype);
	free(s->config_file);
	free(s);
}
