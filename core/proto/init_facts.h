// SPDX-License-Identifier: MIT
/*
 * What FUSE_INIT settled, as plain data: fring's limits, the agreed
 * result, and the shape of the hook a transport runs between building the
 * INIT reply and writing it. Negotiation itself is runtime/init.h; the
 * transports read these facts without depending on it.
 */
#ifndef FRING_INIT_FACTS_H
#define FRING_INIT_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "fring_uapi.h"

/* Our highest protocol minor (7.46, Linux 7.3; 6.18 offers 7.45). */
#define FRING_PROTO_MINOR 46
#define FRING_DEFAULT_MAX_WRITE (1u << 20)
#define FRING_MAX_BACKGROUND 64
#define FRING_CONGESTION_THRESHOLD 48

struct fring_init_result {
	uint32_t kernel_major, kernel_minor;
	uint32_t minor;		/* negotiated */
	uint64_t capable, want; /* kernel's offer, what we accepted */
	uint32_t max_write, max_readahead, max_pages, time_gran;
	size_t bufsize;		  /* /dev/fuse read buffer: max_write + 4096 */
	uint32_t request_timeout; /* seconds negotiated, 0 = none */
};

/* Run between building the INIT reply and writing it (the io_uring
 * transport sets its rings up there and adds FUSE_OVER_IO_URING to
 * out->flags2). A negative return fails INIT with that error and *err. */
typedef int (*fring_init_hook_fn)(void *ud, const struct fring_init_result *res,
				  struct fuse_init_out *out, char **err);

#endif /* FRING_INIT_FACTS_H */
