/*
 * The embedding API (fring.h) on top of config + loader + session. The CLI's
 * `run` and `mount` use it too, so there is one implementation of the
 * "validate and load everything, then mount, then serve" sequence.
 */
#define _GNU_SOURCE
#include "embed.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../base/log.h"
#include "../config/config.h"
#include "../loader/loader.h"
#include "../mount/stale.h"
#include "host.h"
#include "session.h"

#define FRING_API __attribute__((visibility("default")))

#ifndef FRING_VERSION_STRING
#define FRING_VERSION_STRING "0.0.0"
#endif

struct rt_mount {
	struct fring_session *s;
	struct fring_loaded_plugin *plugin; /* ours; outlives the session */
	char *mountpoint;        /* absolute when it could be resolved */
	char *where;             /* "file:line:col: " of a YAML entry, or "" */
	char *mp_where;          /* the same for its mountpoint value */
	const char *plugin_name; /* points into the plugin or the config */
	struct fring_cfg_mount *owned; /* spec-built entry, freed by us */
	int mounted, ended;
};

struct fring_runtime {
	struct rt_mount *m;
	size_t n;
	struct fring_config **cfgs; /* kept alive: sessions point into them */
	size_t nr_cfgs;
	int stop_fd;
	fring_ready_fn ready;
	void *ready_ud;
};

static void set_err(char **err, char *msg)
{
	if (err)
		*err = msg;
	else
		free(msg);
}

FRING_API const char *fring_version(void)
{
	return FRING_VERSION_STRING;
}

FRING_API fring_runtime *fring_runtime_new(char **err)
{
	fring_runtime *rt = calloc(1, sizeof(*rt));

	if (!rt) {
		set_err(err, fring_strf("out of memory"));
		return NULL;
	}
	rt->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (rt->stop_fd < 0) {
		set_err(err, fring_strf("eventfd: %s", strerror(errno)));
		free(rt);
		return NULL;
	}
	return rt;
}

void fring_runtime_on_ready(fring_runtime *rt, fring_ready_fn cb, void *ud)
{
	rt->ready = cb;
	rt->ready_ud = ud;
}

size_t fring_runtime_nr_mounts(const fring_runtime *rt)
{
	return rt->n;
}

static void free_owned(struct fring_cfg_mount *cm)
{
	if (!cm)
		return;
	for (size_t i = 0; i < cm->nr_options; i++) {
		free(cm->options[i].key);
		free(cm->options[i].value);
	}
	free(cm->options);
	free(cm->mountpoint);
	free(cm->plugin);
	free(cm->fsname);
	free(cm->subtype);
	free(cm);
}

static void mount_release(struct rt_mount *m)
{
	if (m->s) {
		fring_session_stop(m->s);
		fring_session_free(m->s);
	}
	if (m->plugin) {
		free(m->plugin->path);
		free(m->plugin);
	}
	free(m->mountpoint);
	free(m->where);
	free(m->mp_where);
	free_owned(m->owned);
	memset(m, 0, sizeof(*m));
}

/* "file:line:col: " for messages about a YAML entry, "" otherwise. */
static char *where(const char *file, unsigned line, unsigned col)
{
	if (!file || !line)
		return strdup("");
	return fring_strf("%s:%u:%u: ", file, line, col);
}

/* Load the plugin, resolve and check the mountpoint (nothing created). */
static int prepare_mount(const struct fring_cfg_mount *cm, const char *file,
			 struct rt_mount *out, char **err)
{
	struct fring_loaded_plugin *lp = NULL;
	char *msg = NULL, *at, *real;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = fring_loader_open(cm->plugin, fring_host_table(), &lp, &msg);
	if (rc < 0) {
		at = where(file, cm->plugin_line, cm->plugin_column);
		set_err(err, fring_strf("%s%s", at ? at : "",
					msg ? msg : "cannot load plugin"));
		free(at);
		free(msg);
		return rc;
	}
	out->plugin = lp;
	out->where = where(file, cm->line, cm->column);
	out->mp_where = where(file, cm->mountpoint_line, cm->mountpoint_column);
	/* Resolve now so the ready line and the mount agree. */
	real = realpath(cm->mountpoint, NULL);
	out->mountpoint = real ? real : strdup(cm->mountpoint);
	if (!out->mountpoint || !out->where || !out->mp_where) {
		set_err(err, fring_strf("out of memory"));
		mount_release(out);
		return -ENOMEM;
	}
	/* A missing, non-directory, dead or still-served mountpoint is
	 * reported now, where the file names it, so `check` catches it and
	 * `run` mounts nothing. */
	rc = fring_mount_check_stale(cm->mountpoint, &msg);
	if (rc < 0) {
		set_err(err, fring_strf("%s%s", out->mp_where, msg ? msg : ""));
		free(msg);
		mount_release(out);
		return rc;
	}
	out->plugin_name = lp->desc.name ? lp->desc.name : cm->plugin;
	return 0;
}

/* "MSG: REASON; REASON" from what the plugin logged as errors, each
 * without the "MOUNTPOINT: " the host puts first; a trailing "(see
 * messages above)" goes, since the reasons are now in the line. */
static char *with_reasons(char *msg, const struct fring_log_capture *c,
			  const char *mountpoint)
{
	static const char above[] = " (see messages above)";
	size_t mlen = strlen(msg), plen = strlen(mountpoint);

	if (mlen >= sizeof(above) - 1 &&
	    !strcmp(msg + mlen - (sizeof(above) - 1), above))
		msg[mlen - (sizeof(above) - 1)] = '\0';
	for (size_t i = 0; msg && i < c->n; i++) {
		const char *r = c->lines[i];
		char *grown;

		if (!strncmp(r, mountpoint, plen) && !strncmp(r + plen, ": ", 2))
			r += plen + 2;
		grown = fring_strf("%s%s%s", msg, i ? "; " : ": ", r);
		free(msg);
		msg = grown;
	}
	return msg;
}

/* Create the plugin instance and hand it its options (nothing mounted).
 * What the plugin logs as errors meanwhile goes into the one-line error. */
static int create_session(const struct fring_cfg_mount *cm, const char *file,
			  struct rt_mount *out, char **err)
{
	struct fring_session_params p = { 0 };
	struct fring_log_capture cap;
	char *msg = NULL;
	int rc;

	p.mountpoint = out->mountpoint;
	p.plugin = out->plugin;
	p.options = cm->options;
	p.nr_options = cm->nr_options;
	p.config_file = file;
	p.default_permissions = cm->default_permissions;
	p.allow_other = cm->allow_other;
	p.trust_plugin_permissions = cm->trust_plugin_permissions;
	p.ro = cm->ro;
	p.fsname = cm->fsname;
	p.subtype = cm->subtype;
	p.transport = cm->transport;
	fring_log_capture_start(&cap);
	rc = fring_session_new(&p, &out->s, &msg);
	if (rc == 0) {
		fring_log_capture_stop(&cap, 1);
		return 0;
	}
	if (!msg)
		msg = fring_strf("%s: cannot create session: %s",
				 out->mountpoint, strerror(-rc));
	if (msg)
		msg = with_reasons(msg, &cap, out->mountpoint);
	fring_log_capture_stop(&cap, !msg);
	/* Point at the mount entry unless the message already does. */
	if (msg && file && strncmp(msg, file, strlen(file))) {
		char *full = fring_strf("%s%s", out->where, msg);

		free(msg);
		msg = full;
	}
	set_err(err, msg ? msg : fring_strf("out of memory"));
	out->s = NULL;
	return rc;
}

/* Every plugin loaded and every mountpoint checked before any plugin
 * instance exists, then every instance created: the cheap errors come
 * first, and the loader's probes fork before plugins start threads. */
static int open_mounts(const struct fring_cfg_mount *cm, size_t n,
		       const char *file, struct rt_mount *out, char **err)
{
	size_t i, j;
	int rc = 0;

	for (i = 0; i < n && !rc; i++)
		rc = prepare_mount(&cm[i], file, &out[i], err);
	if (rc)
		i--; /* out[i - 1] failed and released itself */
	for (j = 0; j < i && !rc; j++)
		rc = create_session(&cm[j], file, &out[j], err);
	if (rc)
		while (i--)
			mount_release(&out[i]);
	return rc;
}

static int dup_mountpoint(const fring_runtime *rt, const struct rt_mount *new,
			  size_t nr_new, char **err)
{
	for (size_t i = 0; i < nr_new; i++) {
		for (size_t j = 0; j < rt->n + i; j++) {
			const struct rt_mount *o = j < rt->n ? &rt->m[j] : &new[j - rt->n];

			if (!strcmp(o->mountpoint, new[i].mountpoint)) {
				set_err(err, fring_strf("%s%s: mountpoint used twice",
							new[i].mp_where, new[i].mountpoint));
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* Append prepared entries, or release them all on error. */
static int commit(fring_runtime *rt, struct rt_mount *new, size_t nr,
		  char **err)
{
	struct rt_mount *m;
	int rc = dup_mountpoint(rt, new, nr, err);

	if (!rc) {
		m = realloc(rt->m, (rt->n + nr) * sizeof(*m));
		if (!m) {
			set_err(err, fring_strf("out of memory"));
			rc = -ENOMEM;
		} else {
			memcpy(m + rt->n, new, nr * sizeof(*m));
			rt->m = m;
			rt->n += nr;
			return 0;
		}
	}
	for (size_t i = 0; i < nr; i++)
		mount_release(&new[i]);
	return rc;
}

FRING_API int32_t fring_runtime_add_yaml(fring_runtime *rt, const char *path,
					 char **err)
{
	struct fring_config *cfg = NULL, **cfgs;
	struct rt_mount *new;
	char *msg = NULL;
	int rc;

	rc = fring_config_load(path, &cfg, &msg);
	if (rc < 0) {
		set_err(err, msg ? msg : fring_strf("%s: %s", path, strerror(-rc)));
		return rc;
	}
	new = calloc(cfg->nr_mounts ? cfg->nr_mounts : 1, sizeof(*new));
	cfgs = realloc(rt->cfgs, (rt->nr_cfgs + 1) * sizeof(*cfgs));
	if (!new || !cfgs) {
		free(new);
		if (cfgs)
			rt->cfgs = cfgs;
		fring_config_free(cfg);
		set_err(err, fring_strf("out of memory"));
		return -ENOMEM;
	}
	rt->cfgs = cfgs;
	rc = open_mounts(cfg->mounts, cfg->nr_mounts,
			 cfg->path ? cfg->path : path, new, err);
	if (rc == 0)
		rc = commit(rt, new, cfg->nr_mounts, err);
	free(new);
	if (rc < 0) {
		fring_config_free(cfg);
		return rc;
	}
	rt->cfgs[rt->nr_cfgs++] = cfg;
	return 0;
}

/* Mount options: flags, or "fsname"/"subtype" with a value, given either as
 * {key, value} or as one "key=value" string. */
static int spec_mount_option(struct fring_cfg_mount *cm,
			     const struct fring_kv *kv, char **err)
{
	const char *eq = strchr(kv->key, '=');
	size_t klen = eq ? (size_t)(eq - kv->key) : strlen(kv->key);
	const char *val = eq ? eq + 1 : kv->value;
	char **slot = NULL;
	int on = 1;

	if (klen == 6 && !strncmp(kv->key, "fsname", 6))
		slot = &cm->fsname;
	else if (klen == 7 && !strncmp(kv->key, "subtype", 7))
		slot = &cm->subtype;
	if (slot) {
		if (!val || !*val) {
			set_err(err, fring_strf("mount option '%.*s' needs a value",
						(int)klen, kv->key));
			return -EINVAL;
		}
		if (*slot) { /* as the YAML schema: one value each */
			set_err(err, fring_strf("mount option '%.*s' given twice",
						(int)klen, kv->key));
			return -EINVAL;
		}
		*slot = strdup(val);
		return *slot ? 0 : -ENOMEM;
	}
	if (val && fring_parse_bool(val, &on) < 0) {
		set_err(err, fring_strf("mount option '%s': '%s' is not a boolean",
					kv->key, val));
		return -EINVAL;
	}
	if (klen == 19 && !strncmp(kv->key, "default_permissions", 19))
		cm->default_permissions = on;
	else if (klen == 11 && !strncmp(kv->key, "allow_other", 11))
		cm->allow_other = on;
	else if (klen == 2 && !strncmp(kv->key, "ro", 2))
		cm->ro = on;
	else if (klen == 24 && !strncmp(kv->key, "trust_plugin_permissions", 24))
		cm->trust_plugin_permissions = on;
	else {
		set_err(err, fring_strf("unknown mount option '%s' (expected "
					"default_permissions, allow_other, ro, "
					"trust_plugin_permissions, fsname=NAME "
					"or subtype=NAME)", kv->key));
		return -EINVAL;
	}
	return 0;
}

int fring_mount_option_check(const char *opt, char **err)
{
	struct fring_cfg_mount cm = { 0 };
	struct fring_kv kv = { opt, NULL };
	int rc = spec_mount_option(&cm, &kv, err);

	free(cm.fsname);
	free(cm.subtype);
	return rc;
}

#define SPEC_HAS(sp, field)                                                   \
	((sp)->size >= offsetof(struct fring_mount_spec, field) +             \
			       sizeof(((struct fring_mount_spec *)0)->field))

static int spec_to_cfg(const struct fring_mount_spec *sp,
		       struct fring_cfg_mount *cm, char **err)
{
	const char *mode = SPEC_HAS(sp, transport_mode) ? sp->transport_mode : NULL;
	uint32_t i;
	int rc;

	fring_cfg_transport_defaults(&cm->transport);
	if (!mode || !strcmp(mode, "auto"))
		cm->transport.mode = FRING_MODE_AUTO;
	else if (!strcmp(mode, "uring"))
		cm->transport.mode = FRING_MODE_URING;
	else if (!strcmp(mode, "devfuse"))
		cm->transport.mode = FRING_MODE_DEVFUSE;
	else {
		set_err(err, fring_strf("transport mode '%s': expected auto, "
					"uring or devfuse", mode));
		return -EINVAL;
	}
	cm->mountpoint = strdup(sp->mountpoint);
	cm->plugin = strdup(sp->plugin);
	cm->options = calloc(sp->nr_options ? sp->nr_options : 1,
			     sizeof(*cm->options));
	if (!cm->mountpoint || !cm->plugin || !cm->options)
		return -ENOMEM;
	for (i = 0; i < sp->nr_options; i++) {
		const struct fring_kv *kv = &sp->options[i];
		struct fring_cfg_option *o = &cm->options[i];

		if (!kv->key) {
			set_err(err, fring_strf("plugin option %u has no key", i));
			return -EINVAL;
		}
		o->key = strdup(kv->key);
		o->value = strdup(kv->value ? kv->value : "");
		o->is_null = !kv->value;
		cm->nr_options = i + 1;
		if (!o->key || !o->value)
			return -ENOMEM;
	}
	for (i = 0; i < sp->nr_mount_options; i++) {
		if (!sp->mount_options[i].key) {
			set_err(err, fring_strf("mount option %u has no key", i));
			return -EINVAL;
		}
		rc = spec_mount_option(cm, &sp->mount_options[i], err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

FRING_API int32_t fring_runtime_add_mount(fring_runtime *rt,
					  const struct fring_mount_spec *spec,
					  char **err)
{
	struct fring_cfg_mount *cm;
	struct rt_mount m;
	char *msg = NULL;
	int rc;

	if (!spec || !SPEC_HAS(spec, mount_options) || !spec->mountpoint ||
	    !spec->plugin || (spec->nr_options && !spec->options) ||
	    (spec->nr_mount_options && !spec->mount_options)) {
		set_err(err, fring_strf("invalid mount spec (size, mountpoint "
					"and plugin are required)"));
		return -EINVAL;
	}
	cm = calloc(1, sizeof(*cm));
	if (!cm) {
		set_err(err, fring_strf("out of memory"));
		return -ENOMEM;
	}
	rc = spec_to_cfg(spec, cm, &msg);
	if (rc == 0)
		rc = open_mounts(cm, 1, NULL, &m, &msg);
	if (rc < 0) {
		free_owned(cm);
		set_err(err, msg ? msg : fring_strf("%s", strerror(-rc)));
		return rc;
	}
	m.owned = cm;
	return commit(rt, &m, 1, err);
}

static int stop_requested(fring_runtime *rt)
{
	struct pollfd pfd = { .fd = rt->stop_fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

/* Last mounted first: a later mount may sit inside an earlier one. */
static void stop_all(fring_runtime *rt)
{
	for (size_t i = rt->n; i-- > 0;) {
		if (rt->m[i].mounted && !rt->m[i].ended) {
			fring_session_stop(rt->m[i].s);
			rt->m[i].ended = 1;
		}
	}
}

/* Every mountpoint must be usable before the first mount is made. */
static int check_mountpoints(fring_runtime *rt, char **err)
{
	for (size_t i = 0; i < rt->n; i++) {
		char *msg = NULL;
		int rc;

		if (rt->m[i].mounted)
			continue;
		rc = fring_mount_check_stale(rt->m[i].mountpoint, &msg);
		if (rc < 0) {
			set_err(err, fring_strf("%s%s", rt->m[i].mp_where,
						msg ? msg : ""));
			free(msg);
			return rc;
		}
	}
	return 0;
}

static int mount_all(fring_runtime *rt, char **err)
{
	for (size_t i = 0; i < rt->n; i++) {
		struct rt_mount *m = &rt->m[i];
		char *msg = NULL;
		int rc;

		if (m->mounted)
			continue;
		if (stop_requested(rt))
			return 0;
		rc = fring_session_mount(m->s, &msg);
		if (rc < 0) {
			if (!msg)
				msg = fring_strf("%s: mount failed: %s",
						 m->mountpoint, strerror(-rc));
			set_err(err, fring_strf("%s%s", m->where, msg ? msg : ""));
			free(msg);
			return rc;
		}
		m->mounted = 1;
		if (rt->ready)
			rt->ready(rt->ready_ud, m->mountpoint, m->plugin_name,
				  fring_session_transport(m->s));
	}
	return 0;
}

/* Serve until stop or until every session ended on its own. */
static int serve(fring_runtime *rt, char **err)
{
	struct pollfd *pfd = calloc(rt->n + 1, sizeof(*pfd));
	size_t *idx = calloc(rt->n + 1, sizeof(*idx));
	int rc = 0;

	if (!pfd || !idx) {
		set_err(err, fring_strf("out of memory"));
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		nfds_t n = 1;

		pfd[0] = (struct pollfd){ .fd = rt->stop_fd, .events = POLLIN };
		for (size_t i = 0; i < rt->n; i++) {
			if (!rt->m[i].mounted || rt->m[i].ended)
				continue;
			pfd[n] = (struct pollfd){ .fd = fring_session_done_fd(rt->m[i].s),
						  .events = POLLIN };
			idx[n++] = i;
		}
		if (n == 1)
			break; /* everything was unmounted from outside */
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			set_err(err, fring_strf("poll: %s", strerror(errno)));
			rc = -errno;
			break;
		}
		if (pfd[0].revents)
			break;
		for (nfds_t k = 1; k < n; k++) {
			struct rt_mount *m = &rt->m[idx[k]];

			if (!pfd[k].revents)
				continue;
			if (fring_session_still_mounted(m->s) && rc == 0) {
				/* Ended but still mounted: aborted (fusectl,
				 * request timeout), not unmounted. */
				set_err(err, fring_strf(
					"%s: the FUSE connection was aborted (fusectl "
					"abort or request timeout); clear the dead "
					"mount with: fusermount3 -u %s  (or as root: "
					"umount -l %s)", m->mountpoint,
					m->mountpoint, m->mountpoint));
				rc = -ECONNABORTED;
			} else {
				fring_info("%s was unmounted", m->mountpoint);
			}
			fring_session_stop(m->s);
			m->ended = 1;
		}
	}
out:
	free(pfd);
	free(idx);
	return rc;
}

FRING_API int32_t fring_runtime_run(fring_runtime *rt, char **err)
{
	uint64_t drained;
	int rc;

	if (!rt->n) {
		set_err(err, fring_strf("nothing to mount"));
		return -EINVAL;
	}
	rc = check_mountpoints(rt, err);
	if (rc == 0)
		rc = mount_all(rt, err);
	if (rc == 0)
		rc = serve(rt, err);
	stop_all(rt);
	/* Consume the stop request so a later run starts afresh. */
	if (read(rt->stop_fd, &drained, sizeof(drained)) < 0)
		drained = 0;
	return rc;
}

FRING_API void fring_runtime_stop(fring_runtime *rt)
{
	uint64_t one = 1;
	ssize_t r;

	/* Only write(2): this is called from signal handlers. */
	r = write(rt->stop_fd, &one, sizeof(one));
	(void)r;
}

FRING_API void fring_runtime_free(fring_runtime *rt)
{
	if (!rt)
		return;
	for (size_t i = 0; i < rt->n; i++)
		mount_release(&rt->m[i]);
	free(rt->m);
	for (size_t i = 0; i < rt->nr_cfgs; i++)
		fring_config_free(rt->cfgs[i]);
	free(rt->cfgs);
	close(rt->stop_fd);
	free(rt);
}
