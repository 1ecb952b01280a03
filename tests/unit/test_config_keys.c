// SPDX-License-Identifier: MIT
/* The key table (core/config/config_keys.c): every row complete, its
 * default what parsing that default gives, its range enforced, the
 * copy of the generated reference in fring.yaml(5) equal to it, and the parsers
 * the embed API shares with the YAML schema. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_internal.h"

#define PAGE FRING_TEST_DATA_DIR "/../../man/fring.yaml.5.scd"
#define BEGIN "; config keys:"
#define END "; end of config keys"

static char *scdoc(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	fring_cfg_keys_scdoc(f);
	fclose(f);
	return buf;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)len + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return buf;
}

Test(config_keys, man_page_key_reference_is_the_generated_one)
{
	char *page = slurp(PAGE), *want = scdoc();
	char *a = strstr(page, BEGIN), *b;

	cr_assert_not_null(a, "man/fring.yaml.5.scd has no '" BEGIN "' marker");
	a = strchr(a, '\n') + 1;
	b = strstr(a, END);
	cr_assert_not_null(b, "man/fring.yaml.5.scd has no '" END "' marker");
	*b = '\0';
	cr_assert_str_eq(a, want, "man/fring.yaml.5.scd's key reference is stale; "
			 "paste the output of build/bin/fring-config-keys:\n%s",
			 want);
	free(page);
	free(want);
}

/* Row i's entry: its name, then "Type: T. Default: D. Used by: U." and
 * its meaning, none of them empty. */
static void expect_entry(const char *doc, const struct cfg_key *k)
{
	char path[64], head[96], *h = head, *line, *end;

	cfg_key_path(k, path, sizeof(path));
	h += sprintf(h, "\n*");
	for (const char *p = path; *p; p++)
		h += sprintf(h, *p == '_' ? "\\%c" : "%c", *p);
	sprintf(h, "*\n\tType: ");
	line = strstr(doc, head);
	cr_assert_not_null(line, "no entry for %s", path);
	line += strlen(head);
	end = strchr(line, '\n');
	cr_assert(end && strncmp(line, ". ", 2), "%s: no type", path);
	line = strstr(line, ". Default: ");
	cr_assert(line && line < end && strncmp(line + 11, ". ", 2),
		  "%s: no default", path);
	line = strstr(line, ". Used by: ");
	cr_assert(line && line < end && end[-1] == '.' && line + 12 < end,
		  "%s: no transports", path);
	cr_assert(!strncmp(end, "\n\n\t", 3) && end[3] && end[3] != '\n',
		  "%s: no meaning", path);
}

Test(config_keys, every_key_has_a_parser_a_default_and_a_doc_line)
{
	char *gen = scdoc(), *doc;

	/* Every entry, the first too, after a newline. */
	cr_assert_gt(asprintf(&doc, "\n%s", gen), 0);
	free(gen);
	cr_assert_gt(cfg_nr_keys, 0);
	for (size_t i = 0; i < cfg_nr_keys; i++) {
		const struct cfg_key *k = &cfg_keys[i];

		cr_assert_not_null(k->parse, "%s: no parser", k->name);
		cr_assert(k->doc && *k->doc && !strchr(k->doc, '\n'),
			  "%s: no one-line doc", k->name);
		for (size_t j = 0; j < i; j++)
			cr_assert(cfg_keys[j].section != k->section ||
				  strcmp(cfg_keys[j].name, k->name),
				  "%s: two rows", k->name);
		if (k->parse == cfg_key_uint)
			cr_assert(k->def >= k->lo && k->def <= k->hi,
				  "%s: default %llu out of its range", k->name,
				  (unsigned long long)k->def);
		if (k->words) {
			size_t n = 0;

			while (k->words[n])
				n++;
			cr_assert_lt(k->def, n, "%s: default is no word", k->name);
		}
		/* A field to store into, except for the sections' own. */
		cr_assert(k->size || k->section == CFG_TOP ||
			  k->parse == cfg_key_options ||
			  k->parse == cfg_key_mount_options,
			  "%s: no field", k->name);
		expect_entry(doc, k);
	}
	free(doc);
}

static struct fring_config *parse(const char *text, char **err)
{
	struct fring_config *cfg = NULL;

	fring_config_parse("t.yaml", text, strlen(text), &cfg, err);
	return cfg;
}

/* "transport: { KEY: V }" or "transport: { bufpool: { KEY: V } }". */
static char *yaml_with(const struct cfg_key *k, const char *value)
{
	char *text;

	cr_assert(asprintf(&text, "mounts:\n  - mountpoint: /mnt\n    plugin: p\n"
			   "    transport: { %s%s: %s%s }\n",
			   k->section == CFG_BUFPOOL ? "bufpool: { " : "", k->name,
			   value, k->section == CFG_BUFPOOL ? " }" : "") > 0);
	return text;
}

Test(config_keys, each_default_parses_back_to_the_default)
{
	struct fring_cfg_transport def;
	int tried = 0;

	fring_cfg_transport_defaults(&def);
	for (size_t i = 0; i < cfg_nr_keys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		struct fring_config *cfg;
		char num[24], *text, *err = NULL;
		const char *v = num;

		if (k->section != CFG_TRANSPORT && k->section != CFG_BUFPOOL)
			continue;
		if (k->words)
			v = k->words[k->def];
		else if (k->parse == cfg_key_bool)
			v = k->def ? "true" : "false";
		else if (k->parse == cfg_key_uint)
			snprintf(num, sizeof(num), "%llu", (unsigned long long)k->def);
		else
			continue; /* cpus, size: no value means the default */
		text = yaml_with(k, v);
		cfg = parse(text, &err);
		cr_assert_not_null(cfg, "%s: %s", k->name, err);
		cr_assert_eq(memcmp((char *)&cfg->mounts[0].transport + k->off,
				    (char *)&def + k->off, k->size), 0,
			     "%s: '%s' is not its default", k->name, v);
		cr_assert(cfg->mounts[0].transport.given & (1ull << i));
		fring_config_free(cfg);
		free(text);
		tried++;
	}
	cr_assert_geq(tried, 8);
}

Test(config_keys, a_number_past_its_range_is_refused_by_name)
{
	for (size_t i = 0; i < cfg_nr_keys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		char num[24], path[64], expect[160], *want, *text, *err = NULL;

		if (k->parse != cfg_key_uint && k->parse != cfg_key_uint_auto)
			continue;
		snprintf(num, sizeof(num), "%llu", (unsigned long long)k->hi + 1);
		text = yaml_with(k, num);
		cr_assert_null(parse(text, &err), "%s: %s accepted", k->name, num);
		cr_assert(asprintf(&want, "t.yaml:4:%zu: %s must be %s, got '%s'",
				   strlen("    transport: { ") + strlen(k->name) + 3,
				   cfg_key_path(k, path, sizeof(path)),
				   cfg_key_expect(k, expect, sizeof(expect)), num) > 0);
		cr_assert_str_eq(err, want);
		free(want);
		free(err);
		free(text);
	}
}

Test(config_keys, unused_over_devfuse_names_the_uring_only_keys_given)
{
	char *err = NULL, names[160];
	struct fring_config *cfg = parse(
		"mounts:\n  - mountpoint: /mnt\n    plugin: p\n"
		"    transport: { mode: devfuse, cpus: \"0\", queues: 2, "
		"request_timeout: 9, bufpool: { size: 2MiB }, poll_us: 5 }\n", &err);

	cr_assert_not_null(cfg, "%s", err);
	cr_assert_eq(fring_cfg_unused_over_devfuse(&cfg->mounts[0].transport,
						   names, sizeof(names)), 3);
	cr_assert_str_eq(names, "transport.bufpool, transport.poll_us, transport.cpus");
	fring_config_free(cfg);
}

static void expect_option_err(const char *opt, const char *value, int flags,
			      const char *msg)
{
	struct fring_cfg_mount m = { 0 };
	char *err = NULL;

	cr_assert_eq(fring_cfg_mount_option(&m, opt, value, flags, &err), -EINVAL,
		     "%s accepted", opt);
	cr_assert_str_eq(err, msg);
	free(err);
	fring_cfg_mount_free(&m);
}

Test(config_keys, specs_take_the_yaml_mount_option_words)
{
	struct fring_cfg_mount m = { 0 };
	char *err = NULL;

	cr_assert_eq(fring_cfg_mount_option(&m, "ro", NULL, 0, &err), 0);
	cr_assert_eq(m.kmount.ro, 1);
	cr_assert_eq(fring_cfg_mount_option(&m, "ro=false", NULL, FRING_MOPT_SPEC, &err), 0);
	cr_assert_eq(m.kmount.ro, 0);
	cr_assert_eq(fring_cfg_mount_option(&m, "allow_other", "yes", FRING_MOPT_SPEC, &err), 0);
	cr_assert_eq(m.kmount.allow_other, 1);
	cr_assert_eq(fring_cfg_mount_option(&m, "fsname", "src", FRING_MOPT_SPEC, &err), 0);
	cr_assert_str_eq(m.kmount.fsname, "src");
	cr_assert_eq(fring_cfg_mount_option(&m, "fsname=again", NULL, FRING_MOPT_SPEC, &err),
		     -EINVAL);
	cr_assert_str_eq(err, "mount option 'fsname' given twice");
	free(err);
	fring_cfg_mount_free(&m);

	/* A YAML word is "ro" or "NAME=VALUE"; a spec's error says the same. */
	expect_option_err(
		"ro=false", NULL, 0,
		"unknown mount option 'ro=false' (expected one of: "
		"default_permissions, allow_other, ro, trust_plugin_permissions, "
		"fsname=NAME, subtype=NAME, rw, nosuid, suid, nodev, dev, noexec, "
		"exec, noatime, atime, max_read=N, blksize=N, auto_unmount)");
	expect_option_err(
		"nosetuid", NULL, FRING_MOPT_SPEC,
		"unknown mount option 'nosetuid' (expected one of: "
		"default_permissions, allow_other, ro, trust_plugin_permissions, "
		"fsname=NAME, subtype=NAME, rw, nosuid, suid, nodev, dev, noexec, "
		"exec, noatime, atime, max_read=N, blksize=N, auto_unmount)");
	expect_option_err("subtype", NULL, FRING_MOPT_SPEC,
			  "mount option 'subtype=' needs a value");
	expect_option_err("ro", "maybe", FRING_MOPT_SPEC,
			  "mount option 'ro': 'maybe' is not a boolean");
}

/* The words mount(2) gets (fuse(8)): each pair sets one field, the last
 * word said wins, unsaid is 0 (libfuse's default); numbers in range. */
Test(config_keys, mount2_option_words)
{
	struct fring_cfg_mount m = { 0 };
	char *err = NULL;

	cr_assert_eq(m.kmount.nosuid, 0);
	cr_assert_eq(fring_cfg_mount_option(&m, "suid", NULL, 0, &err), 0);
	cr_assert_eq(m.kmount.nosuid, -1);
	cr_assert_eq(fring_cfg_mount_option(&m, "nosuid", NULL, 0, &err), 0);
	cr_assert_eq(m.kmount.nosuid, 1);
	cr_assert_eq(fring_cfg_mount_option(&m, "nosuid=false", NULL,
					    FRING_MOPT_SPEC, &err),
		     0);
	cr_assert_eq(m.kmount.nosuid, -1);
	cr_assert_eq(fring_cfg_mount_option(&m, "dev", NULL, 0, &err), 0);
	cr_assert_eq(m.kmount.nodev, -1);
	cr_assert_eq(fring_cfg_mount_option(&m, "noexec", NULL, 0, &err), 0);
	cr_assert_eq(m.kmount.noexec, 1);
	cr_assert_eq(fring_cfg_mount_option(&m, "noatime", NULL, 0, &err), 0);
	cr_assert_eq(m.kmount.noatime, 1);
	cr_assert_eq(fring_cfg_mount_option(&m, "atime", NULL, 0, &err), 0);
	cr_assert_eq(m.kmount.noatime, -1);
	cr_assert_eq(fring_cfg_mount_option(&m, "ro", NULL, 0, &err), 0);
	cr_assert_eq(fring_cfg_mount_option(&m, "rw", NULL, 0, &err), 0);
	cr_assert_eq(m.kmount.ro, 0);
	cr_assert_eq(fring_cfg_mount_option(&m, "rw=no", NULL, FRING_MOPT_SPEC,
					    &err),
		     0);
	cr_assert_eq(m.kmount.ro, 1);
	cr_assert_eq(fring_cfg_mount_option(&m, "auto_unmount", NULL, 0, &err),
		     0);
	cr_assert_eq(m.kmount.auto_unmount, 1);
	cr_assert_eq(fring_cfg_mount_option(&m, "max_read=131072", NULL, 0,
					    &err),
		     0);
	cr_assert_eq(m.kmount.max_read, 131072);
	cr_assert_eq(fring_cfg_mount_option(&m, "blksize", "65536",
					    FRING_MOPT_SPEC, &err),
		     0);
	cr_assert_eq(m.blksize, 65536);
	fring_cfg_mount_free(&m);

	expect_option_err(
		"max_read=4095", NULL, 0,
		"mount option 'max_read': '4095' is not a number from "
		"4096 to 4294967295");
	expect_option_err("max_read=-1", NULL, 0,
			  "mount option 'max_read': '-1' is not a number from "
			  "4096 to 4294967295");
	expect_option_err(
		"max_read", NULL, 0,
		"unknown mount option 'max_read' (expected one of: "
		"default_permissions, allow_other, ro, trust_plugin_permissions, "
		"fsname=NAME, subtype=NAME, rw, nosuid, suid, nodev, dev, noexec, "
		"exec, noatime, atime, max_read=N, blksize=N, auto_unmount)");
	expect_option_err(
		"blksize=3000", NULL, 0,
		"mount option 'blksize': '3000' is not a power of two "
		"from 512 to 1048576");
	expect_option_err("blksize=256", NULL, 0,
			  "mount option 'blksize': '256' is not a power of two "
			  "from 512 to 1048576");
	expect_option_err("nosuid", "maybe", FRING_MOPT_SPEC,
			  "mount option 'nosuid': 'maybe' is not a boolean");
	m = (struct fring_cfg_mount){ 0 };
	cr_assert_eq(fring_cfg_mount_option(&m, "max_read=8192", NULL, 0, &err),
		     0);
	cr_assert_eq(fring_cfg_mount_option(&m, "max_read=8192", NULL, 0, &err),
		     -EINVAL);
	cr_assert_str_eq(err, "mount option 'max_read' given twice");
	free(err);
	fring_cfg_mount_free(&m);
}

Test(config_keys, transport_mode_words_are_the_schemas)
{
	enum fring_transport_mode mode = FRING_MODE_AUTO;
	char *err = NULL;

	cr_assert_eq(fring_cfg_parse_mode("devfuse", &mode, &err), 0);
	cr_assert_eq(mode, FRING_MODE_DEVFUSE);
	cr_assert_eq(fring_cfg_parse_mode("uring", &mode, &err), 0);
	cr_assert_eq(mode, FRING_MODE_URING);
	cr_assert_eq(fring_cfg_parse_mode("splice", &mode, &err), -EINVAL);
	cr_assert_str_eq(err, "transport mode 'splice': expected one of auto, "
			 "uring, devfuse");
	free(err);
}
