// SPDX-License-Identifier: MIT
/*
 * The mount's queue layout: read the topology (possible CPUs, their NUMA
 * nodes, the CPUs this process may use and transport.cpus), let
 * fring_place_plan (place_numa.c) choose the registered qids and their
 * threads, and build u->queues and u->threads from it. Each thread's queues
 * are consecutive in u->queues; a queue's memory is allocated by its thread
 * on the node of the queue's CPU (uring_mem.c), or of its thread where
 * transport.cpus leaves that CPU out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "../base/log.h"
#include "../config/config.h"
#include "uring_internal.h"

/* The CPUs fring may use: those this process may run on (offline CPUs
 * and cpusets excluded), within transport.cpus if set. */
static int read_usable(struct fring_uring *u, const char *cpus, char **err)
{
	cpu_set_t mine;
	int *want = NULL, nw = 0, any = 0;

	CPU_ZERO(&mine);
	if (sched_getaffinity(0, sizeof(mine), &mine) != 0)
		return -errno;
	if (cpus && (nw = fring_parse_cpulist(cpus, &want)) < 0) {
		*err = fring_strf("ring setup failed: transport.cpus '%s' is not a "
				  "CPU list", cpus);
		return nw;
	}
	for (uint32_t c = 0; c < u->nr_cpus; c++) {
		int in = !cpus;

		for (int i = 0; i < nw && !in; i++)
			in = want[i] == (int)c;
		u->usable[c] = in && c < CPU_SETSIZE && CPU_ISSET(c, &mine);
		any |= u->usable[c];
	}
	free(want);
	if (!any) {
		*err = fring_strf("ring setup failed: transport.cpus '%s' names no "
				  "CPU this process may run on", cpus ? cpus : "");
		return -EINVAL;
	}
	return 0;
}

static void read_nodes(struct fring_uring *u)
{
	int numa = numa_available() >= 0;

	for (uint32_t c = 0; c < u->nr_cpus; c++) {
		int k = numa ? numa_node_of_cpu((int)c) : 0;

		u->node[c] = k >= 0 ? k : 0;
	}
}

int uring_layout(struct fring_uring *u, const struct fring_uring_params *p,
		 char **err)
{
	struct fring_place_plan plan;
	struct fring_topo topo;
	uint32_t at = 0;
	int ret;

	u->usable = calloc(u->nr_cpus, 1);
	u->node = calloc(u->nr_cpus, sizeof(*u->node));
	if (!u->usable || !u->node)
		return -ENOMEM;
	u->cpus_set = p->cfg->cpus != NULL;
	u->queues_auto = !p->cfg->queues;
	if ((ret = read_usable(u, p->cfg->cpus, err)))
		return ret;
	read_nodes(u);
	topo = (struct fring_topo){ u->nr_cpus, u->node, u->usable };
	ret = fring_place_plan(&topo, p->cfg->queues, p->reduced_offered,
			       &plan);
	if (ret)
		return ret;
	u->reduced = plan.reduced;
	u->nr_qids = plan.nr_reg;
	u->nr_threads = plan.nr_threads;
	u->queues = calloc(u->nr_qids, sizeof(*u->queues));
	u->threads = calloc(u->nr_threads, sizeof(*u->threads));
	if (!u->queues || !u->threads) {
		fring_place_plan_free(&plan);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < u->nr_threads; i++)
		u->threads[i].wake_fd = -1;
	/* Thread by thread, its qids in ascending order. */
	for (uint32_t i = 0; i < u->nr_threads; i++) {
		struct uring_thread *t = &u->threads[i];

		t->u = u;
		t->idx = i;
		t->home = plan.home[i];
		t->queues = &u->queues[at];
		for (uint32_t r = 0; r < plan.nr_reg; r++) {
			if (plan.thread_of[r] != i)
				continue;
			u->queues[at].qid = (uint16_t)plan.reg[r];
			u->queues[at].cpu = plan.reg[r];
			/* Its CPU's node; the thread's if transport.cpus
			 * leaves its CPU out (fring keeps off those). */
			u->queues[at].node = u->node[u->usable[plan.reg[r]]
							     ? plan.reg[r] : t->home];
			at++;
		}
		t->nq = (uint32_t)(&u->queues[at] - t->queues);
		t->nents = t->nq * u->depth;
		uring_mpsc_init(&t->mpsc);
		t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->wake_fd < 0) {
			fring_place_plan_free(&plan);
			return -errno;
		}
	}
	fring_place_plan_free(&plan);
	u->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return u->stop_fd < 0 ? -errno : 0;
}

uint32_t uring_layout_busiest(uint32_t queues, const char *cpus, int reduced)
{
	struct fring_uring u = { 0 };
	struct fring_place_plan plan;
	struct fring_topo topo;
	uint32_t *per = NULL, most = 0;
	int n = fring_uring_possible_cpus();
	char *err = NULL;

	if (n <= 0 || n > 65535)
		return 0;
	u.nr_cpus = (uint32_t)n;
	u.usable = calloc(u.nr_cpus, 1);
	u.node = calloc(u.nr_cpus, sizeof(*u.node));
	if (!u.usable || !u.node || read_usable(&u, cpus, &err))
		goto out;
	read_nodes(&u);
	topo = (struct fring_topo){ u.nr_cpus, u.node, u.usable };
	if (fring_place_plan(&topo, queues, reduced, &plan))
		goto out;
	per = calloc(plan.nr_threads ? plan.nr_threads : 1, sizeof(*per));
	for (uint32_t r = 0; per && r < plan.nr_reg; r++)
		if (++per[plan.thread_of[r]] > most)
			most = per[plan.thread_of[r]];
	free(per);
	fring_place_plan_free(&plan);
out:
	free(err);
	free(u.usable);
	free(u.node);
	return most;
}

void uring_thread_cpus(const struct uring_thread *t, cpu_set_t *set)
{
	CPU_ZERO(set);
	for (uint32_t i = 0; i < t->nq; i++) {
		int c = t->queues[i].cpu;

		if (c >= 0 && c < CPU_SETSIZE && t->u->usable[c])
			CPU_SET(c, set);
	}
	if (!CPU_COUNT(set) && t->home >= 0 && t->home < CPU_SETSIZE)
		CPU_SET(t->home, set);
}

/* "0-3,8" from a CPU set, into buf. */
static size_t cpus_text(const cpu_set_t *set, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int c = 0; c < CPU_SETSIZE && n + 16 < len; c++) {
		int e = c;

		if (!CPU_ISSET(c, set))
			continue;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		n += (size_t)snprintf(buf + n, len - n, e > c ? "%s%d-%d" : "%s%d",
				      n ? "," : "", c, e);
		c = e;
	}
	return n;
}

void uring_layout_describe(const struct fring_uring *u, char *buf, size_t len)
{
	size_t n;

	/* Which applies and why: reduced queues (how many registered) or
	 * every CPU's qid (fewer would hang the kernel's I/O). */
	if (u->reduced && !u->place.growing)
		n = (size_t)snprintf(buf, len, "%u of %u registered (reduced "
				     "queues: %s)", u->nr_qids, u->nr_cpus,
				     u->reduced_why);
	else if (u->nr_threads < u->nr_qids)
		n = (size_t)snprintf(buf, len, "%u, every CPU's, on %u thread%s "
				     "(%s%s)", u->nr_qids, u->nr_threads,
				     u->nr_threads == 1 ? "" : "s",
				     u->reduced_offered
					     ? "reduced queues, but transport.cpus "
					       "leaves CPUs out: "
					     : "no reduced queues, fewer would hang "
					       "the kernel's I/O: ",
				     u->reduced_why);
	else
		n = (size_t)snprintf(buf, len, "%u, a thread each (%s queues: %s)",
				     u->nr_qids, u->reduced_offered ? "reduced"
				     : "no reduced", u->reduced_why);
	if (u->place.growing && n + 64 < len)
		n += (size_t)snprintf(buf + n, len - n, " (registered as the load "
				      "asks: see queue placement)");
	for (uint32_t i = 0; i < u->nr_threads && n + 48 < len; i++) {
		const struct uring_thread *t = &u->threads[i];
		cpu_set_t set, qids, nodes;
		char cpus[64], list[64], nlist[32];

		uring_thread_cpus(t, &set);
		cpus_text(&set, cpus, sizeof(cpus));
		n += (size_t)snprintf(buf + n, len - n, "%s", i ? "; " : ": ");
		CPU_ZERO(&qids);
		for (uint32_t j = 0; j < t->nq; j++)
			if (t->queues[j].qid < CPU_SETSIZE)
				CPU_SET(t->queues[j].qid, &qids);
		cpus_text(&qids, list, sizeof(list));
		n += (size_t)snprintf(buf + n, len - n, "qid%s %s",
				      t->nq > 1 ? "s" : "", list);
		CPU_ZERO(&nodes);
		for (int c = 0; c < CPU_SETSIZE && (uint32_t)c < u->nr_cpus; c++)
			if (CPU_ISSET(c, &set) && u->node[c] < CPU_SETSIZE)
				CPU_SET(u->node[c], &nodes);
		cpus_text(&nodes, nlist, sizeof(nlist));
		if (n + 32 < len)
			n += (size_t)snprintf(buf + n, len - n, " on CPU%s %s node%s %s",
					      CPU_COUNT(&set) > 1 ? "s" : "", cpus,
					      CPU_COUNT(&nodes) > 1 ? "s" : "", nlist);
	}
	if (n + 1 >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}
