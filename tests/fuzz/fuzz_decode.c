// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: arbitrary bytes as one FUSE request, in the classic
 * /dev/fuse form (one contiguous buffer) or the two-part io_uring form
 * (header, arg and payload in separate buffers, split where the input
 * says), decoded by fring_decode and dispatched through the runtime to the
 * in-fuzzer plugin. Each buffer is a heap copy of exactly its size, so the
 * sanitizers (or valgrind, in the replay driver) catch any read outside.
 * After the request is finished: exactly one release, exactly one reply
 * (none for FORGET & co.), and the reply's error is the one the decode
 * verdict, the host defaults or the plugin's answer call for. Framing and
 * behaviours: fuzz.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/init.h"

/* Largest READDIR dispatched (see LLVMFuzzerTestOneInput). */
#define FUZZ_DIR_MAX (1u << 20)

struct fuzz_req *fuzz_cur;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int fuzz_in_request(const void *p, size_t n)
{
	for (int i = 0; i < 3; i++) {
		const uint8_t *b = fuzz_cur->part[i];

		if (b && (const uint8_t *)p >= b &&
		    (size_t)((const uint8_t *)p - b) <= fuzz_cur->partlen[i] &&
		    n <= fuzz_cur->partlen[i] - (size_t)((const uint8_t *)p - b))
			return 1;
	}
	return 0;
}

/* A heap copy ending exactly at its last byte, starting `skew` bytes into
 * its block (payloads need not be aligned). */
static void *dup_exact(const void *p, size_t n, size_t skew)
{
	uint8_t *b = malloc(n + skew); /* malloc(0) is a real, empty block */

	if (!b)
		abort();
	if (n)
		memcpy(b + skew, p, n);
	return b + skew;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Malformed requests and plugin misuse are logged: expected here. */
	setenv("FRING_LOG", "error", 0);
	fuzz_plugin_setup();
	return 0;
}

/* The error the reply must carry; 0 if unknown (any is fine). */
static int expected_error(const struct fuzz_req *q, int defaults, int32_t *err)
{
	uint32_t op = q->exp.opcode, flags = fring_op_flags(op);

	if (q->exp_rc)
		*err = q->exp_rc == -ENOSYS ? -ENOSYS : -EIO;
	else if (flags & FRING_OP_SESSION)
		/* INIT is answered once, before serving; DESTROY at stop. */
		*err = op == FUSE_DESTROY ? 0 : -EIO;
	else if (!(flags & FRING_OP_PLUGIN))
		*err = -ENOSYS; /* no op slot in the ABI (SYNCFS) */
	else if (defaults)
		*err = flags & FRING_OP_DEFAULT ? 0 : -ENOSYS;
	else
		return fuzz_plugin_expect(err);
	return 1;
}

/* INIT also goes through the negotiation, on the same bytes. */
static void check_init(struct fring_dispatch *dx, const void *arg, size_t len)
{
	struct fring_init_params p = { .transport = FRING_TRANSPORT_DEVFUSE,
				       .nr_queues = 1 };
	struct fuse_init_out out;
	struct fring_init_result res;
	size_t outlen = 0;
	char *err = NULL;
	int rc = fring_init_build(dx, arg, len, &p, &out, &outlen, &res, &err);

	if (rc == 0) {
		FUZZ_ASSERT(outlen >= 8 && outlen <= sizeof(out), "outlen %zu", outlen);
		FUZZ_ASSERT(out.major == 7 && out.minor <= FRING_PROTO_MINOR &&
			    dx->conn.minor == out.minor, "version %u.%u",
			    out.major, out.minor);
		FUZZ_ASSERT(outlen < 24 || out.max_write == dx->conn.max_write,
			    "max_write %u vs conn %u", out.max_write,
			    dx->conn.max_write);
	} else if (rc == 1) {
		FUZZ_ASSERT(out.major == 7, "major %u", out.major);
	} else {
		FUZZ_ASSERT(rc < 0 && err, "INIT failed (%d) without a message", rc);
	}
	free(err);
}

/* Lay the request out as the input's form says; returns the header. */
static struct fuse_in_header build(struct fuzz_req *q, uint8_t flags,
				   const uint8_t *data, size_t size)
{
	const uint8_t *msg = data + FZ_FRAME;
	size_t len = size - FZ_FRAME, alen, rest;
	struct fuse_in_header h = { 0 };

	memcpy(&h, msg, len < sizeof(h) ? len : sizeof(h));
	rest = len > sizeof(h) ? len - sizeof(h) : 0;
	if (!(flags & FZ_TWO_PART)) {
		if ((flags & FZ_FIX_LEN) && len >= sizeof(h))
			h.len = (uint32_t)len;
		q->part[0] = dup_exact(msg, len, 0);
		if (len >= sizeof(h))
			memcpy((void *)q->part[0], &h, sizeof(h));
		q->partlen[0] = len;
		return h;
	}
	alen = (size_t)data[2] | (size_t)data[3] << 8;
	alen = alen < rest ? alen : rest;
	if (flags & FZ_FIX_LEN)
		h.len = (uint32_t)(sizeof(h) + rest);
	q->skew = flags & FZ_MISALIGN ? 4 : 0;
	q->part[0] = dup_exact(&h, sizeof(h), 0);
	q->part[1] = dup_exact(msg + sizeof(h), alen, 0);
	q->part[2] = dup_exact(msg + sizeof(h) + alen, rest - alen, q->skew);
	q->partlen[0] = sizeof(h);
	q->partlen[1] = alen;
	q->partlen[2] = rest - alen;
	return h;
}

/* After dispatch (and any late answer): the request is finished right. */
static void check_finished(struct fuzz_req *q, struct fring_dispatch *dx,
			   int shortread, uint8_t beh)
{
	int32_t err;

	FUZZ_ASSERT(q->fr.releases == 1, "%d releases", q->fr.releases);
	if (shortread || fring_op_no_reply(q->exp.opcode)) {
		FUZZ_ASSERT(q->fr.sends == 0, "reply to a request that gets none");
	} else {
		FUZZ_ASSERT(q->fr.sends == 1, "%d replies", q->fr.sends);
		if (expected_error(q, (beh & 7) == B_DEFAULTS, &err))
			FUZZ_ASSERT(q->error == err, "%s (decode %d, behaviour %u): "
				    "error %d, expected %d",
				    fring_opcode_name(q->exp.opcode), q->exp_rc,
				    beh & 7, q->error, err);
	}
	FUZZ_ASSERT(fring_dispatch_outstanding(dx) == 0, "outstanding %ld",
		    fring_dispatch_outstanding(dx));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t maxw[4] = { 0, 4096, 128 << 10, 1 << 20 };
	struct fring_dispatch dx;
	struct fuse_in_header h;
	struct fuzz_req *q;
	uint8_t flags, beh;
	int two, shortread;
	const void *arg;
	size_t arglen;

	if (size < FZ_FRAME)
		return 0;
	flags = data[0];
	beh = data[1];
	two = flags & FZ_TWO_PART;
	q = calloc(1, sizeof(*q));
	if (!q || fring_dispatch_init(&dx, &fuzz_desc, (beh & 7) == B_DEFAULTS ?
				      &fuzz_no_ops : &fuzz_ops, "/fuzz"))
		abort();
	dx.serialize = !(flags & FZ_PARALLEL);
	dx.conn = (struct fring_proto_conn){ .minor = FRING_PROTO_MINOR,
		.setxattr_ext = !!(flags & FZ_XATTR_EXT),
		.max_write = maxw[(flags >> FZ_MAXW_SHIFT) & 3] };
	fuzz_ft_setup();
	fuzz_ft.rq = &dx.rq;
	ft_req_init(&fuzz_ft, &q->fr);
	if (flags & FZ_SCRATCH) {
		q->fr.r.scratch_cap = (size_t)data[4] | (size_t)data[5] << 8;
		q->fr.r.scratch = malloc(q->fr.r.scratch_cap);
		if (!q->fr.r.scratch)
			abort();
	}
	h = build(q, flags, data, size);
	shortread = !two && q->partlen[0] < sizeof(h);
	arg = two ? q->part[1] : shortread ? NULL :
		(const uint8_t *)q->part[0] + sizeof(h);
	arglen = two ? q->partlen[1] : shortread ? 0 : q->partlen[0] - sizeof(h);
	if (!shortread)
		q->exp_rc = fring_decode(q->part[0], arg, arglen, q->part[2],
					 q->partlen[2], &dx.conn, &q->exp);
	fuzz_cur = q;
	fuzz_plugin_begin(beh, (int32_t)h.uid);
	/* The host allocates a READDIR's full size up front (up to 2 GiB,
	 * ~1 s under ASan); the kernel never asks more than max_pages pages.
	 * Past that only the decode is checked, to keep the fuzzer fast. */
	if (!shortread && q->exp_rc == 0 && q->exp.a.read.len > FUZZ_DIR_MAX &&
	    (q->exp.opcode == FUSE_READDIR || q->exp.opcode == FUSE_READDIRPLUS))
		goto out;

	if (two)
		fring_dispatch(&dx, &q->fr.r, q->part[0], arg, arglen, q->part[2],
			       q->partlen[2]);
	else
		fring_dispatch_buf(&dx, &q->fr.r, q->part[0], q->partlen[0]);
	if (fuzz_plugin_held()) {
		FUZZ_ASSERT(q->fr.sends == 0 && q->fr.releases == 0 &&
			    fring_dispatch_outstanding(&dx) == 1,
			    "held request answered or untracked");
		fuzz_plugin_answer(fuzz_plugin_held());
	}
	check_finished(q, &dx, shortread, beh);
	if (!shortread && q->exp.opcode == FUSE_INIT && q->exp_rc == 0)
		check_init(&dx, arg, arglen);
out:
	fuzz_cur = NULL;
	fring_dispatch_destroy(&dx);
	free((void *)q->part[0]);
	free((void *)q->part[1]);
	if (q->part[2])
		free((uint8_t *)q->part[2] - q->skew);
	free(q->fr.r.scratch);
	free(q);
	return 0;
}
