// SPDX-License-Identifier: MIT
/*
 * Queue thread heartbeats, for the systemd watchdog (cli/notify.c). Each
 * io_uring queue thread and /dev/fuse worker registers itself and says
 * when it waits in the kernel (idle: healthy however long) and when it
 * works (busy: inside dispatch and the plugin's op). A thread busy for
 * longer than the watchdog interval counts as stopped.
 */
#ifndef FRING_BASE_HEARTBEAT_H
#define FRING_BASE_HEARTBEAT_H

#include <stdint.h>

/* The calling thread joins (busy) / leaves the set. */
void fring_hb_enter(void);
void fring_hb_leave(void);
/* About to wait for requests / a request (or completions) arrived. */
void fring_hb_idle(void);
void fring_hb_busy(void);
/* When the calling thread last became busy (fring_clock_ns): when the
 * requests it works on now arrived, which saves the latency statistics a
 * clock read per request. 0 for a thread outside the set. */
uint64_t fring_hb_woke(void);
/* Threads busy for longer than max_ns now, and how many are registered. */
unsigned fring_hb_stuck(uint64_t max_ns, unsigned *nr_threads);

#endif /* FRING_BASE_HEARTBEAT_H */
