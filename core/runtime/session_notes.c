// SPDX-License-Identifier: MIT
/* What the config gave that the chosen transport leaves unused. */
#include "session.h"
#include "session_internal.h"

#include "../base/log.h"

/* Served over /dev/fuse (mode devfuse, or auto without io_uring): the
 * io_uring-only keys the config gave do nothing; say which. */
void fring_session_note_unused_keys(const struct fring_session *s)
{
	char names[160];

	if (fring_cfg_unused_over_devfuse(&s->transport, names, sizeof(names)))
		fring_info("%s: %s: for io_uring queues only, unused over "
			   "/dev/fuse",
			   s->mountpoint, names);
}
