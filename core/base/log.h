// SPDX-License-Identifier: MIT
/*
 * Runtime logging to stderr: "fring: LEVEL: message". The level threshold
 * comes from FRING_LOG (error|warn|info|debug, default info; anything else
 * is reported once and means info).
 */
#ifndef FRING_LOG_H
#define FRING_LOG_H

#include <stddef.h>

#include <fring/plugin.h>

void fring_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int fring_log_enabled(int level);

/* At most one line per `key` every few seconds, with a count of the lines
 * suppressed meanwhile (for malformed requests, misbehaving plugins). */
void fring_log_ratelimited(const char *key, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define fring_err(...) fring_log(FRING_LOG_ERROR, __VA_ARGS__)
#define fring_warn(...) fring_log(FRING_LOG_WARN, __VA_ARGS__)
#define fring_info(...) fring_log(FRING_LOG_INFO, __VA_ARGS__)
#define fring_dbg(...) fring_log(FRING_LOG_DEBUG, __VA_ARGS__)

/* Error lines this thread logs between start and stop are kept in
 * `lines` instead of printed, so a caller can fold a plugin's reasons into
 * its own one-line error. stop prints them if `print` (nothing went
 * wrong after all), then frees them. */
struct fring_log_capture {
	char **lines;
	size_t n;
};
void fring_log_capture_start(struct fring_log_capture *c);
void fring_log_capture_stop(struct fring_log_capture *c, int print);

/* asprintf that returns NULL on failure; for the char **err convention. */
char *fring_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* FRING_LOG_H */
