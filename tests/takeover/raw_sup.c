// SPDX-License-Identifier: MIT
/* raw_takeover: the supervisor's side: its children and their messages, the
 * mount, the timed stat(2) clients, the results. */
#include "raw.h"

/* ---- bookkeeping of the supervisor ---- */

struct raw_sup S = { .fd = -1, .memfd = -1, .rep = { -1, -1 } };

int check_mode;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
}

static void kill_kids(void)
{
	for (unsigned i = 0; i < S.nkids; i++)
		if (S.kids[i] > 0)
			kill(S.kids[i], SIGKILL);
}

static void reap_kids(void)
{
	for (unsigned i = 0; i < S.nkids; i++)
		if (S.kids[i] > 0)
			waitpid(S.kids[i], NULL, 0);
	S.nkids = 0;
}

/* Servers first (they hold the device file), then the device (the last
 * reference aborts the connection, which ends every waiting client), then
 * the clients, then the mount. */
static void dump_log(void)
{
	if (!getenv("RAW_TAKEOVER_DEBUG"))
		return;
	for (unsigned i = 0; i < S.nlog; i++)
		note("msg type %d gen %d val %d slot %d qid %u unique 0x%llx cid %llu name %s",
		     S.log[i].type, S.log[i].gen, S.log[i].val, S.log[i].slot,
		     S.log[i].qid, (unsigned long long)S.log[i].unique,
		     (unsigned long long)S.log[i].cid, S.log[i].name);
}

void teardown(void)
{
	dump_log();
	kill_kids();
	if (S.fd >= 0)
		close(S.fd);
	S.fd = -1;
	reap_kids();
	if (S.dir[0]) {
		umount2(S.dir, MNT_DETACH);
		rmdir(S.dir);
		S.dir[0] = 0;
	}
	for (int i = 0; i < 2; i++)
		if (S.rep[i] >= 0)
			close(S.rep[i]);
	S.rep[0] = S.rep[1] = -1;
	if (S.memfd >= 0)
		close(S.memfd);
	S.memfd = -1;
	S.nlog = 0;
}

void on_alarm(int sig)
{
	(void)sig;
	/* Only async-signal-safe calls: kill, close, umount2, rmdir, write. */
	kill_kids();
	if (S.fd >= 0)
		close(S.fd);
	if (S.dir[0]) {
		umount2(S.dir, MNT_DETACH);
		rmdir(S.dir);
	}
	write(1, "EXPERIMENT ALL: TIMEOUT (global alarm)\n", 39);
	_exit(125);
}

pid_t spawn(void)
{
	pid_t p = fork();

	if (p > 0 && S.nkids < 256)
		S.kids[S.nkids++] = p;
	if (p == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(0);
	}
	return p;
}

void stop_pid(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	for (unsigned i = 0; i < S.nkids; i++)
		if (S.kids[i] == p)
			S.kids[i] = -1;
}

void send_msg(int fd, struct msg m)
{
	if (write(fd, &m, sizeof(m)) != sizeof(m))
		_exit(90);
}

/* Collect the servers' messages for up to ms; stop early once pred holds. */
struct msg *pump(int ms, int (*pred)(const struct msg *, const void *),
		 const void *arg)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	for (;;) {
		for (unsigned i = 0; pred && i < S.nlog; i++)
			if (pred(&S.log[i], arg))
				return &S.log[i];
		int64_t left = (int64_t)(end - now_ms());
		struct pollfd p = { S.rep[0], POLLIN, 0 };

		if (left <= 0)
			return NULL;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		struct msg scratch,
			*into = S.nlog < 4096 ? &S.log[S.nlog] : &scratch;

		if (read(S.rep[0], into, sizeof(struct msg)) !=
		    sizeof(struct msg))
			continue;
		if (into->type == M_READY &&
		    into->unique) { /* INIT was read there */
			S.minor = (uint32_t)into->cid;
			S.offered = into->unique;
		}
		if (into != &scratch)
			S.nlog++;
	}
}

int match(const struct msg *m, const void *a)
{
	const struct want *w = a;

	return m->type == w->type && (w->gen < 0 || m->gen == w->gen) &&
	       (!w->name || !strcmp(m->name, w->name)) &&
	       (!w->resend || (m->unique & FUSE_UNIQUE_RESEND)) &&
	       (w->slot < 0 || m->slot == w->slot);
}

struct msg *wait_for(int ms, int type, int gen, const char *name)
{
	struct want w = { type, gen, name, 0, -1 };

	return pump(ms, match, &w);
}

/* ---- the mount ---- */

static int mount_fresh(void)
{
	char opts[128];

	const char *tmp = getenv("TMPDIR");

	snprintf(S.dir, sizeof(S.dir), "%s/raw_takeover.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(S.dir)) {
		S.dir[0] = 0;
		return -errno;
	}
	S.fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (S.fd < 0)
		return -errno;
	if (pipe(S.rep))
		return -errno;
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40755,user_id=0,group_id=0", S.fd);
	if (mount("rawtk", S.dir, "fuse.rawtk", MS_NOSUID | MS_NODEV, opts))
		return -errno;
	return 0;
}

/* ---- clients: one stat(2) each, pinned to CPU 0, timed ---- */

struct cres {
	int32_t err;
	int32_t pad;
	int64_t size;
	uint64_t ms;
};

void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

struct client client_start(const char *name)
{
	struct client c = { .pid = -1, .fd = -1 };
	int p[2];

	if (pipe(p))
		return c;
	c.pid = spawn();
	if (c.pid == 0) {
		char path[128];
		struct stat st;
		struct cres r = { 0 };
		uint64_t t0;

		close(S.fd);
		close(p[0]);
		pin_cpu(0);
		snprintf(path, sizeof(path), "%s/%s", S.dir, name);
		t0 = now_ms();
		r.err = stat(path, &st) ? errno : 0;
		r.size = r.err ? -1 : st.st_size;
		r.ms = now_ms() - t0;
		write(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	c.fd = p[0];
	return c;
}

/* 1 when the client has answered within ms, 0 while it still waits. */
int client_wait(struct client *c, int ms)
{
	struct pollfd p = { c->fd, POLLIN, 0 };
	struct cres r;

	if (c->done)
		return 1;
	if (poll(&p, 1, ms) <= 0)
		return 0;
	if (read(c->fd, &r, sizeof(r)) != sizeof(r))
		return 0;
	c->done = 1;
	c->err = r.err;
	c->size = (long)r.size;
	c->ms = r.ms;
	close(c->fd);
	return 1;
}

const char *cstate(struct client *c, char *buf, size_t n)
{
	if (!c->done)
		snprintf(buf, n, "still waiting");
	else if (c->err)
		snprintf(buf, n, "error %s after %llu ms",
			 strerrorname_np(c->err), (unsigned long long)c->ms);
	else
		snprintf(buf, n, "ok (size %ld) after %llu ms", c->size,
			 (unsigned long long)c->ms);
	return buf;
}

/* ---- results ---- */

struct result results[32];
unsigned nresults;

void result(const char *name, const char *res, const char *fmt, ...)
{
	va_list ap;

	printf("EXPERIMENT %s: %s (", name, res);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(")\n");
	fflush(stdout);
	if (nresults < 32) {
		results[nresults].name = name;
		snprintf(results[nresults].res, 32, "%s", res);
		nresults++;
	}
}

int setup(int uring)
{
	int err = mount_fresh();

	if (!err && uring) {
		S.memfd = memfd_create("raw_takeover", MFD_CLOEXEC);
		if (S.memfd < 0 ||
		    ftruncate(S.memfd, (off_t)(SLOTS_LEN + S.nq * POOL_LEN)))
			err = -errno;
	}
	if (err)
		note("setup failed: %s", strerror(-err));
	return err;
}
