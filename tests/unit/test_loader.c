/*
 * Plugin loader: search order, the version handshake against the fixture
 * plugins in FRING_TEST_FIXTURE_DIR, load() once per .so, listing.
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

#include "loader/loader.h"

#define FX FRING_TEST_FIXTURE_DIR

static void fake_log(fring_mount *m, int32_t level, const char *msg)
{
}

static int32_t fake_log_enabled(fring_mount *m, int32_t level)
{
	return 1;
}

static const struct fring_host_api host = {
	.size = sizeof(struct fring_host_api),
	.abi_major = FRING_ABI_MAJOR,
	.abi_minor = FRING_ABI_MINOR,
	.host_version = "test",
	.log = fake_log,
	.log_enabled = fake_log_enabled,
};

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

	cr_assert_eq(fring_loader_open(FX "/./good.so", &host, &p, &err), 0,
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
	cr_assert_eq(fring_loader_open("good.so", &host, &p, &err), 0, "%s",
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
	cr_assert_eq(fring_loader_open("good", &host, &p, &err), 0, "%s", err);
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
	cr_assert_eq(fring_loader_open("good", &host, &p, &err), 0, "%s", err);
	cr_assert_str_eq(p->desc.name, "good_older");
	drop(p);

	snprintf(path, sizeof(path), "%s:%s", FX, shadow);
	setenv("FRING_PLUGIN_PATH", path, 1);
	cr_assert_eq(fring_loader_open("good", &host, &p, &err), 0, "%s", err);
	cr_assert_str_eq(p->desc.name, "good");
	drop(p);
}

Test(loader, find_does_not_load)
{
	char *path = NULL, *err = NULL, *want = real(FX "/no_entry.so");

	setenv("FRING_PLUGIN_PATH", FX, 1);
	cr_assert_eq(fring_loader_find("no_entry", &path, &err), 0);
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
	cr_assert_eq(fring_loader_open("nosuch", &host, &p, &err), -ENOENT);
	cr_assert_null(p);
	cr_assert_not_null(err);
	cr_assert(strstr(err, "plugin 'nosuch': not found (searched "
			      "FRING_PLUGIN_PATH=/nonexistent-a:/nonexistent-b, ") == err,
		  "%s", err);
	cr_assert_not_null(strstr(err, fring_loader_default_dir()), "%s", err);
	cr_assert_null(strchr(err, '\n'));
	free(err);

	unsetenv("FRING_PLUGIN_PATH");
	cr_assert_eq(fring_loader_open("nosuch", &host, &p, &err), -ENOENT);
	cr_assert_null(strstr(err, "FRING_PLUGIN_PATH"), "%s", err);
	cr_assert_not_null(strstr(err, "/lib/fring/plugins)"), "%s", err);
	free(err);

	cr_assert_eq(fring_loader_open("/nonexistent/x.so", &host, &p, &err),
		     -ENOENT);
	cr_assert_str_eq(err, "plugin '/nonexistent/x.so': not found");
	free(err);
}

Test(loader, older_plugin_loads_with_zero_filled_tail)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL;

	cr_assert_eq(fring_loader_open(FX "/good_older.so", &host, &p, &err),
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
	cr_assert_eq(fring_loader_open(path, &host, &p, &err), rc,
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
	cr_assert_eq(fring_loader_open("load_fails", &host, &p, &err), -EIO);
	cr_assert_str_eq(err, "plugin 'load_fails': load failed: "
			      "Input/output error");
	free(err);
}

Test(loader, create_failure_is_not_a_load_error)
{
	struct fring_loaded_plugin *p = NULL;
	char *err = NULL;
	void *inst = NULL;

	cr_assert_eq(fring_loader_open(FX "/create_fails.so", &host, &p, &err),
		     0, "%s", err);
	cr_assert_eq(p->desc.create(NULL, &inst), -EINVAL);
	drop(p);
}

Test(loader, load_runs_once_per_so, .fini = remove_shadow)
{
	struct fring_loaded_plugin *a = NULL, *b = NULL, *c = NULL;
	char *err = NULL;
	int *count;

	cr_assert_eq(fring_loader_open(FX "/good.so", &host, &a, &err), 0);
	count = dlsym(a->dl, "fring_test_load_count");
	cr_assert_not_null(count);
	cr_assert_eq(*count, 1);

	setenv("FRING_PLUGIN_PATH", FX, 1);
	cr_assert_eq(fring_loader_open("good", &host, &b, &err), 0);
	cr_assert_neq(a, b);
	cr_assert_eq(a->dl, b->dl);
	cr_assert_str_eq(b->desc.name, "good");
	cr_assert_eq(*count, 1);

	/* Another path to the same file is the same .so. */
	cr_assert_not_null(mkdtemp(shadow));
	snprintf(shadow_link, sizeof(shadow_link), "%s/good.so", shadow);
	cr_assert_eq(symlink(FX "/good.so", shadow_link), 0);
	cr_assert_eq(fring_loader_open(shadow_link, &host, &c, &err), 0);
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

static void list_ok(const struct fring_loaded_plugin *p, void *ud)
{
	struct seen *s = ud;

	s->good += !strcmp(p->desc.name, "good");
	s->good_older += !strcmp(p->desc.name, "good_older");
	s->create_fails += !strcmp(p->desc.name, "create_fails");
}

static void list_err(const char *path, const char *err, void *ud)
{
	struct seen *s = ud;
	char *prefix = NULL;

	if (strncmp(path, FX "/", strlen(FX "/")))
		return; /* a real plugin dir may have its own broken files */
	cr_assert_gt(asprintf(&prefix, "plugin '%s': ", path), 0);
	cr_assert(strncmp(err, prefix, strlen(prefix)) == 0, "%s", err);
	free(prefix);
	s->refused++;
	s->not_elf += strstr(err, "not a shared object") != NULL;
	s->bad_magic += strstr(err, "bad magic") != NULL;
}

Test(loader, list_reports_good_and_bad)
{
	struct seen s = { 0 };

	setenv("FRING_PLUGIN_PATH", FX, 1);
	fring_loader_list(&host, list_ok, list_err, &s);
	cr_assert_eq(s.good, 1);
	cr_assert_eq(s.good_older, 1);
	cr_assert_eq(s.create_fails, 1);
	/* newer_minor, wrong_major, no_entry, bad_magic, bad_thread,
	 * missing_ops, load_fails, not_elf */
	cr_assert_eq(s.refused, 8);
	cr_assert_eq(s.not_elf, 1);
	cr_assert_eq(s.bad_magic, 1);
}

Test(loader, list_first_name_wins, .fini = remove_shadow)
{
	struct seen s = { 0 };
	char path[PATH_MAX * 2];

	make_shadow();
	snprintf(path, sizeof(path), "%s:%s", shadow, FX);
	setenv("FRING_PLUGIN_PATH", path, 1);
	fring_loader_list(&host, list_ok, NULL, &s);
	/* shadow/good.so (really good_older) hides FX/good.so */
	cr_assert_eq(s.good, 0);
	cr_assert_eq(s.good_older, 2);
}
