// SPDX-License-Identifier: MIT
/*
 * mount.fring SOURCE MOUNTPOINT [-sfnv] [-o OPTIONS] [-t TYPE]: mount(8)'s
 * helper for `mount -t fring` and fstab lines, as mount.fuse3 is for
 * fuse. The fring binary runs as this when called by that name (a link).
 *
 * SOURCE is a YAML file with one mount (on MOUNTPOINT), PLUGIN#SOURCE (a
 * plugin whose `source` option is SOURCE: passthrough#/srv/data) or a
 * PLUGIN alone. The words of OPTIONS are mount options (the mount_options
 * words of fring.yaml(5)), plugin options (KEY=VALUE), or words for mount
 * and systemd that are passed over (defaults, auto, noauto, user[=NAME],
 * nouser, users, owner, group, nofail, _netdev, relatime, x-*, X-*,
 * comment=*). A YAML source takes only those, and rw, which mount(8)
 * puts first in every -o it hands a helper.
 *
 * The helper starts `fring mount ...` (or `fring run FILE`) in a session
 * of its own and returns 0 once that serves (its READY=1 on a private
 * NOTIFY_SOCKET, notify.c), or the server's exit status once it died
 * before (its error on our stderr; it mounts nothing on an error).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../config/config.h"
#include "cli.h"

#define HELPER "mount.fring"
#define READY_S 120 /* the longest a mount may take to serve */
#define MAX_ARGS 256

struct helper {
	const char *source, *mountpoint, *opts;
	int sloppy, fake, verbose;
	char *argv[MAX_ARGS];
	int argc;
	char *owned[MAX_ARGS]; /* strings argv points to that we made */
	int nowned;
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs(HELPER ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_EXIT_ERR;
}

static int usage(const char *what)
{
	fprintf(stderr, "%s: %s\n", HELPER, what);
	fputs("usage: " HELPER " SOURCE MOUNTPOINT [-sfnv] [-o OPTIONS]\n"
	      "  SOURCE: FILE.yaml (one mount), PLUGIN#SOURCE or PLUGIN\n",
	      stderr);
	return CLI_EXIT_USAGE;
}

static int add_arg(struct helper *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int add_arg(struct helper *h, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (h->argc + 1 >= MAX_ARGS || h->nowned >= MAX_ARGS)
		return -E2BIG;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	h->owned[h->nowned++] = s;
	h->argv[h->argc++] = s;
	h->argv[h->argc] = NULL;
	return 0;
}

/* "-o VALUE" and the like: two arguments. */
static int add_pair(struct helper *h, const char *flag, const char *value)
{
	int rc = add_arg(h, "%s", flag);

	return rc ? rc : add_arg(h, "%s", value);
}

/* Words for mount(8) and systemd, not for the mount itself. */
static int passed_over(const char *w)
{
	static const char *const words[] = {
		"defaults", "auto",  "noauto", "user",   "nouser",
		"users",    "owner", "group",  "nofail", "_netdev",
	};

	if (!strncmp(w, "x-", 2) || !strncmp(w, "X-", 2) ||
	    !strncmp(w, "comment=", 8) || !strncmp(w, "user=", 5) ||
	    !strcmp(w, "relatime"))
		return 1;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(w, words[i]))
			return 1;
	return 0;
}

static int is_yaml(const char *source)
{
	size_t n = strlen(source);

	return (n > 5 && !strcmp(source + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(source + n - 4, ".yml"));
}

/* A YAML source: one mount, on the mountpoint mount(8) was given. */
static int check_yaml(const struct helper *h)
{
	struct fring_config *cfg = NULL;
	char *err = NULL, a[PATH_MAX], b[PATH_MAX];
	int rc;

	if (fring_config_load(h->source, &cfg, &err)) {
		rc = fail("%s", err ? err : "cannot read the file");
		free(err);
		return rc;
	}
	if (cfg->nr_mounts != 1)
		rc = fail("%s: has %zu mounts; a mount line serves one",
			  h->source, cfg->nr_mounts);
	else if (!realpath(cfg->mounts[0].mountpoint, a) ||
		 !realpath(h->mountpoint, b) || strcmp(a, b))
		rc = fail("%s: mounts %s, not %s", h->source,
			  cfg->mounts[0].mountpoint, h->mountpoint);
	else
		rc = 0;
	fring_config_free(cfg);
	return rc;
}

/* The fring command line that serves what mount(8) asked for. */
static int build(struct helper *h)
{
	char *opts = strdup(h->opts ? h->opts : ""), *w, *save = NULL;
	const char *hash = strchr(h->source, '#');
	int yaml = !hash && is_yaml(h->source), rc = 0;

	if (!opts)
		return fail("out of memory");
	h->argc = 0;
	rc = add_pair(h, "fring", yaml ? "run" : "mount");
	if (!rc && yaml)
		rc = add_arg(h, "%s", h->source);
	else if (!rc)
		rc = add_arg(h, "%.*s",
			     (int)(hash ? hash - h->source
					: (long)strlen(h->source)),
			     h->source);
	if (!rc && !yaml)
		rc = add_arg(h, "%s", h->mountpoint);
	if (!rc && hash && hash[1]) {
		rc = add_arg(h, "-o");
		rc = rc ? rc : add_arg(h, "source=%s", hash + 1);
	}
	for (w = strtok_r(opts, ",", &save); !rc && w;
	     w = strtok_r(NULL, ",", &save)) {
		if (passed_over(w) || (yaml && !strcmp(w, "rw")))
			continue;
		if (yaml) {
			rc = h->sloppy ? 0
				       : fail("'%s': with a YAML file as the "
					      "source, options go in the file",
					      w);
			continue;
		}
		if (fring_cfg_mount_option_known(w))
			rc = add_pair(h, "-O", w);
		else if (strchr(w, '=') && w[0] != '=')
			rc = add_pair(h, "-o", w);
		else if (!h->sloppy)
			rc = fail("unknown option '%s' (a mount option of "
				  "fring.yaml(5), or KEY=VALUE for the plugin)",
				  w);
	}
	free(opts);
	if (rc < 0)
		return fail("%s", strerror(-rc));
	if (!rc && yaml)
		rc = check_yaml(h);
	return rc;
}

/* A private abstract NOTIFY_SOCKET; its name into name (for setenv). */
static int notify_socket(char *name, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct timespec ts;
	socklen_t sl;

	if (fd < 0)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(name, len, "@fring-mount-%d-%ld", (int)getpid(), ts.tv_nsec);
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%s", name + 1);
	sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	if (bind(fd, (struct sockaddr *)&sa, sl) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* Where the server's stderr goes. A socket (the journal, when systemd
 * runs mount(8)) or a file it keeps. A terminal or a pipe only through
 * *relay until it serves: a daemon must not hold them (a caller reading
 * mount's output to its end would wait for ever), so what it logs later
 * is dropped there, as libfuse's daemonize does (SIGPIPE is ignored in
 * fring). -1: inherit. */
static int stderr_pipe(int *relay)
{
	struct stat st;
	int p[2];

	*relay = -1;
	if (fstat(2, &st) == 0 && (S_ISSOCK(st.st_mode) || S_ISREG(st.st_mode)))
		return -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	*relay = p[0];
	return p[1];
}

/* The server, in a session of its own, its stdin and stdout on /dev/null,
 * its stderr err (-1: ours). */
static pid_t start(struct helper *h, const char *notify, int err)
{
	pid_t pid = fork();
	int null;

	if (pid)
		return pid;
	setsid();
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
	}
	if (err >= 0)
		dup2(err, 2);
	setenv("NOTIFY_SOCKET", notify, 1);
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	execv("/proc/self/exe", h->argv);
	fprintf(stderr, HELPER ": running fring: %s\n", strerror(errno));
	_exit(CLI_EXIT_ERR);
}

/* The server's stderr so far, to ours. */
static void relay_out(int relay)
{
	char buf[4096];
	ssize_t n;

	while (relay >= 0 && (n = read(relay, buf, sizeof(buf))) > 0)
		if (write(2, buf, (size_t)n) < 0)
			break;
}

/* READY=1, or the server's end. */
static int wait_ready(int sock, pid_t pid, int relay)
{
	time_t deadline = time(NULL) + READY_S;
	char buf[4096];
	int st;

	if (relay >= 0)
		fcntl(relay, F_SETFL, O_NONBLOCK);
	while (time(NULL) < deadline) {
		struct pollfd p[2] = { { .fd = sock, .events = POLLIN },
				       { .fd = relay, .events = POLLIN } };
		ssize_t n;

		if (poll(p, 2, 100) > 0 &&
		    (n = recv(sock, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
			buf[n] = '\0';
			if (!strncmp(buf, "READY=1", 7) ||
			    strstr(buf, "\nREADY=1")) {
				relay_out(relay);
				return CLI_EXIT_OK;
			}
		}
		relay_out(relay);
		if (waitpid(pid, &st, WNOHANG) == pid) {
			relay_out(relay);
			if (WIFEXITED(st) && WEXITSTATUS(st))
				return WEXITSTATUS(st);
			return fail("fring ended before it served (%s)",
				    WIFSIGNALED(st) ? strsignal(WTERMSIG(st))
						    : "exit 0");
		}
	}
	kill(pid, SIGTERM); /* it unmounts what it mounted */
	return fail("no mount served within %d s; stopped it", READY_S);
}

int cli_mount_helper(int argc, char **argv)
{
	struct helper h = { 0 };
	char notify[64];
	int rc, sock, c, pos = 0, err, relay;
	pid_t pid;

	/* mount(8) puts SOURCE and MOUNTPOINT first, then its flags. */
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' || !argv[i][1]) {
			if (pos == 0)
				h.source = argv[i];
			else if (pos == 1)
				h.mountpoint = argv[i];
			else
				return usage("too many arguments");
			pos++;
			continue;
		}
		if (!strcmp(argv[i], "-N"))
			return usage("-N: mounting in another namespace is not "
				     "supported");
		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "-t")) {
			if (i + 1 >= argc)
				return usage("an option needs a value");
			if (argv[i][1] == 'o') /* -t: fring, whatever it says */
				h.opts = argv[i + 1];
			i++;
			continue;
		}
		for (const char *f = argv[i] + 1; (c = *f); f++) {
			if (c == 's')
				h.sloppy = 1;
			else if (c == 'f')
				h.fake = 1;
			else if (c == 'v')
				h.verbose = 1;
			else if (c != 'n')
				return usage("unknown flag");
		}
	}
	if (pos != 2)
		return usage("SOURCE and MOUNTPOINT are required");
	rc = build(&h);
	if (!rc && h.verbose) {
		fputs(HELPER ":", stderr);
		for (int i = 0; i < h.argc; i++)
			fprintf(stderr, " %s", h.argv[i]);
		fputc('\n', stderr);
	}
	if (rc || h.fake)
		goto out;
	sock = notify_socket(notify, sizeof(notify));
	if (sock < 0) {
		rc = fail("a socket for the server's readiness: %s",
			  strerror(-sock));
		goto out;
	}
	err = stderr_pipe(&relay);
	pid = start(&h, notify, err);
	if (err >= 0)
		close(err);
	if (pid < 0)
		rc = fail("fork: %s", strerror(errno));
	else
		rc = wait_ready(sock, pid, relay);
	close(sock);
	if (relay >= 0)
		close(relay);
out:
	for (int i = 0; i < h.nowned; i++)
		free(h.owned[i]);
	return rc;
}
