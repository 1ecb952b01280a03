// SPDX-License-Identifier: MIT
/*
 * Private copies of plugin files. A dlopen'd file is mapped, not read: an
 * in-place rewrite (`cp new.so plugins/memfs.so` writes into the same
 * inode) changes the pages of the running server under it, and a
 * truncation turns them into SIGBUS. So every plugin is loaded (by the
 * probe's child, then for serving) from a sealed memfd holding a copy of
 * the file, opened as /proc/self/fd/N: the file on disk can then be
 * replaced, rewritten or removed at any time without touching the server.
 *
 * - One copy per file version (device, inode, size, mtime), kept for the
 *   life of the process, as the loaded .so is: opening the same unchanged
 *   file again (a second mount, a symlink to it) gives the same copy, so
 *   dlopen gives the same handle and load() runs once.
 * - The memfd stays open (close-on-exec): glibc also matches a dlopen by
 *   the name it was opened with, so /proc/self/fd/N must never name
 *   another copy later.
 * - After dlopen, fring_loader_name_copy gives the link map the original
 *   (symlink-free) path back, so dladdr's dli_fname, dl_iterate_phdr and
 *   backtraces name the plugin file: a plugin that looks for files next to
 *   itself (fring_python.so finds its package so) still does.
 * - $ORIGIN in a plugin's RUNPATH/RPATH would mean /proc/self/fd: the
 *   libraries it names there are loaded first from beside the original
 *   file (fring_loader_preload_origin), from where they are.
 * If no memfd can be had (memfd_create refused, no /proc), the file itself
 * is loaded, as before, with one info line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "loader/loader_internal.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define COPY_TRIES 3

struct copy {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd;
	char fdpath[32];
	char *orig;
};

static struct copy *copies;
static size_t ncopies;
static pthread_mutex_t copies_lock = PTHREAD_MUTEX_INITIALIZER;
/* glibc's own l_name strings we replaced: kept, not freed, since another
 * thread may be reading one (dl_iterate_phdr, dladdr) without our lock. */
static char **kept_names;
static size_t nkept;
static int fallback_logged;

static int same_version(const struct copy *c, const struct stat *st)
{
	return c->dev == st->st_dev && c->ino == st->st_ino &&
	       c->size == st->st_size && c->mtime.tv_sec == st->st_mtim.tv_sec &&
	       c->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static int make_memfd(const char *orig)
{
	const char *base = strrchr(orig, '/');
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "fring-plugin:%s", base ? base + 1 : orig);
	/* MFD_EXEC: where vm.memfd_noexec is set, ask for an executable one
	 * (kernels before 6.3 do not know the flag: EINVAL). */
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL)
		fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	return fd;
}

/* Copy all of `in` (st_size bytes at st) into `out`; 0, -EAGAIN if the
 * file changed meanwhile, or -errno. */
static int copy_all(int in, int out, const struct stat *st)
{
	char buf[65536];
	off_t done = 0;
	struct stat after;

	for (;;) {
		ssize_t r = pread(in, buf, sizeof(buf), done), w, off = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		while (off < r) {
			w = write(out, buf + off, (size_t)(r - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			off += w;
		}
		done += r;
	}
	if (fstat(in, &after) < 0)
		return -errno;
	if (done != st->st_size || after.st_size != st->st_size ||
	    after.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	    after.st_mtim.tv_nsec != st->st_mtim.tv_nsec)
		return -EAGAIN;
	return 0;
}

/* A new copy of the open file `in` (version *st) in the cache, or NULL
 * with *rc (-EAGAIN: it kept changing while read). */
static struct copy *new_copy(const char *orig, int in, struct stat *st, int *rc)
{
	struct copy *grown, *c;
	int fd = -1;

	for (int i = 0; i < COPY_TRIES; i++) {
		fd = make_memfd(orig);
		if (fd < 0) {
			*rc = -errno;
			return NULL;
		}
		*rc = copy_all(in, fd, st);
		if (*rc != -EAGAIN)
			break;
		close(fd);
		fd = -1;
		if (fstat(in, st) < 0) {
			*rc = -errno;
			return NULL;
		}
	}
	if (*rc) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	/* Nobody writes the copy, not even through /proc/PID/fd. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
				   F_SEAL_SEAL);
	grown = realloc(copies, (ncopies + 1) * sizeof(*copies));
	if (!grown) {
		close(fd);
		*rc = -ENOMEM;
		return NULL;
	}
	copies = grown;
	c = &copies[ncopies];
	memset(c, 0, sizeof(*c));
	c->orig = strdup(orig);
	if (!c->orig) {
		close(fd);
		*rc = -ENOMEM;
		return NULL;
	}
	c->dev = st->st_dev;
	c->ino = st->st_ino;
	c->size = st->st_size;
	c->mtime = st->st_mtim;
	c->fd = fd;
	snprintf(c->fdpath, sizeof(c->fdpath), "/proc/self/fd/%d", fd);
	if (access(c->fdpath, R_OK) < 0) { /* no /proc */
		*rc = -errno;
		free(c->orig);
		close(fd);
		return NULL;
	}
	ncopies++;
	return c;
}

int fring_loader_snapshot(const char *path, char **file)
{
	struct copy *c = NULL;
	struct stat st;
	int in, rc = 0;

	*file = NULL;
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		/* dlopen of the file itself says why, as it always did. */
		if (in >= 0)
			close(in);
		*file = strdup(path);
		return *file ? 0 : -ENOMEM;
	}
	pthread_mutex_lock(&copies_lock);
	for (size_t i = 0; i < ncopies && !c; i++)
		if (same_version(&copies[i], &st) && !strcmp(copies[i].orig, path))
			c = &copies[i];
	if (!c)
		c = new_copy(path, in, &st, &rc);
	if (c)
		*file = strdup(c->fdpath);
	else if (rc != -ENOMEM && rc != -EAGAIN) {
		if (!fallback_logged)
			fring_info("plugin %s: loaded from the file itself, not a "
				   "private copy (memfd: %s): replacing it in place "
				   "while it serves would crash the server", path,
				   strerror(-rc));
		fallback_logged = 1;
		*file = strdup(path);
		rc = 0;
	}
	pthread_mutex_unlock(&copies_lock);
	close(in);
	if (rc == -EAGAIN)
		return rc;
	return *file ? 0 : -ENOMEM;
}

const char *fring_loader_copy_origin(const char *file)
{
	const char *orig = NULL;

	pthread_mutex_lock(&copies_lock);
	for (size_t i = 0; i < ncopies && !orig; i++)
		if (!strcmp(copies[i].fdpath, file))
			orig = copies[i].orig;
	pthread_mutex_unlock(&copies_lock);
	return orig;
}

void fring_loader_name_copy(void *dl, const char *file, const char *orig)
{
	struct link_map *lm = NULL;
	char *name, **grown;

	if (!orig || !strcmp(file, orig) ||
	    dlinfo(dl, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name ||
	    strcmp(lm->l_name, file))
		return; /* not a copy, or named already */
	name = strdup(orig);
	if (!name)
		return;
	pthread_mutex_lock(&copies_lock);
	grown = realloc(kept_names, (nkept + 1) * sizeof(*kept_names));
	if (grown) {
		kept_names = grown;
		kept_names[nkept++] = lm->l_name;
		lm->l_name = name; /* glibc frees it at dlclose */
	} else {
		free(name);
	}
	pthread_mutex_unlock(&copies_lock);
}

/* ---- $ORIGIN ---- */

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

/* File offset of the virtual address v (in a PT_LOAD's file part). */
static int vaddr_off(const Elf64_Phdr *ph, unsigned n, uint64_t v, uint64_t *off)
{
	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr &&
		    v < ph[i].p_vaddr + ph[i].p_filesz) {
			*off = v - ph[i].p_vaddr + ph[i].p_offset;
			return 0;
		}
	return -1;
}

/* `entry` of a RUNPATH with $ORIGIN / ${ORIGIN} made `dir`; NULL if it
 * has none (the dynamic loader finds those itself). */
static char *origin_dir(const char *entry, size_t len, const char *dir)
{
	char *out = NULL;
	size_t sz = 0;
	FILE *m;

	if (!memmem(entry, len, "$ORIGIN", 7) && !memmem(entry, len, "${ORIGIN}", 9))
		return NULL;
	m = open_memstream(&out, &sz);
	if (!m)
		return NULL;
	for (size_t i = 0; i < len;) {
		if (len - i >= 9 && !memcmp(entry + i, "${ORIGIN}", 9)) {
			fputs(dir, m);
			i += 9;
		} else if (len - i >= 7 && !memcmp(entry + i, "$ORIGIN", 7)) {
			fputs(dir, m);
			i += 7;
		} else {
			fputc(entry[i++], m);
		}
	}
	fclose(m);
	return out;
}

void fring_loader_preload_origin(const char *file, const char *orig)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	Elf64_Dyn *dyn = NULL;
	char *strtab = NULL, *dir = NULL;
	uint64_t str_addr = 0, str_sz = 0, off, run = UINT64_MAX;
	size_t ndyn = 0;
	int fd;

	if (!orig || !strcmp(file, orig))
		return;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (read_at(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(*ph) ||
	    !eh.e_phnum || !(ph = calloc(eh.e_phnum, sizeof(*ph))) ||
	    read_at(fd, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff))
		goto out;
	for (unsigned i = 0; i < eh.e_phnum && !dyn; i++) {
		if (ph[i].p_type != PT_DYNAMIC || ph[i].p_filesz > (1u << 20))
			continue;
		ndyn = ph[i].p_filesz / sizeof(*dyn);
		dyn = calloc(ndyn ? ndyn : 1, sizeof(*dyn));
		if (!dyn || read_at(fd, dyn, ndyn * sizeof(*dyn), ph[i].p_offset))
			goto out;
	}
	for (size_t i = 0; dyn && i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			str_addr = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			str_sz = dyn[i].d_un.d_val;
		else if (dyn[i].d_tag == DT_RUNPATH ||
			 (dyn[i].d_tag == DT_RPATH && run == UINT64_MAX))
			run = dyn[i].d_un.d_val; /* RUNPATH overrides RPATH */
	}
	if (!dyn || run == UINT64_MAX || !str_sz || str_sz > (16u << 20) ||
	    vaddr_off(ph, eh.e_phnum, str_addr, &off) || run >= str_sz ||
	    !(strtab = malloc(str_sz + 1)) || read_at(fd, strtab, str_sz, off))
		goto out;
	strtab[str_sz] = '\0';
	if (!strstr(strtab + run, "ORIGIN") || !(dir = strdup(orig)))
		goto out;
	*strrchr(dir, '/') = '\0'; /* orig is absolute (realpath) */
	for (const char *e = strtab + run; *e;) {
		size_t len = strcspn(e, ":");
		char *d = origin_dir(e, len, *dir ? dir : "/");

		for (size_t i = 0; d && i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
			const char *need;
			char *lib;

			if (dyn[i].d_tag != DT_NEEDED || dyn[i].d_un.d_val >= str_sz)
				continue;
			need = strtab + dyn[i].d_un.d_val;
			if (strchr(need, '/') || !(lib = fring_strf("%s/%s", d, need)))
				continue;
			/* Found by its soname when the plugin's turn comes. */
			if (access(lib, R_OK) == 0 &&
			    !dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD))
				dlopen(lib, RTLD_NOW | RTLD_LOCAL);
			free(lib);
		}
		free(d);
		e += len + (e[len] == ':');
	}
out:
	free(dir);
	free(strtab);
	free(dyn);
	free(ph);
	close(fd);
}
