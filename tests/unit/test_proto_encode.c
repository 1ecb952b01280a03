// SPDX-License-Identifier: MIT
/*
 * Reply encoders: field mapping, timeout splitting, dirent packing and
 * padding, the "does not fit" contract, error sanitising, opcode names.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <criterion/criterion.h>

#include "proto/proto.h"

static const struct fring_attr sample_attr = {
	.ino = 1001, .size = 2002, .blocks = 3003,
	.atime_sec = 1700000000, .mtime_sec = 1700000001,
	.ctime_sec = -5, .atime_nsec = 11, .mtime_nsec = 22,
	.ctime_nsec = 33, .mode = S_IFREG | 0644, .nlink = 2, .uid = 1000,
	.gid = 100, .rdev = 0x0801, .blksize = 4096, .flags = 0,
};

static void check_attr(const struct fuse_attr *k)
{
	cr_assert_eq(k->ino, 1001);
	cr_assert_eq(k->size, 2002);
	cr_assert_eq(k->blocks, 3003);
	cr_assert_eq(k->atime, 1700000000);
	cr_assert_eq(k->mtime, 1700000001);
	cr_assert_eq((int64_t)k->ctime, -5);
	cr_assert_eq(k->atimensec, 11);
	cr_assert_eq(k->mtimensec, 22);
	cr_assert_eq(k->ctimensec, 33);
	cr_assert_eq(k->mode, S_IFREG | 0644);
	cr_assert_eq(k->nlink, 2);
	cr_assert_eq(k->uid, 1000);
	cr_assert_eq(k->gid, 100);
	cr_assert_eq(k->rdev, 0x0801);
	cr_assert_eq(k->blksize, 4096);
	cr_assert_eq(k->flags, 0);
}

Test(encode, attr)
{
	struct fuse_attr k;

	memset(&k, 0xff, sizeof(k));
	fring_encode_attr(&sample_attr, &k);
	check_attr(&k);
}

Test(encode, entry_timeouts_split)
{
	struct fring_entry e = { .ino = 77, .generation = 3,
		.entry_timeout_ns = 1500000000ull,
		.attr_timeout_ns = 2000000001ull, .attr = sample_attr };
	struct fuse_entry_out k;

	memset(&k, 0xff, sizeof(k));
	fring_encode_entry(&e, &k);
	cr_assert_eq(k.nodeid, 77);
	cr_assert_eq(k.generation, 3);
	cr_assert_eq(k.entry_valid, 1);
	cr_assert_eq(k.entry_valid_nsec, 500000000);
	cr_assert_eq(k.attr_valid, 2);
	cr_assert_eq(k.attr_valid_nsec, 1);
	check_attr(&k.attr);

	/* sub-second and huge timeouts */
	e.entry_timeout_ns = 999999999;
	e.attr_timeout_ns = UINT64_MAX;
	fring_encode_entry(&e, &k);
	cr_assert_eq(k.entry_valid, 0);
	cr_assert_eq(k.entry_valid_nsec, 999999999);
	cr_assert_eq(k.attr_valid, UINT64_MAX / 1000000000ull);
	cr_assert_eq(k.attr_valid_nsec, UINT64_MAX % 1000000000ull);

	/* negative entry: nodeid 0 */
	e = (struct fring_entry){ .entry_timeout_ns = 3000000000ull };
	fring_encode_entry(&e, &k);
	cr_assert_eq(k.nodeid, 0);
	cr_assert_eq(k.entry_valid, 3);
	cr_assert_eq(k.entry_valid_nsec, 0);
}

Test(encode, attr_out)
{
	struct fuse_attr_out k;

	memset(&k, 0xff, sizeof(k));
	fring_encode_attr_out(&sample_attr, 1500000000ull, &k);
	cr_assert_eq(k.attr_valid, 1);
	cr_assert_eq(k.attr_valid_nsec, 500000000);
	cr_assert_eq(k.dummy, 0);
	check_attr(&k.attr);
}

Test(encode, open_out)
{
	struct fring_open_out o = { .fh = 0x1122334455667788ull,
		.open_flags = FRING_FOPEN_KEEP_CACHE | FRING_FOPEN_DIRECT_IO,
		.backing_id = -1 };
	struct fuse_open_out k;

	memset(&k, 0xee, sizeof(k));
	fring_encode_open(&o, &k);
	cr_assert_eq(k.fh, 0x1122334455667788ull);
	cr_assert_eq(k.open_flags, 3);
	cr_assert_eq(k.backing_id, -1);
}

Test(encode, statfs)
{
	struct fring_statfs s = { .blocks = 1, .bfree = 2, .bavail = 3,
		.files = 4, .ffree = 5, .bsize = 4096, .namelen = 255,
		.frsize = 512, .padding = 0xdead };
	struct fuse_statfs_out k;

	memset(&k, 0xff, sizeof(k));
	fring_encode_statfs(&s, &k);
	cr_assert_eq(k.st.blocks, 1);
	cr_assert_eq(k.st.bfree, 2);
	cr_assert_eq(k.st.bavail, 3);
	cr_assert_eq(k.st.files, 4);
	cr_assert_eq(k.st.ffree, 5);
	cr_assert_eq(k.st.bsize, 4096);
	cr_assert_eq(k.st.namelen, 255);
	cr_assert_eq(k.st.frsize, 512);
	cr_assert_eq(k.st.padding, 0);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(k.st.spare[i], 0);
}

/* Reads the dirent at buf + off (copy: the buffer need not be aligned). */
static struct fuse_dirent dirent_at(const uint8_t *buf, size_t off)
{
	struct fuse_dirent d;

	memcpy(&d, buf + off, FUSE_NAME_OFFSET);
	return d;
}

Test(encode, dirent_sizes_padding_offsets)
{
	uint8_t buf[256];
	size_t used = 0;
	struct fuse_dirent d;

	memset(buf, 0xff, sizeof(buf));
	cr_assert_eq(fring_encode_dirent(buf, sizeof(buf), &used, "abc", 3, 10,
					 S_IFDIR, 1), 1);
	cr_assert_eq(used, 32); /* 24 + 3 -> 32 */
	d = dirent_at(buf, 0);
	cr_assert_eq(d.ino, 10);
	cr_assert_eq(d.off, 1);
	cr_assert_eq(d.namelen, 3);
	cr_assert_eq(d.type, 4); /* DT_DIR */
	cr_assert_eq(memcmp(buf + 24, "abc", 3), 0);
	for (size_t i = 27; i < 32; i++)
		cr_assert_eq(buf[i], 0, "padding byte %zu", i);

	/* 8-byte name: no padding; a DT_* type passes through */
	cr_assert_eq(fring_encode_dirent(buf, sizeof(buf), &used, "12345678",
					 8, 11, 8 /* DT_REG */, 2), 1);
	cr_assert_eq(used, 64);
	d = dirent_at(buf, 32);
	cr_assert_eq(d.ino, 11);
	cr_assert_eq(d.off, 2);
	cr_assert_eq(d.namelen, 8);
	cr_assert_eq(d.type, 8);
	cr_assert_eq(memcmp(buf + 56, "12345678", 8), 0);

	/* 9-byte name: 24 + 9 -> 40, symlink type */
	cr_assert_eq(fring_encode_dirent(buf, sizeof(buf), &used, "123456789",
					 9, 12, S_IFLNK, 3), 1);
	cr_assert_eq(used, 104);
	cr_assert_eq(dirent_at(buf, 64).type, 10); /* DT_LNK */
	for (size_t i = 64 + 33; i < 104; i++)
		cr_assert_eq(buf[i], 0);
	cr_assert_eq(buf[104], 0xff); /* nothing written past the record */
}

Test(encode, dirent_does_not_fit)
{
	uint8_t buf[64], before[64];
	size_t used = 8;

	memset(buf, 0x5a, sizeof(buf));
	memcpy(before, buf, sizeof(buf));
	/* needs 32 bytes, 31 left */
	cr_assert_eq(fring_encode_dirent(buf, 39, &used, "abc", 3, 1, S_IFREG,
					 1), 0);
	cr_assert_eq(used, 8);
	cr_assert_eq(memcmp(buf, before, sizeof(buf)), 0);
	/* exactly fits */
	cr_assert_eq(fring_encode_dirent(buf, 40, &used, "abc", 3, 1, S_IFREG,
					 1), 1);
	cr_assert_eq(used, 40);
	/* used past cap never wraps around */
	used = 100;
	cr_assert_eq(fring_encode_dirent(buf, 64, &used, "a", 1, 1, S_IFREG,
					 1), 0);
	cr_assert_eq(used, 100);
}

Test(encode, dirent_bad_names)
{
	uint8_t buf[2048];
	char longname[1100];
	size_t used = 0;

	memset(longname, 'x', sizeof(longname));
	cr_assert_eq(fring_encode_dirent(buf, sizeof(buf), &used, "", 0, 1,
					 S_IFREG, 1), -EINVAL);
	cr_assert_eq(fring_encode_dirent(buf, sizeof(buf), &used, "a/b", 3, 1,
					 S_IFREG, 1), -EINVAL);
	cr_assert_eq(fring_encode_dirent(buf, sizeof(buf), &used, "a\0b", 3, 1,
					 S_IFREG, 1), -EINVAL);
	cr_assert_eq(fring_encode_dirent(buf, sizeof(buf), &used, longname,
					 1025, 1, S_IFREG, 1), -EINVAL);
	cr_assert_eq(used, 0);
	cr_assert_eq(fring_encode_dirent(buf, sizeof(buf), &used, longname,
					 1024, 1, S_IFREG, 1), 1);
	cr_assert_eq(used, FUSE_DIRENT_SIZE(1024));
}

Test(encode, direntplus)
{
	struct fring_entry e = { .ino = 555, .generation = 9,
		.entry_timeout_ns = 1500000000ull, .attr_timeout_ns = 0,
		.attr = sample_attr };
	uint8_t buf[512];
	struct fuse_entry_out eo;
	struct fuse_dirent d;
	size_t used = 0;

	e.attr.ino = 555;
	memset(buf, 0xff, sizeof(buf));
	cr_assert_eq(fring_encode_direntplus(buf, sizeof(buf), &used, "file", 4,
					     &e, 7), 1);
	cr_assert_eq(used, FUSE_DIRENTPLUS_SIZE(4));
	cr_assert_eq(used, 160); /* 128 + 24 + 4 -> 160 */
	memcpy(&eo, buf, sizeof(eo));
	cr_assert_eq(eo.nodeid, 555);
	cr_assert_eq(eo.generation, 9);
	cr_assert_eq(eo.entry_valid, 1);
	cr_assert_eq(eo.entry_valid_nsec, 500000000);
	cr_assert_eq(eo.attr.mode, S_IFREG | 0644);
	d = dirent_at(buf, 128);
	cr_assert_eq(d.ino, 555);
	cr_assert_eq(d.off, 7);
	cr_assert_eq(d.namelen, 4);
	cr_assert_eq(d.type, 8); /* DT_REG from the mode */
	cr_assert_eq(memcmp(buf + 152, "file", 4), 0);
	for (size_t i = 156; i < 160; i++)
		cr_assert_eq(buf[i], 0);

	/* second record starts right after; does-not-fit leaves all alone */
	cr_assert_eq(fring_encode_direntplus(buf, 319, &used, "file", 4, &e, 8),
		     0);
	cr_assert_eq(used, 160);
	cr_assert_eq(buf[160], 0xff);
	cr_assert_eq(fring_encode_direntplus(buf, 320, &used, "file", 4, &e, 8),
		     1);
	cr_assert_eq(used, 320);
	cr_assert_eq(dirent_at(buf, 320 - 32).off, 8);
}

/* An entry the kernel must not cache (ino 0: no lookup counted) still
 * lists with its real inode number; readdir(3) hides d_ino == 0. */
Test(encode, direntplus_uncached_entry_keeps_inode_number)
{
	struct fring_entry e = { .ino = 0, .attr = sample_attr };
	uint8_t buf[256];
	struct fuse_entry_out eo;
	size_t used = 0;

	e.attr.ino = 77;
	cr_assert_eq(fring_encode_direntplus(buf, sizeof(buf), &used, "..", 2,
					     &e, 2), 1);
	memcpy(&eo, buf, sizeof(eo));
	cr_assert_eq(eo.nodeid, 0);
	cr_assert_eq(dirent_at(buf, 128).ino, 77);

	/* nodeid and inode number differ (passthrough): d_ino is the latter */
	e.ino = 5570;
	e.attr.ino = 10004170;
	used = 0;
	cr_assert_eq(fring_encode_direntplus(buf, sizeof(buf), &used, "f", 1,
					     &e, 3), 1);
	memcpy(&eo, buf, sizeof(eo));
	cr_assert_eq(eo.nodeid, 5570);
	cr_assert_eq(dirent_at(buf, 128).ino, 10004170);
}

Test(encode, statx)
{
	struct fring_statx sx = { .size = sizeof(sx), .mask = 0xfff | 0x800,
		.attr = sample_attr, .btime_sec = 1234, .btime_nsec = 5 };
	struct fuse_statx_out so;

	sx.attr.rdev = (uint32_t)makedev(8, 300);
	fring_encode_statx(&sx, 2500000000ull, &so);
	cr_assert_eq(so.attr_valid, 2);
	cr_assert_eq(so.attr_valid_nsec, 500000000);
	cr_assert_eq(so.stat.mask, sx.mask);
	cr_assert_eq(so.stat.ino, sample_attr.ino);
	cr_assert_eq(so.stat.mode, (uint16_t)sample_attr.mode);
	cr_assert_eq(so.stat.btime.tv_sec, 1234);
	cr_assert_eq(so.stat.btime.tv_nsec, 5);
	cr_assert_eq(so.stat.mtime.tv_sec, sample_attr.mtime_sec);
	cr_assert_eq(so.stat.rdev_major, 8);
	cr_assert_eq(so.stat.rdev_minor, 300);
}

Test(encode, sanitize_error)
{
	static const int32_t good[] = { 0, -1, -ENOENT, -EIO, -511 };
	static const int32_t badv[] = { -512, -513, 1, 5, INT32_MIN, INT32_MAX };
	int bad;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		bad = 7;
		cr_assert_eq(fring_proto_sanitize_error(good[i], &bad), good[i]);
		cr_assert_eq(bad, 0);
	}
	for (size_t i = 0; i < sizeof(badv) / sizeof(badv[0]); i++) {
		bad = 0;
		cr_assert_eq(fring_proto_sanitize_error(badv[i], &bad), -EIO);
		cr_assert_eq(bad, 1, "value %d", badv[i]);
	}
	cr_assert_eq(fring_proto_sanitize_error(1, NULL), -EIO);
}

Test(encode, opcode_names)
{
	cr_assert_str_eq(fring_opcode_name(FUSE_LOOKUP), "LOOKUP");
	cr_assert_str_eq(fring_opcode_name(FUSE_BATCH_FORGET), "BATCH_FORGET");
	cr_assert_str_eq(fring_opcode_name(FUSE_COPY_FILE_RANGE_64),
			 "COPY_FILE_RANGE_64");
	cr_assert_str_eq(fring_opcode_name(0), "UNKNOWN");
	cr_assert_str_eq(fring_opcode_name(7), "UNKNOWN");
	cr_assert_str_eq(fring_opcode_name(FUSE_OPCODE_MAX), "UNKNOWN");
	cr_assert_str_eq(fring_opcode_name(0xffffffff), "UNKNOWN");
	/* every opcode the decoder knows has a name */
	for (uint32_t op = 1; op < FUSE_OPCODE_MAX; op++)
		if (fring_proto_arg_size(op, NULL) >= 0)
			cr_assert_str_neq(fring_opcode_name(op), "UNKNOWN",
					  "opcode %u", op);
}
