// SPDX-License-Identifier: MIT
/*
 * Shared by the parts of the fuzz_decode target: the harness (fuzz_decode.c)
 * that frames the input and drives dispatch, the in-fuzzer plugin
 * (fuzz_plugin.c) and the checks of every reply the shared fake
 * transport (tests/unit/faketransport.h) takes (fuzz_check.c). One request
 * is in flight at a time.
 *
 * Input framing (gen_corpus.py writes the same):
 *   byte 0    flags, FZ_* below
 *   byte 1    plugin behaviour: low 3 bits a B_* mode, the rest its knob
 *   bytes 2-3 split (LE): two-part form, arg bytes after the 40-byte header
 *   bytes 4-5 scratch capacity (LE) when FZ_SCRATCH
 *   then      the request: fuse_in_header + arg + payload
 */
#ifndef FRING_FUZZ_H
#define FRING_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/ops.h"
#include "runtime/dispatch.h"

#include "faketransport.h"

#define FZ_FRAME 6

#define FZ_TWO_PART 0x01  /* io_uring form: header, arg, payload apart */
#define FZ_FIX_LEN 0x02   /* overwrite in->len with the real length */
#define FZ_XATTR_EXT 0x04 /* conn.setxattr_ext */
#define FZ_SCRATCH 0x08   /* give the request transport scratch memory */
#define FZ_MAXW_SHIFT 4   /* 2 bits: conn.max_write 0, 4K, 128K, 1M */
#define FZ_PARALLEL 0x40  /* plugin thread model PARALLEL */
#define FZ_MISALIGN 0x80  /* two-part form: payload 4 bytes off alignment */

/* Plugin behaviours. */
enum {
	B_CORRECT,  /* the reply the op calls for, values from the args */
	B_ERRNO,    /* reply_err(in->uid as int32) */
	B_ANYKIND,  /* a reply of kind knob % n, fitting or not */
	B_TWICE,    /* correct reply, then a second one */
	B_LATER,    /* held; the harness answers after dispatch returned */
	B_DEFAULTS, /* every op slot NULL: host defaults */
	B_FD,       /* req_read_fd / req_write_fd */
	B_DIRNAMES, /* dir_add with hostile names, also on non-readdir ops */
};

#define FUZZ_TARGET "fuzz_decode"
#include "fuzz_assert.h"

/* The request in flight, as the harness built and decoded it. */
struct fuzz_req {
	struct ft_req fr;    /* fr.r the request, fr.sends/releases its counts */
	int exp_rc;          /* fring_decode's verdict on the same bytes */
	struct fring_decoded exp;
	int32_t error;       /* of the reply sent */
	size_t bodylen;
	const void *part[3]; /* the request's buffers (header, arg, payload) */
	size_t skew;         /* of the payload in its block */
	size_t partlen[3];
};

extern struct fuzz_req *fuzz_cur;

/* 1 if [p, p+n) lies inside one buffer of the current request. */
int fuzz_in_request(const void *p, size_t n);

/* fuzz_ops.c: the plugin's descriptor and ops (all set, or all NULL). */
extern const struct fring_plugin fuzz_desc;
extern const struct fring_fs_ops fuzz_ops, fuzz_no_ops;

/* fuzz_plugin.c: its answers. */
void fuzz_plugin_setup(void);
void fuzz_plugin_handle(fring_req *r);
void fuzz_plugin_begin(uint8_t behaviour, int32_t err);
fring_req *fuzz_plugin_held(void);
/* 1 and the error the reply must carry, when the plugin's answer decides
 * it (0 for a valid reply, the errno it sent, -EIO for a misuse). */
int fuzz_plugin_expect(int32_t *err);
void fuzz_plugin_answer(fring_req *r);

/* fuzz_check.c: the fake transport, its checks hooked in (fuzz_ft.check,
 * fuzz_ft.released); its rq is set per input. */
extern struct fake_transport fuzz_ft;
void fuzz_ft_setup(void);

#endif /* FRING_FUZZ_H */
