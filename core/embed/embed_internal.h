// SPDX-License-Identifier: MIT
/*
 * Private to core/embed: the runtime object behind fring.h and the jobs
 * its files share (api.c the exported calls, spec.c mount specs into
 * config entries, mounts.c plugin and session per config entry, run.c mount and
 * serve, messages.c the error text).
 */
#ifndef FRING_EMBED_INTERNAL_H
#define FRING_EMBED_INTERNAL_H

#include "../config/config.h"
#include "../base/log.h"
#include "embed.h"

#define FRING_API __attribute__((visibility("default")))

struct embed_mount {
	struct fring_session *s;
	struct fring_loaded_plugin *plugin; /* ours; outlives the session */
	char *mountpoint;        /* absolute when it could be resolved */
	char *where;             /* "file:line:col: " of a YAML entry, or "" */
	char *mp_where;          /* the same for its mountpoint value */
	const char *plugin_name; /* points into the plugin or the config */
	struct fring_cfg_mount *owned; /* spec-built entry, freed by us */
	int mounted, ended;
};

struct fring_runtime {
	struct embed_mount *m;
	size_t n;
	struct fring_config **cfgs; /* kept alive: sessions point into them */
	size_t nr_cfgs;
	int stop_fd;
	fring_ready_fn ready;
	void *ready_ud;
};

/* *err = msg if err, else msg is freed. */
void embed_set_err(char **err, char *msg);

/* spec.c: a mount spec as a malloc'ed config entry, checked by config's
 * own parsers; embed_spec_free frees one. */
int embed_spec_to_cfg(const struct fring_mount_spec *sp,
		      struct fring_cfg_mount **out, char **err);
void embed_spec_free(struct fring_cfg_mount *cm);
/* The spec's size covers `field` (older callers pass smaller specs). */
#define SPEC_HAS(sp, field)                                                   \
	((sp)->size >= offsetof(struct fring_mount_spec, field) +             \
			       sizeof(((struct fring_mount_spec *)0)->field))

/* mounts.c: the config entries of one file (NULL for a spec) loaded and
 * checked, then appended to rt (or all released). */
int embed_open_mounts(const struct fring_cfg_mount *cm, size_t n,
		      const char *file, struct embed_mount *out, char **err);
int embed_commit(fring_runtime *rt, struct embed_mount *new, size_t nr,
		 char **err);
void embed_mount_release(struct embed_mount *m);

/* run.c: check, mount and serve every mount until stop or unmount. */
int embed_run(fring_runtime *rt, char **err);

/* messages.c */
char *embed_where(const char *file, unsigned line, unsigned col);
char *embed_with_reasons(char *msg, const struct fring_log_capture *c,
			 const char *mountpoint);
char *embed_aborted(const char *mountpoint);

#endif /* FRING_EMBED_INTERNAL_H */
