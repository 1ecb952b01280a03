// SPDX-License-Identifier: MIT
/*
 * Latency histograms (core/request/latency.c): every value lands in the
 * bucket whose bounds hold it, bounds within 25%, and quantiles from
 * known samples.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "request/latency.h"

Test(latency, each_value_in_its_bucket_bounds_within_25_percent)
{
	uint64_t prev = 0;

	for (unsigned b = 0; b < FRING_LAT_BUCKETS - 1; b++) {
		uint64_t up = fring_lat_upper(b);

		cr_assert_gt(up, prev, "bucket %u not above %u", b, b - 1);
		cr_assert_eq(fring_lat_bucket(up), b, "upper of %u", b);
		cr_assert_eq(fring_lat_bucket(up + 1), b + 1, "past %u", b);
		if (b > 0)
			cr_assert_leq((up + 1) * 4, (prev + 1) * 5,
				      "bucket %u wider than 25%%", b);
		prev = up;
	}
	cr_assert_eq(fring_lat_bucket(0), 0);
	cr_assert_eq(fring_lat_bucket(UINT64_MAX), FRING_LAT_BUCKETS - 1);
	cr_assert_eq(fring_lat_upper(FRING_LAT_BUCKETS - 1), UINT64_MAX);
}

Test(latency, quantiles_of_known_samples)
{
	static struct fring_lat shards[2];
	struct fring_lat_sum s;

	memset(shards, 0, sizeof(shards));
	/* 990 at 10 us and 9 at 1 ms over two shards, 1 at 1 s. */
	for (int i = 0; i < 990; i++)
		fring_lat_record(&shards[i & 1], FUSE_READ, 10000);
	for (int i = 0; i < 9; i++)
		fring_lat_record(&shards[1], FUSE_READ, 1000000);
	fring_lat_record(&shards[0], FUSE_READ, 1000000000);
	fring_lat_sum_op(shards, 2, FUSE_READ, &s);
	cr_assert_eq(s.count, 1000);
	cr_assert_eq(s.sum_ns, 990ull * 10000 + 9ull * 1000000 + 1000000000);
	cr_assert_eq(fring_lat_quantile(&s, 5000),
		     fring_lat_upper(fring_lat_bucket(10000)));
	cr_assert_eq(fring_lat_quantile(&s, 9900),
		     fring_lat_upper(fring_lat_bucket(10000)));
	cr_assert_eq(fring_lat_quantile(&s, 9990),
		     fring_lat_upper(fring_lat_bucket(1000000)));
	cr_assert_eq(fring_lat_quantile(&s, 10000),
		     fring_lat_upper(fring_lat_bucket(1000000000)));
	fring_lat_sum_op(shards, 2, FUSE_WRITE, &s);
	cr_assert_eq(s.count, 0);
	cr_assert_eq(fring_lat_quantile(&s, 5000), 0);
}
