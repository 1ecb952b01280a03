// SPDX-License-Identifier: MIT
/* Runtime logging; see log.h. */
#define _GNU_SOURCE
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Read lazily from FRING_LOG by whichever thread logs first (queue
 * threads may race for it: TSan saw it), so atomic; a repeat is harmless. */
static _Atomic int log_threshold = -1;

/* This thread's capture, if one is running (fring_log_capture_start). */
static __thread struct fring_log_capture *capture;

static int threshold(void)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	int cur = atomic_load_explicit(&log_threshold, memory_order_relaxed);

	if (cur < 0) {
		const char *e = getenv("FRING_LOG");
		int t = -1;

		for (int i = 0; e && i < 4; i++)
			if (!strcasecmp(e, names[i]))
				t = i; /* FRING_LOG_ERROR..FRING_LOG_DEBUG */
		cur = t < 0 ? FRING_LOG_INFO : t;
		/* A typo must not silently keep the default (said once). */
		if (atomic_exchange(&log_threshold, cur) < 0 && t < 0 && e && *e)
			fprintf(stderr, "fring: warning: FRING_LOG=%s is not a log "
				"level (expected error, warn, info or debug); "
				"using info\n", e);
	}
	return cur;
}

int fring_log_enabled(int level)
{
	return level <= threshold();
}

static const char *level_name(int level)
{
	switch (level) {
	case FRING_LOG_ERROR: return "error";
	case FRING_LOG_WARN: return "warning";
	case FRING_LOG_INFO: return "info";
	default: return "debug";
	}
}

static void vlog(int level, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (capture && level == FRING_LOG_ERROR) {
		char **grown = realloc(capture->lines, (capture->n + 1) *
				       sizeof(*grown));
		char *line = strdup(buf);

		if (grown)
			capture->lines = grown;
		if (grown && line) {
			capture->lines[capture->n++] = line;
			return;
		}
		free(line); /* out of memory: print it after all */
	}
	/* One fprintf per line so lines from several threads do not mix. */
	fprintf(stderr, "fring: %s: %s\n", level_name(level), buf);
}

void fring_log_capture_start(struct fring_log_capture *c)
{
	memset(c, 0, sizeof(*c));
	capture = c;
}

void fring_log_capture_stop(struct fring_log_capture *c, int print)
{
	if (capture == c)
		capture = NULL;
	for (size_t i = 0; i < c->n; i++) {
		if (print)
			fprintf(stderr, "fring: %s: %s\n",
				level_name(FRING_LOG_ERROR), c->lines[i]);
		free(c->lines[i]);
	}
	free(c->lines);
	memset(c, 0, sizeof(*c));
}

void fring_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (!fring_log_enabled(level))
		return;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

#define RL_SLOTS 32
#define RL_INTERVAL_S 5

static struct {
	const char *key;
	time_t last;
	unsigned long suppressed;
} rl[RL_SLOTS];
static pthread_mutex_t rl_lock = PTHREAD_MUTEX_INITIALIZER;

void fring_log_ratelimited(const char *key, int level, const char *fmt, ...)
{
	struct timespec now;
	unsigned long dropped = 0;
	int emit = 0, i, slot = -1;
	va_list ap;

	if (!fring_log_enabled(level))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&rl_lock);
	for (i = 0; i < RL_SLOTS; i++) {
		if (rl[i].key == key || (rl[i].key && !strcmp(rl[i].key, key))) {
			slot = i;
			break;
		}
		if (!rl[i].key && slot < 0)
			slot = i;
	}
	if (slot < 0)
		slot = 0; /* table full: share the first slot */
	if (!rl[slot].key || strcmp(rl[slot].key, key)) {
		rl[slot].key = key;
		rl[slot].last = 0;
		rl[slot].suppressed = 0;
	}
	if (now.tv_sec - rl[slot].last >= RL_INTERVAL_S || !rl[slot].last) {
		emit = 1;
		dropped = rl[slot].suppressed;
		rl[slot].suppressed = 0;
		rl[slot].last = now.tv_sec ? now.tv_sec : 1;
	} else {
		rl[slot].suppressed++;
	}
	pthread_mutex_unlock(&rl_lock);
	if (!emit)
		return;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
	if (dropped)
		fring_log(level, "(%lu similar messages suppressed)", dropped);
}

char *fring_strf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}
