// SPDX-License-Identifier: MIT
/* raw_takeover: the one-file filesystem the servers answer, INIT, and the
 * /dev/fuse server. */
#include "raw.h"

/* ---- the filesystem: a root directory in which every name is one file ---- */

static void attr_of(uint64_t node, struct fuse_attr *a, uint64_t size)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->mode = node == FUSE_ROOT_ID ? (S_IFDIR | 0755) : (S_IFREG | 0644);
	a->nlink = node == FUSE_ROOT_ID ? 2 : 1;
	a->size = node == FUSE_ROOT_ID ? 0 : size;
	a->blksize = 4096;
}

/* The reply body for a request into out; returns 1 for no reply, 0 or a
 * negative errno for a reply. a0 is the op header, name the first name. */
int answer(const struct fuse_in_header *in, const void *a0, const char *name,
	   void *out, uint32_t *olen, uint64_t size)
{
	*olen = 0;
	switch (in->opcode) {
	case FUSE_LOOKUP: {
		struct fuse_entry_out *e = out;

		if (!strncmp(name, "no", 2))
			return -ENOENT;
		memset(e, 0, sizeof(*e));
		e->nodeid = 2;
		e->attr_valid = 60; /* one LOOKUP per stat: entry_valid 0 */
		attr_of(2, &e->attr, size);
		*olen = sizeof(*e);
		return 0;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out *o = out;

		memset(o, 0, sizeof(*o));
		o->attr_valid = 60;
		attr_of(in->nodeid, &o->attr, size);
		*olen = sizeof(*o);
		return 0;
	}
	case FUSE_OPEN:
	case FUSE_OPENDIR: {
		struct fuse_open_out *o = out;

		memset(o, 0, sizeof(*o));
		o->fh = 1;
		*olen = sizeof(*o);
		return 0;
	}
	case FUSE_READ: {
		const struct fuse_read_in *r = a0;
		uint32_t n = r->offset >= size ? 0
					       : (uint32_t)(size - r->offset);

		n = n < r->size ? n : r->size;
		memset(out, 'r', n);
		*olen = n;
		return 0;
	}
	case FUSE_STATFS: {
		struct fuse_statfs_out *o = out;

		memset(o, 0, sizeof(*o));
		o->st.bsize = 4096;
		o->st.namelen = 255;
		*olen = sizeof(*o);
		return 0;
	}
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH: return 0;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT: return 1;
	default: return -ENOSYS;
	}
}

int is_hold(const struct fuse_in_header *in, const char *name)
{
	return in->opcode == FUSE_LOOKUP && !strncmp(name, "hold", 4);
}

void name_of(char *dst, const struct fuse_in_header *in, const char *name)
{
	if (in->opcode == FUSE_LOOKUP)
		snprintf(dst, 30, "%.29s", name);
	else
		snprintf(dst, 30, "op%u", in->opcode);
}

/* ---- INIT, over /dev/fuse ---- */

int do_init(int fd, int uring)
{
	static char buf[BUFSZ];
	struct fuse_in_header *in = (void *)buf;
	struct fuse_init_in *ii = (void *)(in + 1);
	struct {
		struct fuse_out_header h;
		struct fuse_init_out o;
	} rep = { 0 };
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < (ssize_t)sizeof(*in) || in->opcode != FUSE_INIT)
		return -EPROTO;
	S.minor = ii->minor;
	S.offered = ii->flags | ((uint64_t)ii->flags2 << 32);
	rep.h.len = sizeof(rep);
	rep.h.unique = in->unique;
	rep.o.major = FUSE_KERNEL_VERSION;
	rep.o.minor = FUSE_KERNEL_MINOR_VERSION;
	rep.o.max_readahead = ii->max_readahead;
	/* PARALLEL_DIROPS: without it a LOOKUP left unanswered holds the
	 * directory, and every later LOOKUP there waits behind it. */
	rep.o.flags = (uint32_t)(FUSE_INIT_EXT | FUSE_MAX_PAGES |
				 FUSE_ASYNC_READ | FUSE_PARALLEL_DIROPS);
	rep.o.flags2 = uring ? (uint32_t)(FUSE_OVER_IO_URING >> 32) : 0;
	rep.o.max_background = 16;
	rep.o.congestion_threshold = 12;
	rep.o.max_write = MAX_WRITE;
	rep.o.time_gran = 1;
	rep.o.max_pages = MAX_PAGES;
	if (write(fd, &rep, sizeof(rep)) != sizeof(rep))
		return -errno;
	return 0;
}

void report_init(int gen, int err)
{
	struct msg m = { .type = M_READY,
			 .gen = gen,
			 .val = err,
			 .unique = S.offered,
			 .cid = S.minor };

	send_msg(S.rep[1], m);
}

/* ---- a /dev/fuse server ---- */

void serve_dev(int fd, int gen, int hold)
{
	static char buf[BUFSZ], out[BUFSZ];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		struct fuse_in_header *in = (void *)buf;
		struct fuse_out_header *oh = (void *)out;
		const char *name = (const char *)(in + 1);
		struct msg m = { .gen = gen };
		uint32_t olen;
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(*in))
			_exit(n < 0 ? 10 : 11);
		m.unique = in->unique;
		name_of(m.name, in, name);
		if (hold && is_hold(in, name)) {
			m.type = M_HELD;
			send_msg(S.rep[1], m);
			for (;;)
				pause();
		}
		m.type = M_SEEN;
		send_msg(S.rep[1], m);
		r = answer(in, in + 1, name, oh + 1, &olen, 4096);
		if (r > 0)
			continue;
		oh->len = sizeof(*oh) + (r ? 0 : olen);
		oh->error = r < 0 ? r : 0;
		oh->unique =
			in->unique; /* with FUSE_UNIQUE_RESEND as received */
		if (write(fd, out, oh->len) < 0) {
			m.type = M_CQE_ERR;
			m.val = -errno;
			send_msg(S.rep[1], m);
		}
	}
}

int notify_resend(int fd)
{
	struct fuse_out_header h = { sizeof(h), FUSE_NOTIFY_RESEND, 0 };

	return write(fd, &h, sizeof(h)) == sizeof(h) ? 0 : -errno;
}
