// SPDX-License-Identifier: MIT
/*
 * Credentials, first found wins: the access_key/secret_key options; the
 * credentials_file option; AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
 * (and AWS_SESSION_TOKEN); AWS_SHARED_CREDENTIALS_FILE or
 * ~/.aws/credentials. A file is the AWS CLI's INI format, the section
 * named by the profile option, AWS_PROFILE or "default". Secrets are
 * never logged, only where they came from.
 */
#include "s3.h"

#include <ctype.h>
#include <stdlib.h>

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int set(char **dst, const char *v)
{
	free(*dst);
	*dst = strdup(v);
	return *dst ? 0 : -ENOMEM;
}

/* 0 with keys set, -ENOENT when the file or profile has none. */
static int from_file(struct s3_fs *fs, const char *file, const char *profile)
{
	struct s3_cfg *cfg = &fs->cfg;
	FILE *f = fopen(file, "re");
	char line[4096];
	bool in = false;
	int err = 0;

	if (!f)
		return -ENOENT;
	while (!err && fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq;

		if (*s == '#' || *s == ';' || !*s)
			continue;
		if (*s == '[') {
			char *end = strchr(s, ']');

			if (end)
				*end = '\0';
			s = trim(s + 1);
			if (!strncmp(s, "profile ", 8))
				s = trim(s + 8);
			in = !strcmp(s, profile);
			continue;
		}
		eq = strchr(s, '=');
		if (!in || !eq)
			continue;
		*eq = '\0';
		s = trim(s);
		if (!strcmp(s, "aws_access_key_id"))
			err = set(&cfg->access_key, trim(eq + 1));
		else if (!strcmp(s, "aws_secret_access_key"))
			err = set(&cfg->secret_key, trim(eq + 1));
		else if (!strcmp(s, "aws_session_token"))
			err = set(&cfg->session_token, trim(eq + 1));
	}
	memset(line, 0, sizeof(line));
	fclose(f);
	if (err)
		return err;
	return cfg->access_key && cfg->secret_key ? 0 : -ENOENT;
}

int s3_creds_resolve(struct s3_fs *fs)
{
	struct s3_cfg *cfg = &fs->cfg;
	const char *profile = cfg->profile ? cfg->profile
					   : getenv("AWS_PROFILE");
	const char *ak = getenv("AWS_ACCESS_KEY_ID");
	const char *sk = getenv("AWS_SECRET_ACCESS_KEY");
	const char *tok = getenv("AWS_SESSION_TOKEN");
	const char *file = getenv("AWS_SHARED_CREDENTIALS_FILE");
	const char *home = getenv("HOME");
	char def[4096];
	int err;

	if (!profile)
		profile = "default";
	if (cfg->access_key || cfg->secret_key) {
		if (cfg->access_key && cfg->secret_key)
			return 0;
		fring_logf(fs->mount, FRING_LOG_ERROR,
			   "s3: access_key and secret_key go together");
		return -EINVAL;
	}
	if (cfg->credentials_file) {
		err = from_file(fs, cfg->credentials_file, profile);
		if (err == -ENOENT)
			fring_logf(
				fs->mount, FRING_LOG_ERROR,
				"s3: credentials_file %s: no readable profile "
				"'%s' with aws_access_key_id and "
				"aws_secret_access_key",
				cfg->credentials_file, profile);
		return err == -ENOENT ? -EINVAL : err;
	}
	if (ak && *ak && sk && *sk) {
		if (set(&cfg->access_key, ak) || set(&cfg->secret_key, sk) ||
		    (tok && *tok && set(&cfg->session_token, tok)))
			return -ENOMEM;
		return 0;
	}
	if (!file && home) {
		snprintf(def, sizeof(def), "%s/.aws/credentials", home);
		file = def;
	}
	if (file && !from_file(fs, file, profile))
		return 0;
	fring_logf(fs->mount, FRING_LOG_ERROR,
		   "s3: no credentials: set access_key and secret_key, "
		   "credentials_file, or AWS_ACCESS_KEY_ID and "
		   "AWS_SECRET_ACCESS_KEY");
	return -EINVAL;
}
