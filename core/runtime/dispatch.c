/* Opcode -> plugin op, with host defaults for NULL slots; see dispatch.h. */
#define _GNU_SOURCE
#include "dispatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
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

static void do_forget(struct fring_dispatch *dx, struct fring_req *r)
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

static void do_interrupt(struct fring_dispatch *dx, struct fring_req *r)
{
	FRING_STAT_INC(&dx->rq, r->queue, interrupts);
	/* No reply: with cloned fds a reply to the interrupt id only reaches
	 * the kernel through the fd that read the target, which need not be
	 * ours. A missed target was answered already or is remembered. */
	fring_inflight_interrupt(&dx->rq.inflight, r->d.a.interrupt.unique);
	fring_expiry_arm(&dx->rq.expiry, r->d.a.interrupt.unique);
	fring_req_drop(r);
}

static void reply_malformed(struct fring_dispatch *dx, struct fring_req *r,
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
		fring_req_reply_error(r, -EIO);
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

void fring_dispatch(struct fring_dispatch *dx, struct fring_req *r,
		    const struct fuse_in_header *in, const void *arg,
		    size_t arglen, const void *payload, size_t paylen)
{
	const struct fring_fs_ops *ops = dx->ops;
	const struct fring_host_api *h;
	int ret;

	r->unique = in->unique;
	r->opcode = in->opcode;
	r->nodeid = in->nodeid;
	r->uid = in->uid;
	r->gid = in->gid;
	r->pid = in->pid;
	r->in_len = in->len;
	FRING_STAT_INC(
		&dx->rq, r->queue,
		requests[in->opcode < FUSE_OPCODE_MAX ? in->opcode
						      : FUSE_OPCODE_MAX]);

	ret = fring_decode(in, arg, arglen, payload, paylen, &dx->conn, &r->d);
	/* Zero-copied WRITE: paylen counts the client's pages, which are not
	 * in memory the plugin can read (plugin.h: req_write_fd only). */
	if (!ret && r->zero_copy && r->opcode == FUSE_WRITE)
		r->d.a.write.data = NULL;

	/* Requests the kernel expects no reply to. */
	switch (r->opcode) {
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
	case FUSE_NOTIFY_REPLY:
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
		fring_req_reply_error(r, -ENOSYS);
		return;
	}
	if (ret < 0) {
		reply_malformed(dx, r, 0);
		return;
	}

	h = fring_host_table();
	switch (r->opcode) {
	case FUSE_LOOKUP: CALL(lookup, name);
	case FUSE_GETATTR: CALL(getattr, getattr);
	case FUSE_SETATTR: CALL(setattr, setattr);
	case FUSE_READLINK: CALL(readlink, node);
	case FUSE_SYMLINK: CALL(symlink, make);
	case FUSE_MKNOD: CALL(mknod, make);
	case FUSE_MKDIR: CALL(mkdir, make);
	case FUSE_UNLINK: CALL(unlink, name);
	case FUSE_RMDIR: CALL(rmdir, name);
	case FUSE_RENAME:
	case FUSE_RENAME2: CALL(rename, rename);
	case FUSE_LINK: CALL(link, link);
	case FUSE_OPEN: CALL(open, open);
	case FUSE_READ: CALL(read, read);
	case FUSE_WRITE: CALL(write, write);
	case FUSE_STATFS: CALL(statfs, node);
	case FUSE_RELEASE: CALL(release, release);
	case FUSE_FSYNC: CALL(fsync, fsync);
	case FUSE_SETXATTR: CALL(setxattr, xattr);
	case FUSE_GETXATTR: CALL(getxattr, xattr);
	case FUSE_LISTXATTR: CALL(listxattr, xattr);
	case FUSE_REMOVEXATTR: CALL(removexattr, xattr);
	case FUSE_FLUSH: CALL(flush, release);
	case FUSE_OPENDIR: CALL(opendir, open);
	case FUSE_READDIR: CALL(readdir, read);
	case FUSE_READDIRPLUS: CALL(readdirplus, read);
	case FUSE_RELEASEDIR: CALL(releasedir, release);
	case FUSE_FSYNCDIR: CALL(fsyncdir, fsync);
	case FUSE_GETLK: CALL(getlk, lock);
	case FUSE_SETLK:
	case FUSE_SETLKW:
		if (r->d.is_flock)
			CALL(flock, lock);
		CALL(setlk, lock);
	case FUSE_ACCESS: CALL(access, access);
	case FUSE_CREATE: CALL(create, make);
	case FUSE_FALLOCATE: CALL(fallocate, fallocate);
	case FUSE_LSEEK: CALL(lseek, lseek);
	case FUSE_COPY_FILE_RANGE:
	case FUSE_COPY_FILE_RANGE_64: CALL(copy_file_range, copy);
	case FUSE_TMPFILE: CALL(tmpfile, make);
	case FUSE_STATX: CALL(statx, statx);
	case FUSE_INIT:
		/* INIT is answered once, by init.c, before serving starts. */
		fring_req_reply_error(r, -EIO);
		return;
	case FUSE_DESTROY:
		/* The plugin's destroy runs at session stop, after the join. */
		fring_req_reply_error(r, 0);
		return;
	default:
		goto dflt;
	}
dflt:
	switch (r->opcode) {
	case FUSE_OPEN:
	case FUSE_OPENDIR: {
		struct fring_open_out o = { .fh = 0 };

		/* Goes through the plugin-facing reply so kind checks and
		 * encoding stay in one place; untracked is fine (synchronous). */
		h->reply_open(r, &o);
		return;
	}
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FSYNCDIR:
		fring_req_reply_error(r, 0);
		return;
	case FUSE_STATFS: {
		/* ENOSYS here would make statfs(2), and so a plain `df`,
		 * fail for the whole system: report an empty fs instead. */
		struct fring_statfs st = { .bsize = 512, .frsize = 512,
					   .namelen = 255 };

		h->reply_statfs(r, &st);
		return;
	}
	default:
		fring_req_reply_error(r, -ENOSYS);
		return;
	}
}

void fring_dispatch_arrived(struct fring_req *r,
			    const struct fuse_in_header *in, const void *arg,
			    size_t arglen, const void *payload, size_t paylen)
{
	fring_dispatch(fring_req_dx(r), r, in, arg, arglen, payload, paylen);
}

void fring_dispatch_buf(struct fring_dispatch *dx, struct fring_req *r,
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
