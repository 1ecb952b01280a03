// SPDX-License-Identifier: MIT
/* Size and boolean parsing shared by the config schema, the plugin host
 * table and the CLI. Parsed by hand: strtoull would accept leading
 * whitespace and silently negate "-1". */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"

/* Binary multiplier shift for K, M, G, T, P, E, or -1. */
static int unit_shift(char c)
{
	static const char units[] = "KMGTPE";
	const char *u;

	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	u = c ? strchr(units, c) : NULL;
	return u ? (int)(u - units + 1) * 10 : -1;
}

/* Digits, then nothing, "B", or a unit as "K", "KB" or "KiB" (any case).
 * All units are binary. Returns -EINVAL for bad syntax, -ERANGE when the
 * result does not fit in 64 bits. */
int fring_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int shift = 0;
	const char *p = s;

	if (!s || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p && strcasecmp(p, "B")) {
		shift = unit_shift(*p);
		if (shift < 0)
			return -EINVAL;
		p++;
		if (*p && strcasecmp(p, "B") && strcasecmp(p, "iB"))
			return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

int fring_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

int fring_parse_cpulist(const char *s, int **out)
{
	int *cpus = NULL, n = 0, cap = 0;

	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b;

		/* Ids are ints: past INT_MAX, b - a + 1 would overflow too. */
		if (end == s || a < 0 || a > INT_MAX)
			goto bad;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a || b > INT_MAX)
				goto bad;
			s = end;
		}
		if (b - a + 1 > 65536 - n)
			goto bad;
		for (long c = a; c <= b; c++) {
			if (n == cap) {
				int *nc;

				cap = cap ? cap * 2 : 16;
				nc = realloc(cpus, sizeof(*cpus) * cap);
				if (!nc) {
					free(cpus);
					return -ENOMEM;
				}
				cpus = nc;
			}
			cpus[n++] = (int)c;
		}
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			goto bad;
	}
	if (!n)
		goto bad;
	*out = cpus;
	return n;
bad:
	free(cpus);
	return -EINVAL;
}
