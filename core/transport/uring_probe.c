// SPDX-License-Identifier: MIT
/*
 * Can this kernel do FUSE over io_uring, and how many qids does it expect?
 * The reasons are worded for the one log line the fallback prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../config/config.h"
#include "../proto/fring_uapi.h"
#include "uring_internal.h"

#define ENABLE_URING "/sys/module/fuse/parameters/enable_uring"
#define URING_DISABLED "/proc/sys/kernel/io_uring_disabled"
#define POSSIBLE_CPUS "/sys/devices/system/cpu/possible"
#define URING_MIN_MINOR 42 /* FUSE_OVER_IO_URING appeared in 7.42 */

/* First character of a small sysfs/procfs file, or 0 if unreadable. */
static int first_char(const char *path)
{
	FILE *f = fopen(path, "re");
	int c;

	if (!f)
		return 0;
	c = fgetc(f);
	fclose(f);
	return c == EOF ? 0 : c;
}

int uring_sysctl_disabled(void)
{
	int c = first_char(URING_DISABLED);

	return c >= '0' && c <= '9' ? c - '0' : 0;
}

const char *fring_uring_unavailable(uint64_t kernel_flags, uint32_t kernel_minor,
				    char *buf, size_t len)
{
	int disabled = uring_sysctl_disabled();

	if (!(kernel_flags & FUSE_OVER_IO_URING)) {
		int c = first_char(ENABLE_URING);

		if (kernel_minor < URING_MIN_MINOR)
			snprintf(buf, len, "kernel too old (FUSE 7.%u; io_uring "
				 "needs 7.%u)", kernel_minor, URING_MIN_MINOR);
		else if (!c)
			snprintf(buf, len, "kernel too old (no %s)", ENABLE_URING);
		else if (c == 'N' || c == 'n' || c == '0')
			snprintf(buf, len, "%s is N", ENABLE_URING);
		else
			snprintf(buf, len, "the kernel did not offer "
				 "FUSE_OVER_IO_URING in INIT");
		return buf;
	}
	/* 1 still lets root and io_uring_group members in; setup reports
	 * EPERM with this reason if we are not among them. */
	if (disabled >= 2) {
		snprintf(buf, len, "io_uring disabled by sysctl "
			 "(kernel.io_uring_disabled = %d)", disabled);
		return buf;
	}
	return NULL;
}

uint32_t fring_uring_max_payload(uint32_t max_write, uint32_t max_pages)
{
	uint64_t p = 8192;

	if (max_write < 4096)
		max_write = 4096; /* the kernel's floor */
	if (!max_pages)
		max_pages = 32; /* FUSE_MAX_PAGES not negotiated */
	if (max_write > p)
		p = max_write;
	if ((uint64_t)max_pages * 4096 > p)
		p = (uint64_t)max_pages * 4096;
	return (uint32_t)p;
}

int uring_possible_cpu_list(int **out)
{
	char line[4096];
	FILE *f = fopen(POSSIBLE_CPUS, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	return fring_parse_cpulist(line, out);
}

int fring_uring_possible_cpus(void)
{
	int *cpus, n = uring_possible_cpu_list(&cpus);

	if (n > 0)
		free(cpus);
	return n;
}

int uring_cap_effective(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0)
		return 0;
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}
