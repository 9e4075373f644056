/*
 * plain_source.c - a plain-file msr_source for trace/ unit tests built
 * before the zstd-capable source is in the tree. Same contract as
 * source-internal.h minus decompression; never used by the binaries.
 */
#include "source-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct msr_source {
	FILE *f;
	char path[256];
	uint64_t out;
	uint8_t buf[4096];
};

int msr_source_open(const char *path, struct msr_source **out,
		    struct msr_error *err)
{
	struct msr_source *s = calloc(1, sizeof(*s));

	if (!s)
		return msr_error_set(err, MSR_E_NOMEM, "source", path, "out of memory");
	s->f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!s->f) {
		free(s);
		return msr_error_set(err, MSR_E_IO, "source", path, "cannot open");
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	*out = s;
	return MSR_OK;
}

int msr_source_read(struct msr_source *s, const uint8_t **buf, size_t *len,
		    struct msr_error *err)
{
	/* Small odd-sized reads exercise lines split across blocks. */
	size_t n = fread(s->buf, 1, 37, s->f);

	if (n == 0)
		return ferror(s->f) ? msr_error_set(err, MSR_E_IO, "source", s->path,
						    "read error") : MSR_END;
	s->out += n;
	*buf = s->buf;
	*len = n;
	return MSR_OK;
}

const char *msr_source_path(const struct msr_source *s) { return s->path; }
bool msr_source_compressed(const struct msr_source *s) { (void)s; return false; }
uint64_t msr_source_bytes_in(const struct msr_source *s) { return s->out; }
uint64_t msr_source_bytes_out(const struct msr_source *s) { return s->out; }
uint64_t msr_source_file_size(const struct msr_source *s) { (void)s; return 0; }

void msr_source_close(struct msr_source *s)
{
	if (s->f && s->f != stdin)
		fclose(s->f);
	free(s);
}
