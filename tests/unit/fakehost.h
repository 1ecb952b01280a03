// SPDX-License-Identifier: MIT
/*
 * The fake host of the in-process plugin tests (test_memfs.c,
 * test_passthrough.c, test_loader.c): a host table whose replies land in a
 * struct fring_req defined here (the ABI keeps the type opaque to plugins,
 * so a test may give it any layout), each checked to be the request's
 * only reply. A test keeps its own request object(s) and resets one with
 * fake_req_reset before each call.
 */
#ifndef FRING_TESTS_FAKEHOST_H
#define FRING_TESTS_FAKEHOST_H

#include <stdbool.h>
#include <stdint.h>

#include <fring/plugin.h>

enum kind { K_NONE, K_ERR, K_ENTRY, K_CREATE, K_ATTR, K_LINK, K_OPEN,
	    K_WRITE, K_DATA, K_STATFS, K_XSIZE, K_LSEEK, K_DIR };

/* One directory entry a plugin added. */
struct dent {
	char name[256];
	uint64_t ino;   /* the dirent's: attr.ino for dir_add_plus ("." and
			 * ".." have entry ino 0) */
	uint64_t node;  /* dir_add_plus: the entry's ino (a lookup to forget) */
	uint64_t off;
	uint32_t type;
	bool plus;      /* added with dir_add_plus (counts a lookup) */
};

struct fring_req {
	int nreplies;
	enum kind kind;
	int32_t err;
	struct fring_entry e;
	struct fring_open_out o;
	struct fring_attr attr;
	struct fring_statfs st;
	char *data;     /* reply_data / reply_readlink: len bytes and a NUL */
	uint32_t len;
	uint64_t off;
	uint32_t uid, gid;
	/* readdir: what the kernel buffer holds, in bytes as the kernel
	 * counts them (dir_budget) or in entries (dir_cap); 0: no limit */
	uint32_t dir_budget, dir_used, dir_cap, ndir;
	struct dent *dir;
	int fail_reply; /* the next entry/create reply fails (-ENOENT) */
};

/* Free what the last reply kept, zero r (budgets too). */
void fake_req_reset(struct fring_req *r);

extern const struct fring_host_api fake_host;
/* The last log message containing "serving" (a plugin's start line). */
extern char fake_serving[1024];
/* backing_open answers fake_backing_result; what it and close saw. */
extern int32_t fake_backing_result, fake_backing_closed;
extern int fake_backing_opens, fake_backing_closes;

#endif
