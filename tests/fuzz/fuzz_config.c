// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: fring_config_parse on arbitrary text (not
 * NUL-terminated: the input is an exact-size heap block). A success must
 * hold values inside the schema's ranges; a failure must say where, as
 * "fuzz.yaml:LINE:COLUMN: ..." (the documented contract) or "out of
 * memory". Everything is freed, so the leak checkers see any leak.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "fuzz_config: failed: %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
			abort();                                            \
		}                                                           \
	} while (0)

static void check_mount(const struct fring_cfg_mount *m)
{
	const struct fring_cfg_transport *t = &m->transport;

	CHECK(m->mountpoint && m->plugin, "mount without mountpoint/plugin");
	CHECK(m->line >= 1 && m->column >= 1, "mount at %u:%u", m->line, m->column);
	CHECK(t->queues <= 1024, "queues %u", t->queues);
	CHECK(t->queue_depth >= 1 && t->queue_depth <= 4096, "queue_depth %u",
	      t->queue_depth);
	CHECK(t->bufpool_size == 0 || (t->bufpool_size >= (1ull << 20) &&
				       t->bufpool_size <= (4ull << 30)),
	      "bufpool size %llu", (unsigned long long)t->bufpool_size);
	CHECK(t->bufpool_registered == 0 || t->bufpool_registered == 1,
	      "registered %d", t->bufpool_registered);
	for (size_t i = 0; i < m->nr_options; i++)
		CHECK(m->options[i].key && m->options[i].value &&
		      m->options[i].key[0], "option %zu", i);
}

/* "fuzz.yaml:LINE:COLUMN: text", LINE and COLUMN positive decimals. */
static void check_error(const char *err)
{
	const char *p = err;
	unsigned long v;
	char *end;

	if (!strcmp(err, "out of memory"))
		return;
	CHECK(!strncmp(p, "fuzz.yaml:", 10), "error without the file: %s", err);
	p += 10;
	for (int i = 0; i < 2; i++) {
		v = strtoul(p, &end, 10);
		CHECK(end != p && *end == ':' && v >= 1, "error without line:col: %s",
		      err);
		p = end + 1;
	}
	CHECK(p[0] == ' ' && p[1], "error without a message: %s", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fring_config *cfg = NULL;
	char *err = NULL;
	int rc = fring_config_parse("fuzz.yaml", (const char *)data, size, &cfg, &err);

	if (rc == 0) {
		CHECK(cfg && !err && cfg->nr_mounts >= 1, "success without mounts");
		for (size_t i = 0; i < cfg->nr_mounts; i++)
			check_mount(&cfg->mounts[i]);
		fring_config_free(cfg);
		return 0;
	}
	CHECK(rc < 0, "rc %d", rc);
	CHECK(err || rc == -ENOMEM, "error %d without a message", rc);
	if (err)
		check_error(err);
	free(err);
	return 0;
}
