// SPDX-License-Identifier: MIT
/*
 * restart: on_crash at the session. The plugin keeps what a new instance
 * needs after a crash in a memfd (ABI 1.8 state_live) that the supervisor
 * holds with the /dev/fuse files (core/cli/super_crash.c); a new server
 * started after the crash hands it back with FRING_STATE_LIVE_RECOVER
 * (session_adopt.c). Requests the dead server had read from /dev/fuse come
 * again by FUSE_NOTIFY_RESEND. Over io_uring there is no live state and a
 * crash aborts: requests the kernel had given a dead ring's entries can be
 * stranded for good (core/transport/README.md, "Restart after a crash").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../base/log.h"
#include "session_adopt.h"
#include "session_internal.h"

void fring_session_live_begin(struct fring_session *s, int rings)
{
	if (s->restart != FRING_RESTART_ON_CRASH)
		return;
	if (!rings) {
		fring_session_live_start(s, -1, 0, NULL);
		return;
	}
	/* No live state then: the plugin's tables cost nothing, and the
	 * supervisor aborts at a crash (core/cli/super_crash.c). */
	fring_warn(
		"%s: restart: on_crash applies only over /dev/fuse: this "
		"mount is served over io_uring, where a crash of the serving "
		"process aborts it (ENOTCONN), since the kernel (6.18) can "
		"strand a dead ring's requests for good",
		s->mountpoint);
}

int fring_session_live_start(struct fring_session *s, int fd, uint32_t flags,
			     char **err)
{
	int32_t (*hook)(void *, int, uint32_t) = s->plugin->desc.state_live;
	int32_t ret;

	if (s->restart != FRING_RESTART_ON_CRASH) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (!hook) {
		if (fd >= 0)
			close(fd);
		fring_warn("%s: restart: on_crash, but plugin '%s' has no "
			   "state_live hook (ABI 1.8): a crash of the serving "
			   "process aborts this mount (ENOTCONN)",
			   s->mountpoint, fring_session_plugin_name(s));
		if (err && (flags & FRING_STATE_LIVE_RECOVER))
			*err = fring_strf("%s: plugin '%s' has no state_live "
					  "hook",
					  s->mountpoint,
					  fring_session_plugin_name(s));
		return flags & FRING_STATE_LIVE_RECOVER ? -EOPNOTSUPP : 0;
	}
	if (fd < 0)
		fd = memfd_create("fring-live-state", MFD_CLOEXEC);
	if (fd < 0) {
		fring_warn("%s: restart: on_crash: memfd_create: %s; a crash "
			   "aborts this mount",
			   s->mountpoint, strerror(errno));
		return 0;
	}
	if (s->dx.serialize)
		pthread_mutex_lock(&s->dx.serial);
	ret = hook(s->dx.inst, fd, flags);
	if (s->dx.serialize)
		pthread_mutex_unlock(&s->dx.serial);
	if (ret < 0) {
		close(fd);
		if (flags & FRING_STATE_LIVE_RECOVER) {
			if (err)
				*err = fring_strf(
					"%s: plugin '%s' cannot recover from "
					"the state its crashed instance kept: %s",
					s->mountpoint,
					fring_session_plugin_name(s),
					strerror(-ret));
			return ret;
		}
		fring_warn("%s: restart: on_crash: plugin '%s': state_live "
			   "failed: %s; a crash aborts this mount",
			   s->mountpoint, fring_session_plugin_name(s),
			   strerror(-ret));
		return 0;
	}
	if (s->live_fd >= 0)
		close(s->live_fd);
	s->live_fd = fd;
	return 0;
}
