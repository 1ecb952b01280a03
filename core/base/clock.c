// SPDX-License-Identifier: MIT
/* The TSC's calibration; see clock.h. */
#include "clock.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct fring_clock fring_clock;

#define CLOCKSOURCE \
	"/sys/devices/system/clocksource/clocksource0/current_clocksource"
#define CALIBRATE_NS 2000000ull       /* at least */
#define CALIBRATE_MAX_NS 100000000ull /* at most */

/* Does the kernel keep time with the TSC? */
static int kernel_uses_tsc(void)
{
	char buf[32] = "";
	FILE *f = fopen(CLOCKSOURCE, "re");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strcmp(buf, "tsc\n") == 0;
}

#if defined(__x86_64__)
/* A TSC reading and the CLOCK_MONOTONIC time between the two
 * clock_gettime calls around it, the tightest of 5 tries; returns how far
 * apart those calls were (the reading's uncertainty). */
static uint64_t pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t a = fring_clock_mono_ns(), t = __rdtsc();
		uint64_t w = fring_clock_mono_ns() - a;

		if (w < best) {
			best = w;
			*tsc = t;
			*ns = a + w / 2;
		}
	}
	return best;
}

/* Long enough that the two readings' uncertainty is under 10^-4 of the
 * interval: 2 ms where clock_gettime is a vDSO call, up to 100 ms where
 * it is slow (valgrind). */
static void calibrate(void)
{
	uint64_t t0, n0, t1, n1, w0, w1;

	if (!kernel_uses_tsc())
		return;
	w0 = pair(&t0, &n0);
	do
		w1 = pair(&t1, &n1);
	while (n1 - n0 < CALIBRATE_NS ||
	       ((w0 + w1) * 10000 > n1 - n0 && n1 - n0 < CALIBRATE_MAX_NS));
	if (t1 <= t0)
		return;
	fring_clock.mult = (uint64_t)((((unsigned __int128)(n1 - n0)) << 32) /
				      (t1 - t0));
	fring_clock.tsc0 = t1;
	fring_clock.ns0 = n1;
	/* Published last: a reader that sees use_tsc sees the rest (the
	 * pthread_once of fring_clock_init orders it for its callers). */
	__atomic_store_n(&fring_clock.use_tsc, fring_clock.mult != 0,
			 __ATOMIC_RELEASE);
}
#else
static void calibrate(void)
{
}
#endif

void fring_clock_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, calibrate);
}
