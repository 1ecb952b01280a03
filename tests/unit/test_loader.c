// SPDX-License-Identifier: MIT
/*
 * Plugin loader: search order, the version handshake against the fixture
 * plugins in FRING_TEST_FIXTURE_DIR, load() once per .so, listing, lookup
 * by descriptor name, and plugins whose loading ends the process (each
 * probed in a child: this test process must live through them).
 * Criterion forks per test, so loader state (load registry, cached dirs)
 * and the fixtures' load counters start fresh in every test.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader_internal.h"
#include "fakehost.h"

#define FX FRING_TEST_FIXTURE_DIR

static const struct fring_host_api *const host = &fake_host;

static void drop(struct fring_loaded_plugin *p)
{
	fring_loader_free(p);
}

static char *real(const char *p)
{
	char *r = realpath(p, NULL);

	cr_assert_not_null(r, "realpath(%s)", p);
	return r;
}

/* A temp dir holding `good.so` -> good_older.so, to shadow the real one. */
static char shadow[] = "/tmp/fring-loader-XXXXXX";
static char shadow_link[PATH_MAX];

static void make_shadow(void)
{
	cr_assert_not_null(mkdtemp(shadow));
	snprintf(shadow_link, sizeof(shadow_link), "%s/good.so", shadow);
	cr_assert_eq(symlink(FX "/good_older.so", shadow_link), 0);
}

static void remove_shadow(void)
{
	unlink(shadow_link);
	rmdir(shadow);
}

static void setup(void)
{
	unsetenv("FRING_PLUGIN_PATH");
}

TestSuite(loader, .init = setup);

Test(loader, good_by_path)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL, *want = real(FX "/good.so");

	cr_assert_eq(fring_loader_open(FX "/./good.so", host, &p, &err), 0,
		     "%s", err);
	cr_assert_null(err);
	cr_assert_str_eq(p->path, want);
	cr_assert_str_eq(p->desc.name, "good");
	cr_assert_eq(p->desc.thread_model, FRING_THREAD_PARALLEL);
	cr_assert_eq(p->desc.size, sizeof(struct fring_plugin));
	cr_assert_eq(p->ops.size, sizeof(struct fring_fs_ops));
	cr_assert_not_null(p->ops.lookup);
	cr_assert_not_null(p->ops.getattr);
	cr_assert_null(p->ops.setattr);
	cr_assert_not_null(p->desc.create);
	cr_assert_not_null(p->orig);
	cr_assert_eq(p->orig->ops->lookup, p->ops.lookup);
	/* The host copy of ops is what desc.ops points at. */
	cr_assert_eq(p->desc.ops, &p->ops);
	cr_assert_not_null(p->dl);
	free(want);
	drop(p);
}

Test(loader, bare_so_name_is_a_path_relative_to_cwd)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL, *want = real(FX "/good.so");

	cr_assert_eq(chdir(FX), 0);
	cr_assert_eq(fring_loader_open("good.so", host, &p, &err), 0, "%s",
		     err);
	cr_assert_str_eq(p->path, want);
	free(want);
	drop(p);
}

Test(loader, good_by_name_over_several_dirs)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL, *want = real(FX "/good.so");

	/* Missing and empty entries are skipped. */
	setenv("FRING_PLUGIN_PATH", ":/nonexistent-a::" FX ":/nonexistent-b", 1);
	cr_assert_eq(fring_loader_open("good", host, &p, &err), 0, "%s", err);
	cr_assert_str_eq(p->path, want);
	cr_assert_str_eq(p->desc.name, "good");
	free(want);
	drop(p);
}

Test(loader, first_dir_on_path_wins, .fini = remove_shadow)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL, path[PATH_MAX * 2];

	make_shadow();
	snprintf(path, sizeof(path), "%s:%s", shadow, FX);
	setenv("FRING_PLUGIN_PATH", path, 1);
	cr_assert_eq(fring_loader_open("good", host, &p, &err), 0, "%s", err);
	cr_assert_str_eq(p->desc.name, "good_older");
	drop(p);

	snprintf(path, sizeof(path), "%s:%s", FX, shadow);
	setenv("FRING_PLUGIN_PATH", path, 1);
	cr_assert_eq(fring_loader_open("good", host, &p, &err), 0, "%s", err);
	cr_assert_str_eq(p->desc.name, "good");
	drop(p);
}

Test(loader, find_does_not_load)
{
	char *path = NULL, *err = NULL, *want = real(FX "/no_entry.so");

	setenv("FRING_PLUGIN_PATH", FX, 1);
	cr_assert_eq(fring_loader_find("no_entry", host, &path, &err), 0);
	cr_assert_str_eq(path, want);
	cr_assert_null(err);
	free(path);
	free(want);
}

Test(loader, not_found_lists_searched_dirs)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL;

	setenv("FRING_PLUGIN_PATH", "/nonexistent-a:/nonexistent-b", 1);
	cr_assert_eq(fring_loader_open("nosuch", host, &p, &err), -ENOENT);
	cr_assert_null(p);
	cr_assert_not_null(err);
	cr_assert(strstr(err, "plugin 'nosuch': not found (searched "
			      "FRING_PLUGIN_PATH=/nonexistent-a:/nonexistent-b, ") == err,
		  "%s", err);
	cr_assert_not_null(strstr(err, fring_loader_default_dir()), "%s", err);
	cr_assert_null(strchr(err, '\n'));
	free(err);

	unsetenv("FRING_PLUGIN_PATH");
	cr_assert_eq(fring_loader_open("nosuch", host, &p, &err), -ENOENT);
	cr_assert_null(strstr(err, "FRING_PLUGIN_PATH"), "%s", err);
	cr_assert_not_null(strstr(err, "/lib/fring/plugins)"), "%s", err);
	free(err);

	cr_assert_eq(fring_loader_open("/nonexistent/x.so", host, &p, &err),
		     -ENOENT);
	cr_assert_str_eq(err, "plugin '/nonexistent/x.so': not found");
	free(err);
}

Test(loader, older_plugin_loads_with_zero_filled_tail)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL;

	cr_assert_eq(fring_loader_open(FX "/good_older.so", host, &p, &err),
		     0, "%s", err);
	cr_assert_str_eq(p->desc.name, "good_older");
	cr_assert_eq(p->desc.abi_minor, 0);
	cr_assert_eq(p->desc.size,
		     offsetof(struct fring_plugin, ops) + sizeof(void *));
	cr_assert_eq(p->ops.size,
		     offsetof(struct fring_fs_ops, getattr) + sizeof(void *));
	cr_assert_not_null(p->ops.lookup);
	cr_assert_not_null(p->ops.getattr);
	/* Set in the plugin's table but past its stamped size. */
	cr_assert_not_null(p->orig->ops->setattr);
	cr_assert_not_null(p->orig->ops->statx);
	cr_assert_null(p->ops.setattr);
	cr_assert_null(p->ops.statx);
	cr_assert_null(p->desc.load);
	cr_assert_eq(p->desc.ops, &p->ops);
	drop(p);
}

/* A fixture that must be refused with `rc` and a one-line message
 * "plugin '<path>': <what>...". */
static void expect_refused(const char *file, int rc, const char *what)
{
	struct fring_loaded_plugin *p = (void *)1;
	char path[PATH_MAX], *err = NULL, *prefix;

	snprintf(path, sizeof(path), "%s/%s", FX, file);
	cr_assert_eq(fring_loader_open(path, host, &p, &err), rc,
		     "%s: %s", file, err ? err : "(no message)");
	cr_assert_null(p);
	cr_assert_not_null(err);
	prefix = NULL;
	cr_assert_gt(asprintf(&prefix, "plugin '%s': %s", path, what), 0);
	cr_assert(strncmp(err, prefix, strlen(prefix)) == 0,
		  "got \"%s\", want prefix \"%s\"", err, prefix);
	cr_assert_null(strchr(err, '\n'), "%s", err);
	free(prefix);
	free(err);
}

Test(loader, newer_minor_refused)
{
	char what[128];

	snprintf(what, sizeof(what),
		 "built against ABI %d.%d, newer than this host's %d.%d; "
		 "upgrade fring", FRING_ABI_MAJOR, FRING_ABI_MINOR + 1,
		 FRING_ABI_MAJOR, FRING_ABI_MINOR);
	expect_refused("newer_minor.so", -EPROTO, what);
}

Test(loader, wrong_major_named)
{
	expect_refused("wrong_major.so", -EPROTO,
		       "entry symbol fring_plugin_entry_v1 missing (built for "
		       "ABI 2; this host speaks 1)");
}

Test(loader, no_entry_symbol)
{
	expect_refused("no_entry.so", -ENOEXEC,
		       "entry symbol fring_plugin_entry_v1 missing (not a "
		       "fring plugin?)");
}

Test(loader, bad_magic)
{
	expect_refused("bad_magic.so", -EPROTO, "bad magic 0xdeadbeef");
}

Test(loader, unknown_thread_model)
{
	expect_refused("bad_thread.so", -EINVAL, "unknown thread model 7");
}

Test(loader, every_missing_callback_in_one_message)
{
	expect_refused("missing_ops.so", -EINVAL,
		       "missing required callbacks: ops.lookup, ops.getattr");
}

Test(loader, state_hooks_go_together)
{
	expect_refused("half_state.so", -EINVAL,
		       "state_save without state_load");
}

Test(loader, not_elf)
{
	expect_refused("not_elf.so", -ENOEXEC,
		       "not a shared object: invalid ELF header");
}

Test(loader, load_failure)
{
	expect_refused("load_fails.so", -EIO, "load failed: Input/output error");
}

Test(loader, message_names_plugin_as_given)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL;

	setenv("FRING_PLUGIN_PATH", FX, 1);
	cr_assert_eq(fring_loader_open("load_fails", host, &p, &err), -EIO);
	cr_assert_str_eq(err, "plugin 'load_fails': load failed: "
			      "Input/output error");
	free(err);
}

Test(loader, create_failure_is_not_a_load_error)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL;
	void *inst = NULL;

	cr_assert_eq(fring_loader_open(FX "/create_fails.so", host, &p, &err),
		     0, "%s", err);
	cr_assert_eq(p->desc.create(NULL, &inst), -EINVAL);
	drop(p);
}

Test(loader, load_runs_once_per_so, .fini = remove_shadow)
{
	struct fring_loaded_plugin *a = NULL, *b = NULL, *c = NULL;
	char *err = NULL;
	int *count;

	cr_assert_eq(fring_loader_open(FX "/good.so", host, &a, &err), 0);
	count = dlsym(a->dl, "fring_test_load_count");
	cr_assert_not_null(count);
	cr_assert_eq(*count, 1);

	setenv("FRING_PLUGIN_PATH", FX, 1);
	cr_assert_eq(fring_loader_open("good", host, &b, &err), 0);
	cr_assert_neq(a, b);
	cr_assert_eq(a->dl, b->dl);
	cr_assert_str_eq(b->desc.name, "good");
	cr_assert_eq(*count, 1);

	/* Another path to the same file is the same .so. */
	cr_assert_not_null(mkdtemp(shadow));
	snprintf(shadow_link, sizeof(shadow_link), "%s/good.so", shadow);
	cr_assert_eq(symlink(FX "/good.so", shadow_link), 0);
	cr_assert_eq(fring_loader_open(shadow_link, host, &c, &err), 0);
	cr_assert_eq(c->dl, a->dl);
	cr_assert_eq(*count, 1);
	drop(a);
	drop(b);
	drop(c);
}

Test(loader, default_dir_is_next_to_the_binary)
{
	char *want;

	/* build/tests/test_loader -> build/lib/fring/plugins */
	mkdir(FRING_BUILD_DIR "/lib", 0755);
	mkdir(FRING_BUILD_DIR "/lib/fring", 0755);
	mkdir(FRING_BUILD_DIR "/lib/fring/plugins", 0755);
	want = real(FRING_BUILD_DIR "/lib/fring/plugins");
	cr_assert_str_eq(fring_loader_default_dir(), want);
	free(want);
}

struct seen {
	int good, good_older, create_fails;
	int refused, not_elf, bad_magic;
};

static void count(const struct fring_plugin_file *e, size_t n, struct seen *s)
{
	for (size_t i = 0; i < n; i++) {
		const char *err = e[i].err;
		char *prefix = NULL;

		if (e[i].info) {
			s->good += !strcmp(e[i].info->name, "good");
			s->good_older += !strcmp(e[i].info->name, "good_older");
			s->create_fails += !strcmp(e[i].info->name, "create_fails");
			continue;
		}
		if (strncmp(e[i].file, FX "/", strlen(FX "/")))
			continue; /* a real plugin dir may have its own broken files */
		cr_assert_gt(asprintf(&prefix, "plugin '%s': ", e[i].file), 0);
		cr_assert(strncmp(err, prefix, strlen(prefix)) == 0, "%s", err);
		free(prefix);
		s->refused++;
		s->not_elf += strstr(err, "not a shared object") != NULL;
		s->bad_magic += strstr(err, "bad magic") != NULL;
	}
}

Test(loader, list_reports_good_and_bad)
{
	struct fring_plugin_file *e;
	struct seen s = { 0 };
	size_t n;

	setenv("FRING_PLUGIN_PATH", FX, 1);
	cr_assert_eq(fring_loader_list(host, &e, &n), 0);
	count(e, n, &s);
	fring_loader_list_free(e, n);
	cr_assert_eq(s.good, 1);
	cr_assert_eq(s.good_older, 1);
	cr_assert_eq(s.create_fails, 1);
	/* newer_minor, wrong_major, no_entry, bad_magic, bad_thread,
	 * missing_ops, load_fails, not_elf, half_state */
	cr_assert_eq(s.refused, 9);
	cr_assert_eq(s.not_elf, 1);
	cr_assert_eq(s.bad_magic, 1);
}

Test(loader, list_first_name_wins, .fini = remove_shadow)
{
	struct fring_plugin_file *e;
	struct seen s = { 0 };
	char path[PATH_MAX * 2];
	size_t n;

	make_shadow();
	snprintf(path, sizeof(path), "%s:%s", shadow, FX);
	setenv("FRING_PLUGIN_PATH", path, 1);
	cr_assert_eq(fring_loader_list(host, &e, &n), 0);
	count(e, n, &s);
	fring_loader_list_free(e, n);
	/* shadow/good.so (really good_older) hides FX/good.so */
	cr_assert_eq(s.good, 0);
	cr_assert_eq(s.good_older, 2);
}

/* ---- plugins that end whoever loads them: only the probe's child ---- */

static void expect_unloadable(const char *file, int rc, const char *why)
{
	struct fring_loaded_plugin *p = (void *)1;
	char path[PATH_MAX], want[PATH_MAX * 2], *err = NULL;

	snprintf(path, sizeof(path), "%s/%s", FX, file);
	snprintf(want, sizeof(want), "plugin '%s': %s", path, why);
	cr_assert_eq(fring_loader_open(path, host, &p, &err), rc, "%s",
		     err ? err : "(no message)");
	cr_assert_null(p);
	cr_assert_str_eq(err, want);
	free(err);
}

Test(loader, crashing_constructor_is_an_error)
{
	expect_unloadable("crash/crash_ctor.so", -ENOEXEC,
			  "loading it killed the process (SIGSEGV)");
}

Test(loader, exiting_constructor_is_an_error)
{
	expect_unloadable("exit/exit_ctor.so", -ENOEXEC,
			  "loading it ended the process (exit status 3)");
}

Test(loader, hanging_constructor_is_killed)
{
	fring_loader_probe_timeout_ms = 300;
	expect_unloadable("hang/hang_ctor.so", -ETIMEDOUT,
			  "loading it did not finish within 300 ms (killed; a "
			  "constructor or load() that hangs?)");
}

Test(loader, crash_by_name_is_named_as_given)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL;

	setenv("FRING_PLUGIN_PATH", FX "/crash", 1);
	cr_assert_eq(fring_loader_open("crash_ctor", host, &p, &err), -ENOEXEC);
	cr_assert_str_eq(err, "plugin 'crash_ctor': loading it killed the "
			      "process (SIGSEGV)");
	free(err);
}

Test(loader, list_survives_unloadable_plugins)
{
	struct fring_plugin_file *e;
	size_t n, bad = 0, good = 0;

	setenv("FRING_PLUGIN_PATH", FX "/crash:" FX "/exit:" FX, 1);
	cr_assert_eq(fring_loader_list(host, &e, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (strstr(e[i].file, "_ctor.so")) {
			cr_assert_null(e[i].info);
			cr_assert_not_null(strstr(e[i].err, "loading it "), "%s",
					   e[i].err);
			bad++;
		}
		good += e[i].info && !strcmp(e[i].info->name, "good");
	}
	fring_loader_list_free(e, n);
	cr_assert_eq(bad, 2);
	cr_assert_eq(good, 1);
}

Test(loader, probe_does_not_load_here)
{
	const struct fring_plugin_info *info;
	char *err = NULL, *path = real(FX "/good.so");

	cr_assert_eq(fring_loader_probe("good", path, host, &info, &err), 0,
		     "%s", err);
	cr_assert_str_eq(info->name, "good");
	cr_assert_str_eq(info->config_help, "none: this fixture takes no options");
	cr_assert_eq(info->abi_major, FRING_ABI_MAJOR);
	/* RTLD_NOLOAD: still not in this process */
	cr_assert_null(dlopen(path, RTLD_NOW | RTLD_NOLOAD));
	free(path);
}

/* ---- names: the file's, and the descriptor's ---- */

static char names_dir[] = "/tmp/fring-names-XXXXXX";

/* A copy (not a link: a distinct file) of fixture `from` as names_dir/to. */
static void copy_fixture(const char *from, const char *to)
{
	char src[PATH_MAX], dst[PATH_MAX], buf[65536];
	FILE *in, *out;
	size_t n;

	snprintf(src, sizeof(src), "%s/%s", FX, from);
	snprintf(dst, sizeof(dst), "%s/%s", names_dir, to);
	in = fopen(src, "rb");
	out = fopen(dst, "wb");
	cr_assert(in && out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		cr_assert_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
}

static void make_names(void)
{
	cr_assert_not_null(mkdtemp(names_dir));
	setenv("FRING_PLUGIN_PATH", names_dir, 1);
}

static void remove_names(void)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", names_dir);
	cr_assert_eq(system(cmd), 0);
}

static void expect_find(const char *name, const char *file)
{
	char *path = NULL, *err = NULL, want[PATH_MAX];

	snprintf(want, sizeof(want), "%s/%s", names_dir, file);
	cr_assert_eq(fring_loader_find(name, host, &path, &err), 0, "%s: %s",
		     name, err);
	cr_assert_str_eq(path, want);
	free(path);
}

Test(loader, found_by_descriptor_name_and_file_name, .init = make_names,
     .fini = remove_names)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL;

	copy_fixture("good.so", "libgood-plugin.so");
	expect_find("good", "libgood-plugin.so");
	expect_find("libgood-plugin", "libgood-plugin.so");
	cr_assert_eq(fring_loader_open("good", host, &p, &err), 0, "%s", err);
	cr_assert_str_eq(p->desc.name, "good");
	drop(p);
}

static void expect_ambiguous(const char *name, const char *a, const char *b)
{
	char *path = NULL, *err = NULL, want[PATH_MAX * 3];

	snprintf(want, sizeof(want), "plugin '%s': ambiguous: %s/%s and %s/%s "
		 "both answer to that name (rename one, or give the path of "
		 "the one you mean)", name, names_dir, a, names_dir, b);
	cr_assert_eq(fring_loader_find(name, host, &path, &err), -EINVAL);
	cr_assert_null(path);
	cr_assert_str_eq(err, want);
	free(err);
}

Test(loader, one_name_two_plugins_is_an_error, .init = make_names,
     .fini = remove_names)
{
	copy_fixture("good.so", "a.so");
	copy_fixture("good.so", "b.so");
	expect_ambiguous("good", "a.so", "b.so");
	/* each still answers to its own file name */
	expect_find("b", "b.so");
}

Test(loader, file_name_and_descriptor_name_clash, .init = make_names,
     .fini = remove_names)
{
	struct fring_plugin_file *e;
	size_t n;

	copy_fixture("good.so", "x.so");         /* descriptor "good" */
	copy_fixture("good_older.so", "good.so"); /* file "good" */
	expect_ambiguous("good", "good.so", "x.so");
	cr_assert_eq(fring_loader_list(host, &e, &n), 0);
	/* names_dir comes first, sorted: good.so, x.so */
	cr_assert_geq(n, 2);
	cr_assert(strstr(e[0].file, "/good.so") && strstr(e[1].file, "/x.so"));
	cr_assert_str_eq(fring_loader_shared_name(&e[0], &e[1]), "good");
	cr_assert_null(fring_loader_shared_name(&e[0], &e[0]));
	fring_loader_list_free(e, n);
}

Test(loader, links_to_one_file_are_one_plugin, .init = make_names,
     .fini = remove_names)
{
	char link[PATH_MAX];

	copy_fixture("good.so", "a.so");
	snprintf(link, sizeof(link), "%s/b.so", names_dir);
	cr_assert_eq(symlink("a.so", link), 0);
	expect_find("good", "a.so");
}

Test(loader, not_found_mentions_what_could_not_be_asked)
{
	char *path = NULL, *err = NULL;

	setenv("FRING_PLUGIN_PATH", FX "/crash", 1);
	cr_assert_eq(fring_loader_find("nosuch", host, &path, &err), -ENOENT);
	cr_assert(strstr(err, "plugin 'nosuch': not found (searched "
			      "FRING_PLUGIN_PATH=" FX "/crash, ") == err, "%s", err);
	cr_assert_not_null(strstr(err, "; 1 plugin file there could not be "
				       "loaded to read its name (fring plugins "
				       "says why)"), "%s", err);
	free(err);
}

/* ---- private copies (snapshot.c) ---- */

static char copy_dir[] = "/tmp/fring-copy-XXXXXX";
static char copy_so[PATH_MAX];

static void remove_copy(void)
{
	unlink(copy_so);
	rmdir(copy_dir);
}

/* Write fixture `from` into copy_so in place (same inode), as cp does. */
static void write_in_place(const char *from)
{
	FILE *in = fopen(from, "rb"), *out = fopen(copy_so, "r+b");
	char buf[65536];
	size_t n;

	cr_assert(in && out);
	cr_assert_eq(ftruncate(fileno(out), 0), 0);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		cr_assert_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	cr_assert_eq(fclose(out), 0);
}

Test(loader, serves_a_private_copy_named_by_the_file, .fini = remove_copy)
{
	struct fring_loaded_plugin *a = NULL, *b = NULL, *c = NULL;
	char *err = NULL, *want, line[4096];
	struct stat before, after;
	int in_memfd = 0, in_file = 0;
	Dl_info info;
	FILE *maps;

	cr_assert_not_null(mkdtemp(copy_dir));
	snprintf(copy_so, sizeof(copy_so), "%s/fs.so", copy_dir);
	maps = fopen(copy_so, "wb");
	cr_assert_not_null(maps);
	fclose(maps);
	write_in_place(FX "/good.so");
	cr_assert_eq(stat(copy_so, &before), 0);
	want = real(copy_so);

	cr_assert_eq(fring_loader_open(copy_so, host, &a, &err), 0, "%s", err);
	cr_assert_str_eq(a->path, want);
	/* dladdr names the file, not /proc/self/fd/N */
	cr_assert(dladdr((void *)a->orig, &info));
	cr_assert_str_eq(info.dli_fname, want);
	maps = fopen("/proc/self/maps", "r");
	while (fgets(line, sizeof(line), maps)) {
		in_memfd |= !!strstr(line, "memfd:fring-plugin:fs.so");
		in_file |= !!strstr(line, want);
	}
	fclose(maps);
	cr_assert(in_memfd && !in_file, "mapped from the file, not a copy");
	/* the same unchanged file again: the same copy, the same handle */
	cr_assert_eq(fring_loader_open(copy_so, host, &b, &err), 0, "%s", err);
	cr_assert_eq(a->dl, b->dl);

	/* rewritten in place: what was loaded is untouched */
	write_in_place(FX "/good_older.so");
	cr_assert_eq(stat(copy_so, &after), 0);
	cr_assert_eq(before.st_ino, after.st_ino);
	cr_assert_str_eq(a->orig->name, "good");
	cr_assert_not_null(a->orig->ops->lookup);
	/* and opening it again loads the new version */
	cr_assert_eq(fring_loader_open(copy_so, host, &c, &err), 0, "%s", err);
	cr_assert_neq(c->dl, a->dl);
	cr_assert_str_eq(c->desc.name, "good_older");
	cr_assert_str_eq(c->path, want);
	cr_assert_str_eq(a->orig->name, "good");
	free(want);
	drop(a);
	drop(b);
	drop(c);
}

Test(loader, errors_name_the_file_not_the_copy, .fini = remove_copy)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL;
	FILE *f;

	cr_assert_not_null(mkdtemp(copy_dir));
	snprintf(copy_so, sizeof(copy_so), "%s/bad.so", copy_dir);
	f = fopen(copy_so, "wb");
	cr_assert_not_null(f);
	fputs("\177ELF not really", f);
	fclose(f);
	cr_assert_eq(fring_loader_open(copy_so, host, &p, &err), -ENOEXEC);
	cr_assert_null(strstr(err, "/proc/self/fd"), "%s", err);
	cr_assert_not_null(strstr(err, copy_so), "%s", err);
	free(err);
}
