// SPDX-License-Identifier: MIT
/* A serving process's side of a takeover (takeover.h): report each mount
 * to the supervisor; as the old server, stop, save, resume or exit on its
 * word; as the new one, adopt what it hands over. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../embed/embed_internal.h"
#include "../runtime/session_adopt.h"
#include "cli.h"
#include "takeover.h"

#define FILL_MS 5000 /* io_uring: until every entry holds a request */

static int chan = -1, adopting;

void tko_server_set_chan(int fd, int adopt)
{
	chan = fd;
	adopting = adopt;
}

int tko_server_adopting(void)
{
	return adopting;
}

static struct embed_mount *find(fring_runtime *rt, const char *mp)
{
	for (size_t i = 0; i < rt->n; i++)
		if (rt->m[i].s && !strcmp(rt->m[i].mountpoint, mp))
			return &rt->m[i];
	return NULL;
}

void tko_server_report(fring_runtime *rt, const char *mountpoint)
{
	struct embed_mount *em = find(rt, mountpoint);
	struct tko_msg m = { .type = TKO_MOUNT };
	struct fring_adopt a;

	if (chan < 0 || !em)
		return;
	/* A new server that dies after it served a while: the next one
	 * finds entries armed in a dead ring (registered anew) beside held
	 * ones (adopted). */
	if (adopting && tko_test_dying("new-served")) {
		nanosleep(&(struct timespec){ 0, 300 * 1000000L }, NULL);
		tko_test_die("new-served");
	}
	m.transport = fring_session_export(em->s, &a) || a.shm_fd >= 0
			      ? TKO_TRANSPORT_URING
			      : TKO_TRANSPORT_DEVFUSE;
	/* The ring memory goes last (adopt_one finds it there), then the
	 * plugin's live state, which the supervisor takes off. */
	if (a.shm_fd >= 0 && a.nfds < FRING_ADOPT_MAX_FDS)
		a.fds[a.nfds++] = a.shm_fd;
	if (a.live_fd >= 0 && a.nfds < FRING_ADOPT_MAX_FDS) {
		a.fds[a.nfds++] = a.live_fd;
		m.live = 1;
	}
	m.conn_id = a.conn_id;
	m.auto_unmount = (uint32_t)a.auto_unmount;
	m.restart = a.restart;
	m.init = a.init;
	snprintf(m.mountpoint, sizeof(m.mountpoint), "%s", mountpoint);
	if (tko_send(chan, &m, a.fds, a.nfds))
		fring_warn("%s: telling the supervisor it serves: %s",
			   mountpoint, strerror(errno));
}

static void send_err(char *msg)
{
	tko_send_type(chan, TKO_ERR, msg ? msg : "out of memory");
	free(msg);
}

static void prepare(fring_runtime *rt)
{
	for (size_t i = 0; i < rt->n; i++) {
		char *why;

		if (!rt->m[i].mounted || rt->m[i].ended)
			continue;
		why = fring_session_no_takeover(rt->m[i].s);
		if (why) {
			send_err(
				fring_strf("%s: %s", rt->m[i].mountpoint, why));
			free(why);
			return;
		}
	}
	tko_send_type(chan, TKO_OK, NULL);
}

static void resume(fring_runtime *rt, size_t upto)
{
	for (size_t i = 0; i < upto; i++) {
		char *err = NULL;

		if (!rt->m[i].mounted || rt->m[i].ended)
			continue;
		if (fring_session_resume(rt->m[i].s, &err))
			fring_err("%s",
				  err ? err : "resuming after a takeover");
		free(err);
	}
}

/* The version FRING_TEST_TAKEOVER_VERSION names instead of the plugin's
 * (the refusal of a state the new plugin cannot read). */
static uint32_t test_version(uint32_t v)
{
	const char *e = getenv("FRING_TEST_TAKEOVER_VERSION");

	return e && *e ? (uint32_t)strtoul(e, NULL, 0) : v;
}

static int save_one(struct embed_mount *em)
{
	struct tko_msg m = { .type = TKO_STATE };
	char *err = NULL;
	int fd = memfd_create("fring-state", MFD_CLOEXEC), ret;

	if (fd < 0) {
		send_err(fring_strf("memfd_create: %s", strerror(errno)));
		return -1;
	}
	ret = fring_session_save(em->s, fd, &m.version, &err);
	if (ret) {
		close(fd);
		send_err(err);
		return -1;
	}
	m.version = test_version(m.version);
	snprintf(m.mountpoint, sizeof(m.mountpoint), "%s", em->mountpoint);
	ret = tko_send(chan, &m, &fd, 1);
	close(fd);
	return ret;
}

static void stop(fring_runtime *rt)
{
	size_t i;

	for (i = 0; i < rt->n; i++) {
		char *err = NULL;

		if (!rt->m[i].mounted || rt->m[i].ended)
			continue;
		if (fring_session_pause(rt->m[i].s, &err)) {
			resume(rt, i + 1);
			send_err(err);
			return;
		}
	}
	tko_test_die("old-paused");
	for (i = 0; i < rt->n; i++) {
		if (!rt->m[i].mounted || rt->m[i].ended)
			continue;
		if (save_one(&rt->m[i])) {
			resume(rt, rt->n);
			return;
		}
	}
	tko_test_die("old-saved");
	tko_send_type(chan, TKO_OK, NULL);
}

/* io_uring: every entry must hold a request before we may exit. 0, or
 * -1 after serving again and telling the supervisor why. */
static int exit_ready(fring_runtime *rt)
{
	for (size_t i = 0; i < rt->n; i++) {
		char *err = NULL;

		if (!rt->m[i].mounted || rt->m[i].ended)
			continue;
		if (fring_session_exit_ready(rt->m[i].s, FILL_MS, &err)) {
			resume(rt, rt->n);
			send_err(err);
			return -1;
		}
	}
	tko_test_die("old-filled");
	return 0;
}

static void *old_main(void *arg)
{
	fring_runtime *rt = arg;

	for (;;) {
		struct tko_msg m;
		unsigned nfds;
		int fds[TKO_MAX_FDS];
		int rc = tko_recv(chan, &m, fds, TKO_MAX_FDS, &nfds, -1);

		if (rc <= 0)
			return NULL; /* the supervisor is gone: PDEATHSIG */
		tko_close_fds(fds, nfds);
		switch (m.type) {
		case TKO_PREPARE: prepare(rt); break;
		case TKO_STOP: stop(rt); break;
		case TKO_RESUME:
			resume(rt, rt->n);
			tko_send_type(chan, TKO_OK, NULL);
			break;
		case TKO_EXIT:
			if (exit_ready(rt))
				break; /* refused: serving again */
			/* No unmount, no destroy: the connection is the new
			 * server's, and the supervisor holds its files. */
			fflush(NULL);
			_exit(0);
		default: break;
		}
	}
}

void tko_server_start(fring_runtime *rt)
{
	pthread_attr_t at;
	pthread_t t;

	if (chan < 0)
		return;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, old_main, rt))
		fring_warn("takeover: no control thread: %s", strerror(errno));
	pthread_attr_destroy(&at);
}

static int adopt_one(fring_runtime *rt, const struct tko_msg *m, int *fds,
		     unsigned nfds)
{
	struct embed_mount *em = find(rt, m->mountpoint);
	struct fring_adopt a = { .init = m->init,
				 .conn_id = m->conn_id,
				 .shm_fd = -1,
				 .live_fd = -1,
				 .crash = !!m->live };
	unsigned extra = m->transport == TKO_TRANSPORT_URING ? 2 : 1;
	char *err = NULL;
	int state_fd, ret;

	if (nfds < 2 + extra) {
		tko_close_fds(fds, nfds);
		send_err(fring_strf("%s: handed over without its fds",
				    m->mountpoint));
		return -1;
	}
	state_fd = fds[nfds - 1];
	if (!em) {
		tko_close_fds(fds, nfds);
		send_err(fring_strf("%s is served but is not in the new "
				    "configuration",
				    m->mountpoint));
		return -1;
	}
	a.nfds = nfds - extra;
	memcpy(a.fds, fds, a.nfds * sizeof(int));
	if (extra == 2)
		a.shm_fd = fds[nfds - 2];
	ret = fring_session_adopt(em->s, &a, state_fd, m->version, &err);
	close(state_fd);
	if (ret) {
		send_err(err);
		return -1;
	}
	return 0;
}

/* After a refused ADOPT: read up to the supervisor's OK before exiting.
 * Closing a socket with a message still unread resets the connection,
 * and the supervisor would then read "died" instead of our ERR. */
static void drain_to_ok(void)
{
	for (;;) {
		struct tko_msg m;
		unsigned nfds;
		int fds[TKO_MAX_FDS];

		if (tko_recv(chan, &m, fds, TKO_MAX_FDS, &nfds, 5000) <= 0)
			return;
		tko_close_fds(fds, nfds);
		if (m.type == TKO_OK)
			return;
	}
}

int tko_server_adopt(fring_runtime *rt)
{
	tko_test_die("new-start");
	if (tko_send_type(chan, TKO_HELLO, NULL))
		return CLI_EXIT_ERR;
	for (;;) {
		struct tko_msg m;
		unsigned nfds;
		int fds[TKO_MAX_FDS];
		int rc = tko_recv(chan, &m, fds, TKO_MAX_FDS, &nfds, -1);

		if (rc <= 0)
			return CLI_EXIT_ERR;
		if (m.type == TKO_ADOPT) {
			if (adopt_one(rt, &m, fds, nfds)) {
				drain_to_ok();
				return CLI_EXIT_ERR;
			}
			continue;
		}
		tko_close_fds(fds, nfds);
		if (m.type == TKO_OK)
			break;
	}
	tko_test_die("new-loaded");
	if (tko_send_type(chan, TKO_OK, NULL))
		return CLI_EXIT_ERR;
	for (;;) {
		struct tko_msg m;
		unsigned nfds;
		int fds[TKO_MAX_FDS];
		int rc = tko_recv(chan, &m, fds, TKO_MAX_FDS, &nfds, -1);

		if (rc <= 0)
			return CLI_EXIT_ERR;
		tko_close_fds(fds, nfds);
		if (m.type == TKO_GO)
			break;
	}
	tko_test_die("new-go");
	return 0;
}
