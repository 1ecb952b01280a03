// SPDX-License-Identifier: MIT
/*
 * The checks fuzz_decode hooks into the fake transport (faketransport.h,
 * which refuses a second reply or release): every reply the runtime hands
 * it must be one the kernel would accept. Out header length = iovec total, error
 * in -511..0 with no body, body size per the opcode's reply kinds (its
 * row in core/proto/ops.def), dirent records well formed, at most one
 * reply, none to FORGET & co.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

/* Size rule of one reply body (FRING_R_*) for this request: exact size
 * (returns 1) or at most *size (returns 0); -1: not for this request. */
static int kind_rule(uint32_t kind, const struct fring_decoded *d, size_t *size)
{
	switch (kind) {
	case FRING_R_EMPTY: *size = 0; return 1;
	case FRING_R_ENTRY: *size = sizeof(struct fuse_entry_out); return 1;
	case FRING_R_CREATE:
		*size = sizeof(struct fuse_entry_out) + sizeof(struct fuse_open_out);
		return 1;
	case FRING_R_ATTR: *size = sizeof(struct fuse_attr_out); return 1;
	case FRING_R_STATX: *size = sizeof(struct fuse_statx_out); return 1;
	case FRING_R_OPEN: *size = sizeof(struct fuse_open_out); return 1;
	case FRING_R_WRITE: *size = sizeof(struct fuse_write_out); return 1;
	case FRING_R_COPY64:
		*size = sizeof(struct fuse_copy_file_range_out);
		return 1;
	case FRING_R_STATFS: *size = sizeof(struct fuse_statfs_out); return 1;
	case FRING_R_LOCK: *size = sizeof(struct fuse_lk_out); return 1;
	case FRING_R_LSEEK: *size = sizeof(struct fuse_lseek_out); return 1;
	case FRING_R_READLINK:
		*size = (size_t)sysconf(_SC_PAGESIZE) - 1;
		return 0;
	case FRING_R_DIRENT: case FRING_R_DIRENTPLUS:
		*size = d->a.read.len;
		return 0;
	case FRING_R_DATA:
		if (d->opcode == FUSE_READ) {
			*size = d->a.read.len;
			return 0;
		}
		/* GETXATTR LISTXATTR: a size probe takes no data */
		*size = d->a.xattr.max;
		return d->a.xattr.max ? 0 : -1;
	case FRING_R_XATTR_SIZE:
		*size = sizeof(struct fuse_getxattr_out);
		return d->a.xattr.max ? -1 : 1;
	}
	FUZZ_ASSERT(0, "reply kind %#x has no rule here", kind);
	return -1;
}

/* The rule of the first of the op's reply kinds (ops.def) that fits the
 * request; -1: this op may not succeed at all. */
static int body_rule(const struct fring_decoded *d, size_t *size)
{
	uint32_t kinds = fring_op_replies(d->opcode);

	*size = 0;
	for (uint32_t k = 1; k && k <= FRING_R_LAST; k <<= 1) {
		int rule = kinds & k ? kind_rule(k, d, size) : -1;

		if (rule >= 0)
			return rule;
	}
	return -1;
}

/* READDIR / READDIRPLUS: back-to-back records, each 8-aligned with zero
 * padding, a valid name, ending exactly at len. */
static void check_dirents(const uint8_t *b, size_t len, int plus)
{
	size_t hdr = plus ? FUSE_NAME_OFFSET_DIRENTPLUS : FUSE_NAME_OFFSET;
	size_t off = 0;

	while (off < len) {
		struct fuse_dirent de;
		size_t rec;

		FUZZ_ASSERT(len - off >= hdr, "dirent header cut at %zu/%zu", off, len);
		memcpy(&de, b + off + hdr - FUSE_NAME_OFFSET, sizeof(de));
		FUZZ_ASSERT(de.namelen >= 1 && de.namelen <= 1024, "namelen %u",
			    de.namelen);
		rec = FUSE_DIRENT_ALIGN(hdr + de.namelen);
		FUZZ_ASSERT(rec <= len - off, "record %zu past end", rec);
		for (size_t i = 0; i < de.namelen; i++) {
			uint8_t c = b[off + hdr + i];

			FUZZ_ASSERT(c != '/' && c != 0, "bad name byte %u", c);
		}
		for (size_t i = hdr + de.namelen; i < rec; i++)
			FUZZ_ASSERT(b[off + i] == 0, "padding not zeroed");
		off += rec;
	}
}

/* Body contents the kernel relies on. */
static void check_body(const struct fring_decoded *d, const uint8_t *b,
		       size_t len)
{
	switch (d->opcode) {
	case FUSE_WRITE: {
		struct fuse_write_out wo;

		memcpy(&wo, b, sizeof(wo));
		FUZZ_ASSERT(wo.size <= d->a.write.len, "wrote %u of %u", wo.size,
			    d->a.write.len);
		break;
	}
	case FUSE_COPY_FILE_RANGE: {
		struct fuse_write_out wo;

		memcpy(&wo, b, sizeof(wo));
		FUZZ_ASSERT(wo.size <= d->a.copy.len, "copied %u", wo.size);
		break;
	}
	case FUSE_COPY_FILE_RANGE_64: {
		struct fuse_copy_file_range_out co;

		memcpy(&co, b, sizeof(co));
		FUZZ_ASSERT(co.bytes_copied <= d->a.copy.len, "copied %llu",
			    (unsigned long long)co.bytes_copied);
		break;
	}
	}
	if (fring_op_replies(d->opcode) & FRING_R_DIRENT)
		check_dirents(b, len, 0);
	if (fring_op_replies(d->opcode) & FRING_R_DIRENTPLUS)
		check_dirents(b, len, 1);
}

static volatile uint8_t sink;

struct fake_transport fuzz_ft;

static void check_reply(struct ft_req *fq, const struct iovec *iov, int n)
{
	struct fuzz_req *q = fuzz_cur;
	struct fuse_out_header oh;
	const uint8_t *body = fuzz_ft.reply + sizeof(oh);
	size_t blen, rule;
	uint8_t sum = 0;
	int kind;

	FUZZ_ASSERT(q && fq == &q->fr, "reply for a request not in flight");
	FUZZ_ASSERT(!fring_op_no_reply(q->exp.opcode), "reply to %s",
		    fring_opcode_name(q->exp.opcode));
	FUZZ_ASSERT(n >= 1 && iov[0].iov_len == sizeof(oh), "iov[0] %zu",
		    n >= 1 ? iov[0].iov_len : 0);
	FUZZ_ASSERT(fuzz_ft.reply_len >= sizeof(oh), "reply of %zu bytes",
		    fuzz_ft.reply_len);
	memcpy(&oh, fuzz_ft.reply, sizeof(oh));
	blen = fuzz_ft.reply_len - sizeof(oh);
	/* Touch every byte: valgrind flags uninitialised reply bytes. */
	for (size_t i = 0; i < blen; i++)
		sum ^= body[i];
	if (sum == 0x5a)
		sink++;
	FUZZ_ASSERT(oh.len == fuzz_ft.reply_len, "out len %u, iov total %zu",
		    oh.len, fuzz_ft.reply_len);
	FUZZ_ASSERT(oh.unique == q->exp.unique, "unique %llu, request %llu",
		    (unsigned long long)oh.unique,
		    (unsigned long long)q->exp.unique);
	FUZZ_ASSERT(oh.error <= 0 && oh.error > -FUSE_ERRNO_LIMIT, "error %d",
		    oh.error);
	q->error = oh.error;
	q->bodylen = blen;
	if (oh.error) {
		FUZZ_ASSERT(blen == 0, "error %d with %zu body bytes", oh.error, blen);
		return;
	}
	FUZZ_ASSERT(q->exp_rc == 0, "success reply to a request that decoded %d",
		    q->exp_rc);
	kind = body_rule(&q->exp, &rule);
	FUZZ_ASSERT(kind >= 0, "success reply to %s",
		    fring_opcode_name(q->exp.opcode));
	if (kind)
		FUZZ_ASSERT(blen == rule, "%s body %zu, expected %zu",
			    fring_opcode_name(q->exp.opcode), blen, rule);
	else
		FUZZ_ASSERT(blen <= rule, "%s body %zu over %zu",
			    fring_opcode_name(q->exp.opcode), blen, rule);
	check_body(&q->exp, body, blen);
}

/* The harness frees the request after checking it was released once. */
static void check_release(struct ft_req *fq)
{
	FUZZ_ASSERT(fuzz_cur && fq == &fuzz_cur->fr,
		    "release of a request not in flight");
}

/* Once per process: replies up to a 1 MiB body. */
void fuzz_ft_setup(void)
{
	if (fuzz_ft.reply)
		return;
	ft_init(&fuzz_ft, NULL, sizeof(struct fuse_out_header) + (1 << 20));
	fuzz_ft.check = check_reply;
	fuzz_ft.released = check_release;
}
