/*
 * Extended attributes through /proc/self/fd/N of the inode's O_PATH fd
 * (f*xattr refuses O_PATH fds). The non-l calls are right even for
 * symlinks: the /proc magic link lands on the symlink itself and is not
 * followed further, whereas l*xattr would act on the /proc link.
 */
#include "pt.h"

#include <stdlib.h>
#include <sys/xattr.h>

enum xop { X_GET, X_LIST, X_SET, X_REMOVE };

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
	if ((op == X_GET || op == X_LIST) && a->max && !(buf = malloc(a->max))) {
		err = -ENOMEM;
	} else if (op == X_GET) {
		n = getxattr(proc, a->name, buf, a->max);
	} else if (op == X_LIST) {
		n = listxattr(proc, buf, a->max);
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

void pt_listxattr(void *inst, fring_req *r, const struct fring_xattr_args *a)
{
	do_xattr(inst, r, a, X_LIST);
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
