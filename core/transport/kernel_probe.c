// SPDX-License-Identifier: MIT
/*
 * What this kernel can serve, before anything is mounted (kernel_probe.h).
 *
 * `run` learns what the kernel offers (FUSE_OVER_IO_URING, Linux 7.3's
 * FUSE_HAS_IO_URING_BUFPOOL, ...) only from the INIT of a mount it made,
 * so `bufpool: on` on a kernel without pools used to fail there, after the
 * mounts before it were up, and `fring check` passed it. Here a child
 * process makes a throwaway FUSE mount in a private mount namespace (as
 * root: CAP_SYS_ADMIN; without it nothing is probed and INIT decides, as
 * before), reads the INIT the kernel
 * sends and exits without answering: its /dev/fuse fd closes (the
 * connection is aborted) and the namespace, the only place the mount ever
 * was, goes with it. Nothing is left behind, whatever happens to the
 * child, and no other process ever sees the mount. Done once per process,
 * and only for a configuration whose answer depends on it.
 *
 * Here too the other facts of this machine (fring_kernel_facts_get); what
 * they mean is kernel_pinned.c (the memory) and kernel_refuse.c (what
 * cannot be served, and the check of one mount).
 */
#define _GNU_SOURCE
#include "kernel_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../proto/fring_uapi.h"
#include "../proto/init_facts.h"
#include "uring.h"
#include "uring_internal.h"

#define PROBE_TIMEOUT_MS 3000

/* ---- the probe's child: system calls only (we may have threads) ---- */

static char *put_uint(char *p, unsigned v)
{
	char d[16];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = d[--n];
	return p;
}

static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static __attribute__((noreturn)) void probe_child(int wfd, unsigned uid,
						  unsigned gid, const char *target)
{
	char opts[128], *p = opts;
	char buf[8192];
	struct pollfd pfd;
	ssize_t n;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The mount `run` makes (mount(2) in the initial user namespace),
	 * in a mount namespace nobody else sees. */
	if (unshare(CLONE_NEWNS) < 0)
		_exit(10);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(12);
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		_exit(13);
	p = put_str(p, "fd=");
	p = put_uint(p, (unsigned)fd);
	p = put_str(p, ",rootmode=40000,user_id=");
	p = put_uint(p, uid);
	p = put_str(p, ",group_id=");
	p = put_uint(p, gid);
	*p = '\0';
	if (mount("fring-probe", target, "fuse", MS_NOSUID | MS_NODEV | MS_NOEXEC |
		  MS_RDONLY, opts) < 0)
		_exit(14);
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, PROBE_TIMEOUT_MS) != 1)
		_exit(15);
	n = read(fd, buf, sizeof(buf));
	if (n <= 0 || write(wfd, buf, (size_t)n) != n)
		_exit(16);
	/* Exit without an INIT reply: the fd closes (abort), the namespace
	 * and its one mount go with us. */
	_exit(0);
}

static const char *child_failed(int code)
{
	switch (code) {
	case 10: return "no mount namespace (unshare refused)";
	case 12: return "cannot make the mount namespace private";
	case 13: return "cannot open /dev/fuse";
	case 14: return "the probe mount failed";
	case 15: return "no FUSE_INIT within 3 s";
	default: return "the probe failed";
	}
}

static void parse_init(const char *buf, size_t n, struct fring_kernel_offer *o)
{
	struct fuse_in_header h;
	struct fuse_init_in ii;
	size_t body;

	if (n < sizeof(h) + FUSE_COMPAT_INIT_IN_SIZE) {
		snprintf(o->why_unknown, sizeof(o->why_unknown), "short FUSE_INIT");
		return;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.opcode != FUSE_INIT) {
		snprintf(o->why_unknown, sizeof(o->why_unknown),
			 "opcode %u instead of FUSE_INIT", h.opcode);
		return;
	}
	memset(&ii, 0, sizeof(ii));
	body = n - sizeof(h) < sizeof(ii) ? n - sizeof(h) : sizeof(ii);
	memcpy(&ii, buf + sizeof(h), body);
	o->major = ii.major;
	o->minor = ii.minor;
	o->capable = ii.flags;
	if ((ii.flags & FUSE_INIT_EXT) && body >= offsetof(struct fuse_init_in, flags2) +
						  sizeof(ii.flags2))
		o->capable |= (uint64_t)ii.flags2 << 32;
	o->known = 1;
}

static void probe(struct fring_kernel_offer *o)
{
	struct stat st;
	const char *target = stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/tmp" : "/";
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
	char buf[8192];
	size_t len = 0;
	int fds[2], status = 0;
	struct timespec t0, now;
	pid_t pid;

	/* Without root, a FUSE mount in a user namespace of our own might
	 * be offered other flags than the mount fusermount3 makes: do not
	 * guess (INIT still decides). */
	if (!uring_cap_effective(CAP_SYS_ADMIN)) {
		snprintf(o->why_unknown, sizeof(o->why_unknown), "not root "
			 "(CAP_SYS_ADMIN), no probe mount");
		return;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(o->why_unknown, sizeof(o->why_unknown), "pipe: %s",
			 strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		probe_child(fds[1], uid, gid, target);
	}
	close(fds[1]);
	if (pid < 0) {
		snprintf(o->why_unknown, sizeof(o->why_unknown), "fork: %s",
			 strerror(errno));
		close(fds[0]);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		long left;
		ssize_t r;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = PROBE_TIMEOUT_MS + 1000 - ((now.tv_sec - t0.tv_sec) * 1000 +
						  (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || len == sizeof(buf))
			break;
		if (poll(&pfd, 1, (int)left) <= 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		r = read(fds[0], buf + len, sizeof(buf) - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fds[0]);
	kill(pid, SIGKILL); /* our own child, by its pid; gone already, or hung */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (len)
		parse_init(buf, len, o);
	else if (WIFEXITED(status))
		snprintf(o->why_unknown, sizeof(o->why_unknown), "%s",
			 child_failed(WEXITSTATUS(status)));
	else
		snprintf(o->why_unknown, sizeof(o->why_unknown),
			 "the probe did not finish");
}

const struct fring_kernel_offer *fring_kernel_offer(void)
{
	static struct fring_kernel_offer offer;
	static int done;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&lock);
	if (!done) {
		probe(&offer);
		done = 1;
		if (offer.known)
			fring_dbg("kernel: FUSE %u.%u, INIT offers 0x%llx", offer.major,
				  offer.minor, (unsigned long long)offer.capable);
		else
			fring_dbg("kernel: what INIT offers is unknown before "
				  "mounting: %s", offer.why_unknown);
	}
	pthread_mutex_unlock(&lock);
	return &offer;
}

/* ---- the facts of this machine ---- */

static uint64_t mem_total(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	unsigned long long kb = 0;
	char line[128];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

static int linux_7_3(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 0;
	return major > 7 || (major == 7 && minor >= 3);
}

void fring_kernel_facts_get(const struct fring_cfg_transport *t,
			    struct fring_kernel_facts *k)
{
	int n = fring_uring_possible_cpus(), reduced = 0;
	char what[96];

	memset(k, 0, sizeof(*k));
	k->uring_enabled = fring_uring_enabled();
	k->pools_likely = linux_7_3();
	k->cap_sys_admin = uring_cap_effective(CAP_SYS_ADMIN);
	k->qids = n > 0 ? (uint32_t)n : 0;
	k->mem_total = mem_total();
	if (t->mode == FRING_MODE_DEVFUSE)
		return;
	/* Ask the kernel only when the answer matters: something must be
	 * served, or the memory may be worth a warning. */
	if (t->mode == FRING_MODE_URING || t->bufpool == FRING_ON ||
	    t->zero_copy == FRING_ON) {
		k->offer = fring_kernel_offer();
	} else {
		k->pools_likely = 0; /* the most it can pin */
		if (fring_kernel_pinned(t, k, what, sizeof(what)) >
		    fring_kernel_pinned_threshold(k->mem_total))
			k->offer = fring_kernel_offer();
		k->pools_likely = linux_7_3();
	}
	/* The layout on this machine (reduced queues: a thread each). */
	if (k->offer && k->offer->known) {
		char why[160];

		reduced = fring_uring_reduced_queues(t->reduced_queues,
						     k->offer->capable,
						     k->offer->minor, why,
						     sizeof(why));
	}
	k->busiest = uring_layout_busiest(t->queues, t->cpus, reduced);
}
