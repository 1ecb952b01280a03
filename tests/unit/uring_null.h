// SPDX-License-Identifier: MIT
/*
 * The io_uring transport set up for real (rings, entries, REGISTER SQEs
 * prepared) against /dev/null instead of /dev/fuse, for tests of its
 * layout and placement that need no kernel FUSE connection.
 */
#ifndef FRING_TESTS_URING_NULL_H
#define FRING_TESTS_URING_NULL_H

#include <fcntl.h>

#include <criterion/criterion.h>

#include "config/config.h"
#include "transport/uring_internal.h"

/* cfg: the keys under test (queues, cpus, placement), reduced: INIT
 * offered reduced queues; the rest is filled here. NULL with *err set on
 * failure. */
static inline struct fring_uring *
uring_null_setup(struct fring_cfg_transport cfg, int reduced, char **err)
{
	struct fring_uring *u = NULL;
	struct fring_uring_params p = {.cfg = &cfg, .reduced_offered = reduced};

	p.fuse_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	p.mountpoint = "uring-null-test";
	cfg.queue_depth = 2; /* stays under an 8 MiB RLIMIT_MEMLOCK */
	p.max_write = 128 * 1024;
	cfg.bufpool = FRING_AUTO;
	cfg.zero_copy = FRING_AUTO;
	cr_assert_geq(p.fuse_fd, 0);
	*err = NULL;
	if (fring_uring_setup(&p, &u, err))
		u = NULL;
	return u;
}

#endif
