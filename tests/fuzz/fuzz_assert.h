// SPDX-License-Identifier: MIT
/* FUZZ_ASSERT for every fuzz target: a failed check prints the target
 * (FUZZ_TARGET, which the includer defines), the place and the condition,
 * then aborts, which libFuzzer and the replay both take for a crash. */
#ifndef FRING_FUZZ_ASSERT_H
#define FRING_FUZZ_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_ASSERT(cond, ...)                                              \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s: %s:%d: failed: %s: ",          \
				FUZZ_TARGET, __FILE__, __LINE__, #cond);    \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
			abort();                                            \
		}                                                           \
	} while (0)

#endif /* FRING_FUZZ_ASSERT_H */
