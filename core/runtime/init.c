// SPDX-License-Identifier: MIT
/* FUSE_INIT negotiation; see init.h (the kernel's side: fs/fuse/inode.c
 * fuse_send_init, process_init_reply). */
#define _GNU_SOURCE
#include "init.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../base/log.h"

#define INIT_WAIT_MS 30000
/* Reply sizes older kernels expect (fuse_init_out before 7.5 / 7.23). */
#define COMPAT_INIT_OUT_SIZE 8
#define COMPAT_22_INIT_OUT_SIZE 24

/* Bits a plugin may add or clear in fring_conn.want (the FRING_CAP_* set). */
#define PLUGIN_CAPS                                                          \
	(FRING_CAP_ASYNC_READ | FRING_CAP_POSIX_LOCKS |                      \
	 FRING_CAP_ATOMIC_O_TRUNC | FRING_CAP_EXPORT_SUPPORT |               \
	 FRING_CAP_DONT_MASK | FRING_CAP_FLOCK_LOCKS |                       \
	 FRING_CAP_AUTO_INVAL_DATA | FRING_CAP_READDIRPLUS |                 \
	 FRING_CAP_READDIRPLUS_AUTO | FRING_CAP_ASYNC_DIO |                  \
	 FRING_CAP_WRITEBACK_CACHE | FRING_CAP_PARALLEL_DIROPS |             \
	 FRING_CAP_HANDLE_KILLPRIV | FRING_CAP_POSIX_ACL |                   \
	 FRING_CAP_CACHE_SYMLINKS | FRING_CAP_HANDLE_KILLPRIV_V2 |           \
	 FRING_CAP_SETXATTR_EXT | FRING_CAP_PASSTHROUGH)

/* What a modern server accepts by default, before the plugin's say. */
static uint64_t default_want(const struct fring_plugin *desc,
			     const struct fring_fs_ops *ops)
{
	uint64_t w = FUSE_ASYNC_READ | FUSE_BIG_WRITES | FUSE_PARALLEL_DIROPS | FUSE_MAX_PAGES |
		     FUSE_HANDLE_KILLPRIV_V2 | FUSE_SETXATTR_EXT |
		     FUSE_INIT_EXT | FUSE_AUTO_INVAL_DATA | FUSE_ASYNC_DIO |
		     FUSE_CACHE_SYMLINKS | FUSE_DIRECT_IO_ALLOW_MMAP;

	/* Only a plugin that says its open truncates: otherwise the kernel
	 * would leave the old bytes of an O_TRUNC open in place. */
	if (desc->features & FRING_FEATURE_ATOMIC_O_TRUNC)
		w |= FUSE_ATOMIC_O_TRUNC;
	if (ops->readdirplus)
		w |= FUSE_DO_READDIRPLUS | FUSE_READDIRPLUS_AUTO;
	if (ops->getlk && ops->setlk)
		w |= FUSE_POSIX_LOCKS;
	if (ops->flock)
		w |= FUSE_FLOCK_LOCKS;
	return w;
}

/* Kernel-imposed ceiling the plugin cannot override: ops it lacks. */
static uint64_t ops_allow(const struct fring_fs_ops *ops)
{
	uint64_t deny = 0;

	if (!ops->readdirplus)
		deny |= FUSE_DO_READDIRPLUS | FUSE_READDIRPLUS_AUTO;
	if (!(ops->getlk && ops->setlk))
		deny |= FUSE_POSIX_LOCKS;
	if (!ops->flock)
		deny |= FUSE_FLOCK_LOCKS;
	return ~deny;
}

int fring_init_build(struct fring_dispatch *dx, const void *in, size_t arglen,
		     const struct fring_init_params *p, struct fuse_init_out *out,
		     size_t *outlen, struct fring_init_result *res, char **err)
{
	struct fuse_init_in ii;
	struct fring_conn conn;
	uint64_t capable, host_want, want;
	uint32_t max_write;

	memset(out, 0, sizeof(*out));
	memset(res, 0, sizeof(*res));
	*outlen = sizeof(*out);
	if (arglen < FUSE_COMPAT_INIT_IN_SIZE) {
		*err = fring_strf("malformed INIT from the kernel (%zu bytes)",
				  arglen);
		return -EPROTO;
	}
	memset(&ii, 0, sizeof(ii));
	memcpy(&ii, in, arglen < sizeof(ii) ? arglen : sizeof(ii));
	res->kernel_major = ii.major;
	res->kernel_minor = ii.minor;

	if (ii.major < FUSE_KERNEL_VERSION) {
		*err = fring_strf("kernel speaks FUSE %u.%u; fring needs 7.x",
				  ii.major, ii.minor);
		return -EPROTO;
	}
	if (ii.major > FUSE_KERNEL_VERSION) {
		/* The kernel then retries INIT with our major. */
		out->major = FUSE_KERNEL_VERSION;
		out->minor = FRING_PROTO_MINOR;
		return 1;
	}

	capable = ii.flags;
	if (ii.flags & FUSE_INIT_EXT)
		capable |= (uint64_t)ii.flags2 << 32;
	host_want = default_want(dx->desc, dx->ops) & capable;

	memset(&conn, 0, sizeof(conn));
	conn.size = sizeof(conn);
	conn.proto_major = FUSE_KERNEL_VERSION;
	conn.proto_minor = ii.minor < FRING_PROTO_MINOR ? ii.minor : FRING_PROTO_MINOR;
	conn.max_write = FRING_DEFAULT_MAX_WRITE;
	conn.max_readahead = ii.max_readahead;
	conn.time_gran = 1;
	conn.capable = capable;
	conn.want = host_want;
	conn.transport = p ? p->transport : FRING_TRANSPORT_DEVFUSE;
	conn.nr_queues = p ? p->nr_queues : 1;

	if (dx->desc->init) {
		int32_t ret;

		if (dx->serialize)
			pthread_mutex_lock(&dx->serial);
		ret = dx->desc->init(dx->inst, &conn);
		if (dx->serialize)
			pthread_mutex_unlock(&dx->serial);
		if (ret < 0) {
			*err = fring_strf("plugin '%s': init failed: %s",
					  dx->desc->name ? dx->desc->name : "?",
					  strerror(-ret));
			return ret > -FUSE_ERRNO_LIMIT ? ret : -EIO;
		}
	}

	/* Plugin may only move its own bits; the rest stays the host's. */
	want = (host_want & ~PLUGIN_CAPS) | (conn.want & PLUGIN_CAPS);
	want &= capable & ops_allow(dx->ops);
	if (!(want & FUSE_INIT_EXT))
		want &= ~FUSE_PASSTHROUGH; /* its bit travels in flags2 */
	if ((want & FUSE_PASSTHROUGH) && (want & FUSE_WRITEBACK_CACHE)) {
		/* The kernel ignores PASSTHROUGH next to WRITEBACK_CACHE. */
		fring_warn("%s: kernel passthrough is off: it cannot be "
			   "combined with the writeback cache",
			   dx->mount.name ? dx->mount.name : "mount");
		want &= ~FUSE_PASSTHROUGH;
	}

	if (!(want & FUSE_ATOMIC_O_TRUNC) && dx->ops->write &&
	    !dx->ops->setattr)
		/* The kernel truncates an O_TRUNC open with a SETATTR. */
		fring_warn("%s: plugin '%s' has no setattr and does not declare "
			   "FRING_FEATURE_ATOMIC_O_TRUNC: an open with O_TRUNC "
			   "of an existing file fails with ENOSYS",
			   dx->mount.name ? dx->mount.name : "mount",
			   dx->desc->name ? dx->desc->name : "?");

	max_write = conn.max_write;
	if (max_write > FRING_DEFAULT_MAX_WRITE)
		max_write = FRING_DEFAULT_MAX_WRITE;
	if (max_write < 4096)
		max_write = 4096; /* the kernel's floor anyway */

	res->minor = conn.proto_minor;
	res->capable = capable;
	res->want = want;
	res->max_write = max_write;
	res->max_readahead = conn.max_readahead < ii.max_readahead
				     ? conn.max_readahead : ii.max_readahead;
	res->max_pages = (max_write + 4095) / 4096;
	res->time_gran = conn.time_gran ? conn.time_gran : 1;
	if (res->time_gran > 1000000000u)
		res->time_gran = 1000000000u;
	res->bufsize = (size_t)max_write + 4096;
	if (p && p->request_timeout && (capable & FUSE_REQUEST_TIMEOUT) &&
	    (want & FUSE_INIT_EXT)) {
		want |= FUSE_REQUEST_TIMEOUT;
		res->want = want;
		res->request_timeout = p->request_timeout > UINT16_MAX
					       ? UINT16_MAX : p->request_timeout;
		out->request_timeout = (uint16_t)res->request_timeout;
	}

	out->major = FUSE_KERNEL_VERSION;
	out->minor = res->minor;
	out->max_readahead = res->max_readahead;
	out->flags = (uint32_t)want;
	if (want & FUSE_INIT_EXT)
		out->flags2 = (uint32_t)(want >> 32);
	out->max_background = FRING_MAX_BACKGROUND;
	out->congestion_threshold = FRING_CONGESTION_THRESHOLD;
	out->max_write = max_write;
	out->time_gran = res->time_gran;
	out->max_pages = (uint16_t)res->max_pages;
	/* Backing files on non-stacked file systems only (depth 0 + 1). */
	if (want & FUSE_PASSTHROUGH)
		out->max_stack_depth = 1;
	if (res->minor < 5)
		*outlen = COMPAT_INIT_OUT_SIZE;
	else if (res->minor < 23)
		*outlen = COMPAT_22_INIT_OUT_SIZE;

	dx->conn.minor = res->minor;
	dx->conn.setxattr_ext = !!(want & FUSE_SETXATTR_EXT);
	dx->conn.max_write = max_write;
	atomic_store(&dx->mount.passthrough, !!(want & FUSE_PASSTHROUGH));
	return 0;
}

static int write_reply(int fd, uint64_t unique, int32_t error, const void *body,
		       size_t len)
{
	struct fuse_out_header oh = {
		.len = (uint32_t)(sizeof(oh) + (error ? 0 : len)),
		.error = error,
		.unique = unique,
	};
	struct iovec iov[2] = { { &oh, sizeof(oh) }, { (void *)body, len } };
	ssize_t n;

	do
		n = writev(fd, iov, error || !len ? 1 : 2);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

/* Wait for and read one request; returns its length or -errno. */
static ssize_t read_one(int fd, void *buf, size_t cap)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int pr = poll(&pfd, 1, INIT_WAIT_MS);
		ssize_t n;

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			return -ETIMEDOUT;
		n = read(fd, buf, cap);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
			continue;
		return n < 0 ? -errno : n;
	}
}

int fring_init_handshake(int fd, struct fring_dispatch *dx,
			 const struct fring_init_params *p,
			 struct fring_init_result *res, char **err)
{
	/* The read size rule wants >= max(8192, 80 + max_write) even now. */
	size_t cap = (size_t)FRING_DEFAULT_MAX_WRITE + 4096;
	char *buf = malloc(cap);
	int ret = -EPROTO, rounds = 0;

	if (!buf) {
		*err = fring_strf("out of memory");
		return -ENOMEM;
	}
	for (;;) {
		const struct fuse_in_header *in = (const void *)buf;
		struct fuse_init_out out;
		size_t outlen;
		ssize_t n = read_one(fd, buf, cap);

		if (n < 0) {
			ret = (int)n;
			*err = n == -ETIMEDOUT
				       ? fring_strf("the kernel sent no INIT within %d s",
						    INIT_WAIT_MS / 1000)
				       : fring_strf("reading INIT from /dev/fuse: %s",
						    strerror((int)-n));
			break;
		}
		if ((size_t)n < sizeof(*in) || in->len != (size_t)n) {
			*err = fring_strf("malformed first request from the kernel "
					  "(%zd bytes)", n);
			ret = -EPROTO;
			break;
		}
		if (in->opcode != FUSE_INIT) {
			/* Nothing precedes INIT; refuse anything else. */
			fring_warn("%s: %s before INIT (unique %llu): replied EIO",
				   dx->mount.name, fring_opcode_name(in->opcode),
				   (unsigned long long)in->unique);
			write_reply(fd, in->unique, -EIO, NULL, 0);
			continue;
		}
		ret = fring_init_build(dx, buf + sizeof(*in), (size_t)n - sizeof(*in),
				       p, &out, &outlen, res, err);
		if (ret == 1 && ++rounds < 3) {
			write_reply(fd, in->unique, 0, &out, outlen);
			continue;
		}
		if (ret == 1) {
			*err = fring_strf("kernel keeps offering FUSE major %u",
					  res->kernel_major);
			ret = -EPROTO;
		}
		if (ret == 0 && p && p->before_reply)
			ret = p->before_reply(p->ud, res, &out, err);
		if (ret < 0) {
			write_reply(fd, in->unique, ret, NULL, 0);
			break;
		}
		ret = write_reply(fd, in->unique, 0, &out, outlen);
		if (ret < 0)
			*err = fring_strf("answering INIT: %s", strerror(-ret));
		else
			fring_dbg("%s: FUSE %u.%u (kernel %u.%u), want 0x%llx of "
				  "0x%llx, max_write %u", dx->mount.name,
				  FUSE_KERNEL_VERSION, res->minor, res->kernel_major,
				  res->kernel_minor, (unsigned long long)res->want,
				  (unsigned long long)res->capable, res->max_write);
		break;
	}
	free(buf);
	return ret;
}
