// SPDX-License-Identifier: MIT
/*
 * The takeover's messages (core/cli/takeover.c) over a SOCK_SEQPACKET
 * pair: a message and its fds arrive whole (the fds name the same open
 * files), a peer that is gone reads as 0, a quiet one times out, more fds
 * than the reader takes are closed, and the test hook only fires for its
 * step.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/takeover.h"

static int sv[2];

static void setup(void)
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
		     0);
}

static void teardown(void)
{
	close(sv[0]);
	close(sv[1]);
}

static int same_file(int a, int b)
{
	struct stat x, y;

	return !fstat(a, &x) && !fstat(b, &y) && x.st_ino == y.st_ino &&
	       x.st_dev == y.st_dev;
}

Test(takeover_msg, message_and_fds_arrive_whole, .init = setup,
     .fini = teardown)
{
	struct tko_msg m = { .type = TKO_MOUNT, .conn_id = 42 }, got;
	int fds[3], in[TKO_MAX_FDS];
	unsigned n;

	m.init.max_write = 1 << 20;
	m.init.want = 0x123456789ull;
	strcpy(m.mountpoint, "/mnt/x");
	for (int i = 0; i < 3; i++)
		fds[i] = memfd_create("t", MFD_CLOEXEC);
	cr_assert_eq(tko_send(sv[0], &m, fds, 3), 0);
	cr_assert_eq(tko_recv(sv[1], &got, in, TKO_MAX_FDS, &n, 1000), 1);
	cr_assert_eq(got.type, TKO_MOUNT);
	cr_assert_eq(got.conn_id, 42);
	cr_assert_eq(got.init.max_write, 1u << 20);
	cr_assert_eq(got.init.want, 0x123456789ull);
	cr_assert_str_eq(got.mountpoint, "/mnt/x");
	cr_assert_eq(n, 3);
	for (int i = 0; i < 3; i++) {
		cr_assert(same_file(fds[i], in[i]));
		cr_assert(fcntl(in[i], F_GETFD) & FD_CLOEXEC);
	}
	tko_close_fds(in, n);
	tko_close_fds(fds, 3);
}

Test(takeover_msg, fds_beyond_the_readers_room_are_closed, .init = setup,
     .fini = teardown)
{
	struct tko_msg m = { .type = TKO_STATE }, got;
	int fds[4], in[2];
	unsigned n;

	for (int i = 0; i < 4; i++)
		fds[i] = memfd_create("t", MFD_CLOEXEC);
	cr_assert_eq(tko_send(sv[0], &m, fds, 4), 0);
	cr_assert_eq(tko_recv(sv[1], &got, in, 2, &n, 1000), 1);
	cr_assert_eq(n, 2);
	tko_close_fds(in, n);
	tko_close_fds(fds, 4);
	cr_assert_eq(tko_send(sv[0], &m, fds, TKO_MAX_FDS + 1), -E2BIG);
}

Test(takeover_msg, gone_and_quiet_peers, .init = setup, .fini = teardown)
{
	struct tko_msg got;
	int in[1];
	unsigned n;

	cr_assert_eq(tko_recv(sv[1], &got, in, 1, &n, 20), -ETIMEDOUT);
	cr_assert_eq(tko_send_type(sv[0], TKO_ERR, "why not"), 0);
	cr_assert_eq(tko_recv(sv[1], &got, in, 1, &n, 1000), 1);
	cr_assert_eq(got.type, TKO_ERR);
	cr_assert_str_eq(got.text, "why not");
	close(sv[0]);
	sv[0] = -1;
	cr_assert_eq(tko_recv(sv[1], &got, in, 1, &n, 1000), 0);
}

Test(takeover_msg, test_hook_fires_only_at_its_step)
{
	setenv("FRING_TEST_TAKEOVER_DIE", "old-paused", 1);
	tko_test_die("new-start"); /* still alive */
	unsetenv("FRING_TEST_TAKEOVER_DIE");
	tko_test_die("old-paused");
}

Test(takeover_msg, test_hook_kills_at_its_step, .signal = SIGKILL)
{
	setenv("FRING_TEST_TAKEOVER_DIE", "old-saved", 1);
	tko_test_die("old-saved");
}
