// SPDX-License-Identifier: MIT
/*
 * The CPU price of the latency statistics per request (issue 27): the
 * statements a request runs with `stats: {enabled: true}` beyond those it
 * runs without, timed in a loop, against the counters every request
 * updates either way. The statements are the runtime's own inline code
 * (request/latency.h, base/clock.h, base/heartbeat.c), in the order
 * runtime/dispatch.c and request/request.c run them: a queue thread wakes
 * (fring_hb_busy) with a batch of requests, and for each, at dispatch,
 * counts it and takes its start (fring_hb_woke), and at the reply counts
 * that and records the latency.
 *
 *   build/bench/stats/price [REQUESTS] [BATCH]
 *
 * prints ns per request without and with the statistics, and the
 * difference. A loop keeps the histograms in cache, which the real
 * server does not: the figure is the price's floor in instructions, the
 * bench run (bench/run --fring-stats-off) the whole of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/heartbeat.h"
#include "request/latency.h"
#include "request/stats.h"

static struct fring_stats shards[FRING_STAT_SHARDS];
static struct fring_lat lat[FRING_STAT_SHARDS];

/* What every request costs in counters, statistics on or off. */
static inline void counters(unsigned q, unsigned op)
{
	atomic_fetch_add_explicit(&shards[q].requests[op], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&shards[q].replies, 1, memory_order_relaxed);
}

static double run(unsigned long n, unsigned batch, int on)
{
	uint64_t t0 = fring_clock_mono_ns();

	for (unsigned long i = 0; i < n;) {
		fring_hb_busy();
		for (unsigned b = 0; b < batch && i < n; b++, i++) {
			unsigned op = FUSE_READ + (unsigned)(i & 1);
			uint64_t start = 0;

			counters(0, op);
			if (on) {
				start = fring_hb_woke();
				if (!start)
					start = fring_lat_now();
				fring_lat_record(&lat[0], op,
						 fring_lat_now() - start);
			}
		}
		fring_hb_idle();
	}
	return (double)(fring_clock_mono_ns() - t0) / (double)n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000000ul;
	unsigned batch = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 4;
	double off[5], on[5], d[5];

	if (!n || !batch) {
		fprintf(stderr, "usage: price [REQUESTS] [BATCH]\n");
		return 2;
	}
	fring_hb_enter(); /* calibrates the clock, as a queue thread does */
	run(n / 10, batch, 1); /* warm-up */
	for (int r = 0; r < 5; r++) { /* interleaved rounds */
		off[r] = run(n, batch, 0);
		on[r] = run(n, batch, 1);
		d[r] = on[r] - off[r];
	}
	qsort(off, 5, sizeof(double), cmp);
	qsort(on, 5, sizeof(double), cmp);
	qsort(d, 5, sizeof(double), cmp);
	printf("requests %lu x 5 rounds, batch %u, clock %s\n", n, batch,
	       fring_clock.use_tsc ? "tsc" : "clock_gettime");
	printf("ns per request: statistics off %.1f, on %.1f, price %.1f "
	       "(medians)\n",
	       off[2], on[2], d[2]);
	fring_hb_leave();
	return 0;
}
