// SPDX-License-Identifier: MIT
/* fring_runtime_run's work: every mountpoint checked, then each mount
 * made (the ready callback per mount), then served until a stop request
 * or until every session ended; last mounted stopped first. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "../mount/stale.h"
#include "../runtime/session.h"
#include "embed_internal.h"

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
		rc = fring_kmount_check_stale(rt->m[i].mountpoint, &msg);
		if (rc < 0) {
			embed_set_err(err, fring_strf("%s%s", rt->m[i].mp_where,
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
		struct embed_mount *m = &rt->m[i];
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
			embed_set_err(err, fring_strf("%s%s", m->where, msg ? msg : ""));
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

/* One poll's sessions that ended: unmounted from outside, or aborted. */
static int reap(fring_runtime *rt, const struct pollfd *pfd, const size_t *idx,
		nfds_t n, int rc, char **err)
{
	for (nfds_t k = 1; k < n; k++) {
		struct embed_mount *m = &rt->m[idx[k]];

		if (!pfd[k].revents)
			continue;
		if (fring_session_still_mounted(m->s) && rc == 0) {
			embed_set_err(err, embed_aborted(m->mountpoint));
			rc = -ECONNABORTED;
		} else {
			fring_info("%s was unmounted", m->mountpoint);
		}
		fring_session_stop(m->s);
		m->ended = 1;
	}
	return rc;
}

/* Serve until stop or until every session ended on its own. */
static int serve(fring_runtime *rt, char **err)
{
	struct pollfd *pfd = calloc(rt->n + 1, sizeof(*pfd));
	size_t *idx = calloc(rt->n + 1, sizeof(*idx));
	int rc = 0;

	if (!pfd || !idx) {
		embed_set_err(err, fring_strf("out of memory"));
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
			embed_set_err(err, fring_strf("poll: %s", strerror(errno)));
			rc = -errno;
			break;
		}
		if (pfd[0].revents)
			break;
		rc = reap(rt, pfd, idx, n, rc, err);
	}
out:
	free(pfd);
	free(idx);
	return rc;
}

int embed_run(fring_runtime *rt, char **err)
{
	int rc = check_mountpoints(rt, err);

	if (rc == 0)
		rc = mount_all(rt, err);
	if (rc == 0)
		rc = serve(rt, err);
	stop_all(rt);
	return rc;
}
