// SPDX-License-Identifier: MIT
/* What the config gave that the chosen transport leaves unused. */
#include "session.h"
#include "session_internal.h"

#include <stdio.h>

#include "../base/log.h"

/* Served over /dev/fuse (mode devfuse, or auto without io_uring): the
 * io_uring-only keys the config gave do nothing; say which. */
void fring_session_note_unused_keys(const struct fring_session *s)
{
	char names[160];
	size_t n = 0;

	names[0] = 0;
	for (int i = 0; fring_cfg_uring_keys[i]; i++)
		if (s->transport.uring_keys & (1u << i))
			n += (size_t)snprintf(names + n, sizeof(names) - n,
					      "%stransport.%s", n ? ", " : "",
					      fring_cfg_uring_keys[i]);
	if (n)
		fring_info("%s: %s: for io_uring queues only, unused over "
			   "/dev/fuse",
			   s->mountpoint, names);
}
