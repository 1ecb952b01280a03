// SPDX-License-Identifier: MIT
/* The error text of the embed API: where in the file, what the plugin
 * said, what to do about a dead mount. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "embed_internal.h"

void embed_set_err(char **err, char *msg)
{
	if (err)
		*err = msg;
	else
		free(msg);
}

/* "file:line:col: " for messages about a YAML entry, "" otherwise. */
char *embed_where(const char *file, unsigned line, unsigned col)
{
	if (!file || !line)
		return strdup("");
	return fring_strf("%s:%u:%u: ", file, line, col);
}

/* "MSG: REASON; REASON" from what the plugin logged as errors, each
 * without the "MOUNTPOINT: " the host puts first; a trailing "(see
 * messages above)" goes, since the reasons are now in the line. */
char *embed_with_reasons(char *msg, const struct fring_log_capture *c,
			 const char *mountpoint)
{
	static const char above[] = " (see messages above)";
	size_t mlen = strlen(msg), plen = strlen(mountpoint);

	if (mlen >= sizeof(above) - 1 &&
	    !strcmp(msg + mlen - (sizeof(above) - 1), above))
		msg[mlen - (sizeof(above) - 1)] = '\0';
	for (size_t i = 0; msg && i < c->n; i++) {
		const char *r = c->lines[i];
		char *grown;

		if (!strncmp(r, mountpoint, plen) && !strncmp(r + plen, ": ", 2))
			r += plen + 2;
		grown = fring_strf("%s%s%s", msg, i ? "; " : ": ", r);
		free(msg);
		msg = grown;
	}
	return msg;
}

/* A session that ended but is still mounted was aborted (fusectl,
 * request timeout), not unmounted. */
char *embed_aborted(const char *mp)
{
	return fring_strf("%s: the FUSE connection was aborted (fusectl abort "
			  "or request timeout); clear the dead mount with: "
			  "fusermount3 -u %s  (or as root: umount -l %s)", mp,
			  mp, mp);
}
