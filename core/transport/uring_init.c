// SPDX-License-Identifier: MIT
/*
 * Transport selection at INIT (the session's before_reply hook). Runs after
 * the reply is built and before it is written, which is the only safe
 * moment on 6.18: rings, buffers and threads for every possible CPU are set
 * up and checked first, and FUSE_OVER_IO_URING goes into the reply only if
 * all of that worked. Otherwise mode auto falls back to /dev/fuse with one
 * log line saying why, and mode uring fails INIT with that reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../config/config.h"
#include "uring_internal.h"

#define ENABLE_URING "/sys/module/fuse/parameters/enable_uring"

int fring_uring_enabled(void)
{
	FILE *f = fopen(ENABLE_URING, "re");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == 'Y' && uring_sysctl_disabled() < 2;
}

/* The protocol minors known to carry FUSE_URING_REDUCED_Q in bit 44:
 * none yet (the reduced-queues series is in no released kernel; 7.46 is
 * Linux 7.3, where
 * bit 44 means nothing). A kernel that ships the series at a known minor
 * goes here, and `auto` then trusts the bit there. 0 ends the list. */
static const uint32_t reduced_q_minors[] = { 0 };

int fring_uring_reduced_queues(int mode, uint64_t capable, uint32_t minor,
			       char *why, size_t len)
{
	int known = 0;

	for (const uint32_t *m = reduced_q_minors; *m; m++)
		known |= *m == minor;
	if (mode == FRING_OFF) {
		snprintf(why, len, "transport.reduced_queues off");
		return 0;
	}
	if (!(capable & FUSE_URING_REDUCED_Q)) {
		snprintf(why, len, "the kernel does not offer them");
		return 0;
	}
	if (mode == FRING_ON) {
		snprintf(why, len, "transport.reduced_queues on trusts INIT bit 44");
		return 1;
	}
	if (known) {
		snprintf(why, len, "FUSE 7.%u offers them in INIT bit 44", minor);
		return 1;
	}
	snprintf(why, len, "INIT bit 44 is offered, but FUSE 7.%u is not known to "
		 "mean reduced queues by it; transport.reduced_queues on trusts "
		 "it", minor);
	return 0;
}

int fring_uring_init_hook(void *ud, const struct fring_init_result *res,
			  struct fuse_init_out *out, char **err)
{
	struct fring_uring_offer *o = ud;
	char *msg = NULL;
	const char *why;
	int ret;

	o->u = NULL;
	o->reason[0] = 0;
	if (o->mode == FRING_MODE_DEVFUSE) {
		snprintf(o->reason, sizeof(o->reason), "transport mode devfuse");
		if (o->p.cfg->bufpool == FRING_ON ||
		    o->p.cfg->zero_copy == FRING_ON) {
			*err = fring_strf("transport.%s on needs io_uring, but "
					  "transport.mode is devfuse",
					  o->p.cfg->bufpool == FRING_ON
						  ? "bufpool"
						  : "zero_copy");
			return -EINVAL;
		}
		fring_info("%s: zero-copy: off (transport mode devfuse)",
			   o->p.mountpoint ? o->p.mountpoint : "?");
		return 0;
	}
	why = fring_uring_unavailable(res->capable, res->kernel_minor, o->reason,
				      sizeof(o->reason));
	if (!why) {
		o->p.max_write = res->max_write;
		o->p.max_pages = res->max_pages;
		o->p.bufpool_offered = !!(res->capable & FUSE_HAS_IO_URING_BUFPOOL);
		o->p.reduced_offered = fring_uring_reduced_queues(
			o->p.cfg->reduced_queues, res->capable,
			res->kernel_minor, o->reduced_why,
			sizeof(o->reduced_why));
		o->p.reduced_why = o->reduced_why;
		ret = fring_uring_setup(&o->p, &o->u, &msg);
		if (ret) {
			snprintf(o->reason, sizeof(o->reason), "%s",
				 msg ? msg : strerror(-ret));
			why = o->reason;
		}
		free(msg);
	}
	if (why) {
		/* Pools and zero-copy exist only over io_uring: on insists. */
		if (o->mode == FRING_MODE_URING ||
		    o->p.cfg->bufpool == FRING_ON ||
		    o->p.cfg->zero_copy == FRING_ON) {
			/* A refused "on" names itself; io_uring may work. */
			*err = !strncmp(why, "transport.", 10)
				       ? fring_strf("%s", why)
				       : fring_strf("transport uring: io_uring "
						    "unavailable: %s", why);
			return -EOPNOTSUPP;
		}
		fring_info("%s: transport devfuse: io_uring not used: %s",
			   o->p.mountpoint ? o->p.mountpoint : "?", why);
		fring_info("%s: zero-copy: off (no io_uring)",
			   o->p.mountpoint ? o->p.mountpoint : "?");
		return 0;
	}
	/* flags2 is read only with INIT_EXT, which the kernel offered: it
	 * comes with every kernel that knows FUSE_OVER_IO_URING. */
	out->flags |= (uint32_t)FUSE_INIT_EXT;
	out->flags2 |= (uint32_t)(FUSE_OVER_IO_URING >> 32);
	return 0;
}
