// SPDX-License-Identifier: MIT
/* The `transport:` section of a mount: the rows of its keys are in
 * config_keys.c; here the parsers of their own (bufpool's two forms,
 * cpus) and what no kernel can serve. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_internal.h"

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

int cfg_key_cpus(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v,
		 void *base)
{
	struct fring_cfg_transport *t = base;
	int *list = NULL, nr = v->type == YAML_SCALAR_NODE
				       ? fring_parse_cpulist(cfg_scalar(v), &list)
				       : -EINVAL;
	int runnable = runnable_cpus(list, nr);

	free(list);
	if (nr < 0 || !(t->cpus = strdup(cfg_scalar(v))))
		return cfg_key_bad(c, k, v);
	/* Else every mode would fail or fall back at start. */
	if (!runnable)
		return cfg_error(c, v, "transport.cpus '%s' names no CPU this "
				 "process may run on", t->cpus);
	return 0;
}

/* auto | on | off, or the mapping of the CFG_BUFPOOL rows. */
int cfg_key_bufpool(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *v,
		    void *base)
{
	struct fring_cfg_transport *t = base;

	if (cfg_is_null(v))
		return 0;
	if (v->type == YAML_SCALAR_NODE)
		return cfg_key_tristate(c, k, v, base);
	if (cfg_expect_map(c, v, "transport.bufpool"))
		return c->rc;
	return cfg_parse_section(c, v, CFG_BUFPOOL, base, &t->given);
}

/* What no kernel can serve is a config error (fring check sees it). */
static void check_needs(struct cfg_ctx *c, yaml_node_t *n, struct fring_cfg_transport *t)
{
	yaml_node_t *v, *zc = cfg_get(c, n, "zero_copy", NULL);

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
}

/* The mount's defaults are set already (cfg_parse_mount). */
int cfg_key_transport(struct cfg_ctx *c, const struct cfg_key *k, yaml_node_t *n,
		      void *base)
{
	struct fring_cfg_transport *t = (void *)((char *)base + k->off);

	if (cfg_is_null(n))
		return 0;
	if (cfg_expect_map(c, n, "transport"))
		return c->rc;
	t->at_section.line = (unsigned)n->start_mark.line + 1;
	t->at_section.column = (unsigned)n->start_mark.column + 1;
	cfg_parse_section(c, n, CFG_TRANSPORT, t, &t->given);
	check_needs(c, n, t);
	return c->rc;
}
