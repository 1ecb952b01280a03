// SPDX-License-Identifier: MIT
/*
 * memfs internals: the in-memory tree shared by the op files.
 *
 * Locking: one rwlock per instance (struct memfs.lock) guards the whole
 * tree. Ops that change anything take it for writing. Ops that only read
 * (getattr, read, readdir, ...) take it for reading; lookup and readdirplus
 * also bump nlookup, which they do with atomics so that they can share the
 * lock. Only forget/unlink/release paths (write lock held) free inodes, so
 * a reader never sees an inode disappear under it.
 */
#ifndef MEMFS_H
#define MEMFS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <fring/plugin-helpers.h>

#define MFS_ROOT_INO 1 /* FUSE_ROOT_ID */
#define MFS_CHUNK_SHIFT 16
#define MFS_CHUNK_SIZE (1u << MFS_CHUNK_SHIFT) /* file data granule */
#define MFS_CHUNK_MIN 512u /* smallest chunk buffer */
#define MFS_NAME_MAX 255
#define MFS_XATTR_NAME_MAX 255
#define MFS_XATTR_SIZE_MAX 65536
#define MFS_LINK_MAX 65000u /* hard links to a file, like ext4 */
/* Subdirectories per directory: only the 32-bit nlink limits them. */
#define MFS_DIR_NLINK_MAX (UINT32_MAX - 1)
#define MFS_BLKSIZE 4096u
/* Largest file: what the kernel accepts (MAX_LFS_FILESIZE on 64-bit). */
#define MFS_MAX_FILE_SIZE ((uint64_t)INT64_MAX)

/* Sparse file data: a radix tree of MFS_CHUNK_SIZE chunks (data.c). */
struct mfs_data {
	void *root;      /* a chunk (height 0) or an interior node */
	uint32_t height; /* levels of interior nodes above the chunks */
	uint64_t bytes;  /* chunk buffer bytes allocated */
};

/* One directory entry. cookie is the stable readdir offset. */
struct mfs_dirent {
	struct mfs_dirent *hnext; /* name hash chain */
	struct mfs_inode *inode;
	uint64_t cookie;
	uint32_t hash;
	uint32_t slot; /* index in mfs_dir.slots */
	uint32_t namelen;
	char name[];
};

/* A slot of the cookie-ordered entry array; de == NULL once removed. The
 * cookie stays so that binary search keeps working over tombstones. */
struct mfs_dslot {
	uint64_t cookie;
	struct mfs_dirent *de;
};

struct mfs_dir {
	struct mfs_dslot *slots;
	uint32_t nslots, cap;
	uint32_t nlive;
	uint32_t nbuckets; /* power of two, 0 before the first insert */
	struct mfs_dirent **buckets;
	uint64_t next_cookie;
	struct mfs_inode *parent; /* "..", NULL once the dir is removed */
};

struct mfs_xattr {
	char *name;
	void *value;
	uint32_t namelen;
	uint32_t len;
};

struct mfs_inode {
	struct mfs_inode *hnext; /* inode table chain */
	uint64_t ino;
	uint64_t gen;
	uint64_t nlookup; /* kernel references (entries replied - forgotten) */
	uint32_t nlink;
	uint32_t nopen; /* open file/dir handles */
	uint32_t mode, uid, gid, rdev;
	bool tmpfile; /* made by O_TMPFILE and not yet linked */
	uint64_t size;
	struct timespec atime, mtime, ctime;
	struct mfs_xattr *xattrs;
	uint32_t nxattrs;
	union {
		struct mfs_data data; /* S_IFREG */
		struct mfs_dir dir;   /* S_IFDIR */
		char *target;         /* S_IFLNK, size bytes + NUL */
	};
};

struct memfs {
	fring_mount *m;
	pthread_rwlock_t lock;

	/* Options. */
	uint32_t uid, gid, root_mode;
	uint64_t size_limit;  /* bytes of file data */
	uint64_t inode_limit; /* inodes */
	uint64_t entry_ns, attr_ns, negative_ns;
	bool check_perms; /* enforce mode bits (mounts without default_permissions) */

	/* Inode table: chained hash on ino. */
	struct mfs_inode **itab;
	uint64_t nbuckets, ninodes;
	uint64_t next_ino;
	uint64_t used_bytes; /* chunk buffers of all files */
	struct mfs_inode *root;
};

/* Caller credentials of a request. */
struct mfs_cred {
	uint32_t uid, gid, pid;
};

/* inode.c */
int mfs_itab_init(struct memfs *fs);
void mfs_itab_destroy(struct memfs *fs);
struct mfs_inode *mfs_iget(struct memfs *fs, uint64_t ino);
struct mfs_inode *mfs_inew(struct memfs *fs, uint32_t mode, uint32_t uid,
			   uint32_t gid);
void mfs_maybe_free(struct memfs *fs, struct mfs_inode *in);
void mfs_now(struct timespec *ts);
void mfs_touch(struct mfs_inode *in, bool mtime); /* ctime (+mtime) = now */
void mfs_fill_attr(const struct mfs_inode *in, struct fring_attr *a);
void mfs_fill_entry(const struct memfs *fs, const struct mfs_inode *in,
		    struct fring_entry *e);
void mfs_lookup_inc(struct mfs_inode *in);
void mfs_lookup_undo(struct memfs *fs, struct mfs_inode *in, bool wrlocked);
int mfs_reply_entry(struct memfs *fs, fring_req *r, struct mfs_inode *in);
/* Drop n kernel references from inode ino (write lock held). */
void mfs_forget_ino(struct memfs *fs, uint64_t ino, uint64_t n);
/* Drop one open handle (release/releasedir, write lock held). */
void mfs_put_handle(struct memfs *fs, uint64_t ino);

/* dir.c */
void mfs_dir_init(struct mfs_dir *d, struct mfs_inode *parent);
void mfs_dir_free(struct mfs_dir *d);
struct mfs_dirent *mfs_dir_find(const struct mfs_dir *d, const char *name,
				uint32_t namelen);
int mfs_dir_add(struct mfs_dir *d, const char *name, uint32_t namelen,
		struct mfs_inode *in);
void mfs_dir_remove(struct mfs_dir *d, struct mfs_dirent *de);
/* First live slot index with cookie > after, or d->nslots. */
uint32_t mfs_dir_seek(const struct mfs_dir *d, uint64_t after);

/* data.c */
void mfs_data_free(struct memfs *fs, struct mfs_data *d);
bool mfs_data_present(const struct mfs_data *d, uint64_t idx);
/* Buffer of chunk idx (NULL: hole) and how many bytes it holds (*cap);
 * bytes of the chunk past *cap are zero. */
const uint8_t *mfs_data_chunk(const struct mfs_data *d, uint64_t idx,
			      uint32_t *cap);
void mfs_data_read(const struct mfs_data *d, uint64_t off, uint32_t len,
		   uint8_t *out);
ssize_t mfs_data_write(struct memfs *fs, struct mfs_data *d, uint64_t off,
		       const uint8_t *buf, uint64_t len);
void mfs_data_truncate(struct memfs *fs, struct mfs_data *d, uint64_t oldsize,
		       uint64_t newsize);
int mfs_data_allocate(struct memfs *fs, struct mfs_data *d, uint64_t off,
		      uint64_t len);
void mfs_data_punch(struct memfs *fs, struct mfs_data *d, uint64_t off,
		    uint64_t len);
/* Smallest present chunk index >= idx, or UINT64_MAX. */
uint64_t mfs_data_next(const struct mfs_data *d, uint64_t idx);

/* perm.c */
void mfs_cred(fring_req *r, struct mfs_cred *c);
bool mfs_in_group(const struct mfs_cred *c, uint32_t gid);
int mfs_may(const struct mfs_inode *in, const struct mfs_cred *c, int mask);
/* mfs_may() when the check_permissions option is on, else 0. */
int mfs_check(const struct memfs *fs, const struct mfs_inode *in,
	      const struct mfs_cred *c, int mask);
/* The access mask opening with open(2) flags needs. */
int mfs_open_mask(uint32_t flags);
int mfs_sticky_ok(const struct mfs_inode *dir, const struct mfs_inode *in,
		  const struct mfs_cred *c);
uint32_t mfs_kill_suidgid(uint32_t mode);

/* ops_remove.c: take the name `de` out of directory p (write lock held),
 * updating link counts and times; frees the inode if that was its last
 * reference. */
void mfs_unlink_entry(struct memfs *fs, struct mfs_inode *p,
		      struct mfs_dirent *de, const struct timespec *now);

/* state.c: the ABI 1.7 takeover hooks. */
int32_t mfs_state_save(void *inst, int fd, uint32_t *version);
int32_t mfs_state_load(void *inst, int fd, uint32_t version);

/* xattr.c */
void mfs_xattr_free(struct mfs_inode *in);

/* Reply helpers. */
static inline void mfs_err(fring_req *r, int neg)
{
	fring_host->reply_err(r, neg);
}

static inline bool mfs_name_ok(uint32_t len)
{
	return len > 0 && len <= MFS_NAME_MAX;
}

#endif /* MEMFS_H */
