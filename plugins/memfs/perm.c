// SPDX-License-Identifier: MIT
/*
 * Caller credentials and the permission rules memfs enforces itself (the
 * kernel does the rest when mounted with default_permissions).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memfs.h"

#define MFS_NOBODY 65534u

void mfs_cred(fring_req *r, struct mfs_cred *c)
{
	struct fring_req_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.size = sizeof(ctx);
	if (fring_host->req_ctx(r, &ctx) < 0) {
		/* Without a known caller grant nothing beyond "other". */
		c->uid = c->gid = MFS_NOBODY;
		c->pid = 0;
		return;
	}
	c->uid = ctx.uid;
	c->gid = ctx.gid;
	c->pid = ctx.pid;
}

/*
 * FUSE only passes the primary gid; supplementary groups come from the
 * caller's /proc status (pid is the calling thread, which /proc accepts).
 */
static bool supplementary_group(uint32_t pid, uint32_t gid)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	if (!pid)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "Groups:", 7))
			continue;
		for (p = line + 7;; p = end) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			if (g == gid) {
				found = true;
				break;
			}
		}
		break;
	}
	fclose(f);
	return found;
}

bool mfs_in_group(const struct mfs_cred *c, uint32_t gid)
{
	return c->gid == gid || supplementary_group(c->pid, gid);
}

/* mask: R_OK | W_OK | X_OK. Root passes, except that executing needs some
 * x bit on non-directories. */
int mfs_may(const struct mfs_inode *in, const struct mfs_cred *c, int mask)
{
	uint32_t bits;

	mask &= R_OK | W_OK | X_OK;
	if (c->uid == 0) {
		if ((mask & X_OK) && !S_ISDIR(in->mode) &&
		    !(in->mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
			return -EACCES;
		return 0;
	}
	if (c->uid == in->uid)
		bits = (in->mode >> 6) & 7;
	else if (mfs_in_group(c, in->gid))
		bits = (in->mode >> 3) & 7;
	else
		bits = in->mode & 7;
	return (mask & ~(int)bits) ? -EACCES : 0;
}

int mfs_check(const struct memfs *fs, const struct mfs_inode *in,
	      const struct mfs_cred *c, int mask)
{
	return fs->check_perms ? mfs_may(in, c, mask) : 0;
}

int mfs_open_mask(uint32_t flags)
{
	int mask = 0;

	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		mask = R_OK;
		break;
	case O_WRONLY:
		mask = W_OK;
		break;
	default:
		mask = R_OK | W_OK;
		break;
	}
	if (flags & O_TRUNC)
		mask |= W_OK;
	return mask;
}

/* Removing or renaming `in` out of a sticky `dir`. */
int mfs_sticky_ok(const struct mfs_inode *dir, const struct mfs_inode *in,
		  const struct mfs_cred *c)
{
	if (!(dir->mode & S_ISVTX) || c->uid == 0 || c->uid == in->uid ||
	    c->uid == dir->uid)
		return 0;
	return -EPERM;
}

/* Linux rule: setuid always goes; setgid only with group-exec (without it
 * the bit marks mandatory locking, not privilege). */
uint32_t mfs_kill_suidgid(uint32_t mode)
{
	mode &= ~(uint32_t)S_ISUID;
	if (mode & S_IXGRP)
		mode &= ~(uint32_t)S_ISGID;
	return mode;
}
