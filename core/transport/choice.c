// SPDX-License-Identifier: MIT
/* Which transports serve a connection; see choice.h. */
#include "choice.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../base/log.h"

void fring_transports_init(struct fring_transports *ts,
			   const struct fring_cfg_transport *cfg,
			   const char *mountpoint, unsigned nr_workers,
			   const struct fring_serve *sv)
{
	memset(ts, 0, sizeof(*ts));
	ts->cfg = *cfg;
	ts->mountpoint = mountpoint;
	ts->nr_workers = nr_workers;
	ts->sv = *sv;
}

int fring_transports_precheck(struct fring_transports *ts, char **err)
{
	char why[320];

	if (ts->cfg.mode == FRING_MODE_DEVFUSE || !fring_uring_enabled() ||
	    !fring_uring_precheck(&ts->cfg, why, sizeof(why)))
		return 0;
	if (ts->cfg.mode == FRING_MODE_URING || ts->cfg.bufpool == FRING_ON) {
		*err = fring_strf(
			"%s: transport uring: io_uring unavailable: %s",
			ts->mountpoint, why);
		return -ENOMEM;
	}
	fring_info("%s: transport devfuse: io_uring not used: %s",
		   ts->mountpoint, why);
	ts->cfg.mode = FRING_MODE_DEVFUSE;
	return 0;
}

void fring_transports_offer(struct fring_transports *ts, int fd,
			    uint32_t conn_id)
{
	ts->conn_transport = FRING_TRANSPORT_DEVFUSE;
	/* /dev/fuse workers: the embedder's count, else transport.queues,
	 * else the default. */
	ts->nr_queues = ts->nr_workers   ? ts->nr_workers
			: ts->cfg.queues ? ts->cfg.queues
					 : fring_devfuse_default_threads();
	ts->uo.mode = ts->cfg.mode;
	ts->uo.p = (struct fring_uring_params){
		.fuse_fd = fd,
		.sv = ts->sv,
		.mountpoint = ts->mountpoint,
		.conn_id = conn_id,
		.cfg = &ts->cfg,
		.handover = ts->handover,
	};
	if (ts->cfg.mode != FRING_MODE_DEVFUSE && fring_uring_enabled() &&
	    fring_uring_possible_cpus() > 0) {
		ts->conn_transport = FRING_TRANSPORT_URING;
		ts->nr_queues = (uint32_t)fring_uring_possible_cpus();
	}
}

int fring_transports_init_hook(void *ud, const struct fring_init_result *res,
			       struct fuse_init_out *out, char **err)
{
	struct fring_transports *ts = ud;
	int ret = fring_uring_init_hook(&ts->uo, res, out, err);

	ts->t[1] = fring_uring_transport(ts->uo.u);
	return ret;
}

int fring_transports_start(struct fring_transports *ts,
			   const struct fring_init_result *res, int fd,
			   void (*on_exit)(void *ud), void *ud, char **err)
{
	struct fring_devfuse_params dp = {
		.session_fd = fd,
		.nr_threads = ts->nr_queues,
		.bufsize = res->bufsize,
		.on_all_exited = on_exit,
		.ud = ud,
	};
	int ret;

	if (ts->uo.u)
		fring_uring_start(ts->uo.u);
	ret = fring_devfuse_start(&ts->sv, &dp, &ts->df, err);
	/* /dev/fuse stops first: its join waits for the unmount to end the
	 * workers while the rings keep serving. */
	ts->t[0] = fring_devfuse_transport(ts->df);
	return ret;
}

int fring_transports_adopt(struct fring_transports *ts,
			   const struct fring_init_result *res, int fd,
			   uint32_t conn_id, int shm_fd, char **err)
{
	int ret;

	fring_transports_offer(ts, fd, conn_id);
	ts->uo.p.max_write = res->max_write;
	ts->uo.p.max_pages = res->max_pages;
	ts->uo.p.bufpool_offered = !!(res->capable & FUSE_HAS_IO_URING_BUFPOOL);
	ts->uo.p.adopt = 1;
	ts->uo.p.adopt_fd = shm_fd;
	ts->uo.p.handover = 1;
	ret = fring_uring_setup(&ts->uo.p, &ts->uo.u, err);
	close(shm_fd); /* the rings keep a dup */
	if (ret)
		return ret;
	ts->t[1] = fring_uring_transport(ts->uo.u);
	return 0;
}

void fring_transports_start_adopted(struct fring_transports *ts)
{
	if (ts->uo.u)
		fring_uring_start(ts->uo.u);
}

int fring_transports_rings(const struct fring_transports *ts)
{
	return ts->uo.u != NULL;
}

const char *fring_transports_name(const struct fring_transports *ts)
{
	return ts->uo.u ? "uring" : "devfuse";
}

int fring_transports_zero_copy(const struct fring_transports *ts)
{
	return ts->uo.u && fring_uring_zero_copy(ts->uo.u);
}

void fring_transports_log(const struct fring_transports *ts, uint32_t max_write)
{
	fring_dbg("%s: serving with %u /dev/fuse workers, max_write %u",
		  ts->mountpoint, fring_devfuse_nr_threads(ts->df), max_write);
	if (ts->uo.u)
		fring_dbg("%s: io_uring: %u queues on %u threads, %u entries "
			  "each, ring %s",
			  ts->mountpoint, fring_uring_nr_qids(ts->uo.u),
			  fring_uring_nr_threads(ts->uo.u),
			  fring_uring_depth(ts->uo.u),
			  fring_uring_ring_mode(ts->uo.u));
}
