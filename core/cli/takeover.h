// SPDX-License-Identifier: MIT
/*
 * Takeover (`fring restart`): the messages between the supervisor and
 * its serving processes, over a SOCK_SEQPACKET socketpair, fds as
 * SCM_RIGHTS. The sequence (README.md, "Upgrading a running mount"):
 *
 *   server -> super  MOUNT    once a mount serves: its fds (the session
 *                             fd, every worker's clone), INIT state,
 *                             transport, fusectl id
 *   super -> old     PREPARE  can you hand over?         OK | ERR
 *   super execs new; new -> super HELLO (config loaded, plugins created)
 *                                                        | ERR | death
 *   super -> old     STOP     stop reading, drain, state_save: STATE (a
 *                             memfd, version) per mount, OK | ERR (the old
 *                             serves again)
 *   super -> new     ADOPT    per mount: fds + memfd, then OK;
 *                             new: init replayed, state_load  OK | ERR
 *   (refused or failed up to here: super -> old RESUME, the old serves)
 *   super -> old     EXIT     point of no return: the old _exits,
 *                             without unmounting
 *   super -> new     GO       RESEND, workers; new -> super MOUNT each
 *
 * After a crash (restart: on_crash, super_crash.c) the supervisor starts
 * a new server and goes from HELLO to ADOPT (live set, the state fd the
 * live memfd it holds) and GO.
 */
#ifndef FRING_CLI_TAKEOVER_H
#define FRING_CLI_TAKEOVER_H

#include <stdint.h>

#include "../proto/init_facts.h"

enum tko_type {
	TKO_MOUNT = 1,
	TKO_OK,
	TKO_ERR,
	TKO_PREPARE,
	TKO_HELLO,
	TKO_STOP,
	TKO_STATE,
	TKO_ADOPT,
	TKO_RESUME,
	TKO_EXIT,
	TKO_GO,
};

#define TKO_TRANSPORT_DEVFUSE 0
#define TKO_TRANSPORT_URING 1
#define TKO_MAX_FDS 64

struct tko_msg {
	uint32_t type;
	uint32_t transport; /* MOUNT */
	uint32_t conn_id;   /* MOUNT, ADOPT */
	uint32_t version;   /* STATE, ADOPT: the plugin's state format */
	struct fring_init_result init; /* MOUNT, ADOPT */
	char mountpoint[1024];
	char text[1024]; /* ERR */
	/* Fields added later go last: a shorter message from an older fring
	 * reads as 0 there (tko_recv zeroes), and an older fring reads the
	 * start of a longer one (SOCK_SEQPACKET truncates). */
	uint32_t auto_unmount; /* MOUNT: the mount option */
	/* MOUNT: the last fd is the plugin's state_live memfd (restart:
	 * on_crash); ADOPT: the state fd is a crashed server's live memfd,
	 * not a saved state. */
	uint32_t live;
	/* MOUNT: the mount's restart key (FRING_RESTART_*), for the
	 * supervisor's line at a crash. */
	uint32_t restart;
};

/* The environment variable that makes an exec'd fring a new server: the
 * number of its end of the socketpair. */
#define TKO_ENV_FD "FRING_TAKEOVER_FD"

/* 0 or -errno. */
int tko_send(int sock, const struct tko_msg *m, const int *fds, unsigned nfds);
/* One message (its fds close-on-exec into fds, at most cap, *nfds).
 * timeout_ms < 0 waits for ever. 1, 0 when the peer is gone, -ETIMEDOUT
 * or -errno. */
int tko_recv(int sock, struct tko_msg *m, int *fds, unsigned cap,
	     unsigned *nfds, int timeout_ms);
/* Send a bare message of type t (ERR with text). */
int tko_send_type(int sock, uint32_t t, const char *text);
void tko_close_fds(int *fds, unsigned n);

/* FRING_TEST_TAKEOVER_DIE=step: SIGKILL ourselves at that step. */
void tko_test_die(const char *step);
int tko_test_dying(const char *step); /* 1 if that is the step */

/* The serving process's side (serve_takeover.c). */
struct fring_runtime;
/* The channel to the supervisor (cli_supervise, or TKO_ENV_FD). */
void tko_server_set_chan(int fd, int adopting);
/* 1 in a new server of a takeover (exec'd by the supervisor). */
int tko_server_adopting(void);
/* A mount serves: tell the supervisor (MOUNT). */
void tko_server_report(struct fring_runtime *rt, const char *mountpoint);
/* Answer the supervisor's requests (old server) from a thread. */
void tko_server_start(struct fring_runtime *rt);
/* New server, before serving: HELLO, the ADOPTs, OK, wait for GO.
 * 0, or the exit code (the error was sent and printed). */
int tko_server_adopt(struct fring_runtime *rt);

#endif /* FRING_CLI_TAKEOVER_H */
