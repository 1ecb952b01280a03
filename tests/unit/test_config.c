// SPDX-License-Identifier: MIT
/* YAML configuration loader: schema, flattening, defaults, exact error
 * messages with positions, size/bool helpers. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

#define DATA FRING_TEST_DATA_DIR "/config/"

static struct fring_config *load_ok(const char *path)
{
	struct fring_config *cfg = NULL;
	char *err = (char *)"unset";
	int rc = fring_config_load(path, &cfg, &err);

	cr_assert_eq(rc, 0, "%s: rc %d: %s", path, rc, err ? err : "(null)");
	cr_assert_null(err);
	cr_assert_not_null(cfg);
	return cfg;
}

static struct fring_config *parse_ok(const char *text)
{
	struct fring_config *cfg = NULL;
	char *err = NULL;
	int rc = fring_config_parse("t.yaml", text, strlen(text), &cfg, &err);

	cr_assert_eq(rc, 0, "rc %d: %s", rc, err ? err : "(null)");
	cr_assert_not_null(cfg);
	return cfg;
}

/* Loads tests/unit/config/FILE and expects -EINVAL with "PATH:msg". */
static void expect_file_err(const char *file, const char *msg)
{
	struct fring_config *cfg = (struct fring_config *)0x1;
	char *path, *want, *err = NULL;
	int rc;

	cr_assert(asprintf(&path, DATA "%s", file) > 0);
	cr_assert(asprintf(&want, "%s:%s", path, msg) > 0);
	rc = fring_config_load(path, &cfg, &err);
	cr_assert_eq(rc, -EINVAL, "%s: rc %d", file, rc);
	cr_assert_eq(cfg, (struct fring_config *)0x1, "*out touched on error");
	cr_assert_not_null(err);
	cr_assert_str_eq(err, want, "got:  %s\nwant: %s", err, want);
	free(err);
	free(want);
	free(path);
}

/* Parses `text` as "t.yaml" and expects -EINVAL with exactly `msg`. */
static void expect_err(const char *text, const char *msg)
{
	struct fring_config *cfg = NULL;
	char *err = NULL;
	int rc = fring_config_parse("t.yaml", text, strlen(text), &cfg, &err);

	cr_assert_eq(rc, -EINVAL, "rc %d for:\n%s", rc, text);
	cr_assert_null(cfg);
	cr_assert_not_null(err);
	cr_assert_str_eq(err, msg, "for:\n%s\ngot:  %s\nwant: %s", text, err, msg);
	free(err);
}

static const struct fring_cfg_option *opt(const struct fring_cfg_mount *m, size_t i)
{
	cr_assert_lt(i, m->nr_options);
	return &m->options[i];
}

static void expect_opt(const struct fring_cfg_mount *m, size_t i, const char *key,
		       const char *value, int is_null, unsigned line, unsigned col)
{
	const struct fring_cfg_option *o = opt(m, i);

	cr_expect_str_eq(o->key, key, "option %zu", i);
	cr_expect_str_eq(o->value, value, "option %zu (%s)", i, key);
	cr_expect_eq(o->is_null, is_null, "option %zu (%s) is_null", i, key);
	cr_expect_eq(o->line, line, "option %zu (%s) line %u", i, key, o->line);
	cr_expect_eq(o->column, col, "option %zu (%s) column %u", i, key, o->column);
}

#define M "mounts:\n  - mountpoint: /mnt/a\n    plugin: memfs\n"

Test(config, full_example_every_key)
{
	struct fring_config *cfg = load_ok(DATA "full.yaml");
	struct fring_cfg_mount *m = &cfg->mounts[0], *m2 = &cfg->mounts[1];

	cr_assert_str_eq(cfg->path, DATA "full.yaml");
	cr_assert_eq(cfg->nr_mounts, 2);
	cr_expect_str_eq(m->mountpoint, "/mnt/data");
	cr_expect_str_eq(m->plugin, "passthrough");
	cr_expect_eq(m->line, 3);
	cr_expect_eq(m->column, 5);
	cr_expect_eq(m->at_mountpoint.line, 3);
	cr_expect_eq(m->at_mountpoint.column, 17);
	cr_expect_eq(m->at_plugin.line, 4);
	cr_expect_eq(m->at_plugin.column, 13);
	cr_expect(m->kmount.default_permissions && m->kmount.allow_other &&
		  m->kmount.ro);
	cr_expect_str_eq(m->kmount.fsname, "data");
	cr_expect_str_eq(m->kmount.subtype, "pt");
	cr_expect_eq(m->transport.mode, FRING_MODE_URING);
	cr_expect_eq(m->transport.queues, 4);
	cr_expect_eq(m->transport.queue_depth, 64);
	cr_expect_eq(m->transport.bufpool_size, 128ull << 20);
	cr_expect_eq(m->transport.bufpool_registered, 0);
	cr_expect_eq(m->transport.zero_copy, FRING_ON);

	cr_assert_eq(m->nr_options, 11);
	expect_opt(m, 0, "source", "/srv/data", 0, 6, 7);
	expect_opt(m, 1, "cache.attr_timeout", "1s", 0, 7, 16);
	expect_opt(m, 2, "cache.entry_timeout", "2s", 0, 7, 34);
	expect_opt(m, 3, "exclude", "*.tmp", 0, 8, 18);
	expect_opt(m, 4, "exclude", "*.swp", 0, 8, 27);
	expect_opt(m, 5, "rules.0.path", "/a", 0, 10, 11);
	expect_opt(m, 6, "rules.0.mode", "ro", 0, 11, 11);
	expect_opt(m, 7, "rules.1.path", "/b", 0, 12, 11);
	expect_opt(m, 8, "empty", "", 1, 13, 7);
	expect_opt(m, 9, "blank", "", 1, 14, 7);
	expect_opt(m, 10, "size", "1M", 0, 15, 7);

	cr_expect_str_eq(m2->mountpoint, "/mnt/mem");
	cr_expect_str_eq(m2->plugin, "./lib/memfs.so");
	cr_expect_eq(m2->nr_options, 0);
	cr_expect_null(m2->options);
	cr_expect_null(m2->kmount.fsname);
	fring_config_free(cfg);
}

/* Mountpoint errors found after parsing (missing, not a directory, dead)
 * point at the value, wherever the entry puts it. */
Test(config, mountpoint_value_position)
{
	struct fring_config *cfg = parse_ok("mounts:\n"
					    "  - plugin: memfs\n"
					    "    mountpoint:    \"/mnt/a\"\n"
					    "  - { plugin: memfs, mountpoint: /mnt/b }\n");

	cr_expect_eq(cfg->mounts[0].at_mountpoint.line, 3);
	cr_expect_eq(cfg->mounts[0].at_mountpoint.column, 20);
	cr_expect_eq(cfg->mounts[1].at_mountpoint.line, 4);
	cr_expect_eq(cfg->mounts[1].at_mountpoint.column, 34);
	fring_config_free(cfg);
}

Test(config, defaults)
{
	struct fring_config *cfg = parse_ok(M);
	struct fring_cfg_transport *t = &cfg->mounts[0].transport;
	struct fring_cfg_transport d;

	cr_assert_eq(cfg->nr_mounts, 1);
	cr_expect_str_eq(cfg->path, "t.yaml");
	cr_expect_eq(cfg->mounts[0].nr_options, 0);
	cr_expect_eq(cfg->mounts[0].kmount.default_permissions, 0);
	cr_expect_eq(cfg->mounts[0].kmount.allow_other, 0);
	cr_expect_eq(cfg->mounts[0].kmount.ro, 0);
	cr_expect_null(cfg->mounts[0].kmount.subtype);
	cr_expect_eq(t->mode, FRING_MODE_AUTO);
	cr_expect_eq(t->queues, 0);
	cr_expect_eq(t->queue_depth, 8);
	cr_expect_eq(t->bufpool, FRING_AUTO);
	cr_expect_eq(t->bufpool_size, 0);
	cr_expect_eq(t->bufpool_registered, 1);
	cr_expect_eq(t->zero_copy, FRING_AUTO);
	cr_expect_eq(t->request_timeout, 300);
	cr_expect_eq(t->poll_us, 1000);
	cr_expect_eq(t->placement, FRING_PLACEMENT_AUTO);
	cr_expect_null(t->cpus);
	fring_cfg_transport_defaults(&d);
	cr_expect_eq(memcmp(&d, t, sizeof(d)), 0);
	fring_config_free(cfg);

	/* Empty sections mean defaults too. */
	cfg = parse_ok(M "    options:\n    mount_options:\n    transport:\n");
	cr_expect_eq(cfg->mounts[0].nr_options, 0);
	cr_expect_eq(cfg->mounts[0].transport.queue_depth, 8);
	fring_config_free(cfg);
	cfg = parse_ok(M "    transport: { bufpool: ~ , queues: auto }\n");
	cr_expect_eq(cfg->mounts[0].transport.queues, 0);
	cr_expect_eq(cfg->mounts[0].transport.bufpool_registered, 1);
	fring_config_free(cfg);
}

Test(config, bufpool_forms)
{
	static const struct { const char *yaml; enum fring_tristate want; } cases[] = {
		{ "bufpool: off", FRING_OFF }, { "bufpool: false", FRING_OFF },
		{ "bufpool: on", FRING_ON }, { "bufpool: auto", FRING_AUTO },
		{ "bufpool: { mode: off, size: 8MiB }", FRING_OFF },
		{ "bufpool: { size: 8MiB, registered: no }", FRING_AUTO },
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fring_config *cfg;

		snprintf(buf, sizeof(buf), M "    transport: { %s }\n", cases[i].yaml);
		cfg = parse_ok(buf);
		cr_expect_eq(cfg->mounts[0].transport.bufpool, cases[i].want, "%s",
			     cases[i].yaml);
		fring_config_free(cfg);
	}
}

Test(config, shipped_examples_parse)
{
	struct fring_config *cfg;

	cfg = load_ok(FRING_TEST_DATA_DIR "/../../plugins/memfs/example.yaml");
	cr_assert_eq(cfg->nr_mounts, 1);
	cr_expect_str_eq(cfg->mounts[0].mountpoint, "/tmp/fring-memfs");
	cr_expect_str_eq(cfg->mounts[0].plugin, "memfs");
	cr_assert_eq(cfg->mounts[0].nr_options, 1);
	cr_expect_str_eq(cfg->mounts[0].options[0].key, "size");
	cr_expect_str_eq(cfg->mounts[0].options[0].value, "1GiB");
	fring_config_free(cfg);

	cfg = load_ok(FRING_TEST_DATA_DIR "/../../plugins/passthrough/example.yaml");
	cr_assert_eq(cfg->nr_mounts, 1);
	cr_expect_str_eq(cfg->mounts[0].mountpoint, "/tmp/fring-passthrough");
	cr_expect_str_eq(cfg->mounts[0].plugin, "passthrough");
	cr_assert_eq(cfg->mounts[0].nr_options, 1);
	cr_expect_str_eq(cfg->mounts[0].options[0].key, "source");
	cr_expect_str_eq(cfg->mounts[0].options[0].value, "/tmp/fring-src");
	fring_config_free(cfg);
}

Test(config, flattening)
{
	struct fring_config *cfg = parse_ok(
		M "    options:\n"
		"      a: { b: { c: deep } }\n"        /* 5 */
		"      l: [x, 'null', ~, 2]\n"         /* 6 */
		"      lm: [{k: v}, [p, q], s]\n"      /* 7 */
		"      q: \"quoted: 'text'\"\n"        /* 8 */
		"      n: null\n"                       /* 9 */
		"      dotted.key: 1K\n"                /* 10 */
		"      e: []\n"                         /* 11 */
		"      multi: |\n        one\n        two\n");
	struct fring_cfg_mount *m = &cfg->mounts[0];

	cr_assert_eq(m->nr_options, 13);
	expect_opt(m, 0, "a.b.c", "deep", 0, 5, 17);
	expect_opt(m, 1, "l", "x", 0, 6, 11);
	expect_opt(m, 2, "l", "null", 0, 6, 14); /* quoted: a string */
	expect_opt(m, 3, "l", "", 1, 6, 22);
	expect_opt(m, 4, "l", "2", 0, 6, 25);
	expect_opt(m, 5, "lm.0.k", "v", 0, 7, 13);
	expect_opt(m, 6, "lm.1", "p", 0, 7, 21);
	expect_opt(m, 7, "lm.1", "q", 0, 7, 24);
	expect_opt(m, 8, "lm", "s", 0, 7, 28);
	expect_opt(m, 9, "q", "quoted: 'text'", 0, 8, 7);
	expect_opt(m, 10, "n", "", 1, 9, 7);
	expect_opt(m, 11, "dotted.key", "1K", 0, 10, 7);
	expect_opt(m, 12, "multi", "one\ntwo\n", 0, 12, 7);
	fring_config_free(cfg);

	cfg = parse_ok(M "    options: { multi: \"one\\ntwo\" }\n");
	cr_assert_eq(cfg->mounts[0].nr_options, 1);
	cr_expect_str_eq(cfg->mounts[0].options[0].value, "one\ntwo");
	fring_config_free(cfg);
}

Test(config, flattening_errors)
{
	expect_err(M "    options: [a, b]\n",
		   "t.yaml:4:14: expected a mapping for options, got a sequence");
	expect_err(M "    options: { 9lives: x }\n",
		   "t.yaml:4:16: invalid option key '9lives' (expected a letter, then "
		   "letters, digits, '.', '_' or '-')");
	expect_err(M "    options:\n      c: { a: 1, a: 2 }\n",
		   "t.yaml:5:18: duplicate key 'a' in options.c (first at 5:12)");
	expect_err(M "    options: { [a]: 1 }\n",
		   "t.yaml:4:16: expected a scalar key in options, got a sequence");
	expect_err(M "    options: { v: \"a\\0b\" }\n",
		   "t.yaml:4:19: an option value must not contain a NUL byte");
}

Test(config, mount_options)
{
	struct fring_config *cfg = parse_ok(M "    mount_options: [allow_other, subtype=x]\n");

	cr_expect_eq(cfg->mounts[0].kmount.allow_other, 1);
	cr_expect_eq(cfg->mounts[0].kmount.default_permissions, 0);
	cr_expect_eq(cfg->mounts[0].kmount.ro, 0);
	cr_expect_str_eq(cfg->mounts[0].kmount.subtype, "x");
	cr_expect_null(cfg->mounts[0].kmount.fsname);
	cr_expect_eq(cfg->mounts[0].trust_plugin_permissions, 0);
	fring_config_free(cfg);

	cfg = parse_ok(M "    mount_options: [allow_other, trust_plugin_permissions]\n");
	cr_expect_eq(cfg->mounts[0].kmount.allow_other, 1);
	cr_expect_eq(cfg->mounts[0].trust_plugin_permissions, 1);
	cr_expect_eq(cfg->mounts[0].kmount.default_permissions, 0);
	fring_config_free(cfg);

	expect_err(M "    mount_options: ro\n",
		   "t.yaml:4:20: expected a sequence for mount_options, got 'ro'");
	expect_err(M "    mount_options: [ro, {a: b}]\n",
		   "t.yaml:4:25: expected a mount option in mount_options, got a mapping");
	expect_err(M "    mount_options: [fsname=]\n",
		   "t.yaml:4:21: mount option 'fsname=' needs a value");
	expect_err(M "    mount_options: [fsname=a, fsname=b]\n",
		   "t.yaml:4:31: mount option 'fsname' given twice");
}

Test(config, transport_values)
{
	struct fring_config *cfg = parse_ok(
		M "    transport: { mode: devfuse, queues: 1024, queue_depth: 4096,\n"
		"      bufpool: { size: 1GiB, registered: Yes }, zero_copy: off,\n"
		"      request_timeout: 0, poll_us: 1000, placement: local,\n"
		"      cpus: \"0-3,8\", reduced_queues: on }\n");
	struct fring_cfg_transport *t = &cfg->mounts[0].transport;

	cr_expect_str_eq(t->cpus, "0-3,8");

	cr_expect_eq(t->placement, FRING_PLACEMENT_LOCAL);

	cr_expect_eq(t->mode, FRING_MODE_DEVFUSE);
	cr_expect_eq(t->queues, 1024);
	cr_expect_eq(t->queue_depth, 4096);
	cr_expect_eq(t->bufpool_size, 1ull << 30); /* io_uring's largest buffer */
	cr_expect_eq(t->reduced_queues, FRING_ON);
	cr_expect_eq(t->bufpool_registered, 1);
	cr_expect_eq(t->zero_copy, FRING_OFF);
	cr_expect_eq(t->request_timeout, 0);
	cr_expect_eq(t->poll_us, 1000);
	fring_config_free(cfg);

	cfg = parse_ok(M "    transport: { queues: 1, queue_depth: 1, zero_copy: false,\n"
		       "      bufpool: { size: 1M }, poll_us: 0 }\n");
	t = &cfg->mounts[0].transport;
	cr_expect_eq(t->queues, 1);
	cr_expect_eq(t->queue_depth, 1);
	cr_expect_eq(t->zero_copy, FRING_OFF);
	cr_expect_eq(t->bufpool_size, 1ull << 20);
	cr_expect_eq(t->poll_us, 0);
	cr_expect_eq(t->reduced_queues, FRING_AUTO); /* the default */
	fring_config_free(cfg);

	cfg = parse_ok(M "    transport: { reduced_queues: off }\n");
	cr_expect_eq(cfg->mounts[0].transport.reduced_queues, FRING_OFF);
	fring_config_free(cfg);
	cfg = parse_ok(M "    transport: { reduced_queues: auto }\n");
	cr_expect_eq(cfg->mounts[0].transport.reduced_queues, FRING_AUTO);
	fring_config_free(cfg);
}

Test(config, transport_errors)
{
	expect_err(M "    transport: [uring]\n",
		   "t.yaml:4:16: expected a mapping for transport, got a sequence");
	expect_err(M "    transport: { queue_depth: 4097 }\n",
		   "t.yaml:4:31: transport.queue_depth must be an integer 1..4096, got '4097'");
	expect_err(M "    transport: { queue_depth: -1 }\n",
		   "t.yaml:4:31: transport.queue_depth must be an integer 1..4096, got '-1'");
	expect_err(M "    transport: { queue_depth: 8x }\n",
		   "t.yaml:4:31: transport.queue_depth must be an integer 1..4096, got '8x'");
	expect_err(M "    transport: { queue_depth: [8] }\n",
		   "t.yaml:4:31: transport.queue_depth must be an integer 1..4096, got a sequence");
	expect_err(M "    transport: { queue_depth: }\n",
		   "t.yaml:4:31: transport.queue_depth must be an integer 1..4096, got null");
	expect_err(M "    transport: { request_timeout: 65536 }\n",
		   "t.yaml:4:35: transport.request_timeout must be an integer 0..65535 (seconds, 0 = off), got '65536'");
	expect_err(M "    transport: { poll_us: 1001 }\n",
		   "t.yaml:4:27: transport.poll_us must be an integer 0..1000 (microseconds, 0 = off), got '1001'");
	expect_err(M "    transport: { poll_us: 20us }\n",
		   "t.yaml:4:27: transport.poll_us must be an integer 0..1000 (microseconds, 0 = off), got '20us'");
	expect_err(M "    transport: { queues: 0 }\n",
		   "t.yaml:4:26: transport.queues must be 'auto' or an integer 1..1024, got '0'");
	expect_err(M "    transport: { queues: 99999999999999999999 }\n",
		   "t.yaml:4:26: transport.queues must be 'auto' or an integer 1..1024, "
		   "got '99999999999999999999'");
	expect_err(M "    transport: { cpus: 3-1 }\n",
		   "t.yaml:4:24: transport.cpus must be a CPU list such as 0-3,8, got '3-1'");
	expect_err(M "    transport: { cpus: [0, 1] }\n",
		   "t.yaml:4:24: transport.cpus must be a CPU list such as 0-3,8, got a sequence");
	/* A range past INT_MAX once overflowed its length (fuzz_config). */
	expect_err(M "    transport: { cpus: 0-9223372036854775807 }\n",
		   "t.yaml:4:24: transport.cpus must be a CPU list such as 0-3,8, "
		   "got '0-9223372036854775807'");
	/* Beyond CPU_SETSIZE: no process runs there, whatever the machine. */
	expect_err(M "    transport: { cpus: \"4000-4001\" }\n",
		   "t.yaml:4:24: transport.cpus '4000-4001' names no CPU this process may run on");
	expect_err(M "    transport: { placement: spread }\n",
		   "t.yaml:4:29: transport.placement must be one of auto, local, got 'spread'");
	expect_err(M "    transport: { zero_copy: maybe }\n",
		   "t.yaml:4:29: transport.zero_copy must be one of auto, on, off, got 'maybe'");
	expect_err(M "    transport: { mode: devfuse, zero_copy: on }\n",
		   "t.yaml:4:44: transport.zero_copy on needs io_uring, but "
		   "transport.mode is devfuse");
	expect_err(M "    transport: { bufpool: off, zero_copy: on }\n",
		   "t.yaml:4:43: transport.zero_copy on needs a buffer pool, but "
		   "transport.bufpool is off");
	expect_err(M "    transport: { bufpool: 64MiB }\n",
		   "t.yaml:4:27: transport.bufpool must be one of auto, on, off or a "
		   "mapping { mode, size, registered }, got '64MiB'");
	expect_err(M "    transport: { bufpool: [on] }\n",
		   "t.yaml:4:27: expected a mapping for transport.bufpool, got a sequence");
	expect_err(M "    transport: { bufpool: { mode: sometimes } }\n",
		   "t.yaml:4:35: transport.bufpool.mode must be one of auto, on, off, "
		   "got 'sometimes'");
	/* A pool that holds no buffer: the error names the minimum. */
	expect_err(M "    transport: { bufpool: { size: 1023KiB } }\n",
		   "t.yaml:4:35: transport.bufpool.size must be a size 1MiB..1GiB such as "
		   "64MiB (at least one 1MiB buffer, the largest request; io_uring "
		   "registers at most 1GiB as one buffer), got '1023KiB'");
	/* The pool is one registered buffer: io_uring refuses one over
	 * 1 GiB (SZ_1G), so the first byte beyond is a config error. */
	expect_err(M "    transport: { bufpool: { size: 1073741825 } }\n",
		   "t.yaml:4:35: transport.bufpool.size must be a size 1MiB..1GiB such as "
		   "64MiB (at least one 1MiB buffer, the largest request; io_uring "
		   "registers at most 1GiB as one buffer), got '1073741825'");
	expect_err(M "    transport: { bufpool: { size: 4GiB } }\n",
		   "t.yaml:4:35: transport.bufpool.size must be a size 1MiB..1GiB such as "
		   "64MiB (at least one 1MiB buffer, the largest request; io_uring "
		   "registers at most 1GiB as one buffer), got '4GiB'");
	expect_err(M "    transport: { reduced_queues: sometimes }\n",
		   "t.yaml:4:34: transport.reduced_queues must be one of auto, on, off, "
		   "got 'sometimes'");
	expect_err(M "    transport: { bufpool: { registered: sure } }\n",
		   "t.yaml:4:41: transport.bufpool.registered must be a boolean "
		   "(true/false, yes/no, on/off, 1/0), got 'sure'");
}

Test(config, invalid_files)
{
	expect_file_err("syntax.yaml",
			"4:1: syntax error: did not find expected ',' or ']' "
			"(while parsing a flow sequence at 3:13)");
	expect_file_err("unknown_top.yaml",
			"4:1: unknown key 'mount' at top level (expected one of: mounts)");
	expect_file_err(
		"unknown_mount.yaml",
		"4:5: unknown key 'mountpoin' in mount (expected one of: mountpoint, "
		"plugin, options, mount_options, transport, stats, restart)");
	expect_file_err("unknown_transport.yaml",
			"6:7: unknown key 'queue-depth' in transport (expected one of: mode, "
			"queues, queue_depth, bufpool, zero_copy, request_timeout, poll_us, placement, cpus, "
			"reduced_queues)");
	expect_file_err("unknown_bufpool.yaml",
			"5:28: unknown key 'pinned' in transport.bufpool (expected one of: mode, "
			"size, registered)");
	expect_file_err("queue_depth_zero.yaml",
			"5:20: transport.queue_depth must be an integer 1..4096, got '0'");
	expect_file_err("queues_big.yaml",
			"4:26: transport.queues must be 'auto' or an integer 1..1024, got '1025'");
	expect_file_err("bad_mode.yaml",
			"5:13: transport.mode must be one of auto, uring, devfuse, got 'splice'");
	expect_file_err(
		"bad_mount_option.yaml",
		"4:25: unknown mount option 'nosetuid' (expected one of: "
		"default_permissions, allow_other, ro, trust_plugin_permissions, "
		"fsname=NAME, subtype=NAME, rw, nosuid, suid, nodev, dev, noexec, "
		"exec, noatime, atime, max_read=N, blksize=N, auto_unmount)");
	expect_file_err("missing_mountpoint.yaml",
			"2:5: mount 1 is missing required key 'mountpoint'");
	expect_file_err("missing_plugin.yaml",
			"4:5: mount 2 is missing required key 'plugin'");
	expect_file_err("empty_mounts.yaml", "1:9: no mounts ('mounts' is empty)");
	expect_file_err("empty.yaml",
			"1:1: no mounts (expected a top-level 'mounts' sequence)");
	expect_file_err("duplicate_key.yaml",
			"4:5: duplicate key 'plugin' in mount 1 (first at 3:5)");
	expect_file_err("duplicate_mountpoint.yaml",
			"6:17: duplicate mountpoint '/mnt/a/' (already used by mount 1 at 2:5)");
	expect_file_err("mount_not_map.yaml",
			"2:5: expected a mapping for mount 1, got a sequence");
	expect_file_err("alias.yaml",
			"7:16: YAML aliases are not supported (*t); repeat the value instead");
}

Test(config, structure_errors)
{
	expect_err("- mounts\n", "t.yaml:1:1: expected a mapping for the top level, got a sequence");
	expect_err("mounts\n", "t.yaml:1:1: expected a mapping for the top level, got 'mounts'");
	expect_err("# only a comment\n",
		   "t.yaml:1:1: no mounts (expected a top-level 'mounts' sequence)");
	expect_err("{}\n", "t.yaml:1:1: no mounts (expected a top-level 'mounts' sequence)");
	expect_err("mounts:\n", "t.yaml:1:8: no mounts ('mounts' is empty)");
	expect_err("mounts: { a: b }\n",
		   "t.yaml:1:9: expected a sequence for mounts, got a mapping");
	expect_err(M "  - mountpoint: [x]\n    plugin: memfs\n",
		   "t.yaml:4:17: mountpoint must be a non-empty string, got a sequence");
	expect_err("mounts:\n  - mountpoint: /a\n    plugin: ''\n",
		   "t.yaml:3:13: plugin must be a non-empty string, got ''");
	expect_err("mounts:\n  - mountpoint:\n    plugin: memfs\n",
		   "t.yaml:2:16: mountpoint must be a non-empty string, got null");
	expect_err(M "---\n" M, "t.yaml:4:1: expected a single YAML document, found another");
	expect_err("mounts:\n\t- a\n",
		   "t.yaml:2:1: syntax error: found character that cannot start any token "
		   "(while scanning for the next token at 2:1)");
	/* Reader errors only carry an offset; it is turned into line:column. */
	expect_err("mounts:\n  - \xff\n",
		   "t.yaml:2:5: invalid input: invalid leading UTF-8 octet");
	/* Same directory spelled differently is still a duplicate. */
	expect_err(M "  - { mountpoint: //mnt//a/, plugin: memfs }\n",
		   "t.yaml:4:19: duplicate mountpoint '//mnt//a/' (already used by mount 1 "
		   "at 2:5)");
}

Test(config, relative_mountpoint_kept)
{
	struct fring_config *cfg = parse_ok("mounts: [{ mountpoint: mnt/x, plugin: memfs }]\n");

	cr_expect_str_eq(cfg->mounts[0].mountpoint, "mnt/x");
	fring_config_free(cfg);
}

Test(config, nonexistent_file)
{
	struct fring_config *cfg = (struct fring_config *)0x1;
	char *err = NULL;
	int rc = fring_config_load(DATA "no-such-file.yaml", &cfg, &err);

	cr_assert_eq(rc, -ENOENT);
	cr_assert_eq(cfg, (struct fring_config *)0x1);
	cr_assert_str_eq(err, DATA "no-such-file.yaml: cannot open: No such file or directory");
	free(err);

	rc = fring_config_load(DATA, &cfg, &err);
	cr_assert_eq(rc, -EISDIR);
	cr_assert_str_eq(err, DATA ": cannot read: Is a directory");
	free(err);
}

Test(config, null_err_pointer)
{
	struct fring_config *cfg = NULL;

	cr_assert_eq(fring_config_parse("t.yaml", "x: 1\n", 5, &cfg, NULL), -EINVAL);
	cr_assert_null(cfg);
	cr_assert_eq(fring_config_parse("t.yaml", M, strlen(M), &cfg, NULL), 0);
	fring_config_free(cfg);
	fring_config_free(NULL);
}

Test(config, parse_size)
{
	static const struct { const char *s; uint64_t v; } ok[] = {
		{ "0", 0 }, { "4096", 4096 }, { "64K", 64 << 10 }, { "64KiB", 64 << 10 },
		{ "64k", 64 << 10 }, { "64KB", 64 << 10 }, { "1M", 1 << 20 },
		{ "1MiB", 1 << 20 }, { "2G", 2ull << 30 }, { "2GiB", 2ull << 30 },
		{ "1T", 1ull << 40 }, { "1TiB", 1ull << 40 }, { "3P", 3ull << 50 },
		{ "15E", 15ull << 60 }, { "512B", 512 },
		{ "18446744073709551615", UINT64_MAX },
	};
	static const struct { const char *s; int rc; } bad[] = {
		{ "", -EINVAL }, { "-1", -EINVAL }, { "+1", -EINVAL }, { " 1", -EINVAL },
		{ "1 ", -EINVAL }, { "K", -EINVAL }, { "1X", -EINVAL }, { "1KiBB", -EINVAL },
		{ "1Ki", -EINVAL }, { "1.5M", -EINVAL }, { "0x10", -EINVAL },
		{ "1MB2", -EINVAL }, { "abc", -EINVAL },
		{ "18446744073709551616", -ERANGE }, { "16E", -ERANGE },
		{ "17179869184G", -ERANGE },
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 12345;
		cr_expect_eq(fring_parse_size(ok[i].s, &v), 0, "'%s'", ok[i].s);
		cr_expect_eq(v, ok[i].v, "'%s' -> %llu", ok[i].s, (unsigned long long)v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		cr_expect_eq(fring_parse_size(bad[i].s, &v), bad[i].rc, "'%s'", bad[i].s);
		cr_expect_eq(v, 12345, "'%s' wrote the output", bad[i].s);
	}
	cr_expect_eq(fring_parse_size(NULL, &v), -EINVAL);
}

Test(config, parse_bool)
{
	static const struct { const char *s; int v; } ok[] = {
		{ "true", 1 }, { "TRUE", 1 }, { "yes", 1 }, { "Yes", 1 }, { "on", 1 },
		{ "ON", 1 }, { "1", 1 }, { "false", 0 }, { "False", 0 }, { "no", 0 },
		{ "NO", 0 }, { "off", 0 }, { "Off", 0 }, { "0", 0 },
	};
	static const char *const bad[] = { "", "2", "y", "n", "truee", " true", "of", "-1" };
	size_t i;
	int v;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 7;
		cr_expect_eq(fring_parse_bool(ok[i].s, &v), 0, "'%s'", ok[i].s);
		cr_expect_eq(v, ok[i].v, "'%s'", ok[i].s);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		cr_expect_eq(fring_parse_bool(bad[i], &v), -EINVAL, "'%s'", bad[i]);
		cr_expect_eq(v, 7, "'%s' wrote the output", bad[i]);
	}
}

Test(config, endless_file_is_refused_not_read_into_memory)
{
	struct fring_config *cfg = NULL;
	char *err = NULL;

	cr_assert_eq(fring_config_load("/dev/zero", &cfg, &err), -EINVAL);
	cr_expect_null(cfg);
	cr_assert_str_eq(err, "/dev/zero: not a configuration file (more than 4 MiB)");
	free(err);
}

/* Several bad keys and values in one file: the one first in the file is
 * reported, whatever order the schema checks keys and sections in. */
Test(config, first_error_in_the_file_is_reported)
{
	/* a bad value in transport before an unknown key of the mount */
	expect_err(M "    transport:\n      queue_depth: 0\n    bogus: 1\n",
		   "t.yaml:5:20: transport.queue_depth must be an integer 1..4096, "
		   "got '0'");
	/* keys of transport checked out of their order in the file */
	expect_err(M "    transport:\n      zero_copy: maybe\n      queue_depth: 0\n"
		   "      mode: ring\n",
		   "t.yaml:5:18: transport.zero_copy must be one of auto, on, off, "
		   "got 'maybe'");
	/* bufpool's unknown key before a later bad transport value, an
	 * unknown transport key after both and an unknown mount key */
	expect_err(M "    transport:\n      bufpool: { mode: on, sizee: 1 }\n"
		   "      queue_depth: 0\n      zero_copy: maybe\n      nope: 1\n"
		   "    bogus: 1\n",
		   "t.yaml:5:28: unknown key 'sizee' in transport.bufpool (expected "
		   "one of: mode, size, registered)");
	/* transport before options and mount_options in the file */
	expect_err("mounts:\n  - transport: { mode: x }\n    mountpoint: /mnt/a\n"
		   "    plugin: memfs\n    mount_options: [nope]\n"
		   "    options: { 9x: 1 }\n",
		   "t.yaml:2:24: transport.mode must be one of auto, uring, devfuse, "
		   "got 'x'");
	/* an unknown key of the mount before a bad mountpoint value */
	expect_err(
		"mounts:\n  - bogus: 1\n    mountpoint: [a]\n    plugin: memfs\n",
		"t.yaml:2:5: unknown key 'bogus' in mount (expected one of: "
		"mountpoint, plugin, options, mount_options, transport, stats, restart)");
	/* a misspelt required key: the misspelling, not "missing" at the
	 * entry's start */
	expect_err(
		"mounts:\n  - mountpoint: /mnt/a\n    plugni: memfs\n",
		"t.yaml:3:5: unknown key 'plugni' in mount (expected one of: "
		"mountpoint, plugin, options, mount_options, transport, stats, restart)");
	expect_err("mount:\n  - mountpoint: /mnt/a\n    plugin: memfs\n",
		   "t.yaml:1:1: unknown key 'mount' at top level (expected one of: "
		   "mounts)");
	/* a duplicate key after a bad value */
	expect_err(M "    transport: { queue_depth: 0, mode: uring, mode: devfuse }\n",
		   "t.yaml:4:31: transport.queue_depth must be an integer 1..4096, "
		   "got '0'");
	/* a bad key of a later mount comes after every error of an earlier */
	expect_err(M "    transport: { poll_us: 2000 }\n"
		   "  - mountpoint: /mnt/b\n    plugin: memfs\n    bogus: 1\n",
		   "t.yaml:4:27: transport.poll_us must be an integer 0..1000 "
		   "(microseconds, 0 = off), got '2000'");
	/* still said when nothing else is wrong */
	expect_err("mounts:\n  - mountpoint: /mnt/a\n",
		   "t.yaml:2:5: mount 1 is missing required key 'plugin'");
}
