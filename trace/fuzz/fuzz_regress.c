/*
 * fuzz_regress.c - plain driver for the fuzz targets: feeds every file of
 * the corpus directories given as arguments to LLVMFuzzerTestOneInput, so
 * the corpus (seeds and past crashers) is replayed with any compiler.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, r;

	if (!f) {
		fprintf(stderr, "fuzz-regress: cannot open %s\n", path);
		return 1;
	}
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (!buf) {
				fclose(f);
				return 1;
			}
		}
		r = fread(buf + len, 1, cap - len, f);
		len += r;
	} while (r);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	int failed = 0, files = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		char **names = NULL;
		size_t n = 0;

		if (!d) {
			fprintf(stderr, "fuzz-regress: cannot open directory %s\n", argv[i]);
			return 1;
		}
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			names = realloc(names, (n + 1) * sizeof(*names));
			names[n++] = strdup(e->d_name);
		}
		closedir(d);
		qsort(names, n, sizeof(*names), cmp_names); /* fixed order */
		for (size_t k = 0; k < n; k++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]);
			failed |= run_file(path);
			files++;
			free(names[k]);
		}
		free(names);
	}
	printf("fuzz-regress: %d inputs replayed\n", files);
	return failed || files == 0;
}
