// SPDX-License-Identifier: MIT
/* Opcode -> plugin op, with host defaults for NULL slots; see dispatch.h. */
#define _GNU_SOURCE
#include "dispatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/heartbeat.h"
#include "../base/log.h"
#include "../proto/ops.h"
#include "../request/reply.h"
#include "host.h"

_Static_assert(sizeof(struct fuse_forget_one) == sizeof(struct fring_forget_one),
	       "forget item layouts differ");

static void lock_plugin(struct fring_dispatch *dx)
{
	if (dx->serialize)
		pthread_mutex_lock(&dx->serial);
}

static void unlock_plugin(struct fring_dispatch *dx)
{
	if (dx->serialize)
		pthread_mutex_unlock(&dx->serial);
}

static void do_forget(struct fring_dispatch *dx, struct fring_request *r)
{
	const struct fring_forget_one *items;
	struct fring_forget_one one;
	void *copy = NULL;
	uint32_t count;

	if (r->opcode == FUSE_FORGET) {
		one.nodeid = r->nodeid;
		one.nlookup = r->d.a.forget.nlookup;
		items = &one;
		count = 1;
	} else {
		count = r->d.a.batch_forget.count;
		items = (const void *)r->d.a.batch_forget.items;
		/* io_uring payloads need not be 8-aligned; the ABI promises
		 * an aligned array. */
		if (count && ((uintptr_t)items & 7u)) {
			copy = malloc((size_t)count * sizeof(*items));
			if (!copy) {
				fring_warn("%s: out of memory for BATCH_FORGET "
					   "of %u items; dropped", dx->mount.name,
					   count);
				count = 0;
			} else {
				memcpy(copy, items, (size_t)count * sizeof(*items));
				items = copy;
			}
		}
	}
	if (dx->ops->forget && count) {
		lock_plugin(dx);
		dx->ops->forget(dx->inst, items, count);
		unlock_plugin(dx);
	}
	free(copy);
	fring_req_drop(r);
}

static void do_interrupt(struct fring_dispatch *dx, struct fring_request *r)
{
	FRING_STAT_INC(&dx->rq, r->queue, interrupts);
	/* No reply: with cloned fds a reply to the interrupt id only reaches
	 * the kernel through the fd that read the target, which need not be
	 * ours. A missed target was answered already or is remembered. */
	fring_inflight_interrupt(&dx->rq.inflight, r->d.a.interrupt.unique);
	fring_expiry_arm(&dx->rq.expiry, r->d.a.interrupt.unique);
	fring_req_drop(r);
}

static void reply_malformed(struct fring_dispatch *dx, struct fring_request *r,
			    int noreply)
{
	FRING_STAT_INC(&dx->rq, r->queue, malformed);
	fring_log_ratelimited("malformed", FRING_LOG_WARN,
			      "malformed %s request (unique %llu, len %u): %s",
			      fring_opcode_name(r->opcode),
			      (unsigned long long)r->unique, r->in_len,
			      noreply ? "dropped" : "replied EIO");
	if (noreply)
		fring_req_drop(r);
	else
		fring_req_reply_error(fring_req_untagged(r), -EIO);
}

/* Call ops->slot with the decoded member, or fall through to `dflt`. */
#define CALL(slot, member)                                                  \
	do {                                                                \
		if (!ops->slot)                                             \
			goto dflt;                                          \
		fring_req_track(r);                                         \
		lock_plugin(dx);                                            \
		ops->slot(dx->inst, fring_req_handle(r), &r->d.a.member);   \
		unlock_plugin(dx);                                          \
		return;                                                     \
	} while (0)

void fring_dispatch(struct fring_dispatch *dx, struct fring_request *r,
		    const struct fuse_in_header *in, const void *arg,
		    size_t arglen, const void *payload, size_t paylen)
{
	const struct fring_fs_ops *ops = dx->ops;
	const struct fring_host_api *h;
	const struct fring_op *op;
	int ret;

	r->unique = in->unique;
	r->opcode = in->opcode;
	r->nodeid = in->nodeid;
	r->uid = in->uid;
	r->gid = in->gid;
	r->pid = in->pid;
	r->in_len = in->len;
	FRING_STAT_INC(&dx->rq, r->queue, requests[fring_stat_op(in->opcode)]);
	if (dx->rq.lat) {
		/* The queue thread's wake-up is when this request arrived. */
		r->t0_ns = fring_hb_woke();
		if (!r->t0_ns)
			r->t0_ns = fring_lat_now();
	}

	ret = fring_decode(in, arg, arglen, payload, paylen, &dx->conn, &r->d);
	/* Zero-copied WRITE: paylen counts the client's pages, which are not
	 * in memory the plugin can read (plugin.h: req_write_fd only). */
	if (!ret && r->zero_copy && r->opcode == FUSE_WRITE)
		r->d.a.write.data = NULL;

	op = fring_op(r->opcode);
	if (fring_op_no_reply(r->opcode)) {
		if (ret == -EPROTO)
			reply_malformed(dx, r, 1);
		else if (ret < 0 || r->opcode == FUSE_NOTIFY_REPLY)
			fring_req_drop(r); /* we never send RETRIEVE */
		else if (r->opcode == FUSE_INTERRUPT)
			do_interrupt(dx, r);
		else
			do_forget(dx, r);
		return;
	}
	if (ret == -ENOSYS) {
		fring_dbg("%s: unsupported opcode %u (unique %llu): ENOSYS",
			  dx->mount.name, r->opcode,
			  (unsigned long long)r->unique);
		fring_req_reply_error(fring_req_untagged(r), -ENOSYS);
		return;
	}
	if (ret < 0) {
		reply_malformed(dx, r, 0);
		return;
	}
	/* Decoded, so the opcode has a row. */
	if (op->flags & FRING_OP_SESSION) {
		/* INIT is answered once, by init.c, before serving starts;
		 * the plugin's destroy runs at session stop, after the join. */
		fring_req_reply_error(fring_req_untagged(r),
				      r->opcode == FUSE_DESTROY ? 0 : -EIO);
		return;
	}
	if ((op->flags & FRING_OP_FLOCK) && r->d.is_flock)
		CALL(flock, lock);

	switch (r->opcode) {
#define OP(code, arg0, decoder, member, slot, replies, flags)               \
	case FUSE_##code:                                                   \
		CALL(slot, member);
#define HOST_OP(code, arg0, decoder, replies, flags)
#include "../proto/ops.def"
	}
dflt:
	if (!(op->flags & FRING_OP_DEFAULT)) {
		fring_req_reply_error(fring_req_untagged(r), -ENOSYS);
		return;
	}
	h = fring_host_table();
	if (op->replies & FRING_R_OPEN) {
		struct fring_open_out o = { .fh = 0 };

		/* Goes through the plugin-facing reply so kind checks and
		 * encoding stay in one place; untracked is fine (synchronous). */
		h->reply_open(fring_req_untagged(r), &o);
	} else if (op->replies & FRING_R_STATFS) {
		/* ENOSYS here would make statfs(2), and so a plain `df`,
		 * fail for the whole system: report an empty fs instead. */
		struct fring_statfs st = { .bsize = 512, .frsize = 512,
					   .namelen = 255 };

		h->reply_statfs(fring_req_untagged(r), &st);
	} else {
		fring_req_reply_error(fring_req_untagged(r), 0);
	}
}

void fring_dispatch_arrived(struct fring_request *r,
			    const struct fuse_in_header *in, const void *arg,
			    size_t arglen, const void *payload, size_t paylen)
{
	fring_dispatch(fring_req_dx(r), r, in, arg, arglen, payload, paylen);
}

void fring_dispatch_buf(struct fring_dispatch *dx, struct fring_request *r,
			const void *buf, size_t len)
{
	const struct fuse_in_header *in = buf;

	if (len < sizeof(*in)) {
		/* Not even a header: nothing to reply to. The kernel never
		 * does this; count it and move on. */
		FRING_STAT_INC(&dx->rq, r->queue, malformed);
		fring_log_ratelimited("malformed", FRING_LOG_WARN,
				      "short read of %zu bytes from /dev/fuse: "
				      "dropped", len);
		fring_req_drop(r);
		return;
	}
	fring_dispatch(dx, r, in, (const char *)buf + sizeof(*in),
		       len - sizeof(*in), NULL, 0);
}
