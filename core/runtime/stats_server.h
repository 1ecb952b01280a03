// SPDX-License-Identifier: MIT
/*
 * A session's statistics server: one thread answering on the control
 * socket (base/ctl_sock.h, kind "stats", key the mountpoint) and, with
 * stats.prometheus, GET /metrics over HTTP/1.0 on that TCP address.
 * Requests on the control socket: "json", "text" or "prometheus".
 */
#ifndef FRING_RUNTIME_STATS_SERVER_H
#define FRING_RUNTIME_STATS_SERVER_H

#include "../config/config.h"

struct fring_session;
struct fring_stats_server;

/* Listen (before the mount: a Prometheus address that cannot be bound is
 * an error, with nothing mounted; a control socket that cannot be made is
 * a warning). Answers "not serving" until fring_stats_server_serving. */
int fring_stats_server_start(const struct fring_session *s, const char *mp,
			     const struct fring_cfg_stats *cfg,
			     struct fring_stats_server **out, char **err);
void fring_stats_server_serving(struct fring_stats_server *sv);
/* Stop the thread, close and unlink; NULL is fine. */
void fring_stats_server_stop(struct fring_stats_server *sv);

#endif /* FRING_RUNTIME_STATS_SERVER_H */
