// SPDX-License-Identifier: MIT
/*
 * memfs operation entry points, one group per ops_*.c file; memfs.c puts
 * them into the fring_fs_ops table.
 */
#ifndef MEMFS_OPS_H
#define MEMFS_OPS_H

#include "memfs.h"

/* ops_node.c */
void mfs_op_lookup(void *inst, fring_req *r, const struct fring_name_args *a);
void mfs_op_forget(void *inst, const struct fring_forget_one *items,
		   uint32_t count);
void mfs_op_getattr(void *inst, fring_req *r,
		    const struct fring_getattr_args *a);
void mfs_op_readlink(void *inst, fring_req *r, const struct fring_node_args *a);
void mfs_op_access(void *inst, fring_req *r, const struct fring_access_args *a);
void mfs_op_statfs(void *inst, fring_req *r, const struct fring_node_args *a);

/* ops_setattr.c */
void mfs_op_setattr(void *inst, fring_req *r,
		    const struct fring_setattr_args *a);

/* ops_make.c */
void mfs_op_mknod(void *inst, fring_req *r, const struct fring_make_args *a);
void mfs_op_mkdir(void *inst, fring_req *r, const struct fring_make_args *a);
void mfs_op_symlink(void *inst, fring_req *r, const struct fring_make_args *a);
void mfs_op_create(void *inst, fring_req *r, const struct fring_make_args *a);
void mfs_op_tmpfile(void *inst, fring_req *r, const struct fring_make_args *a);
void mfs_op_link(void *inst, fring_req *r, const struct fring_link_args *a);

/* ops_remove.c */
void mfs_op_unlink(void *inst, fring_req *r, const struct fring_name_args *a);
void mfs_op_rmdir(void *inst, fring_req *r, const struct fring_name_args *a);

/* ops_rename.c */
void mfs_op_rename(void *inst, fring_req *r, const struct fring_rename_args *a);

/* ops_file.c */
void mfs_op_open(void *inst, fring_req *r, const struct fring_open_args *a);
void mfs_op_read(void *inst, fring_req *r, const struct fring_read_args *a);
void mfs_op_write(void *inst, fring_req *r, const struct fring_write_args *a);
void mfs_op_flush(void *inst, fring_req *r, const struct fring_release_args *a);
void mfs_op_release(void *inst, fring_req *r,
		    const struct fring_release_args *a);
void mfs_op_fsync(void *inst, fring_req *r, const struct fring_fsync_args *a);

/* ops_space.c */
void mfs_op_fallocate(void *inst, fring_req *r,
		      const struct fring_fallocate_args *a);
void mfs_op_lseek(void *inst, fring_req *r, const struct fring_lseek_args *a);
void mfs_op_copy_file_range(void *inst, fring_req *r,
			    const struct fring_copy_range_args *a);

/* ops_dir.c */
void mfs_op_opendir(void *inst, fring_req *r, const struct fring_open_args *a);
void mfs_op_readdir(void *inst, fring_req *r, const struct fring_read_args *a);
void mfs_op_readdirplus(void *inst, fring_req *r,
			const struct fring_read_args *a);
void mfs_op_releasedir(void *inst, fring_req *r,
		       const struct fring_release_args *a);
void mfs_op_fsyncdir(void *inst, fring_req *r,
		     const struct fring_fsync_args *a);

/* xattr.c */
void mfs_op_setxattr(void *inst, fring_req *r, const struct fring_xattr_args *a);
void mfs_op_getxattr(void *inst, fring_req *r, const struct fring_xattr_args *a);
void mfs_op_listxattr(void *inst, fring_req *r,
		      const struct fring_xattr_args *a);
void mfs_op_removexattr(void *inst, fring_req *r,
			const struct fring_xattr_args *a);

#endif /* MEMFS_OPS_H */
