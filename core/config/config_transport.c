/* The `transport:` section of a mount: mode, queues, queue_depth,
 * bufpool (auto|on|off or { mode, size, registered }), zero_copy,
 * reduced_queues, request_timeout and poll_us. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "config/config_internal.h"

/* One pool buffer holds the largest request, max_write (1 MiB) plus
 * nothing: a pool below that holds no buffer (the kernel says -EINVAL).
 * The pool is one fixed buffer of the ring, and io_uring refuses a
 * registered buffer over 1 GiB (io_uring/rsrc.c, SZ_1G: -EFAULT). */
#define BUFPOOL_MIN (1ull << 20)
#define BUFPOOL_MAX (1ull << 30)

void fring_cfg_transport_defaults(struct fring_cfg_transport *t)
{
	memset(t, 0, sizeof(*t));
	t->mode = FRING_MODE_AUTO;
	t->queues = 0;
	t->queue_depth = 8;
	t->bufpool = FRING_AUTO;
	t->bufpool_size = 0;
	t->bufpool_registered = 1;
	t->zero_copy = FRING_AUTO;
	t->request_timeout = FRING_DEFAULT_REQUEST_TIMEOUT;
	t->poll_us = FRING_DEFAULT_POLL_US;
	t->placement = FRING_PLACEMENT_AUTO;
	t->reduced_queues = FRING_AUTO;
}

/* Decimal digits only, within lo..hi. */
static int parse_uint(const yaml_node_t *n, uint32_t lo, uint32_t hi, uint32_t *out)
{
	const char *s = cfg_scalar(n);
	uint64_t v = 0;

	if (n->type != YAML_SCALAR_NODE || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > hi)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v < lo || v > hi)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* Index of the scalar in the NULL-terminated `words`, or -1. */
static int pick(const yaml_node_t *n, const char *const *words)
{
	int i;

	if (n->type != YAML_SCALAR_NODE)
		return -1;
	for (i = 0; words[i]; i++)
		if (!strcmp(cfg_scalar(n), words[i]))
			return i;
	return -1;
}

static int bad(struct cfg_ctx *c, yaml_node_t *n, const char *key, const char *expect)
{
	char buf[80];

	return cfg_error(c, n, "%s must be %s, got %s", key, expect,
			 cfg_describe(n, buf, sizeof(buf)));
}

/* auto | on | off, booleans accepted (YAML users write those for on/off). */
/* How many of the nr CPUs in list this process may run on (its affinity:
 * offline CPUs, cpusets and taskset excluded); -1 if it cannot tell. */
static int runnable_cpus(const int *list, int nr)
{
	cpu_set_t mine;
	int n = 0;

	if (nr <= 0 || sched_getaffinity(0, sizeof(mine), &mine) != 0)
		return -1;
	for (int i = 0; i < nr; i++)
		n += list[i] >= 0 && list[i] < CPU_SETSIZE && CPU_ISSET(list[i], &mine);
	return n;
}

static int parse_tristate(const yaml_node_t *n, enum fring_tristate *out)
{
	static const char *const words[] = { "auto", "on", "off", NULL };
	static const enum fring_tristate val[] = { FRING_AUTO, FRING_ON, FRING_OFF };
	int i, b;

	if ((i = pick(n, words)) >= 0)
		*out = val[i];
	else if (n->type == YAML_SCALAR_NODE && !fring_parse_bool(cfg_scalar(n), &b))
		*out = b ? FRING_ON : FRING_OFF;
	else
		return -EINVAL;
	return 0;
}

/* Where a value is, for errors about it found later (fring check's
 * kernel check, run's): 1-based, 0 = not given. */
static void at(struct fring_cfg_at *out, const yaml_node_t *v)
{
	out->line = (unsigned)v->start_mark.line + 1;
	out->column = (unsigned)v->start_mark.column + 1;
}

/* Each key is checked even after a bad one: of several errors the one
 * first in the file is reported (cfg_error_at). */
static void parse_bufpool(struct cfg_ctx *c, yaml_node_t *n, struct fring_cfg_transport *t)
{
	static const char *const keys[] = { "mode", "size", "registered", NULL };
	yaml_node_t *v;

	if (cfg_is_null(n))
		return;
	if (n->type == YAML_SCALAR_NODE) {
		if (parse_tristate(n, &t->bufpool))
			bad(c, n, "transport.bufpool",
			    "one of auto, on, off or a mapping { mode, size, registered }");
		else
			at(&t->at_bufpool, n);
		return;
	}
	if (cfg_expect_map(c, n, "transport.bufpool"))
		return;
	cfg_check_keys(c, n, "in transport.bufpool", keys);
	if ((v = cfg_get(c, n, "mode", NULL))) {
		if (parse_tristate(v, &t->bufpool))
			bad(c, v, "transport.bufpool.mode", "one of auto, on, off");
		else
			at(&t->at_bufpool, v);
	}
	if ((v = cfg_get(c, n, "size", NULL))) {
		uint64_t size;

		if (v->type != YAML_SCALAR_NODE || fring_parse_size(cfg_scalar(v), &size) ||
		    size < BUFPOOL_MIN || size > BUFPOOL_MAX) {
			bad(c, v, "transport.bufpool.size",
			    "a size 1MiB..1GiB such as 64MiB (at least one "
			    "1MiB buffer, the largest request; io_uring "
			    "registers at most 1GiB as one buffer)");
		} else {
			t->bufpool_size = size;
			at(&t->at_bufpool_size, v);
		}
	}
	if ((v = cfg_get(c, n, "registered", NULL)) &&
	    (v->type != YAML_SCALAR_NODE ||
	     fring_parse_bool(cfg_scalar(v), &t->bufpool_registered)))
		bad(c, v, "transport.bufpool.registered",
		    "a boolean (true/false, yes/no, on/off, 1/0)");
}

const char *const fring_cfg_uring_keys[] = { "queue_depth", "bufpool",
					     "zero_copy", "poll_us",
					     "placement", "cpus",
					     "reduced_queues", NULL };

int cfg_parse_transport(struct cfg_ctx *c, yaml_node_t *n, struct fring_cfg_transport *t)
{
	static const char *const keys[] = { "mode", "queues", "queue_depth",
					    "bufpool", "zero_copy",
					    "request_timeout", "poll_us",
					    "placement", "cpus",
					    "reduced_queues", NULL };
	static const char *const modes[] = { "auto", "uring", "devfuse", NULL };
	yaml_node_t *v, *zc;
	int rc, i;

	fring_cfg_transport_defaults(t);
	if (cfg_is_null(n))
		return 0;
	if ((rc = cfg_expect_map(c, n, "transport")))
		return rc;
	at(&t->at_section, n);
	cfg_check_keys(c, n, "in transport", keys);
	for (i = 0; fring_cfg_uring_keys[i]; i++)
		if (cfg_get(c, n, fring_cfg_uring_keys[i], NULL))
			t->uring_keys |= 1u << i;
	if ((v = cfg_get(c, n, "mode", NULL))) {
		if ((i = pick(v, modes)) < 0) {
			bad(c, v, "transport.mode", "one of auto, uring, devfuse");
		} else {
			t->mode = (enum fring_transport_mode[]){ FRING_MODE_AUTO,
								 FRING_MODE_URING,
								 FRING_MODE_DEVFUSE }[i];
			at(&t->at_mode, v);
		}
	}
	if ((v = cfg_get(c, n, "queues", NULL)) &&
	    !(v->type == YAML_SCALAR_NODE && !strcmp(cfg_scalar(v), "auto")) &&
	    parse_uint(v, 1, 1024, &t->queues))
		bad(c, v, "transport.queues", "'auto' or an integer 1..1024");
	if ((v = cfg_get(c, n, "queue_depth", NULL))) {
		if (parse_uint(v, 1, 4096, &t->queue_depth))
			bad(c, v, "transport.queue_depth", "an integer 1..4096");
		else
			at(&t->at_queue_depth, v);
	}
	if ((v = cfg_get(c, n, "request_timeout", NULL)) &&
	    parse_uint(v, 0, 65535, &t->request_timeout))
		bad(c, v, "transport.request_timeout",
		    "an integer 0..65535 (seconds, 0 = off)");
	if ((v = cfg_get(c, n, "poll_us", NULL)) &&
	    parse_uint(v, 0, 1000, &t->poll_us))
		bad(c, v, "transport.poll_us",
		    "an integer 0..1000 (microseconds, 0 = off)");
	if ((v = cfg_get(c, n, "placement", NULL))) {
		static const char *const places[] = { "auto", "local", NULL };

		if ((i = pick(v, places)) < 0)
			bad(c, v, "transport.placement", "one of auto, local");
		else
			t->placement = i ? FRING_PLACEMENT_LOCAL : FRING_PLACEMENT_AUTO;
	}
	if ((v = cfg_get(c, n, "cpus", NULL))) {
		int *list = NULL, nr = v->type == YAML_SCALAR_NODE
					       ? fring_parse_cpulist(cfg_scalar(v), &list)
					       : -EINVAL;
		int runnable = runnable_cpus(list, nr);

		free(list);
		if (nr < 0 || !(t->cpus = strdup(cfg_scalar(v))))
			bad(c, v, "transport.cpus", "a CPU list such as 0-3,8");
		/* Else every mode would fail or fall back at start. */
		else if (!runnable)
			cfg_error(c, v, "transport.cpus '%s' names no CPU this "
				  "process may run on", t->cpus);
	}
	if ((v = cfg_get(c, n, "bufpool", NULL)))
		parse_bufpool(c, v, t);
	if ((zc = cfg_get(c, n, "zero_copy", NULL))) {
		if (parse_tristate(zc, &t->zero_copy))
			bad(c, zc, "transport.zero_copy", "one of auto, on, off");
		else
			at(&t->at_zero_copy, zc);
	}
	if ((v = cfg_get(c, n, "reduced_queues", NULL)) &&
	    parse_tristate(v, &t->reduced_queues))
		bad(c, v, "transport.reduced_queues", "one of auto, on, off");
	/* What no kernel can serve is a config error (fring check sees it). */
	if ((v = cfg_get(c, n, "bufpool", NULL)) && t->bufpool == FRING_ON &&
	    t->mode == FRING_MODE_DEVFUSE)
		cfg_error(c, v->type == YAML_MAPPING_NODE && cfg_get(c, v, "mode", NULL)
			     ? cfg_get(c, v, "mode", NULL) : v,
			  "transport.bufpool on needs io_uring, but transport.mode "
			  "is devfuse");
	if (zc && t->zero_copy == FRING_ON && t->mode == FRING_MODE_DEVFUSE)
		cfg_error(c, zc, "transport.zero_copy on needs io_uring, but "
			  "transport.mode is devfuse");
	else if (zc && t->zero_copy == FRING_ON && t->bufpool == FRING_OFF)
		cfg_error(c, zc, "transport.zero_copy on needs a buffer pool, "
			  "but transport.bufpool is off");
	return c->rc;
}
