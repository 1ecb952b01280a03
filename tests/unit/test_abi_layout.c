// SPDX-License-Identifier: MIT
/*
 * Frozen layout of the plugin ABI 1.5 (LP64). A failure here means an
 * accidental ABI break: structs may only grow at the end, with a minor bump
 * (abi/CHANGELOG.md), and existing offsets never move.
 */
#include <criterion/criterion.h>
#include <stddef.h>

#include <fring/plugin.h>

#define SIZE(t, n) cr_expect_eq(sizeof(struct t), (size_t)(n), #t " is %zu", sizeof(struct t))
#define OFF(t, f, n) cr_expect_eq(offsetof(struct t, f), (size_t)(n), #t "." #f " at %zu", offsetof(struct t, f))

Test(abi_layout, lp64_only)
{
	cr_assert_eq(sizeof(void *), 8);
}

Test(abi_layout, reply_payloads)
{
	SIZE(fring_attr, 88);
	OFF(fring_attr, mode, 60);
	OFF(fring_attr, flags, 84);
	SIZE(fring_entry, 120);
	OFF(fring_entry, attr, 32);
	SIZE(fring_open_out, 16);
	SIZE(fring_statfs, 56);
	SIZE(fring_lock, 24);
	SIZE(fring_forget_one, 16);
}

Test(abi_layout, op_args)
{
	SIZE(fring_name_args, 24);
	SIZE(fring_node_args, 16);
	SIZE(fring_getattr_args, 24);
	SIZE(fring_setattr_args, 88);
	OFF(fring_setattr_args, file_size, 24);
	SIZE(fring_make_args, 56);
	OFF(fring_make_args, link_target, 40);
	SIZE(fring_rename_args, 48);
	SIZE(fring_link_args, 32);
	SIZE(fring_open_args, 24);
	SIZE(fring_read_args, 48);
	SIZE(fring_write_args, 56);
	OFF(fring_write_args, data, 48);
	SIZE(fring_release_args, 40);
	SIZE(fring_fsync_args, 24);
	SIZE(fring_xattr_args, 48);
	SIZE(fring_access_args, 16);
	SIZE(fring_lock_args, 56);
	SIZE(fring_fallocate_args, 40);
	SIZE(fring_lseek_args, 32);
	SIZE(fring_copy_range_args, 72);
	SIZE(fring_statx_args, 32);
}

Test(abi_layout, tables)
{
	SIZE(fring_conn, 48);
	OFF(fring_conn, capable, 24);
	SIZE(fring_req_ctx, 40);
	SIZE(fring_host_api, 248);
	SIZE(fring_statx, 128);
	OFF(fring_statx, btime_sec, 96);
	OFF(fring_host_api, log, 16);
	OFF(fring_host_api, reply_err, 72);
	OFF(fring_host_api, mount_request_shutdown, 192);
	OFF(fring_host_api, req_read_fd, 200); /* 1.1 */
	OFF(fring_host_api, req_write_fd, 208);
	OFF(fring_host_api, reply_statx, 216);
	OFF(fring_host_api, mount_point, 224); /* 1.2 */
	OFF(fring_host_api, backing_open, 232); /* 1.3 */
	OFF(fring_host_api, backing_close, 240);
	SIZE(fring_fs_ops, 312);
	OFF(fring_fs_ops, lookup, 8);
	OFF(fring_fs_ops, statx, 304);
	SIZE(fring_plugin, 152);
	OFF(fring_plugin, name, 24);
	OFF(fring_plugin, create, 64);
	OFF(fring_plugin, ops, 112);
	OFF(fring_plugin, features, 120); /* 1.4 */
	OFF(fring_plugin, state_save, 128); /* 1.7 */
	OFF(fring_plugin, state_load, 136);
	OFF(fring_plugin, state_live, 144); /* 1.8 */
}
