// SPDX-License-Identifier: MIT
/*
 * The io_uring transport's queue layout, set up for real (rings, entries,
 * REGISTER SQEs prepared but never submitted) against /dev/null instead
 * of /dev/fuse: with FUSE_URING_REDUCED_Q offered only transport.queues
 * qids get queues and entries; without it every possible CPU's qid does,
 * served by transport.queues threads; transport.cpus bounds the threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "uring_null.h"

static struct fring_uring *setup(uint32_t queues, int reduced, const char *cpus,
				 char **err)
{
	return uring_null_setup(
		(struct fring_cfg_transport){.queues = queues,
					     .cpus = (char *)cpus},
		reduced, err);
}

static int cpus(void)
{
	int n = fring_uring_possible_cpus();

	cr_assert_gt(n, 0);
	return n;
}

Test(uring_layout, reduced_queues_register_only_the_configured_qids)
{
	char *err;
	struct fring_uring *u = setup(1, 1, NULL, &err);

	cr_assert_not_null(u, "setup: %s", err ? err : "?");
	cr_expect_eq(u->nr_qids, 1, "one queue registered");
	cr_expect_eq(u->nr_threads, 1);
	cr_expect_eq(u->queues[0].qid, 0);
	cr_expect_eq(u->reduced, cpus() > 1);
	cr_expect_eq(u->threads[0].nents, u->depth, "entries only for that qid");
	fring_uring_free(u);
}

Test(uring_layout, without_the_flag_every_qid_is_registered)
{
	char *err;
	struct fring_uring *u = setup(1, 0, NULL, &err);

	cr_assert_not_null(u, "setup: %s", err ? err : "?");
	cr_expect_eq(u->nr_qids, (uint32_t)cpus());
	cr_expect_eq(u->nr_threads, 1);
	cr_expect_eq(u->threads[0].nq, (uint32_t)cpus(), "one thread serves all");
	cr_expect_eq(u->reduced, 0);
	for (uint32_t q = 0; q < u->nr_qids; q++)
		cr_expect_eq(u->queues[q].qid, q);
	fring_uring_free(u);
}

Test(uring_layout, auto_is_a_thread_per_cpu_either_way)
{
	for (int reduced = 0; reduced < 2; reduced++) {
		char *err;
		struct fring_uring *u = setup(0, reduced, NULL, &err);

		cr_assert_not_null(u, "setup: %s", err ? err : "?");
		cr_expect_eq(u->nr_qids, (uint32_t)cpus());
		cr_expect_eq(u->nr_threads, (uint32_t)cpus());
		cr_expect_eq(u->place.on, cpus() > 1, "placement auto adapts");
		fring_uring_free(u);
	}
}

Test(uring_layout, transport_cpus_bounds_the_threads)
{
	char *err, last[16];
	struct fring_uring *u;
	cpu_set_t set;

	snprintf(last, sizeof(last), "%d", cpus() - 1);
	u = setup(0, 0, last, &err);
	cr_assert_not_null(u, "setup: %s", err ? err : "?");
	cr_expect_eq(u->nr_qids, (uint32_t)cpus(), "every qid still registered");
	cr_expect_eq(u->nr_threads, 1);
	cr_expect_eq(u->threads[0].home, cpus() - 1);
	uring_thread_cpus(&u->threads[0], &set);
	cr_expect_eq(CPU_COUNT(&set), 1);
	cr_expect(CPU_ISSET(cpus() - 1, &set));
	fring_uring_free(u);

	u = setup(0, 0, "4000-4001", &err);
	cr_expect_null(u);
	cr_assert_not_null(err);
	cr_expect_str_eq(err, "ring setup failed: transport.cpus '4000-4001' "
			 "names no CPU this process may run on");
	free(err);
}
