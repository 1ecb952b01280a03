// SPDX-License-Identifier: MIT
/* hello.c: a root directory holding one read-only file, "hello". */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <fring/plugin-helpers.h>

#define ROOT 1 /* the kernel's root inode */
#define HELLO 2
#define TIMEOUT_NS 1000000000ull

static const char text[] = "hello from fring\n";

static void fill(uint64_t ino, struct fring_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = ino == ROOT ? S_IFDIR | 0755 : S_IFREG | 0444;
	a->nlink = ino == ROOT ? 2 : 1;
	a->size = ino == ROOT ? 0 : sizeof(text) - 1;
}

static int32_t hello_create(fring_mount *m, void **inst)
{
	*inst = NULL; /* no per-mount state */
	return 0;
}

static void hello_lookup(void *inst, fring_req *r, const struct fring_name_args *a)
{
	struct fring_entry e = { .ino = HELLO, .entry_timeout_ns = TIMEOUT_NS,
				 .attr_timeout_ns = TIMEOUT_NS };

	if (a->parent != ROOT || strcmp(a->name, "hello")) {
		fring_host->reply_err(r, -ENOENT);
		return;
	}
	fill(HELLO, &e.attr);
	fring_host->reply_entry(r, &e);
}

static void hello_getattr(void *inst, fring_req *r, const struct fring_getattr_args *a)
{
	struct fring_attr attr;

	if (a->nodeid != ROOT && a->nodeid != HELLO) {
		fring_host->reply_err(r, -ENOENT);
		return;
	}
	fill(a->nodeid, &attr);
	fring_host->reply_attr(r, &attr, TIMEOUT_NS);
}

static void hello_read(void *inst, fring_req *r, const struct fring_read_args *a)
{
	uint64_t size = sizeof(text) - 1;
	uint64_t off = a->offset < size ? a->offset : size;
	uint64_t n = size - off < a->len ? size - off : a->len;

	fring_host->reply_data(r, text + off, (uint32_t)n);
}

static void hello_readdir(void *inst, fring_req *r, const struct fring_read_args *a)
{
	static const struct { const char *name; uint64_t ino; uint32_t type; } ents[] = {
		{ ".", ROOT, S_IFDIR }, { "..", ROOT, S_IFDIR }, { "hello", HELLO, S_IFREG },
	};

	/* a->offset is the next_off of the last entry the kernel got. */
	/* dir_add: 1 added, 0 the reply is full (send it), < 0 a bad entry
	 * (skipped and logged by the host). */
	for (uint64_t i = a->offset; i < 3; i++)
		if (fring_host->dir_add(r, ents[i].name, (uint32_t)strlen(ents[i].name),
					ents[i].ino, ents[i].type, i + 1) == 0)
			break;
	fring_host->reply_dir(r);
}

/* A takeover (`fring restart`: a new process, new code, the same mount)
 * hands the instance's state over. This one has none but the text, which
 * the new instance gets from its own options, so only the format's
 * version travels; a state of another version is refused. */
#define HELLO_STATE_VERSION 1

static int32_t hello_state_save(void *inst, int fd, uint32_t *version)
{
	(void)inst;
	(void)fd;
	*version = HELLO_STATE_VERSION;
	return 0;
}

static int32_t hello_state_load(void *inst, int fd, uint32_t version)
{
	(void)inst;
	(void)fd;
	return version == HELLO_STATE_VERSION ? 0 : -EPROTO;
}

static const struct fring_fs_ops hello_ops = {
	FRING_OPS_HEADER,
	.lookup = hello_lookup,
	.getattr = hello_getattr,
	.read = hello_read,
	.readdir = hello_readdir,
};

static const struct fring_plugin hello_plugin = {
	FRING_PLUGIN_HEADER,
	.name = "hello",
	.version = "1.0",
	.description = "one read-only file",
	.create = hello_create,
	.ops = &hello_ops,
	.state_save = hello_state_save,
	.state_load = hello_state_load,
};
FRING_PLUGIN_DEFINE(hello_plugin)
