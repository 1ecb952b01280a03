// SPDX-License-Identifier: MIT
/*
 * A cheap CLOCK_MONOTONIC for the per-request hot path (latency
 * histograms, heartbeats): nanoseconds from the TSC when the kernel itself
 * keeps time with it (clocksource "tsc": invariant and synchronised across
 * CPUs, or the kernel would have switched away), else clock_gettime(2).
 * rdtsc costs about 9 ns where the vDSO clock_gettime costs 20 (Intel
 * Xeon VM, measured); two reads per request are the price of the
 * latency statistics. Before fring_clock_init, and off x86-64, every read
 * is clock_gettime.
 */
#ifndef FRING_BASE_CLOCK_H
#define FRING_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

struct fring_clock {
	uint64_t tsc0, ns0; /* a TSC reading and its CLOCK_MONOTONIC ns */
	uint64_t mult;      /* ns per TSC tick, fixed point: << 32 */
	int use_tsc;
};
extern struct fring_clock fring_clock;

/* Decide the source once per process (calibrating the TSC against
 * CLOCK_MONOTONIC for 2 ms when it is used); thread-safe, idempotent. */
void fring_clock_init(void);

static inline uint64_t fring_clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Monotonic nanoseconds, on CLOCK_MONOTONIC's scale (drifting from it by
 * the calibration error, a few ppm). */
static inline uint64_t fring_clock_ns(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(__atomic_load_n(&fring_clock.use_tsc,
					     __ATOMIC_ACQUIRE),
			     1)) {
		uint64_t d = __rdtsc() - fring_clock.tsc0;

		return fring_clock.ns0 +
		       (uint64_t)(((unsigned __int128)d * fring_clock.mult) >>
				  32);
	}
#endif
	return fring_clock_mono_ns();
}

#endif /* FRING_BASE_CLOCK_H */
