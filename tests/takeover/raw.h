// SPDX-License-Identifier: MIT
/* raw_takeover's shared parts: constants, the supervisor's state and its
 * messages, and what each file offers the others (README.md here). */
#ifndef RAW_TAKEOVER_RAW_H
#define RAW_TAKEOVER_RAW_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fring_uapi.h"

#define MAX_WRITE 65536u
#define MAX_PAGES 16u
#define PAYLOAD 65536u /* max(8192, max_write, max_pages * 4096) */
#define HDR_SZ 4096u   /* one page per fuse_uring_req_header */
#define SLOT_SZ (HDR_SZ + PAYLOAD)
#define DEPTH 2u /* entries per queue and generation */
#define MAX_GENS 24u
#define BASE \
	((void *)0x6f0000000000ull) /* entry memory, same in every server */
#define BUFSZ (MAX_WRITE + 4096u)
#define ADOPT_SIZE 12345u /* the size only an adopting server answers */

enum {
	M_READY = 1,
	M_HELD,
	M_SEEN,
	M_NOTIFY,
	M_COMMIT,
	M_CQE_ERR,
	M_ADOPTED,
	M_ALLHELD
};

struct msg {
	int32_t type, gen, val, slot;
	uint64_t unique, cid;
	uint16_t qid;
	char name[30];
};

/* The supervisor's state (raw_sup.c). */
struct raw_sup {
	char dir[64];
	int fd, memfd, rep[2];
	pid_t kids[256];
	unsigned nkids;
	struct msg log[4096];
	unsigned nlog;
	unsigned nq;
	uint32_t minor;
	uint64_t offered;
};
extern struct raw_sup S;
extern int check_mode; /* --check */

struct want {
	int type, gen;
	const char *name;
	uint64_t resend;
	int slot;
};

struct client {
	pid_t pid;
	int fd;
	int done;
	int err;
	long size;
	uint64_t ms;
};

struct result {
	const char *name;
	char res[32];
};
extern struct result results[32]; /* as printed, for --check */
extern unsigned nresults;

/* E5 (7.3): with pool_mode every queue has a buffer pool of DEPTH
 * buffers, in the memfd after the slots; a request's payload is at its
 * queue's pool + the offset the kernel wrote in the header. */
#define SLOTS_LEN ((size_t)MAX_GENS * S.nq * DEPTH * SLOT_SZ)
#define POOL_LEN ((size_t)DEPTH * PAYLOAD)
extern int pool_mode;

struct gen {
	struct io_uring ring;
	int g, hold, adopt_size;
	int owned; /* entries with an SQE in this ring or a request held here */
	struct iovec iov[MAX_GENS * 64][2];
};

/* E6 (fill, exit, adopt): SIGUSR1 makes a generation hold every request it
 * gets and exit once all its entries hold one (closing its ring first with
 * close_ring); SIGUSR2 makes the next one register its own entries (reg)
 * and commit what the old left. Set before the servers fork. no_fill (the
 * control): exit at once, with entries still available. */
struct raw_e6 {
	int on, reg, close_ring, no_fill;
};
extern struct raw_e6 E6;

/* Looping clients count their completed stats in shared memory. */
struct load {
	volatile int stop;
	volatile long ops[4], errs[4];
	volatile int lasterr[4];
};

/* raw_sup.c */
void note(const char *fmt, ...);
void teardown(void);
void on_alarm(int sig);
pid_t spawn(void);
void stop_pid(pid_t p);
void send_msg(int fd, struct msg m);
struct msg *pump(int ms, int (*pred)(const struct msg *, const void *),
		 const void *arg);
int match(const struct msg *m, const void *a);
struct msg *wait_for(int ms, int type, int gen, const char *name);
void pin_cpu(int cpu);
struct client client_start(const char *name);
int client_wait(struct client *c, int ms);
const char *cstate(struct client *c, char *buf, size_t n);
void result(const char *name, const char *res, const char *fmt, ...);
int setup(int uring);

/* raw_fs.c */
int answer(const struct fuse_in_header *in, const void *a0, const char *name,
	   void *out, uint32_t *olen, uint64_t size);
int is_hold(const struct fuse_in_header *in, const char *name);
void name_of(char *dst, const struct fuse_in_header *in, const char *name);
int do_init(int fd, int uring);
void report_init(int gen, int err);
void serve_dev(int fd, int gen, int hold);
int notify_resend(int fd);

/* raw_ring.c */
struct fuse_uring_req_header *hdr_of(unsigned s);
uint16_t qid_of(unsigned s);
int map_entries(void);
struct io_uring_sqe *cmd_sqe(struct gen *G, uint32_t op, uint16_t qid,
			     uint64_t cid, uint64_t ud);
int ring_up(struct gen *G);
void register_sqes(struct gen *G);
int register_all(struct gen *G);
void commit_slot(struct gen *G, unsigned s, int adopted);
void serve_ring(struct gen *G);
pid_t start_gen(int g, int init, int hold, int reg);
void adopt_child(struct gen *G, int g);
struct msg *start_first(const char *name, pid_t *a);
int add_cmd(struct gen *G, uint32_t op, uint16_t qid);
const char *errname(int res);

/* raw_e1_e4.c (experiments) */
void e1(int clone);
void e2_e3(int adopt);
void e4_gap(void);
void sum_clients(const char *name, const volatile long *cops,
		 const volatile long *cerrs, const volatile int *clast,
		 long *ops, long *errs);
void e4_load(int adopt, int rounds);

/* raw_e5.c */
void e5(void);

/* raw_e6.c */
void e6_load(int reg, int close_ring, int no_fill, int pools, int rounds);

/* raw_crash.c */
void e_crash(void);

#endif
