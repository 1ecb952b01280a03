// SPDX-License-Identifier: MIT
/*
 * The nodeids an entry reply may name. Nodeid 1 is the root, which the
 * kernel never looks up: a LOOKUP answered with it makes the kernel take
 * the root inode for the child (and mark the root bad when the types
 * differ, failing every later access to the mount with EIO); MKNOD, MKDIR,
 * SYMLINK, LINK, CREATE and TMPFILE answered with it fail in the kernel
 * with nothing logged (CREATE's open file is lost). Only "." and ".."
 * may name it: the kernel looks those up for NFS export, and ignores them
 * in READDIRPLUS. Nodeid 0 is a negative entry, which only LOOKUP (and a
 * READDIRPLUS entry without a lookup) may be.
 */
#ifndef FRING_ENTRY_CHECK_H
#define FRING_ENTRY_CHECK_H

#include <stdint.h>

#include "../request/request.h"

/* Why an entry reply to r may not name nodeid ino, or NULL if it may.
 * name/namelen: the entry's name for READDIRPLUS; NULL for the request's
 * own name. */
const char *fring_entry_refusal(const struct fring_request *r, uint64_t ino,
				const char *name, uint32_t namelen);

/* Log the refusal (one line, rate limited per opcode); the caller answers
 * EIO. */
void fring_entry_log(const struct fring_request *r, const char *why,
		     const char *name, uint32_t namelen);

#endif /* FRING_ENTRY_CHECK_H */
