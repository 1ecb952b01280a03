// SPDX-License-Identifier: MIT
/*
 * Creating calls run with the caller's fsuid/fsgid so new files belong to
 * the caller. fsuid is per thread on Linux (glibc's setfsuid is the raw
 * syscall), so this does not disturb the host's other threads.
 */
#include "pt.h"

#include <sys/fsuid.h>

void pt_creds_enter(fring_req *r, struct pt_creds *c)
{
	struct fring_req_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.size = sizeof(ctx);
	c->switched = false;
	if (fring_host->req_ctx(r, &ctx) || (ctx.uid == 0 && ctx.gid == 0))
		return;
	c->gid = setfsgid(ctx.gid);
	c->uid = setfsuid(ctx.uid);
	c->switched = true;
}

void pt_creds_leave(struct pt_creds *c)
{
	if (!c->switched)
		return;
	setfsuid(c->uid);
	setfsgid(c->gid);
}
