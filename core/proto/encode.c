// SPDX-License-Identifier: MIT
/*
 * Reply body encoders: ABI structs (plugin.h) to kernel structs. Every
 * output is fully written, padding included, so no stack bytes reach the
 * kernel.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "proto.h"

#define NSEC_PER_SEC 1000000000ull
/* Longest name the kernel accepts in a dirent (FUSE_NAME_MAX). */
#define DIRENT_NAME_MAX 1024u

_Static_assert(sizeof(struct fuse_attr) == 88, "fuse_attr");
_Static_assert(sizeof(struct fuse_entry_out) == 128, "fuse_entry_out");
_Static_assert(sizeof(struct fuse_attr_out) == 104, "fuse_attr_out");
_Static_assert(sizeof(struct fuse_kstatfs) == 80, "fuse_kstatfs");
_Static_assert(sizeof(struct fuse_direntplus) == FUSE_NAME_OFFSET_DIRENTPLUS,
	       "fuse_direntplus");

void fring_encode_attr(const struct fring_attr *a, struct fuse_attr *out)
{
	*out = (struct fuse_attr){
		.ino = a->ino, .size = a->size, .blocks = a->blocks,
		.atime = (uint64_t)a->atime_sec,
		.mtime = (uint64_t)a->mtime_sec,
		.ctime = (uint64_t)a->ctime_sec,
		.atimensec = a->atime_nsec, .mtimensec = a->mtime_nsec,
		.ctimensec = a->ctime_nsec, .mode = a->mode, .nlink = a->nlink,
		.uid = a->uid, .gid = a->gid, .rdev = a->rdev,
		.blksize = a->blksize, .flags = a->flags,
	};
}

void fring_encode_entry(const struct fring_entry *e, struct fuse_entry_out *out)
{
	memset(out, 0, sizeof(*out));
	out->nodeid = e->ino;
	out->generation = e->generation;
	out->entry_valid = e->entry_timeout_ns / NSEC_PER_SEC;
	out->entry_valid_nsec = (uint32_t)(e->entry_timeout_ns % NSEC_PER_SEC);
	out->attr_valid = e->attr_timeout_ns / NSEC_PER_SEC;
	out->attr_valid_nsec = (uint32_t)(e->attr_timeout_ns % NSEC_PER_SEC);
	fring_encode_attr(&e->attr, &out->attr);
}

void fring_encode_attr_out(const struct fring_attr *a, uint64_t timeout_ns,
			   struct fuse_attr_out *out)
{
	memset(out, 0, sizeof(*out));
	out->attr_valid = timeout_ns / NSEC_PER_SEC;
	out->attr_valid_nsec = (uint32_t)(timeout_ns % NSEC_PER_SEC);
	fring_encode_attr(a, &out->attr);
}

/* dev_t in the kernel's new_encode_dev layout -> major/minor. */
static uint32_t rdev_major(uint32_t rdev) { return (rdev & 0xfff00u) >> 8; }
static uint32_t rdev_minor(uint32_t rdev)
{
	return (rdev & 0xffu) | ((rdev >> 12) & 0xfff00u);
}

void fring_encode_statx(const struct fring_statx *sx, uint64_t timeout_ns,
			struct fuse_statx_out *out)
{
	const struct fring_attr *a = &sx->attr;
	struct fuse_statx *st = &out->stat;

	memset(out, 0, sizeof(*out));
	out->attr_valid = timeout_ns / NSEC_PER_SEC;
	out->attr_valid_nsec = (uint32_t)(timeout_ns % NSEC_PER_SEC);
	st->mask = sx->mask;
	st->blksize = a->blksize;
	st->attributes = sx->attributes;
	st->attributes_mask = sx->attributes_mask;
	st->nlink = a->nlink;
	st->uid = a->uid;
	st->gid = a->gid;
	st->mode = (uint16_t)a->mode;
	st->ino = a->ino;
	st->size = a->size;
	st->blocks = a->blocks;
	st->atime = (struct fuse_sx_time){ a->atime_sec, a->atime_nsec, 0 };
	st->btime = (struct fuse_sx_time){ sx->btime_sec, sx->btime_nsec, 0 };
	st->ctime = (struct fuse_sx_time){ a->ctime_sec, a->ctime_nsec, 0 };
	st->mtime = (struct fuse_sx_time){ a->mtime_sec, a->mtime_nsec, 0 };
	st->rdev_major = rdev_major(a->rdev);
	st->rdev_minor = rdev_minor(a->rdev);
}

void fring_encode_open(const struct fring_open_out *o, struct fuse_open_out *out)
{
	*out = (struct fuse_open_out){
		.fh = o->fh, .open_flags = o->open_flags,
		.backing_id = o->backing_id,
	};
}

void fring_encode_statfs(const struct fring_statfs *s, struct fuse_statfs_out *out)
{
	memset(out, 0, sizeof(*out));
	out->st.blocks = s->blocks;
	out->st.bfree = s->bfree;
	out->st.bavail = s->bavail;
	out->st.files = s->files;
	out->st.ffree = s->ffree;
	out->st.bsize = s->bsize;
	out->st.namelen = s->namelen;
	out->st.frsize = s->frsize;
}

/* The kernel fails the whole READDIR with EIO on such a name. */
static int bad_dirent_name(const char *name, uint32_t namelen)
{
	return !name || namelen == 0 || namelen > DIRENT_NAME_MAX ||
	       memchr(name, '/', namelen) || memchr(name, '\0', namelen);
}

/* Accept an S_IF* mode type (the ABI's) or a DT_* value. */
static uint32_t dirent_type(uint32_t type)
{
	return type & S_IFMT ? (type & S_IFMT) >> 12 : type;
}

static int fits(size_t cap, size_t used, size_t rec)
{
	return used <= cap && rec <= cap - used;
}

/* Dirent at dst (possibly unaligned), zero padded to rec bytes. */
static void put_dirent(uint8_t *dst, size_t rec, const char *name,
		       uint32_t namelen, uint64_t ino, uint32_t type,
		       uint64_t off)
{
	struct fuse_dirent d = { .ino = ino, .off = off, .namelen = namelen,
				 .type = dirent_type(type) };

	memcpy(dst, &d, FUSE_NAME_OFFSET);
	memcpy(dst + FUSE_NAME_OFFSET, name, namelen);
	memset(dst + FUSE_NAME_OFFSET + namelen, 0,
	       rec - FUSE_NAME_OFFSET - namelen);
}

int fring_encode_dirent(void *buf, size_t cap, size_t *used, const char *name,
			uint32_t namelen, uint64_t ino, uint32_t type,
			uint64_t off)
{
	size_t rec = FUSE_DIRENT_SIZE(namelen);

	if (bad_dirent_name(name, namelen))
		return -EINVAL;
	if (!fits(cap, *used, rec))
		return 0;
	put_dirent((uint8_t *)buf + *used, rec, name, namelen, ino, type, off);
	*used += rec;
	return 1;
}

int fring_encode_direntplus(void *buf, size_t cap, size_t *used,
			    const char *name, uint32_t namelen,
			    const struct fring_entry *e, uint64_t off)
{
	size_t rec = FUSE_DIRENTPLUS_SIZE(namelen);
	struct fuse_entry_out eo;
	uint8_t *dst;

	if (bad_dirent_name(name, namelen))
		return -EINVAL;
	if (!fits(cap, *used, rec))
		return 0;
	dst = (uint8_t *)buf + *used;
	fring_encode_entry(e, &eo);
	memcpy(dst, &eo, sizeof(eo));
	/* d_ino is the file's inode number (attr.ino), not the nodeid: they
	 * differ for plugins such as passthrough, and e->ino == 0 (nothing for
	 * the kernel to cache, no lookup counted) must not list as d_ino 0,
	 * which readdir(3) hides. */
	put_dirent(dst + sizeof(eo), rec - sizeof(eo), name, namelen,
		   e->attr.ino ? e->attr.ino : e->ino, e->attr.mode, off);
	*used += rec;
	return 1;
}

int32_t fring_proto_sanitize_error(int32_t err, int *bad)
{
	int ok = err <= 0 && err > -FUSE_ERRNO_LIMIT;

	if (bad)
		*bad = !ok;
	return ok ? err : -EIO;
}
