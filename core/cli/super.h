// SPDX-License-Identifier: MIT
/* The supervisor (the parent of `fring run` / `fring mount`): what it
 * holds of its serving process's mounts, its loop (super.c), the
 * takeover it runs for `fring restart` (super_takeover.c) and its
 * control socket (super_ctl.c). */
#ifndef FRING_CLI_SUPER_H
#define FRING_CLI_SUPER_H

#include <limits.h>
#include <sys/types.h>

#include "../base/ctl_sock.h"
#include "takeover.h"

struct super_mount {
	char mountpoint[1024];
	unsigned conn_id;
	uint32_t transport;    /* TKO_TRANSPORT_* */
	uint32_t auto_unmount; /* unmount when the server dies */
	struct fring_init_result init;
	int fds[TKO_MAX_FDS]; /* held: the session fd and every clone */
	unsigned nfds;
	int live_fd; /* the plugin's state_live memfd (restart: on_crash), -1 */
	uint32_t restart; /* the mount's restart key (FRING_RESTART_*) */
};

struct super {
	pid_t server;
	int chan; /* to the serving process (SOCK_SEQPACKET) */
	struct super_mount *m;
	size_t n;
	char exe[PATH_MAX]; /* the fring binary's path, read at start */
	char **argv;        /* the command line, read at start */
	struct fring_ctl_server ctl; /* fd -1: none */
	const char *key;             /* its key; opened once a mount serves */
};

/* The loop; never returns. key: CONFIG of `run`, MOUNTPOINT of `mount`. */
void super_run(pid_t child, int chan, const char *key)
	__attribute__((noreturn));

/* A MOUNT message from the server on chan: hold its fds (replacing an
 * older record of the mountpoint). */
void super_take_mount(struct super *S, const struct tko_msg *m, int *fds,
		      unsigned nfds);
/* Abort every held connection through fusectl (the lines the supervisor
 * has always printed). */
void super_abort_all(struct super *S);

/* `fring restart`: 0 and *msg the outcome line, or -1 and *msg why not. */
int super_takeover(struct super *S, char **msg);

/* A new server's steps (super_takeover.c), shared with the restart after
 * a crash: each 0, or -1 and *why (malloc'ed). */
struct super_state { /* per mount: what a new server loads */
	char mountpoint[1024];
	uint32_t version;
	int fd; /* a saved state, or (crash) the live memfd */
};
struct super_gen {
	pid_t pid;
	int chan;
};
/* Exec the fring binary; 0 once it has loaded the config (HELLO). */
int super_new_hello(struct super *S, int test_die, struct super_gen *g,
		    char **why);
/* Hand it every mount with st[i] (crash: st is the live memfds). */
int super_new_adopts(struct super *S, const struct super_state *st, int crash,
		     struct super_gen *g, char **why);
/* GO; 0 once it reported every mount served (its records replace S's). */
int super_new_serves(struct super *S, struct super_gen *g, char **why);
void super_kill_gen(struct super_gen *g);

/* The serving process died by signal sig (super_crash.c): 0 once a new
 * one serves every mount (restart: on_crash), else -1 (the caller
 * aborts; the reason is logged). */
int super_crash_restart(struct super *S, int sig);

/* The control socket (super_ctl.c over core/base/ctl_sock.h): its path
 * for key (malloc'ed; NULL if key does not resolve), making the runtime
 * directory if create; `fring restart`'s call: 0 and the answer in
 * *reply, or -errno. */
char *super_ctl_path(const char *key, int create);
int super_ctl_call(const char *path, int timeout_ms, char **reply);

#endif /* FRING_CLI_SUPER_H */
