// SPDX-License-Identifier: MIT
/* fring new c|rust|python NAME [DIR]: a plugin project from the SDK
 * templates (sdk-examples/LANG-hello), renamed to NAME, with a README and
 * a test.sh that mounts it; prints the commands that build and mount it.
 * The templates are found like the plugins: beside the binary
 * (../share/fring/sdk, installed by cmake --install), else the source
 * tree the binary was built from. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Every path is built from DIR and the binary's path, both refused past
 * PATH_MAX / 4 below, so no snprintf here truncates. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#ifndef FRING_SOURCE_DIR
#define FRING_SOURCE_DIR ""
#endif

struct lang {
	const char *name, *tmpl, *files[4], *text;
	/* build command and the built object, both relative to DIR; %s: the
	 * prefix (c), the SDK (python) */
	const char *build, *object, *mount_opt;
};

static const struct lang langs[] = {
	{ "c",
	  "sdk-examples/c-hello",
	  { "CMakeLists.txt", "Makefile", "hello.c" },
	  "%s from fring\n",
	  "cmake -S . -B build -DCMAKE_PREFIX_PATH=%s && cmake --build build",
	  "build/%s.so",
	  NULL },
	{ "rust",
	  "sdk-examples/rust-hello",
	  { "Cargo.toml", "Cargo.lock", "src/lib.rs" },
	  "%s from Rust\n",
	  "cargo build --release",
	  "target/release/lib%s.so",
	  NULL },
	{ "python",
	  "sdk-examples/python-hello",
	  { "hello.py" },
	  "%s from Python\n",
	  "PYTHONPATH=%s/bindings/python python3 -m fring.build_plugin plugin",
	  "plugin/fring_python.so",
	  "module" },
};

static char *dir_of(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash)
		*slash = '\0';
	return path;
}

/* The SDK root (holding sdk-examples/ and bindings/) and the prefix. */
static int find_sdk(char *sdk, char *prefix, char *exe)
{
	char p[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, PATH_MAX - 1);
	struct stat st;

	if (len <= 0 || len > PATH_MAX / 4)
		return -ENAMETOOLONG;
	exe[len] = '\0';
	snprintf(p, sizeof(p), "%s", exe);
	snprintf(prefix, PATH_MAX, "%s", dir_of(dir_of(p)));
	snprintf(sdk, PATH_MAX, "%s/share/fring/sdk", prefix);
	if (stat(sdk, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	snprintf(sdk, PATH_MAX, "%s", FRING_SOURCE_DIR);
	snprintf(p, sizeof(p), "%s/sdk-examples", sdk);
	if (*sdk && stat(p, &st) == 0)
		return 0;
	return -ENOENT;
}

/* Template text with hello/Hello/HELLO renamed (not in "c-hello"-like
 * names of other examples), rust-hello and hello-rust to NAME, and the
 * bindings' relative path made absolute. */
static void rename_copy(FILE *out, const char *s, const char *name,
			const char *camel, const char *upper, const char *sdk)
{
	static const char *const words[] = { "hello", "Hello", "HELLO" };
	const char *start = s;

	while (*s) {
		const char *repl = NULL;
		size_t skip = 0;

		if (!strncmp(s, "rust-hello", 10) ||
		    !strncmp(s, "hello-rust", 10)) {
			repl = name;
			skip = 10;
		} else if (!strncmp(s, "../../bindings/", 15)) {
			fprintf(out, "%s/", sdk);
			s += 6;
			continue;
		}
		for (int i = 0; !repl && i < 3; i++)
			if (!strncmp(s, words[i], 5) && s[5] != '-' &&
			    (s == start || (s[-1] != '-' && s[-1] != '/'))) {
				repl = i == 0 ? name : i == 1 ? camel : upper;
				skip = 5;
			}
		if (repl) {
			fputs(repl, out);
			s += skip;
		} else {
			fputc(*s++, out);
		}
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &n, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int mkdirs(const char *path)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return mkdir(p, 0755) && errno != EEXIST ? -errno : 0;
}

static int check_name(const char *name, char *why, size_t n)
{
	if (!*name || !(isalpha((unsigned char)*name) || *name == '_')) {
		snprintf(why, n,
			 "new: bad NAME '%s': it must start with a letter "
			 "or '_' (a C identifier)",
			 name);
		return -1;
	}
	for (const char *s = name; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_') {
			snprintf(why, n,
				 "new: bad NAME '%s': '%c' is not a letter, "
				 "digit or '_' (a C identifier)",
				 name, *s);
			return -1;
		}
	if (strlen(name) > 64) {
		snprintf(why, n, "new: bad NAME: longer than 64 characters");
		return -1;
	}
	return 0;
}

/* DIR must not exist or be an empty directory. */
static int dir_usable(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int used = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			used = 1;
	closedir(d);
	return used ? -ENOTEMPTY : 0;
}

static int write_test(const char *dir, const char *exe, const char *obj,
		      const char *opts, const char *name, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/test.sh", dir);
	f = fopen(p, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"#!/bin/sh\n# SPDX-License-Identifier: MIT\n"
		"# Mount the built plugin, check it answers, unmount (as root).\n"
		"set -eu\nFRING=${FRING:-%s}\nmnt=$(mktemp -d)\nlog=$(mktemp)\n"
		"$FRING mount %s \"$mnt\"%s >\"$log\" 2>&1 &\npid=$!\n"
		"trap 'kill $pid 2>/dev/null; wait $pid || true; "
		"umount -l \"$mnt\" 2>/dev/null || true; rmdir \"$mnt\"; rm -f \"$log\"' EXIT\n"
		"for i in $(seq 100); do grep -q ' ready (' \"$log\" && break; "
		"kill -0 $pid || { cat \"$log\"; exit 1; }; sleep 0.1; done\n"
		"[ \"$(ls \"$mnt\")\" = %s ] || { echo \"test: ls: $(ls \"$mnt\")\"; exit 1; }\n"
		"[ \"$(cat \"$mnt/%s\")\" = '%.*s' ] || { echo 'test: wrong text'; exit 1; }\n"
		"echo 'test: ok'\n",
		exe, obj, opts, name, name, (int)strlen(text) - 1, text);
	return fclose(f) ? -errno : 0;
}

static int write_readme(const char *dir, const char *lang, const char *name,
			const char *build, const char *mount, const char *mnt)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/README.md", dir);
	f = fopen(p, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"# %s: a fring plugin in %s\n\n"
		"Made by `fring new` from fring's %s-hello template: a read-only\n"
		"filesystem with one file, `%s`. Build, mount (Ctrl-C unmounts)\n"
		"and test (as root):\n\n```sh\n%s\nmkdir -p %s\n%s\nsh test.sh\n```\n\n"
		"The plugin contract: `man fring-plugin`.\n",
		name, lang, lang, name, build, mnt, mount);
	return fclose(f) ? -errno : 0;
}

int cmd_new(int argc, char **argv)
{
	char sdk[PATH_MAX], prefix[PATH_MAX], exe[PATH_MAX], dir[PATH_MAX];
	char why[PATH_MAX + 64], camel[80], upper[80], build[2 * PATH_MAX];
	char obj[PATH_MAX], mount[4 * PATH_MAX], mnt[128], p[PATH_MAX];
	const struct lang *l = NULL;
	const char *name;
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return cli_command_help("new");
	if (argc < 3 || argc > 4)
		return cli_command_usage_error(
			"new", "new expects LANGUAGE NAME [DIR]");
	for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
		if (!strcmp(argv[1], langs[i].name))
			l = &langs[i];
	if (!l) {
		snprintf(why, sizeof(why),
			 "new: unknown language '%.32s' "
			 "(c, rust or python)",
			 argv[1]);
		return cli_command_usage_error("new", why);
	}
	name = argv[2];
	if (check_name(name, why, sizeof(why)))
		return cli_command_usage_error("new", why);
	if (!realpath(argc == 4 ? argv[3] : ".", dir) && argc == 4) {
		if (errno != ENOENT)
			return cli_fail(strdup(argv[3]));
		snprintf(dir, sizeof(dir), "%s", argv[3]);
	}
	if (strlen(dir) > PATH_MAX / 4) {
		fprintf(stderr, "fring: new: DIR is too long\n");
		return CLI_EXIT_ERR;
	}
	if (argc == 3)
		snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s",
			 name);
	rc = dir_usable(dir);
	if (rc) {
		fprintf(stderr, "fring: new: %s: %s\n", dir,
			rc == -ENOTEMPTY ? "exists and is not empty"
					 : strerror(-rc));
		return CLI_EXIT_ERR;
	}
	if (find_sdk(sdk, prefix, exe)) {
		fprintf(stderr,
			"fring: new: no templates in %s/share/fring/sdk "
			"(install with cmake --install) nor in the source tree\n",
			prefix);
		return CLI_EXIT_ERR;
	}
	snprintf(camel, sizeof(camel), "%s", name);
	for (size_t i = 0, j = 0, up = 1; name[i]; i++) {
		if (name[i] == '_' && name[i + 1]) {
			up = 1;
			continue;
		}
		camel[j++] = up ? toupper((unsigned char)name[i]) : name[i];
		camel[j] = '\0';
		up = 0;
	}
	for (size_t i = 0; i <= strlen(name); i++)
		upper[i] = toupper((unsigned char)name[i]);
	if ((rc = mkdirs(dir)))
		goto fail;
	if (!realpath(dir, p)) {
		rc = -errno;
		goto fail;
	}
	snprintf(dir, sizeof(dir), "%s", p);
	for (int i = 0; i < 4 && l->files[i]; i++) {
		char src[PATH_MAX], dst[PATH_MAX], *text;
		FILE *out;

		snprintf(src, sizeof(src), "%s/%s/%s", sdk, l->tmpl,
			 l->files[i]);
		text = slurp(src);
		if (!text) {
			fprintf(stderr, "fring: new: %s: %s\n", src,
				strerror(errno));
			return CLI_EXIT_ERR;
		}
		snprintf(dst, sizeof(dst), "%s/", dir);
		{
			char *fname = NULL;
			size_t fl = 0;
			FILE *fn = open_memstream(&fname, &fl);

			rename_copy(fn, l->files[i], name, camel, upper, sdk);
			fclose(fn);
			snprintf(dst + strlen(dst), sizeof(dst) - strlen(dst),
				 "%s", fname);
			free(fname);
		}
		if (strchr(l->files[i], '/')) {
			snprintf(p, sizeof(p), "%s", dst);
			mkdirs(dir_of(p));
		}
		out = fopen(dst, "w");
		if (!out) {
			free(text);
			rc = -errno;
			goto fail;
		}
		rename_copy(out, text, name, camel, upper, sdk);
		free(text);
		if (fclose(out)) {
			rc = -errno;
			goto fail;
		}
	}
	snprintf(build, sizeof(build), l->build,
		 l->name[0] == 'c' ? prefix : sdk);
	snprintf(obj, sizeof(obj), l->object, name);
	snprintf(mnt, sizeof(mnt), "/tmp/%s", name);
	if (l->mount_opt)
		snprintf(mount, sizeof(mount),
			 "%s mount %s/%s %s -o %s=%s/%s.py", exe, dir, obj, mnt,
			 l->mount_opt, dir, name);
	else
		snprintf(mount, sizeof(mount), "%s mount %s/%s %s", exe, dir,
			 obj, mnt);
	if ((rc = write_readme(dir, l->name, name, build, mount, mnt)))
		goto fail;
	snprintf(p, sizeof(p), "%s/%s", dir, obj);
	if (l->mount_opt)
		snprintf(why, sizeof(why), " -o %s=%s/%s.py", l->mount_opt, dir,
			 name);
	else
		why[0] = '\0';
	snprintf(camel, sizeof(camel), l->text, name);
	if ((rc = write_test(dir, exe, p, why, name, camel)))
		goto fail;
	printf("fring: new %s plugin '%s' in %s\nbuild:\n  cd %s && %s\n"
	       "mount (Ctrl-C unmounts):\n  mkdir -p %s\n  %s\ntest:\n  sh %s/test.sh\n",
	       l->name, name, dir, dir, build, mnt, mount, dir);
	return CLI_EXIT_OK;
fail:
	fprintf(stderr, "fring: new: %s: %s\n", dir, strerror(-rc));
	return CLI_EXIT_ERR;
}
