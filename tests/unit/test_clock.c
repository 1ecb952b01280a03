// SPDX-License-Identifier: MIT
/*
 * The cheap clock (core/base/clock.c): it uses the TSC exactly when the
 * kernel's clocksource is "tsc", keeps CLOCK_MONOTONIC's scale (the
 * calibration holds over a sleep, within 0.1%), and never goes back on
 * one thread.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "base/clock.h"

static int kernel_clocksource_is_tsc(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/"
			"current_clocksource",
			"r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	return strcmp(buf, "tsc\n") == 0;
}

Test(clock, tsc_used_exactly_when_the_kernel_uses_it)
{
	fring_clock_init();
#if defined(__x86_64__)
	cr_assert_eq(fring_clock.use_tsc, kernel_clocksource_is_tsc());
#else
	cr_assert_eq(fring_clock.use_tsc, 0);
#endif
}

Test(clock, keeps_clock_monotonic_scale)
{
	struct timespec nap = { 0, 200 * 1000 * 1000 };
	uint64_t m0, c0, m1, c1, dm, dc;

	fring_clock_init();
	m0 = fring_clock_mono_ns();
	c0 = fring_clock_ns();
	nanosleep(&nap, NULL);
	c1 = fring_clock_ns();
	m1 = fring_clock_mono_ns();
	dm = m1 - m0;
	dc = c1 - c0;
	cr_assert_geq(dm, 200000000ull);
	/* The cheap interval lies inside the monotonic one, but for 0.1%. */
	cr_assert_leq(dc, dm + dm / 1000, "clock %llu ns, monotonic %llu ns",
		      (unsigned long long)dc, (unsigned long long)dm);
	cr_assert_geq(dc + dm / 1000, dm - 100000,
		      "clock %llu ns, monotonic %llu", (unsigned long long)dc,
		      (unsigned long long)dm);
	/* Same scale, not just same rate: within 1 ms of CLOCK_MONOTONIC. */
	cr_assert_leq(c1 > m1 ? c1 - m1 : m1 - c1, 1000000ull);
}

Test(clock, never_goes_back_on_one_thread)
{
	uint64_t prev;

	fring_clock_init();
	prev = fring_clock_ns();
	for (int i = 0; i < 1000000; i++) {
		uint64_t now = fring_clock_ns();

		cr_assert_geq(now, prev, "went back at read %d", i);
		prev = now;
	}
}
