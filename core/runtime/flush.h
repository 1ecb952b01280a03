// SPDX-License-Identifier: MIT
/*
 * Bounded flush of a mount's dirty pages before it is unmounted. With the
 * kernel's writeback cache (FUSE_WRITEBACK_CACHE) a write(2) is
 * acknowledged once it is in the page cache; the server sees it only when
 * the kernel writes the page back. At stop the unmount and the connection
 * abort would drop what is still dirty, so the session first runs
 * syncfs(2) on the mount while its queues still serve, within a budget.
 */
#ifndef FRING_FLUSH_H
#define FRING_FLUSH_H

/* syncfs(2) on the filesystem mounted at `mountpoint`, from a helper
 * thread, waiting at most budget_ms. Returns 0 when it finished, -ETIMEDOUT
 * when it is still running (it goes on detached and ends with the
 * connection), or -errno from open/syncfs/thread creation. */
int fring_flush_mount(const char *mountpoint, unsigned budget_ms);

#endif /* FRING_FLUSH_H */
