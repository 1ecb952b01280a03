// SPDX-License-Identifier: MIT
/*
 * Replay driver: runs a fuzz target's LLVMFuzzerTestOneInput on saved
 * inputs without libFuzzer, so the regular (gcc) build and valgrind keep
 * every past crash and the seed corpus covered. Arguments are files or
 * directories (their regular files, dotfiles skipped); exits 1 if none
 * was found. A failing input aborts, naming itself first.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(2);
	}
	/* Exactly n bytes, so an overread is caught like under libFuzzer. */
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 1;
}

static int replay(const char *path)
{
	struct dirent **ents;
	struct stat st;
	int n, count = 0;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return replay_file(path);
	n = scandir(path, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char *p;

		if (ents[i]->d_name[0] != '.' &&
		    asprintf(&p, "%s/%s", path, ents[i]->d_name) >= 0) {
			if (!stat(p, &st) && S_ISREG(st.st_mode))
				count += replay_file(p);
			free(p);
		}
		free(ents[i]);
	}
	free(ents);
	return count;
}

int main(int argc, char **argv)
{
	int count = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		count += replay(argv[i]);
	printf("replayed %d inputs\n", count);
	return count ? 0 : 1;
}
