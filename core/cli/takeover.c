// SPDX-License-Identifier: MIT
/* The takeover messages over a socketpair; see takeover.h. */
#define _GNU_SOURCE
#include "takeover.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int tko_send(int sock, const struct tko_msg *m, const int *fds, unsigned nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * TKO_MAX_FDS)];
	struct iovec iov = { (void *)m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds > TKO_MAX_FDS)
		return -E2BIG;
	if (nfds) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

int tko_send_type(int sock, uint32_t t, const char *text)
{
	struct tko_msg m = { .type = t };

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	return tko_send(sock, &m, NULL, 0);
}

void tko_close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int tko_recv(int sock, struct tko_msg *m, int *fds, unsigned cap,
	     unsigned *nfds, int timeout_ms)
{
	char cbuf[CMSG_SPACE(sizeof(int) * TKO_MAX_FDS)];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t n;
	int pr;

	*nfds = 0;
	memset(m, 0, sizeof(*m));
	do
		pr = poll(&pfd, 1, timeout_ms);
	while (pr < 0 && errno == EINTR);
	if (pr < 0)
		return -errno;
	if (pr == 0)
		return -ETIMEDOUT;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == ECONNRESET ? 0 : -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		unsigned k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (unsigned i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int),
			       sizeof(int));
			if (*nfds < cap)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	if (n == 0)
		return 0;
	if ((size_t)n != sizeof(*m)) {
		tko_close_fds(fds, *nfds);
		*nfds = 0;
		return -EPROTO;
	}
	m->mountpoint[sizeof(m->mountpoint) - 1] = '\0';
	m->text[sizeof(m->text) - 1] = '\0';
	return 1;
}

int tko_test_dying(const char *step)
{
	const char *want = getenv("FRING_TEST_TAKEOVER_DIE");

	return want && !strcmp(want, step);
}

void tko_test_die(const char *step)
{
	if (tko_test_dying(step))
		raise(SIGKILL);
}
