// SPDX-License-Identifier: MIT
/* Where a connection is mounted; see mountinfo.h. */
#define _GNU_SOURCE
#include "mountinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A mount on the path we look at: its id, its parent's, and whether it is
 * one of our connection. */
struct on_path {
	unsigned long id, parent;
	int ours;
};

static int octal(char c)
{
	return c >= '0' && c <= '7';
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && octal(s[1]) && octal(s[2]) && octal(s[3])) {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* Split one line ("ID PARENT MAJ:MIN ROOT MOUNTPOINT ...") in place. */
static int parse(char *line, struct on_path *e, unsigned *maj, unsigned *min,
		 char **mp)
{
	int off = 0;

	if (sscanf(line, "%lu %lu %u:%u %*s %n", &e->id, &e->parent, maj, min,
		   &off) != 4 || !off)
		return -1;
	*mp = line + off;
	(*mp)[strcspn(*mp, " \n")] = 0;
	unescape(*mp);
	return 0;
}

static int where_of(const struct on_path *at, size_t n, int any_ours)
{
	for (size_t i = 0; i < n; i++) {
		size_t j;

		if (!at[i].ours)
			continue;
		/* A mount over ours has ours as its parent and the same path. */
		for (j = 0; j < n && at[j].parent != at[i].id; j++)
			;
		if (j == n)
			return FRING_KMOUNT_TOP;
	}
	return any_ours ? FRING_KMOUNT_COVERED : FRING_KMOUNT_GONE;
}

int fring_kmount_where(unsigned conn_id, const char *path)
{
	unsigned want_maj = conn_id >> 20, want_min = conn_id & 0xfffff;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	struct on_path *at = NULL, e;
	size_t n = 0, cap = 0, linecap = 0;
	char *line = NULL, *mp;
	int any_ours = 0, ret = 0;
	unsigned maj, min;

	if (!f)
		return -errno;
	while (getline(&line, &linecap, f) > 0) {
		if (parse(line, &e, &maj, &min, &mp))
			continue;
		e.ours = maj == want_maj && min == want_min;
		any_ours |= e.ours;
		if (strcmp(mp, path))
			continue;
		if (n == cap) {
			struct on_path *grown = realloc(at, (cap ? 2 * cap : 8) *
							    sizeof(*at));

			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			at = grown;
			cap = cap ? 2 * cap : 8;
		}
		at[n++] = e;
	}
	if (!ret && ferror(f))
		ret = -EIO;
	if (!ret)
		ret = where_of(at, n, any_ours);
	free(line);
	free(at);
	fclose(f);
	return ret;
}
