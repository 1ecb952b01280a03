// SPDX-License-Identifier: MIT
/* The takeover state's records (state_save.c has the format), shared with the
 * live state a crash restart recovers from (live.c). */
#ifndef PT_STATE_H
#define PT_STATE_H

#include "pt.h"

#define PT_STATE_MAGIC 0x31535450u /* "PTS1" */
#define PT_STATE_VERSION 1u

#define SI_HASHED 1u
#define SI_TMPFILE 2u
#define SI_PINNED 4u

struct pt_state_hdr {
	uint32_t magic, version;
	int32_t pid; /* the saving process: /proc/PID/fd */
	uint32_t handles;
	uint64_t root_dev, root_ino, next_generation, ninodes, nopens;
	uint64_t nids; /* the id table's size: every node id is below */
};

struct pt_state_inode {
	uint64_t nodeid, generation, dev, ino, nlookup, parent;
	uint32_t type, flags;
	int32_t fd; /* old O_PATH fd of a pinned inode, else -1 */
	int32_t backing_id;
	uint32_t backing_opens, plain_opens;
	uint32_t name_len, handle_bytes;
	int32_t handle_type;
	uint32_t pad;
};

struct pt_state_open {
	uint32_t slot, flags;
	uint64_t nodeid;
	int32_t fd; /* in the old process */
	uint32_t dir;
};

/* The record of inode in (fd: its pinned O_PATH fd, or -1). */
void pt_state_inode_of(const struct pt_inode *in, struct pt_state_inode *si);
/* Load a state of version from p..p+len into a fresh instance. */
int pt_state_load_mem(struct pt_fs *fs, const void *p, size_t len,
		      uint32_t version, uint64_t n[2]);

/* For the log lines of save and load. */
#include <time.h>

static inline double pt_ms_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Wall and this thread's CPU time: on a loaded machine they differ. */
struct pt_clock {
	double wall, cpu;
};

static inline struct pt_clock pt_clock_now(void)
{
	return (struct pt_clock){ pt_ms_of(CLOCK_MONOTONIC),
				  pt_ms_of(CLOCK_THREAD_CPUTIME_ID) };
}

#endif /* PT_STATE_H */
