// SPDX-License-Identifier: MIT
/* Nodeids an entry reply may name; see entry_check.h. */
#include "entry_check.h"

#include <string.h>

#include "../base/log.h"

static int is_dot_or_dotdot(const char *name, uint32_t len)
{
	return name && (len == 1 || len == 2) && !memcmp(name, "..", len);
}

/* The name the request creates or looks up (NULL for TMPFILE). */
static const char *request_name(const struct fring_request *r, uint32_t *len)
{
	switch (r->opcode) {
	case FUSE_LOOKUP:
		*len = r->d.a.name.namelen;
		return r->d.a.name.name;
	case FUSE_LINK:
		*len = r->d.a.link.newnamelen;
		return r->d.a.link.newname;
	case FUSE_MKNOD: case FUSE_MKDIR: case FUSE_SYMLINK: case FUSE_CREATE:
		*len = r->d.a.make.namelen;
		return r->d.a.make.name;
	}
	*len = 0;
	return NULL;
}

/* A rate-limit key per opcode: one plugin bug in LOOKUP does not hide
 * another in MKDIR. */
static const char *key_of(uint32_t op)
{
	switch (op) {
	case FUSE_LOOKUP: return "entry-nodeid-lookup";
	case FUSE_MKNOD: return "entry-nodeid-mknod";
	case FUSE_MKDIR: return "entry-nodeid-mkdir";
	case FUSE_SYMLINK: return "entry-nodeid-symlink";
	case FUSE_LINK: return "entry-nodeid-link";
	case FUSE_CREATE: return "entry-nodeid-create";
	case FUSE_READDIRPLUS: return "entry-nodeid-readdirplus";
	}
	return "entry-nodeid-tmpfile";
}

const char *fring_entry_refusal(const struct fring_request *r, uint64_t ino,
				const char *name, uint32_t namelen)
{
	int listing = r->opcode == FUSE_READDIRPLUS;

	if (!listing)
		name = request_name(r, &namelen);
	if (ino == FUSE_ROOT_ID && !is_dot_or_dotdot(name, namelen))
		return "nodeid 1, the root, which the kernel never looks up";
	if (ino == 0 && !listing && r->opcode != FUSE_LOOKUP)
		return "nodeid 0, a negative entry, which only LOOKUP may answer";
	return NULL;
}

void fring_entry_log(const struct fring_request *r, const char *why,
		     const char *name, uint32_t namelen)
{
	if (r->opcode != FUSE_READDIRPLUS)
		name = request_name(r, &namelen);
	fring_log_ratelimited(
		key_of(r->opcode), FRING_LOG_WARN,
		"%s: plugin answered %s (unique %llu) with an entry "
		"for '%.*s' naming %s; sent EIO",
		r->rq->name, fring_opcode_name(r->opcode),
		(unsigned long long)r->unique, name ? (int)namelen : 0,
		name ? name : "", why);
}
