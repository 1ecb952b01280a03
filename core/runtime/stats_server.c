// SPDX-License-Identifier: MIT
/* The statistics server's thread; see stats_server.h. */
#define _GNU_SOURCE
#include "stats_server.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../base/ctl_sock.h"
#include "../base/log.h"
#include "stats_snap.h"

struct fring_stats_server {
	const struct fring_session *s;
	const char *name;
	struct fring_ctl_server ctl;
	int prom_fd;
	int stop_fd;
	atomic_int serving;
	pthread_t thread;
};

enum fmt { FMT_TEXT, FMT_JSON, FMT_PROM };

/* The snapshot printed, in malloc'ed memory. */
static char *render(struct fring_stats_server *sv, enum fmt f, size_t *len)
{
	struct fring_snapshot *sn;
	char *buf = NULL;
	FILE *out;

	if (!atomic_load(&sv->serving))
		return NULL;
	sn = fring_session_snapshot(sv->s);
	out = sn ? open_memstream(&buf, len) : NULL;
	if (out) {
		if (f == FMT_JSON)
			fring_snap_json(out, sn);
		else if (f == FMT_PROM)
			fring_snap_prom(out, sn);
		else
			fring_snap_text(out, sn);
		fclose(out);
	}
	free(sn);
	return buf;
}

static void answer_ctl(struct fring_stats_server *sv)
{
	char line[64], *body;
	size_t len = 0;
	enum fmt f;
	int fd = fring_ctl_accept(&sv->ctl);

	if (fd < 0)
		return;
	if (fring_ctl_read_line(fd, line, sizeof(line)) < 0) {
		close(fd);
		return;
	}
	f = !strcmp(line, "json")         ? FMT_JSON
	    : !strcmp(line, "prometheus") ? FMT_PROM
					  : FMT_TEXT;
	if (f == FMT_TEXT && strcmp(line, "text")) {
		static const char bad[] = "error: unknown request (expected "
					  "json, text or prometheus)\n";

		fring_ctl_write_all(fd, bad, sizeof(bad) - 1);
	} else if ((body = render(sv, f, &len))) {
		fring_ctl_write_all(fd, body, len);
		free(body);
	} else {
		static const char wait[] = "error: not serving yet\n";

		fring_ctl_write_all(fd, wait, sizeof(wait) - 1);
	}
	close(fd);
}

/* HTTP/1.0: the request's head (up to a blank line), one answer, close. */
static void answer_http(struct fring_stats_server *sv)
{
	struct timeval tv = { .tv_sec = 2 };
	char req[2048], head[160], *body = NULL;
	const char *status = "404 Not Found";
	size_t got = 0, len = 0;
	int fd = accept4(sv->prom_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (got < sizeof(req) - 1) {
		ssize_t r = recv(fd, req + got, sizeof(req) - 1 - got, 0);

		if (r <= 0)
			break;
		got += (size_t)r;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = '\0';
	if (!strncmp(req, "GET /metrics ", 13) ||
	    !strncmp(req, "GET /metrics\r", 13)) {
		body = render(sv, FMT_PROM, &len);
		status = body ? "200 OK" : "503 Service Unavailable";
	} else if (strncmp(req, "GET ", 4)) {
		status = "405 Method Not Allowed";
	}
	snprintf(
		head, sizeof(head),
		"HTTP/1.0 %s\r\nContent-Type: text/plain; "
		"version=0.0.4\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		status, body ? len : 0);
	if (!fring_ctl_write_all(fd, head, strlen(head)) && body)
		fring_ctl_write_all(fd, body, len);
	free(body);
	close(fd);
}

static void *run(void *arg)
{
	struct fring_stats_server *sv = arg;

	for (;;) {
		struct pollfd p[3] = {
			{ .fd = sv->stop_fd, .events = POLLIN },
			{ .fd = sv->ctl.fd, .events = POLLIN },
			{ .fd = sv->prom_fd, .events = POLLIN },
		};

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			answer_ctl(sv);
		if (p[2].revents & POLLIN)
			answer_http(sv);
	}
	return NULL;
}

static int listen_tcp(const char *addr, int *out, char **err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	if (fring_cfg_listen_addr(addr, &ss, &len))
		return -EINVAL; /* the config checked it */
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 16) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		goto fail;
	}
	*out = fd;
	return 0;
fail:
	*err = fring_strf("stats.prometheus: cannot listen on %s: %s", addr,
			  strerror(errno));
	return -errno;
}

int fring_stats_server_start(const struct fring_session *s, const char *mp,
			     const struct fring_cfg_stats *cfg,
			     struct fring_stats_server **out, char **err)
{
	struct fring_stats_server *sv = calloc(1, sizeof(*sv));
	char path[108] = "";
	int rc;

	*out = NULL;
	if (!sv) {
		*err = fring_strf("out of memory");
		return -ENOMEM;
	}
	sv->s = s;
	sv->name = mp;
	sv->ctl.fd = sv->prom_fd = -1;
	sv->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (sv->stop_fd < 0) {
		rc = -errno;
		*err = fring_strf("stats: eventfd: %s", strerror(errno));
		free(sv);
		return rc;
	}
	if (cfg->prometheus) {
		rc = listen_tcp(cfg->prometheus, &sv->prom_fd, err);
		if (rc)
			goto fail;
	}
	rc = fring_ctl_path(path, sizeof(path), "stats", mp, 1);
	if (!rc)
		rc = fring_ctl_listen(&sv->ctl, path);
	if (rc)
		fring_warn("%s: no statistics socket (fring stats): %s: %s", mp,
			   path[0] ? path : "runtime directory", strerror(-rc));
	if (sv->ctl.fd < 0 && sv->prom_fd < 0)
		goto none;
	rc = pthread_create(&sv->thread, NULL, run, sv);
	if (rc) {
		*err = fring_strf("stats: cannot start its thread: %s",
				  strerror(rc));
		rc = -rc;
		goto fail;
	}
	*out = sv;
	return 0;
none:
	close(sv->stop_fd);
	free(sv);
	return 0;
fail:
	fring_ctl_close(&sv->ctl);
	if (sv->prom_fd >= 0)
		close(sv->prom_fd);
	close(sv->stop_fd);
	free(sv);
	return rc;
}

void fring_stats_server_serving(struct fring_stats_server *sv)
{
	if (sv)
		atomic_store(&sv->serving, 1);
}

void fring_stats_server_stop(struct fring_stats_server *sv)
{
	uint64_t one = 1;

	if (!sv)
		return;
	if (write(sv->stop_fd, &one, sizeof(one)) != sizeof(one))
		fring_warn("%s: stats: cannot stop its thread", sv->name);
	pthread_join(sv->thread, NULL);
	fring_ctl_close(&sv->ctl);
	if (sv->prom_fd >= 0)
		close(sv->prom_fd);
	close(sv->stop_fd);
	free(sv);
}
