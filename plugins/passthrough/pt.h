// SPDX-License-Identifier: MIT
/*
 * passthrough plugin: internal interfaces shared by its source files.
 *
 * Known inodes never hold an open descriptor of their own: each stores a
 * kernel file handle (or, in the path fallback, its parent and name) and
 * O_PATH descriptors come from a bounded LRU cache (handle.c). This keeps
 * the open-file count bounded however many inodes the kernel remembers.
 */
#ifndef PT_H
#define PT_H

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <fring/plugin-helpers.h>

#define PT_ROOT_ID 1

struct pt_inode {
	uint64_t nodeid;
	uint64_t generation;
	dev_t dev;
	ino_t ino;
	uint32_t type; /* S_IFMT bits */
	uint64_t nlookup; /* kernel references */
	uint32_t refs;    /* internal holds: path-mode children, ops in flight */
	struct pt_inode *hnext; /* hash chain on (dev, ino) */
	bool hashed; /* false once superseded by a newer inode with this key */

	/* Cached O_PATH descriptor (-1: none). */
	int fd;
	uint32_t fd_users;  /* ops using fd right now: not evictable */
	bool pinned;        /* fd kept outside the LRU (unlinked, path mode) */
	bool tmpfile;       /* O_TMPFILE not linked yet: pinned for that */
	struct pt_inode *lru_prev, *lru_next;

	/* Kernel passthrough (backing.c): the registered backing file and
	 * the opens using it; opens served without it. */
	int32_t backing_id; /* 0: none */
	uint32_t backing_opens, plain_opens;

	/* Identity: a file handle, or else (parent, name). */
	struct file_handle *handle;
	struct pt_inode *parent;
	char *name;
};

struct pt_dir;
struct pt_io;

/* An open file or directory (fh.c); fh is its slot. */
struct pt_open {
	int fd;         /* -1: lost at a takeover (EIO) */
	uint32_t flags; /* open(2) flags it was opened with */
	uint64_t nodeid;
	struct pt_dir *dir; /* OPENDIR: the stream on fd */
	bool used;
};

struct pt_fs {
	fring_mount *mount;

	/* Options. */
	char *source;
	uint64_t entry_timeout_ns;
	uint64_t attr_timeout_ns;
	uint32_t fd_cache_max;
	bool writeback;
	bool keep_cache;
	bool xattr;
	bool handles; /* option; cleared if the file system lacks support */
	bool zero_copy;      /* option: offer FOPEN_IO_URING_ZERO_COPY */
	uint64_t zero_copy_min; /* option: ...only to files this large at open */
	uint32_t io_threads; /* option: READ/WRITE on own threads (io.c) */
	struct pt_io *io;    /* NULL: served on the calling thread */

	/* Runtime. */
	int root_fd;       /* the source directory; mount fd for handles */
	int root_mount_id;
	mode_t umask;      /* process umask, re-applied bits are fixed up */
	bool writeback_on; /* negotiated in init */
	bool kernel_passthrough; /* option */
	bool passthrough_on;     /* wanted in init, not refused since (lock) */

	/* Path mode: held for writing across rename + name update, for
	 * reading while reopening an inode by its path. */
	pthread_rwlock_t path_lock;

	pthread_mutex_t lock; /* everything below */
	struct pt_inode **buckets;
	size_t nbuckets, ninodes;
	struct pt_inode **ids; /* nodeid -> inode */
	size_t nids;
	uint64_t *free_ids;
	size_t nfree, free_cap;
	uint64_t next_generation;
	struct pt_inode *lru_head, *lru_tail;
	struct pt_dir *dirs;   /* open directories (ops_dir.c) */
	struct pt_open **opens; /* PT_FH_CHUNKS chunk pointers (fh.c) */
	uint32_t opens_top;     /* slots below this were handed out */
	uint32_t *free_opens;
	size_t nfree_opens, free_opens_cap;
	uint32_t lru_count, pinned_count;
	struct pt_inode root;
	struct pt_live *live; /* restart: on_crash (live.c), NULL: off */
};

/* An inode held for one operation with a usable O_PATH fd. */
struct pt_ref {
	struct pt_inode *ino;
	int fd;
};

/* inode.c (callers hold fs->lock unless noted) */
int pt_table_init(struct pt_fs *fs, const struct stat *root_st);
void pt_table_destroy(struct pt_fs *fs);
struct pt_inode *pt_inode_by_id(struct pt_fs *fs, uint64_t nodeid);
struct pt_inode *pt_inode_find(struct pt_fs *fs, dev_t dev, ino_t ino);
struct pt_inode *pt_inode_new(struct pt_fs *fs, const struct stat *st);
/* state_load.c: buckets for n inodes at once, and one's insertion. */
int pt_table_reserve(struct pt_fs *fs, size_t n);
void pt_inode_hash(struct pt_fs *fs, struct pt_inode *ino);
void pt_inode_unhash(struct pt_fs *fs, struct pt_inode *ino);
void pt_inode_set_path(struct pt_fs *fs, struct pt_inode *ino,
		       struct pt_inode *parent, const char *name);
void pt_inode_unref(struct pt_fs *fs, struct pt_inode *ino, uint64_t nlookup,
		    uint32_t refs);
/* Takes the lock itself. */
void pt_forget_one(struct pt_fs *fs, uint64_t nodeid, uint64_t nlookup);

/* handle.c */
int pt_ref_get(struct pt_fs *fs, uint64_t nodeid, struct pt_ref *ref);
int pt_ref_get_inode(struct pt_fs *fs, struct pt_inode *ino,
		     struct pt_ref *ref);
void pt_ref_put(struct pt_fs *fs, struct pt_ref *ref);
/* Lock held; returns an fd the caller closes after unlocking, or -1. */
int pt_cache_offer_locked(struct pt_fs *fs, struct pt_inode *ino, int fd);
/* Lock held: the same, and keep fd pinned outside the LRU (tmpfile). */
int pt_cache_pin_locked(struct pt_fs *fs, struct pt_inode *ino, int fd);
void pt_lru_remove(struct pt_fs *fs, struct pt_inode *ino);
void pt_pin(struct pt_fs *fs, struct pt_inode *ino);
/* A tmpfile inode got a name (LINK): its fd goes back to the LRU. */
void pt_tmpfile_named(struct pt_fs *fs, uint64_t nodeid);
int pt_get_handle(struct pt_fs *fs, int fd, struct file_handle **out);
int pt_probe_handles(struct pt_fs *fs);

/* entry.c: resolve name in parent into a counted entry reply. fd is an
 * O_PATH (consumed, maybe cached) or, with opath false, an open file (kept
 * by the caller). */
int pt_make_entry(struct pt_fs *fs, struct pt_inode *parent, const char *name,
		  int fd, bool opath, struct fring_entry *e);
/* The entry of a new O_TMPFILE inode: no name; fd is the open file (kept
 * by the caller), opath_fd an O_PATH of it (consumed, pinned). */
int pt_make_tmpfile_entry(struct pt_fs *fs, int fd, int opath_fd,
			  struct fring_entry *e);
int pt_lookup_at(struct pt_fs *fs, struct pt_ref *parent, const char *name,
		 struct fring_entry *e);
int pt_stat_ref(struct pt_ref *ref, struct stat *st);
void pt_proc_path(char buf[32], int fd);

/* backing.c: kernel passthrough. An open's fh is its slot (fh.c), tagged in the
 * high bits with how the open counted in its inode. attach (after the fd
 * is open, before the reply) may turn o into a passthrough open; detach
 * undoes it at RELEASE or when the reply failed. Both take fs->lock. */
#define PT_FH_BACKING (1ull << 32)
#define PT_FH_PLAIN (1ull << 33)
/* The open was offered io_uring zero-copy (ops_file.c): its READ and WRITE
 * data may be reachable only through req_read_fd / req_write_fd. */
#define PT_FH_ZERO_COPY (1ull << 34)
bool pt_backing_supported(void);
void pt_backing_attach(struct pt_fs *fs, uint64_t nodeid,
		       struct fring_open_out *o);
void pt_backing_detach(struct pt_fs *fs, uint64_t nodeid, uint64_t fh);

/* fh.c: the open-file table. An fh is a slot number in the low 32 bits
 * plus the PT_FH_* flags; lookups take no lock. */
#define PT_FH_SLOT_MASK 0xffffffffull
#define PT_FH_CHUNK_SHIFT 10
#define PT_FH_CHUNKS (1u << 14) /* 16M open files at most */
int pt_fh_init(struct pt_fs *fs);
int pt_fh_new(struct pt_fs *fs, int fd, uint32_t flags, uint64_t nodeid,
	      struct pt_dir *dir, uint64_t *fh);
struct pt_open *pt_fh_get(struct pt_fs *fs, uint64_t fh);
int pt_fh_fd(struct pt_fs *fs, uint64_t fh); /* -1: none, or lost */
void pt_fh_free(struct pt_fs *fs, uint64_t fh);
int pt_fh_put_locked(struct pt_fs *fs, uint32_t slot, int fd, uint32_t flags,
		     uint64_t nodeid, struct pt_dir *dir);
int pt_fh_rebuild_free_locked(struct pt_fs *fs);
void pt_fh_destroy(struct pt_fs *fs);

/* state_save.c, state_load.c: takeover (ABI 1.7). */
int32_t pt_state_save(void *inst, int fd, uint32_t *version);
/* live.c: the tables kept for a restart after a crash (fs->lock held for
 * the pt_live_* records). Without `restart: on_crash` (or over io_uring)
 * the runtime never calls state_live, fs->live stays NULL, and each
 * record below costs one untaken branch on LOOKUP, FORGET, OPEN, CREATE,
 * RELEASE and UNLINK: no call, no syscall, no allocation. */
struct pt_live;
int32_t pt_state_live(void *inst, int fd, uint32_t flags);
void pt_live_destroy(struct pt_fs *fs);
void pt_live_inode_rec(struct pt_fs *fs, const struct pt_inode *in);
void pt_live_id_rec(struct pt_fs *fs, uint32_t type, uint64_t id);
void pt_live_open_rec(struct pt_fs *fs, uint32_t slot, uint32_t flags,
		      uint64_t nodeid, bool dir);
/* The log's records (live.c). */
enum { PT_LIVE_INODE = 1, PT_LIVE_GONE, PT_LIVE_OPEN, PT_LIVE_CLOSE };

static inline bool pt_live_on(const struct pt_fs *fs)
{
	return __builtin_expect(fs->live != NULL, 0);
}
static inline void pt_live_inode(struct pt_fs *fs, const struct pt_inode *in)
{
	if (pt_live_on(fs))
		pt_live_inode_rec(fs, in);
}
static inline void pt_live_gone(struct pt_fs *fs, uint64_t nodeid)
{
	if (pt_live_on(fs))
		pt_live_id_rec(fs, PT_LIVE_GONE, nodeid);
}
static inline void pt_live_open(struct pt_fs *fs, uint32_t slot, uint32_t flags,
				uint64_t nodeid, bool dir)
{
	if (pt_live_on(fs))
		pt_live_open_rec(fs, slot, flags, nodeid, dir);
}
static inline void pt_live_close(struct pt_fs *fs, uint32_t slot)
{
	if (pt_live_on(fs))
		pt_live_id_rec(fs, PT_LIVE_CLOSE, slot);
}
int32_t pt_state_load(void *inst, int fd, uint32_t version);
/* ops_dir.c: a directory stream on fd for a loaded state. */
struct pt_dir *pt_dir_adopt(struct pt_fs *fs, int fd);

/* creds.c: act as the caller for creating calls. */
struct pt_creds {
	int uid, gid;
	bool switched;
};
void pt_creds_enter(fring_req *r, struct pt_creds *c);
void pt_creds_leave(struct pt_creds *c);

/* ops_make.c: open(2) flags for the kernel's open/create flags. */
int pt_open_flags(struct pt_fs *fs, uint32_t flags);
/* Free the directories still open (no RELEASEDIR after an abort). */
void pt_dirs_close_all(struct pt_fs *fs);
/* The OPEN/CREATE reply for backing descriptor fd of nodeid, opened
 * with the kernel's flags and open(2) flags oflags: takes a slot. */
int pt_open_out(struct pt_fs *fs, uint32_t flags, int fd, int oflags,
		uint64_t nodeid, struct fring_open_out *o);

/* ops_file.c: after pt_open_out and pt_backing_attach, offer zero-copy
 * for a regular file the kernel does not pass through. */
void pt_open_zero_copy(struct pt_fs *fs, bool regular, int fd,
		       struct fring_open_out *o);
/* Answer one READ / WRITE on open file fh (the inline path and io.c). */
void pt_serve_read(fring_req *r, int fd, uint64_t fh, uint64_t off,
		   uint32_t len);
void pt_serve_write(fring_req *r, int fd, uint64_t fh, uint64_t off,
		    const void *data, uint32_t len);

/* io.c: option io_threads. create (config_complete) and start (init) do
 * nothing when it is 0; submit returns false when the caller must serve
 * the request itself; close replaces close(2) of an open file's fd at
 * RELEASE (deferred while queued items use it); destroy joins. */
int pt_io_create(struct pt_fs *fs);
void pt_io_start(struct pt_fs *fs);
bool pt_io_submit(struct pt_fs *fs, fring_req *r, bool write, int fd,
		  uint64_t fh, uint64_t off, uint32_t len, const void *data);
void pt_io_close(struct pt_fs *fs, int fd);
void pt_io_destroy(struct pt_fs *fs);

/* Shared op tables entries, one file per group. */
extern const struct fring_fs_ops pt_ops;

#define PT_OP(name, args)                                                     \
	void pt_##name(void *inst, fring_req *r, const struct args *a)
PT_OP(lookup, fring_name_args);
void pt_forget(void *inst, const struct fring_forget_one *items,
	       uint32_t count);
PT_OP(getattr, fring_getattr_args);
PT_OP(setattr, fring_setattr_args);
PT_OP(readlink, fring_node_args);
PT_OP(statfs, fring_node_args);
PT_OP(mknod, fring_make_args);
PT_OP(mkdir, fring_make_args);
PT_OP(symlink, fring_make_args);
PT_OP(create, fring_make_args);
PT_OP(tmpfile, fring_make_args);
PT_OP(link, fring_link_args);
PT_OP(unlink, fring_name_args);
PT_OP(rmdir, fring_name_args);
PT_OP(rename, fring_rename_args);
PT_OP(open, fring_open_args);
PT_OP(read, fring_read_args);
PT_OP(write, fring_write_args);
PT_OP(flush, fring_release_args);
PT_OP(release, fring_release_args);
PT_OP(fsync, fring_fsync_args);
PT_OP(fallocate, fring_fallocate_args);
PT_OP(lseek, fring_lseek_args);
PT_OP(copy_file_range, fring_copy_range_args);
PT_OP(opendir, fring_open_args);
PT_OP(readdir, fring_read_args);
PT_OP(readdirplus, fring_read_args);
PT_OP(releasedir, fring_release_args);
PT_OP(fsyncdir, fring_fsync_args);
PT_OP(setxattr, fring_xattr_args);
PT_OP(getxattr, fring_xattr_args);
PT_OP(listxattr, fring_xattr_args);
PT_OP(removexattr, fring_xattr_args);

#endif /* PT_H */
