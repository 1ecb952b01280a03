// SPDX-License-Identifier: MIT
/*
 * The per-op decoders, one per decoder column value of ops.def: arg 0
 * (copied aligned, a0len bytes of it sent) and the bytes after it, the
 * cursor, into the args member of struct fring_decoded. decode.c checks
 * the lengths and routes here.
 */
#include "decode_internal.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "ops.h"
#include "proto.h"

/* A non-empty NUL-terminated name at the cursor; advances past the NUL. */
static int take_name(struct cursor *c, const char **name, uint32_t *len)
{
	const uint8_t *nul = c->left ? memchr(c->p, '\0', c->left) : NULL;
	size_t n;

	if (!nul)
		return -EPROTO;
	n = (size_t)(nul - c->p);
	if (n == 0 || n > UINT32_MAX)
		return -EPROTO;
	*name = (const char *)c->p;
	*len = (uint32_t)n;
	c->p = nul + 1;
	c->left -= n + 1;
	return 0;
}

/* MKNOD MKDIR SYMLINK CREATE TMPFILE */
int fring_dec_make(uint32_t op, const union arg0 *u, size_t a0len,
		   struct cursor *c, const struct fring_proto_conn *conn,
		   struct fring_decoded *out)
{
	struct fring_make_args *m = &out->a.make;
	int rc;

	m->size = sizeof(*m);
	m->parent = out->nodeid;
	rc = take_name(c, &m->name, &m->namelen);
	if (rc)
		return rc;
	switch (op) {
	case FUSE_SYMLINK:
		/* The kernel sends no mode; the ABI promises S_IFLNK. */
		m->mode = S_IFLNK | 0777;
		return take_name(c, &m->link_target, &m->link_target_len);
	case FUSE_MKNOD:
		m->mode = u->mknod.mode;
		m->rdev = u->mknod.rdev;
		m->umask = u->mknod.umask;
		return 0;
	case FUSE_MKDIR:
		/* The kernel sends permission bits only. */
		m->mode = (u->mkdir.mode & ~(uint32_t)S_IFMT) | S_IFDIR;
		m->umask = u->mkdir.umask;
		return 0;
	case FUSE_CREATE:
	case FUSE_TMPFILE:
		m->flags = u->create.flags;
		m->mode = u->create.mode;
		m->umask = u->create.umask;
		m->open_flags = u->create.open_flags;
		return 0;
	}
	return -ENOSYS; /* routed here (ops.def) without a case */
}

/* LOOKUP UNLINK RMDIR RENAME RENAME2 LINK */
int fring_dec_names(uint32_t op, const union arg0 *u, size_t a0len,
		    struct cursor *c, const struct fring_proto_conn *conn,
		    struct fring_decoded *out)
{
	int rc;

	switch (op) {
	case FUSE_RENAME:
	case FUSE_RENAME2: {
		struct fring_rename_args *r = &out->a.rename;

		r->size = sizeof(*r);
		r->parent = out->nodeid;
		r->newparent = u->rename.newdir; /* same offset in rename2 */
		r->flags = op == FUSE_RENAME2 ? u->rename2.flags : 0;
		rc = take_name(c, &r->name, &r->namelen);
		return rc ? rc : take_name(c, &r->newname, &r->newnamelen);
	}
	case FUSE_LINK: {
		struct fring_link_args *l = &out->a.link;

		l->size = sizeof(*l);
		l->nodeid = u->link.oldnodeid;
		l->newparent = out->nodeid;
		return take_name(c, &l->newname, &l->newnamelen);
	}
	case FUSE_LOOKUP:
	case FUSE_UNLINK:
	case FUSE_RMDIR: {
		struct fring_name_args *n = &out->a.name;

		n->size = sizeof(*n);
		n->parent = out->nodeid;
		return take_name(c, &n->name, &n->namelen);
	}
	}
	return -ENOSYS; /* routed here (ops.def) without a case */
}

/* SETXATTR GETXATTR LISTXATTR REMOVEXATTR (the opcode decides what is
 * read: a new op routed here needs its place in the checks). */
int fring_dec_xattr(uint32_t op, const union arg0 *u, size_t a0len,
		    struct cursor *c, const struct fring_proto_conn *conn,
		    struct fring_decoded *out)
{
	struct fring_xattr_args *x = &out->a.xattr;
	int rc;

	x->size = sizeof(*x);
	x->nodeid = out->nodeid;
	if (op == FUSE_GETXATTR || op == FUSE_LISTXATTR) {
		if (u->getxattr.size > MAX_IO_SIZE)
			return -EPROTO;
		x->max = u->getxattr.size;
	}
	if (op == FUSE_LISTXATTR)
		return 0;
	rc = take_name(c, &x->name, &x->namelen);
	if (rc || op != FUSE_SETXATTR)
		return rc;
	if (u->setxattr.size > c->left)
		return -EPROTO;
	x->value = c->p;
	x->value_len = u->setxattr.size;
	x->flags = u->setxattr.flags;
	x->setxattr_flags = u->setxattr.setxattr_flags; /* 0 unless ext */
	return 0;
}

int fring_dec_write(uint32_t op, const union arg0 *u, size_t a0len,
		    struct cursor *c, const struct fring_proto_conn *conn,
		    struct fring_decoded *out)
{
	struct fring_write_args *w = &out->a.write;
	uint32_t max = conn ? conn->max_write : 0;

	if (u->write.size > c->left || (max && u->write.size > max))
		return -EPROTO;
	w->size = sizeof(*w);
	w->len = u->write.size;
	w->nodeid = out->nodeid;
	w->fh = u->write.fh;
	w->offset = u->write.offset;
	w->lock_owner = u->write.lock_owner;
	w->write_flags = u->write.write_flags;
	w->flags = u->write.flags;
	w->data = c->p;
	return 0;
}

/* READ READDIR READDIRPLUS */
int fring_dec_read(uint32_t op, const union arg0 *u, size_t a0len,
		   struct cursor *c, const struct fring_proto_conn *conn,
		   struct fring_decoded *out)
{
	struct fring_read_args *r = &out->a.read;

	if (u->read.size > MAX_IO_SIZE)
		return -EPROTO;
	r->size = sizeof(*r);
	r->len = u->read.size;
	r->nodeid = out->nodeid;
	r->fh = u->read.fh;
	r->offset = u->read.offset;
	r->lock_owner = u->read.lock_owner;
	r->read_flags = u->read.read_flags;
	r->flags = u->read.flags;
	return 0;
}

/* RELEASE RELEASEDIR FLUSH FSYNC FSYNCDIR GETLK SETLK SETLKW */
int fring_dec_handle(uint32_t op, const union arg0 *u, size_t a0len,
		     struct cursor *c, const struct fring_proto_conn *conn,
		     struct fring_decoded *out)
{
	switch (op) {
	case FUSE_FLUSH:
		out->a.release = (struct fring_release_args){
			.size = sizeof(out->a.release), .nodeid = out->nodeid,
			.fh = u->flush.fh, .lock_owner = u->flush.lock_owner };
		return 0;
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
		out->a.release = (struct fring_release_args){
			.size = sizeof(out->a.release), .nodeid = out->nodeid,
			.fh = u->release.fh, .flags = u->release.flags,
			.release_flags = u->release.release_flags,
			.lock_owner = u->release.lock_owner };
		return 0;
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
		out->a.fsync = (struct fring_fsync_args){
			.size = sizeof(out->a.fsync), .nodeid = out->nodeid,
			.fh = u->fsync.fh,
			.datasync = u->fsync.fsync_flags & FUSE_FSYNC_FDATASYNC };
		return 0;
	case FUSE_GETLK:
	case FUSE_SETLK:
	case FUSE_SETLKW:
		out->a.lock = (struct fring_lock_args){
			.size = sizeof(out->a.lock), .nodeid = out->nodeid,
			.sleep = op == FUSE_SETLKW, .fh = u->lk.fh,
			.owner = u->lk.owner,
			.lock = { .start = u->lk.lk.start, .end = u->lk.lk.end,
				  .type = u->lk.lk.type, .pid = u->lk.lk.pid } };
		out->is_flock = !!(u->lk.lk_flags & FUSE_LK_FLOCK);
		return 0;
	}
	return -ENOSYS; /* routed here (ops.def) without a case */
}

/* GETATTR SETATTR OPEN OPENDIR ACCESS FALLOCATE LSEEK STATX COPY_* */
int fring_dec_inode(uint32_t op, const union arg0 *u, size_t a0len,
		    struct cursor *c, const struct fring_proto_conn *conn,
		    struct fring_decoded *out)
{
	const struct fuse_setattr_in *s = &u->setattr;

	switch (op) {
	case FUSE_GETATTR:
		out->a.getattr = (struct fring_getattr_args){
			.size = sizeof(out->a.getattr), .nodeid = out->nodeid,
			.flags = u->getattr.getattr_flags, .fh = u->getattr.fh };
		return 0;
	case FUSE_SETATTR:
		out->a.setattr = (struct fring_setattr_args){
			.size = sizeof(out->a.setattr), .nodeid = out->nodeid,
			.valid = s->valid, .fh = s->fh, .file_size = s->size,
			.lock_owner = s->lock_owner,
			.atime_sec = (int64_t)s->atime,
			.mtime_sec = (int64_t)s->mtime,
			.ctime_sec = (int64_t)s->ctime,
			.atime_nsec = s->atimensec, .mtime_nsec = s->mtimensec,
			.ctime_nsec = s->ctimensec, .mode = s->mode,
			.uid = s->uid, .gid = s->gid };
		return 0;
	case FUSE_OPEN:
	case FUSE_OPENDIR:
		out->a.open = (struct fring_open_args){
			.size = sizeof(out->a.open), .nodeid = out->nodeid,
			.flags = u->open.flags, .open_flags = u->open.open_flags };
		return 0;
	case FUSE_ACCESS:
		out->a.access = (struct fring_access_args){
			.size = sizeof(out->a.access), .nodeid = out->nodeid,
			.mask = u->access.mask };
		return 0;
	case FUSE_FALLOCATE:
		out->a.fallocate = (struct fring_fallocate_args){
			.size = sizeof(out->a.fallocate), .nodeid = out->nodeid,
			.fh = u->fallocate.fh, .offset = u->fallocate.offset,
			.length = u->fallocate.length, .mode = u->fallocate.mode };
		return 0;
	case FUSE_LSEEK:
		out->a.lseek = (struct fring_lseek_args){
			.size = sizeof(out->a.lseek), .nodeid = out->nodeid,
			.fh = u->lseek.fh, .offset = u->lseek.offset,
			.whence = u->lseek.whence };
		return 0;
	case FUSE_STATX:
		out->a.statx = (struct fring_statx_args){
			.size = sizeof(out->a.statx), .nodeid = out->nodeid,
			.getattr_flags = u->statx.getattr_flags,
			.fh = u->statx.fh, .sx_flags = u->statx.sx_flags,
			.sx_mask = u->statx.sx_mask };
		return 0;
	case FUSE_COPY_FILE_RANGE:
	case FUSE_COPY_FILE_RANGE_64:
		out->a.copy = (struct fring_copy_range_args){
			.size = sizeof(out->a.copy), .nodeid_in = out->nodeid,
			.fh_in = u->copy.fh_in, .off_in = u->copy.off_in,
			.nodeid_out = u->copy.nodeid_out, .fh_out = u->copy.fh_out,
			.off_out = u->copy.off_out, .len = u->copy.len,
			.flags = u->copy.flags };
		return 0;
	}
	return -ENOSYS; /* routed here (ops.def) without a case */
}

int fring_dec_forget(uint32_t op, const union arg0 *u, size_t a0len,
		     struct cursor *c, const struct fring_proto_conn *conn,
		     struct fring_decoded *out)
{
	out->a.forget.nlookup = u->forget.nlookup;
	return 0;
}

int fring_dec_batch_forget(uint32_t op, const union arg0 *u, size_t a0len,
			   struct cursor *c, const struct fring_proto_conn *conn,
			   struct fring_decoded *out)
{
	if ((uint64_t)u->batch_forget.count *
	    sizeof(struct fuse_forget_one) > c->left)
		return -EPROTO;
	out->a.batch_forget.count = u->batch_forget.count;
	out->a.batch_forget.items =
		(const struct fuse_forget_one *)(const void *)c->p;
	return 0;
}

int fring_dec_interrupt(uint32_t op, const union arg0 *u, size_t a0len,
			struct cursor *c, const struct fring_proto_conn *conn,
			struct fring_decoded *out)
{
	out->a.interrupt.unique = u->interrupt.unique;
	return 0;
}

int fring_dec_init(uint32_t op, const union arg0 *u, size_t a0len,
		   struct cursor *c, const struct fring_proto_conn *conn,
		   struct fring_decoded *out)
{
	out->a.init = u->init; /* bytes past a0len were zeroed */
	/* flags2 means nothing without INIT_EXT (or if it was cut off). */
	if (a0len < offsetof(struct fuse_init_in, flags2) + 4 ||
	    !(u->init.flags & FUSE_INIT_EXT))
		out->a.init.flags2 = 0;
	return 0;
}

/* Arg 0 checked, nothing served (IOCTL POLL BMAP). */
int fring_dec_enosys(uint32_t op, const union arg0 *u, size_t a0len,
		     struct cursor *c, const struct fring_proto_conn *conn,
		     struct fring_decoded *out)
{
	return -ENOSYS;
}

/* READLINK STATFS DESTROY SYNCFS NOTIFY_REPLY: the node only. */
int fring_dec_node(uint32_t op, const union arg0 *u, size_t a0len,
		   struct cursor *c, const struct fring_proto_conn *conn,
		   struct fring_decoded *out)
{
	out->a.node.size = sizeof(out->a.node);
	out->a.node.nodeid = out->nodeid;
	return 0;
}
