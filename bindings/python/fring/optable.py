# SPDX-License-Identifier: MIT
"""The operations of struct fring_fs_ops (plugin.h), in its order, with
the C type of each one's arguments. fring_python.so's ops table lists
every one (build_plugin declares a callback per entry; bind.py fills the
table): the ops table is the plugin's, shared by all its mounts, so each
mount's class decides by what it defines (init drops the capabilities of
what it lacks, and a missing method answers as the host does for a NULL
slot)."""

# (op, args struct); forget has its own signature (no request).
OPS = [
    ("lookup", "struct fring_name_args"),
    ("forget", None),
    ("getattr", "struct fring_getattr_args"),
    ("setattr", "struct fring_setattr_args"),
    ("readlink", "struct fring_node_args"),
    ("mknod", "struct fring_make_args"),
    ("mkdir", "struct fring_make_args"),
    ("symlink", "struct fring_make_args"),
    ("unlink", "struct fring_name_args"),
    ("rmdir", "struct fring_name_args"),
    ("rename", "struct fring_rename_args"),
    ("link", "struct fring_link_args"),
    ("open", "struct fring_open_args"),
    ("read", "struct fring_read_args"),
    ("write", "struct fring_write_args"),
    ("flush", "struct fring_release_args"),
    ("release", "struct fring_release_args"),
    ("fsync", "struct fring_fsync_args"),
    ("opendir", "struct fring_open_args"),
    ("readdir", "struct fring_read_args"),
    ("readdirplus", "struct fring_read_args"),
    ("releasedir", "struct fring_release_args"),
    ("fsyncdir", "struct fring_fsync_args"),
    ("statfs", "struct fring_node_args"),
    ("setxattr", "struct fring_xattr_args"),
    ("getxattr", "struct fring_xattr_args"),
    ("listxattr", "struct fring_xattr_args"),
    ("removexattr", "struct fring_xattr_args"),
    ("access", "struct fring_access_args"),
    ("create", "struct fring_make_args"),
    ("getlk", "struct fring_lock_args"),
    ("setlk", "struct fring_lock_args"),
    ("flock", "struct fring_lock_args"),
    ("fallocate", "struct fring_fallocate_args"),
    ("lseek", "struct fring_lseek_args"),
    ("copy_file_range", "struct fring_copy_range_args"),
    ("tmpfile", "struct fring_make_args"),
    ("statx", "struct fring_statx_args"),
]

# The methods a Filesystem class may define: the ops, write's write_fd,
# init (FUSE_INIT) and the takeover's state_save/state_load (`fring
# restart`). Any other public method gets a warning at mount.
METHODS = frozenset([op for op, _ in OPS] +
                    ["write_fd", "init", "state_save", "state_load"])


def callbacks():
    """The extern "Python" declarations of fring_python.so (build_plugin)."""
    lines = [
        'extern "Python" int32_t fring_py_create(fring_mount *, void **);',
        'extern "Python" int32_t fring_py_config(void *, const char *, const char *);',
        'extern "Python" int32_t fring_py_config_complete(void *);',
        'extern "Python" int32_t fring_py_init(void *, struct fring_conn *);',
        'extern "Python" void fring_py_destroy(void *);',
        'extern "Python" int32_t fring_py_state_save(void *, int, uint32_t *);',
        'extern "Python" int32_t fring_py_state_load(void *, int, uint32_t);',
        'extern "Python" void fring_py_op_forget(void *, const struct fring_forget_one *, uint32_t);',
    ]
    lines += ['extern "Python" void fring_py_op_%s(void *, fring_req *, const %s *);'
              % (op, args) for op, args in OPS if args]
    return "\n".join(lines) + "\n"
