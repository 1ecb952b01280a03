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

#include "../config/config.h"
#include "../runtime/dispatch.h"
#include "../runtime/init.h"
#include "../runtime/log.h"
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
		if (o->p.bufpool == FRING_ON || o->p.zero_copy == FRING_ON) {
			*err = fring_strf("transport.%s on needs io_uring, but "
					  "transport.mode is devfuse",
					  o->p.bufpool == FRING_ON ? "bufpool"
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
		o->p.reduced_offered = !!(res->capable & FUSE_URING_REDUCED_Q);
		ret = fring_uring_setup(&o->p, &o->u, &msg);
		if (!ret)
			atomic_store(&o->p.dx->mount.zero_copy,
				     fring_uring_zero_copy(o->u));
		if (ret) {
			snprintf(o->reason, sizeof(o->reason), "%s",
				 msg ? msg : strerror(-ret));
			why = o->reason;
		}
		free(msg);
	}
	if (why) {
		/* Pools and zero-copy exist only over io_uring: on insists. */
		if (o->mode == FRING_MODE_URING || o->p.bufpool == FRING_ON ||
		    o->p.zero_copy == FRING_ON) {
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
