// SPDX-License-Identifier: MIT
/*
 * The fusectl control filesystem (/sys/fs/fuse/connections): how fring
 * aborts a FUSE connection it owns, so callers get ENOTCONN instead of
 * hanging (fs/fuse/control.c fuse_conn_abort_write). Only ever used on
 * connections fring itself made.
 */
#ifndef FRING_FUSECTL_H
#define FRING_FUSECTL_H

/* The connection id of the FUSE mount at `mountpoint`: its st_dev, which
 * names the fusectl directory (major << 20 | minor). Read with
 * AT_STATX_DONT_SYNC so no request reaches the (maybe dead) server.
 * Returns 0 if unknown. */
unsigned fring_fusectl_id(const char *mountpoint);

/* Whether connection `id` still exists: its fusectl directory stays until
 * the superblock is torn down (fs/fuse/inode.c fuse_sb_destroy, after the
 * last file on a detached mount closes). fusectl is mounted if it is not
 * (as for an abort). 1, 0, or -errno if nothing can be told. */
int fring_fusectl_alive(unsigned id);
/* Abort connection `id` (write to its abort file, mounting fusectl first
 * if it is not mounted). 0 or -errno. */
int fring_fusectl_abort(unsigned id);

#endif /* FRING_FUSECTL_H */
