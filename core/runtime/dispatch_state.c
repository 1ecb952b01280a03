// SPDX-License-Identifier: MIT
/* A mount's dispatch state: set up and torn down; see dispatch_state.h. */
#define _GNU_SOURCE
#include "dispatch_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fring_dispatch_init(struct fring_dispatch *dx,
			const struct fring_plugin *desc,
			const struct fring_fs_ops *ops, const char *name)
{
	memset(dx, 0, sizeof(*dx));
	dx->mount.name = strdup(name ? name : "?");
	if (!dx->mount.name)
		return -ENOMEM;
	/* The mountpoint exists by now (checked before plugins load). */
	dx->mount.path = name ? realpath(name, NULL) : NULL;
	if (name && !dx->mount.path && !(dx->mount.path = strdup(name))) {
		free(dx->mount.name);
		return -ENOMEM;
	}
	dx->desc = desc;
	dx->ops = ops;
	dx->serialize = desc->thread_model != FRING_THREAD_PARALLEL;
	pthread_mutex_init(&dx->serial, NULL);
	fring_reqs_init(&dx->rq, dx->mount.name);
	return 0;
}

void fring_dispatch_quiesce(struct fring_dispatch *dx)
{
	fring_expiry_stop(&dx->rq.expiry);
}

void fring_dispatch_destroy(struct fring_dispatch *dx)
{
	fring_reqs_destroy(&dx->rq);
	pthread_mutex_destroy(&dx->serial);
	free(dx->mount.name);
	free(dx->mount.path);
	dx->mount.name = dx->mount.path = NULL;
}
