/*
 * fuzz_list.c - libFuzzer target: arbitrary bytes as one line of a
 * `check --list` file (many-list-internal.h).
 *
 * Properties: the fields lie inside the line, hold no NUL, LF or field
 * separator the format cannot write back, and number at most 3; an error
 * names a column inside the line (or just past it); and writing the fields
 * back as mlist_quote writes them gives a line that splits into the same
 * fields without error.
 */
#define _GNU_SOURCE /* stpcpy */
#include "fuzz-check.h"
#include "many-list-internal.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_FIELDS 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1), *back, *w;
	char *f[FUZZ_FIELDS], *g[FUZZ_FIELDS];
	unsigned nf, ng, col;
	const char *why;

	FUZZ_CHECK(line);
	memcpy(line, data, size);
	line[size] = '\0';
	why = mlist_fields(line, f, FUZZ_FIELDS, &nf, &col);
	if (why) {
		FUZZ_CHECK(col >= 1 && col <= size + 1);
		free(line);
		return 0;
	}
	FUZZ_CHECK(nf <= FUZZ_FIELDS);
	/* quoting at most doubles a field, plus its quotes and a blank */
	back = malloc(2 * size + 3 * FUZZ_FIELDS + 1);
	FUZZ_CHECK(back);
	w = back;
	for (unsigned i = 0; i < nf; i++) {
		size_t len = strlen(f[i]);
		char *q;

		FUZZ_CHECK(f[i] >= line && f[i] + len <= line + size);
		FUZZ_CHECK(!memchr(f[i], '\n', len));
		q = mlist_quote(f[i]);
		FUZZ_CHECK(q);
		w = stpcpy(w, q);
		*w++ = ' ';
		free(q);
	}
	*w = '\0';
	why = mlist_fields(back, g, FUZZ_FIELDS, &ng, &col);
	FUZZ_CHECK(!why && ng == nf);
	for (unsigned i = 0; i < nf; i++)
		FUZZ_CHECK(!strcmp(f[i], g[i]));
	free(back);
	free(line);
	return 0;
}
