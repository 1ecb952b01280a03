// SPDX-License-Identifier: MIT
/*
 * Control sockets: a local stream socket per served thing (the statistics
 * of a mount, a supervisor) in the runtime directory, $FRING_RUNTIME_DIR
 * or /run/fring (created 0700). The socket is 0600 and every accepted
 * peer's SO_PEERCRED is checked: root or the uid that made the socket,
 * anyone else is refused and logged. The exchange is line based: the
 * client writes one request line, the server answers with text and closes.
 * Functions return a value >= 0 or -errno.
 */
#ifndef FRING_BASE_CTL_SOCK_H
#define FRING_BASE_CTL_SOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FRING_CTL_DIR_DEFAULT "/run/fring"
/* What a refused peer reads before the server closes. */
#define FRING_CTL_REFUSED "error: refused: "
/* How long either side waits on a quiet peer. */
#define FRING_CTL_TIMEOUT_MS 2000

struct fring_ctl_server {
	int fd;
	uid_t owner;
	char path[108]; /* sizeof(sun_path) */
};

/* 64-bit FNV-1a, the key's name in the socket's path. */
uint64_t fring_ctl_hash(const char *key);
/* The runtime directory's path into buf; create makes it (0700) if absent. */
int fring_ctl_dir(char *buf, size_t len, int create);
/* <dir>/<kind>-<16 hex digits of fring_ctl_hash(key)>.sock; creates the
 * directory if create. */
int fring_ctl_path(char *buf, size_t len, const char *kind, const char *key,
		   int create);

/* Bind and listen on path (non-blocking, close-on-exec). A socket file
 * already there is unlinked only if nobody answers on it (-EADDRINUSE if
 * someone does); anything else there is left alone (-EEXIST). */
int fring_ctl_listen(struct fring_ctl_server *s, const char *path);
/* The next connection, with send/receive timeouts set. A peer that is
 * neither root nor s->owner reads FRING_CTL_REFUSED..., is closed, logged
 * (pid and uid), and -EACCES is returned; -EAGAIN when none is waiting. */
int fring_ctl_accept(struct fring_ctl_server *s);
/* Close the socket and unlink its path. */
void fring_ctl_close(struct fring_ctl_server *s);

/* A connected client fd (with timeouts), or -errno (-ENOENT: no socket,
 * -ECONNREFUSED: a stale one). */
int fring_ctl_connect(const char *path);

/* One line (without its '\n', NUL-terminated) from fd; -EMSGSIZE if it
 * does not fit, -ENODATA on end of file before any byte. */
int fring_ctl_read_line(int fd, char *buf, size_t len);
int fring_ctl_write_all(int fd, const char *data, size_t n);
/* Everything fd sends until end of file, NUL-terminated, in *out (malloc). */
int fring_ctl_read_all(int fd, char **out, size_t *n);

/* Client side in one: connect to path, send request + '\n', read the whole
 * answer into *reply (malloc, NUL-terminated). -EACCES if the server
 * refused us (*reply then holds its line). */
int fring_ctl_call(const char *path, const char *request, char **reply);

#endif /* FRING_BASE_CTL_SOCK_H */
