/*
 * Queue-thread placement policy (core/transport/place.c) on recorded load.
 *
 * The 2-CPU windows below are 50 ms windows recorded from fring's
 * passthrough on tmpfs under fio (the AMD EPYC VM, Linux 6.18, 2026-12-01):
 * {requests, depth_sum} per qid, as uring_place.c reads them. No timing:
 * the policy sees only these numbers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "transport/place.h"

typedef struct fring_place_load W2[2];

/* J1 (4k randread, io_uring iodepth 8, 1 job) with the client on CPU 1,
 * threads local: depth 2.7. */
static const W2 j1_local = { { 0, 0 }, { 8774, 23725 } };
/* J1 after its thread moved beside: still deep (2.4). */
static const W2 j1_beside = { { 9423, 23170 }, { 0, 0 } };
/* J1 while the client hopped between CPUs inside the window. */
static const W2 j1_hop = { { 657, 2470 }, { 5070, 22262 } };
/* J2 (4k randread, psync, 2 jobs): both CPUs issue, one at a time. */
static const W2 j2 = { { 3977, 3977 }, { 3822, 3822 } };
/* J7 (4k randread, psync, 4 jobs): two sync clients per CPU, depth 1.3-1.7. */
static const W2 j7 = { { 4822, 6335 }, { 4984, 8499 } };
/* J7 while qid 0's thread is still beside on CPU 1: CPU 0's clients are
 * served slowly and look idle, CPU 1's two sync clients reach depth 1.7
 * (seen by tests/integration/test_placement.py with the marks at 1.5). */
static const W2 j7_half = { { 180, 190 }, { 6000, 10200 } };
/* J3 (1M read, psync, 2 jobs): few, large requests. */
static const W2 j3 = { { 174, 174 }, { 278, 278 } };
/* The metadata loop (create/stat/unlink, one sync client). */
static const W2 meta = { { 5889, 5889 }, { 948, 948 } };
/* Idle, or nearly. */
static const W2 idle = { { 1, 1 }, { 0, 0 } };

static const uint8_t all2[2] = { 1, 1 };

static void init2(struct fring_place *p)
{
	cr_assert_eq(fring_place_init(p, 2, all2, NULL), 0);
}

/* Feed w n times; returns how many of the steps changed the placement. */
static int feed(struct fring_place *p, const struct fring_place_load *w, int n)
{
	int changed = 0;

	while (n--)
		changed += fring_place_step(p, w);
	return changed;
}

Test(place, starts_local)
{
	struct fring_place p;

	init2(&p);
	cr_expect_eq(p.kind, FRING_PLACE_LOCAL);
	cr_expect_eq(p.cpu[0], 0);
	cr_expect_eq(p.cpu[1], 1);
	fring_place_fini(&p);
}

Test(place, deep_client_moves_beside_after_two_windows_and_stays)
{
	struct fring_place p;

	init2(&p);
	cr_expect_eq(fring_place_step(&p, j1_local), 0, "one window never decides");
	cr_expect_eq(fring_place_step(&p, j1_local), 1);
	cr_expect_eq(p.kind, FRING_PLACE_BESIDE);
	cr_expect_eq(p.cpu[1], 0, "qid 1's thread goes to the idle CPU 0");
	cr_expect_eq(p.cpu[0], 1, "...and idle qid 0's thread to CPU 1 (a swap)");
	/* The client hops to CPU 0: its qid now is 0, whose thread is on
	 * CPU 1 already: still beside, nothing to change. */
	cr_expect_eq(feed(&p, j1_beside, 2), 0);
	cr_expect_eq(p.cpu[0], 1);
	cr_expect_eq(p.cpu[1], 0);
	cr_expect_eq(feed(&p, j1_beside, 20), 0, "a stable load never flaps");
	fring_place_fini(&p);
}

Test(place, a_hopping_deep_client_still_goes_beside)
{
	struct fring_place p;

	init2(&p);
	/* 657 of 5727 requests is under a quarter of an even share. */
	cr_expect_eq(feed(&p, j1_hop, 2), 1);
	cr_expect_eq(p.cpu[1], 0);
	fring_place_fini(&p);
}

Test(place, sync_clients_stay_local)
{
	const W2 *loads[] = { &j2, &j7, &j7_half, &j3, &meta };
	struct fring_place p;

	for (size_t i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		init2(&p);
		cr_expect_eq(feed(&p, *loads[i], 10), 0, "load %zu moved threads", i);
		cr_expect_eq(p.kind, FRING_PLACE_LOCAL);
		fring_place_fini(&p);
	}
}

Test(place, sync_clients_on_every_cpu_bring_threads_back)
{
	struct fring_place p;

	init2(&p);
	feed(&p, j1_local, 2);
	cr_assert_eq(p.kind, FRING_PLACE_BESIDE);
	cr_expect_eq(feed(&p, j7, 2), 1);
	cr_expect_eq(p.kind, FRING_PLACE_LOCAL);
	cr_expect_eq(p.cpu[0], 0);
	cr_expect_eq(p.cpu[1], 1);
	fring_place_fini(&p);
}

Test(place, idleness_keeps_the_placement)
{
	struct fring_place p;

	init2(&p);
	feed(&p, j1_local, 2);
	cr_assert_eq(p.kind, FRING_PLACE_BESIDE);
	cr_expect_eq(feed(&p, idle, 50), 0);
	cr_expect_eq(p.kind, FRING_PLACE_BESIDE, "after idleness a burst finds "
		     "the threads where they were");
	fring_place_fini(&p);
	/* A light window between two agreeing ones does not reset them. */
	init2(&p);
	cr_expect_eq(fring_place_step(&p, j1_local), 0);
	cr_expect_eq(fring_place_step(&p, idle), 0);
	cr_expect_eq(fring_place_step(&p, j1_local), 1);
	fring_place_fini(&p);
}

Test(place, alternating_loads_never_apply)
{
	struct fring_place p;

	init2(&p);
	for (int i = 0; i < 20; i++) {
		cr_expect_eq(fring_place_step(&p, j1_local), 0);
		cr_expect_eq(fring_place_step(&p, j2), 0);
	}
	cr_expect_eq(p.kind, FRING_PLACE_LOCAL);
	fring_place_fini(&p);
}

Test(place, depth_between_the_marks_keeps_either_placement)
{
	/* Depth 1.8: under the mark to move (2.0), over the mark to stay (1.6). */
	const W2 mid_q1 = { { 0, 0 }, { 1000, 1800 } };
	const W2 mid_q0 = { { 1000, 1800 }, { 0, 0 } };
	const W2 shallow_q0 = { { 1000, 1100 }, { 0, 0 } };
	struct fring_place p;

	init2(&p);
	cr_expect_eq(feed(&p, mid_q1, 10), 0, "local stays local");
	feed(&p, j1_local, 2);
	cr_assert_eq(p.cpu[1], 0);
	cr_expect_eq(feed(&p, mid_q1, 10), 0, "beside stays beside");
	/* The client hops to CPU 0 at depth 1.8: qid 0 was swapped beside, so
	 * the lower mark applies and it stays; below it (1.1) the threads go
	 * home. */
	cr_expect_eq(feed(&p, mid_q0, 4), 0);
	cr_expect_eq(feed(&p, shallow_q0, 2), 1);
	cr_expect_eq(p.kind, FRING_PLACE_LOCAL);
	cr_expect_eq(feed(&p, shallow_q0, 4), 0);
	/* From local, 1.8 is not deep enough to move. */
	cr_expect_eq(feed(&p, mid_q0, 4), 0);
	fring_place_fini(&p);
}

Test(place, unusable_cpus_are_never_given)
{
	const uint8_t usable[4] = { 1, 0, 1, 1 };
	struct fring_place_load w[4] = { { 8000, 24000 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
	struct fring_place p;

	cr_assert_eq(fring_place_init(&p, 4, usable, NULL), 0);
	cr_expect_eq(p.cpu[1], 0, "an unusable CPU's qid starts on the first usable");
	cr_expect_eq(feed(&p, w, 2), 1);
	cr_expect_eq(p.cpu[0], 2);
	fring_place_fini(&p);

	const uint8_t none[2] = { 0, 0 };

	cr_expect_eq(fring_place_init(&p, 2, none, NULL), -EINVAL);
}

Test(place, no_free_cpu_means_local)
{
	/* Two deep clients, one per CPU: nowhere to move to. */
	const W2 two_deep = { { 9000, 22000 }, { 9000, 22000 } };
	struct fring_place p;

	init2(&p);
	cr_expect_eq(feed(&p, two_deep, 10), 0);
	cr_expect_eq(p.kind, FRING_PLACE_LOCAL);
	fring_place_fini(&p);
}

/* 64 CPUs on 4 nodes of 16: deep clients get free CPUs of their own node,
 * and the busiest first when there are too few. */
Test(place, numa_nodes_and_short_supply)
{
	enum { N = 64 };
	uint8_t usable[N];
	int node[N];
	struct fring_place_load w[N] = { 0 };
	struct fring_place p;

	for (int c = 0; c < N; c++) {
		usable[c] = 1;
		node[c] = c / 16;
	}
	cr_assert_eq(fring_place_init(&p, N, usable, node), 0);
	w[3] = (struct fring_place_load){ 6000, 18000 };
	w[20] = (struct fring_place_load){ 5000, 15000 };
	w[21] = (struct fring_place_load){ 4000, 4000 }; /* sync: stays */
	cr_expect_eq(feed(&p, w, 2), 1);
	cr_expect_eq(node[p.cpu[3]], 0);
	cr_expect_neq(p.cpu[3], 3);
	cr_expect_eq(node[p.cpu[20]], 1);
	cr_expect(p.cpu[20] != 20 && p.cpu[20] != 21, "not onto a loaded CPU");
	cr_expect_eq(p.cpu[21], 21);
	fring_place_fini(&p);

	/* Every CPU but one loaded, three deep: only the busiest moves. */
	cr_assert_eq(fring_place_init(&p, N, usable, node), 0);
	for (int c = 0; c < N - 1; c++)
		w[c] = (struct fring_place_load){ 1000, 1000 };
	w[5] = (struct fring_place_load){ 3000, 9000 };
	w[6] = (struct fring_place_load){ 2000, 6000 };
	w[40] = (struct fring_place_load){ 5000, 15000 };
	w[N - 1] = (struct fring_place_load){ 0, 0 };
	cr_expect_eq(feed(&p, w, 2), 1);
	cr_expect_eq(p.cpu[40], N - 1, "the free CPU is on another node: still used");
	cr_expect_eq(p.cpu[5], 5);
	cr_expect_eq(p.cpu[6], 6);
	fring_place_fini(&p);
}

/* ---- NUMA spread (place_numa.c) ---- */

static void expect_cpus(const int *got, int n, const int *want, int wn)
{
	cr_assert_eq(n, wn, "chose %d CPUs, want %d", n, wn);
	for (int i = 0; i < n; i++)
		cr_expect_eq(got[i], want[i], "CPU %d: %d, want %d", i, got[i], want[i]);
}

Test(place_numa, spreads_over_nodes_in_proportion)
{
	enum { N = 64 };
	int node[N], out[N];
	struct fring_topo t = { N, node, NULL };

	for (int c = 0; c < N; c++)
		node[c] = c / 16;
	expect_cpus(out, fring_place_pick_cpus(&t, 1, out), (int[]){ 0 }, 1);
	expect_cpus(out, fring_place_pick_cpus(&t, 2, out), (int[]){ 0, 16 }, 2);
	expect_cpus(out, fring_place_pick_cpus(&t, 4, out),
		    (int[]){ 0, 16, 32, 48 }, 4);
	expect_cpus(out, fring_place_pick_cpus(&t, 8, out),
		    (int[]){ 0, 8, 16, 24, 32, 40, 48, 56 }, 8);
	cr_expect_eq(fring_place_pick_cpus(&t, 64, out), 64);
	cr_expect_eq(fring_place_pick_cpus(&t, 100, out), 64, "cut to the CPUs");
	cr_expect_eq(fring_place_pick_cpus(&t, 0, out), -EINVAL);
}

Test(place_numa, uneven_and_interleaved_nodes)
{
	int uneven[8] = { 0, 0, 0, 0, 0, 0, 1, 1 }, inter[4] = { 0, 1, 0, 1 };
	struct fring_topo t = { 8, uneven, NULL };
	int out[8];

	/* 6 and 2 CPUs, 4 queues: 3 and 1. */
	expect_cpus(out, fring_place_pick_cpus(&t, 4, out), (int[]){ 0, 2, 4, 6 }, 4);
	/* One queue: the bigger node. */
	expect_cpus(out, fring_place_pick_cpus(&t, 1, out), (int[]){ 0 }, 1);
	t = (struct fring_topo){ 4, inter, NULL };
	expect_cpus(out, fring_place_pick_cpus(&t, 2, out), (int[]){ 0, 1 }, 2);
}

Test(place_numa, only_usable_cpus)
{
	/* transport.cpus 0-3,8 on 16 CPUs, nodes 0-7 and 8-15. */
	int node[16], out[16];
	uint8_t ok[16] = { 1, 1, 1, 1, 0, 0, 0, 0, 1 };
	struct fring_topo t = { 16, node, ok };

	for (int c = 0; c < 16; c++)
		node[c] = c / 8;
	expect_cpus(out, fring_place_pick_cpus(&t, 2, out), (int[]){ 0, 8 }, 2);
	expect_cpus(out, fring_place_pick_cpus(&t, 16, out),
		    (int[]){ 0, 1, 2, 3, 8 }, 5);
	memset(ok, 0, sizeof(ok));
	cr_expect_eq(fring_place_pick_cpus(&t, 2, out), -EINVAL);
}

Test(place_numa, threads_serve_their_nodes_qids)
{
	int blocks[4] = { 0, 0, 1, 1 }, inter[4] = { 0, 1, 0, 1 }, home[4];
	uint32_t of[4];
	struct fring_topo t = { 4, blocks, NULL };

	cr_assert_eq(fring_place_threads(&t, 2, home, of), 2);
	cr_expect(home[0] == 0 && home[1] == 2, "one thread per node");
	cr_expect(of[0] == 0 && of[1] == 0 && of[2] == 1 && of[3] == 1);
	t.node = inter;
	cr_assert_eq(fring_place_threads(&t, 2, home, of), 2);
	cr_expect(home[0] == 0 && home[1] == 1);
	cr_expect(of[0] == 0 && of[1] == 1 && of[2] == 0 && of[3] == 1);
	/* One thread serves all. */
	cr_assert_eq(fring_place_threads(&t, 1, home, of), 1);
	for (int q = 0; q < 4; q++)
		cr_expect_eq(of[q], 0);
}
