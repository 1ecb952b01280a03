// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD shim that lets Criterion run under ThreadSanitizer
 * (tests/tools/tsan.sh; not linked into anything).
 *
 * Criterion's BoxFort (built into libcriterion.so) maps each of its shared
 * arenas with MAP_FIXED at 0x2000_0000_0000 + (rand_r() & 0x3fffff) * 16 MiB,
 * skipping addresses mincore() finds mapped, and gives up after 10 tries.
 * TSan reserves nearly all of 0x2000_0000_0000..0x6000_0000_0000 for its
 * shadow, meta and PROT_NONE guard ranges; only the PIE window
 * 0x5500_0000_0000..0x5680_0000_0000 is application memory. So a test
 * binary either dies with "Could not initialize inheritable arena:
 * Resource temporarily unavailable" or, when the second arena (the
 * sandbox context) misses, with a SEGV inside libcriterion
 * (Snaipe/Criterion issue #274, open since 2018).
 *
 * This rand_r answers callers inside libcriterion with numbers whose slot
 * lies in 0x5660_0000_0000..0x567f_0000_0000 (still random: the real rand_r
 * on the caller's seed picks the slot), above every PIE load address at
 * vm.mmap_rnd_bits <= 28 (0x5555_5555_4000 + 2^28 pages) and below TSan's
 * guard at 0x5680_0000_0000. Every other caller (the unit tests use
 * rand_r too) gets glibc's rand_r unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BASE 0x200000000000ull /* BoxFort's mmap_base */
#define ARENA_SLOT_SHIFT 24          /* BoxFort's mmap_off: 16 MiB */
#define SLOT(addr) (int)(((addr) - ARENA_BASE) >> ARENA_SLOT_SHIFT)

int rand_r(unsigned *seed)
{
	static int (*real)(unsigned *);
	Dl_info info;
	int r;

	if (!real)
		real = (int (*)(unsigned *))dlsym(RTLD_NEXT, "rand_r");
	r = real(seed);
	if (dladdr(__builtin_return_address(0), &info) && info.dli_fname &&
	    strstr(info.dli_fname, "libcriterion"))
		r = SLOT(0x566000000000ull) +
		    r % (SLOT(0x567f00000000ull) - SLOT(0x566000000000ull));
	return r;
}
