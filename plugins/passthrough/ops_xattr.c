// SPDX-License-Identifier: MIT
/*
 * Extended attributes through /proc/self/fd/N of the inode's O_PATH fd
 * (f*xattr refuses O_PATH fds). The non-l calls are right even for
 * symlinks: the /proc magic link lands on the symlink itself and is not
 * followed further, whereas l*xattr would act on the /proc link.
 */
#include "pt.h"

#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

enum xop { X_GET, X_SET, X_REMOVE };

/* The server runs as root, so listxattr also returns trusted.* names; an
 * unprivileged caller must not see them (as on the backing fs itself).
 * Lists the whole set, filters it, then applies the probe/ERANGE rules. */
static int list_names(const char *proc, bool privileged, char **out,
		      ssize_t *len)
{
	char *buf = NULL, *p, *q;
	ssize_t n;

	for (;;) {
		n = listxattr(proc, NULL, 0);
		if (n < 0)
			return -errno;
		free(buf);
		buf = malloc(n ? (size_t)n : 1);
		if (!buf)
			return -ENOMEM;
		n = listxattr(proc, buf, (size_t)n);
		if (n >= 0)
			break;
		if (errno != ERANGE) { /* ERANGE: the list grew meanwhile */
			free(buf);
			return -errno;
		}
	}
	for (p = q = buf; !privileged && p < buf + n; p += strlen(p) + 1) {
		size_t l = strlen(p) + 1;

		if (!strncmp(p, "trusted.", 8))
			continue;
		memmove(q, p, l);
		q += l;
	}
	*len = privileged ? n : q - buf;
	*out = buf;
	return 0;
}

void pt_listxattr(void *inst, fring_req *r, const struct fring_xattr_args *a)
{
	struct pt_fs *fs = inst;
	struct fring_req_ctx ctx = { .size = sizeof(ctx) };
	char proc[32], *names = NULL;
	struct pt_ref ref;
	ssize_t n = 0;
	int err;

	if (!fs->xattr) {
		fring_host->reply_err(r, -ENOSYS);
		return;
	}
	err = pt_ref_get(fs, a->nodeid, &ref);
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	fring_host->req_ctx(r, &ctx);
	pt_proc_path(proc, ref.fd);
	err = list_names(proc, ctx.uid == 0, &names, &n);
	pt_ref_put(fs, &ref);
	if (err)
		fring_host->reply_err(r, err);
	else if (!a->max)
		fring_host->reply_xattr_size(r, (uint32_t)n);
	else if ((size_t)n > a->max)
		fring_host->reply_err(r, -ERANGE);
	else
		fring_host->reply_data(r, names, (uint32_t)n);
	free(names);
}

static void do_xattr(struct pt_fs *fs, fring_req *r,
		     const struct fring_xattr_args *a, enum xop op)
{
	char proc[32];
	struct pt_ref ref;
	void *buf = NULL;
	ssize_t n = 0;
	int err;

	if (!fs->xattr) {
		fring_host->reply_err(r, -ENOSYS);
		return;
	}
	err = pt_ref_get(fs, a->nodeid, &ref);
	if (err) {
		fring_host->reply_err(r, err);
		return;
	}
	pt_proc_path(proc, ref.fd);
	if (op == X_GET && a->max && !(buf = malloc(a->max))) {
		err = -ENOMEM;
	} else if (op == X_GET) {
		n = getxattr(proc, a->name, buf, a->max);
	} else if (op == X_SET) {
		n = setxattr(proc, a->name, a->value, a->value_len,
			     (int)a->flags);
	} else {
		n = removexattr(proc, a->name);
	}
	if (!err && n < 0)
		err = -errno;
	pt_ref_put(fs, &ref);

	if (err)
		fring_host->reply_err(r, err);
	else if (op == X_SET || op == X_REMOVE)
		fring_host->reply_err(r, 0);
	else if (!a->max)
		fring_host->reply_xattr_size(r, (uint32_t)n);
	else
		fring_host->reply_data(r, buf, (uint32_t)n);
	free(buf);
}

void pt_getxattr(void *inst, fring_req *r, const struct fring_xattr_args *a)
{
	do_xattr(inst, r, a, X_GET);
}

void pt_setxattr(void *inst, fring_req *r, const struct fring_xattr_args *a)
{
	do_xattr(inst, r, a, X_SET);
}

void pt_removexattr(void *inst, fring_req *r,
		    const struct fring_xattr_args *a)
{
	do_xattr(inst, r, a, X_REMOVE);
}
