// SPDX-License-Identifier: MIT
/*
 * A fake io_uring for unit tests of the transport's state machines
 * (uring_serve.c, uring_bufpool.c, uring_zc.c): SQ and CQ rings in plain
 * memory with liburing's own layout, so the transport's SQE preparation
 * (the inline io_uring_get_sqe) and CQE reaping (io_uring_peek_cqe,
 * io_uring_cqe_seen) run unchanged, and nothing reaches a kernel. A test
 * takes what was prepared (fakering_take), answers it as the kernel would
 * and hands request CQEs to uring_handle_cqe (fakering_arrive).
 *
 * io_uring_submit and io_uring_submit_and_wait are wrapped (link option
 * -Wl,--wrap=..., tests/unit/CMakeLists.txt): instead of a system call
 * they pass each prepared SQE to fakering_kernel, the test's stand-in for
 * the kernel, which may answer with fakering_post.
 */
#ifndef FRING_TESTS_FAKERING_H
#define FRING_TESTS_FAKERING_H

#include "runtime/dispatch.h"
#include "transport/uring_internal.h"

/* One 128-byte SQE (IORING_SETUP_SQE128) as prepared. */
struct fake_sqe {
	union {
		struct io_uring_sqe sqe;
		uint8_t raw[128];
	};
};

static inline struct fuse_uring_cmd_req *fake_cmd(struct fake_sqe *s)
{
	return (struct fuse_uring_cmd_req *)s->sqe.cmd;
}

void fakering_init(struct io_uring *ring, unsigned entries);
void fakering_free(struct io_uring *ring);
/* The SQEs prepared since the last take, oldest first (at most max);
 * their slots are free again. */
unsigned fakering_take(struct io_uring *ring, struct fake_sqe *out, unsigned max);
/* A completion in the CQ, as the kernel posts it. */
void fakering_post(struct io_uring *ring, uint64_t user_data, int32_t res);
/* The kernel's part at io_uring_submit*: called per submitted SQE. */
extern void (*fakering_kernel)(struct io_uring *ring, struct fake_sqe *sqe);

/* A queue thread of one qid around a fake ring, built as uring_queue.c
 * builds it (the real region and pool allocators, zero-copy slots), with
 * a dispatcher for ops; the test thread is its owner thread. */
struct fake_queue {
	struct fring_dispatch dx;
	struct fring_uring u;
	struct uring_thread t;
	struct uring_queue q;
};

struct fake_queue_cfg {
	uint32_t depth;
	uint32_t pool_bufs;   /* 0: per-entry buffers (no pool offered) */
	int registered;       /* transport.bufpool.registered */
	int zc;               /* zero-copy planned */
};

/* The plugin a fake queue serves: how it answers, and what it saw. READ
 * data is fake_data; WRITE is answered with its length. */
enum fake_answer { FA_REPLY, FA_HOLD, FA_FD, FA_TWICE };
struct fake_plugin {
	enum fake_answer answer;
	int fd;                 /* FA_FD: req_read_fd / req_write_fd on it */
	uint32_t calls, forgets;
	uint64_t nodeid;        /* of the last request */
	uint32_t len;           /* its READ/WRITE length */
	char data[64];          /* WRITE: the first bytes it was given */
	fring_req *held;        /* FA_HOLD, and FA_FD's request */
	int32_t ret, second;    /* the host call's result, FA_TWICE's second */
};
extern struct fake_plugin fake_plugin;
extern const struct fring_fs_ops fake_plugin_ops;
extern char fake_data[];

#define FAKE_PAYLOAD_SZ 16384u
/* Builds the queue and prepares its REGISTERs (after its ADDs in pool
 * mode: uring_pool_add, through fakering_kernel). Returns 0 or what
 * uring_pool_add returned. */
int fake_queue_init(struct fake_queue *fq, const struct fake_queue_cfg *cfg,
		    const struct fring_fs_ops *ops);
void fake_queue_free(struct fake_queue *fq);

/* What the kernel writes into an entry's header when it hands a request
 * over; arg (the op header, arglen bytes) goes to op_in. */
struct fake_req {
	uint32_t opcode;
	uint64_t unique, nodeid;
	const void *arg;
	size_t arglen;
	uint64_t commit_id;
	uint64_t flags;       /* fuse_uring_ent_in_out.flags */
	uint32_t offset;      /* pool offset */
	uint32_t payload_sz;
};

/* Request r arrives in entry i: its header is written and the CQE of the
 * entry's parked command (result 0) goes through uring_handle_cqe. */
struct uring_ent *fakering_arrive(struct fake_queue *fq, uint32_t i,
				  const struct fake_req *r);
/* A CQE for entry e with a tag (UD_TAG_CMD, UD_TAG_IO) and a result. */
void fakering_complete(struct fake_queue *fq, struct uring_ent *e,
		       unsigned tag, int32_t res);
/* The reply header the entry holds. */
struct fuse_out_header fake_out_header(const struct uring_ent *e);

#endif
