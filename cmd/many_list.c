/*
 * many_list.c - the fields of one line of a `check --list` file
 * (many-list-internal.h).
 */
#include "many-list-internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_end(char c)
{
	return c == '\0' || c == '\n' || c == '\r';
}

const char *mlist_fields(char *line, char **f, unsigned max, unsigned *nf,
			 unsigned *col)
{
	char *r = line;

	*nf = 0;
	*col = 0;
	for (;;) {
		char *w;

		while (is_blank(*r))
			r++;
		if (is_end(*r) || *r == '#')
			return NULL;
		if (*nf == max) {
			*col = (unsigned)(r - line) + 1;
			return "more fields than expected";
		}
		/* the field is written over its own text: it only shrinks */
		f[(*nf)++] = w = r;
		if (*r != '"') {
			while (!is_end(*r) && !is_blank(*r))
				*w++ = *r++;
		} else {
			char *open = r++;

			while (*r != '"') {
				if (*r == '\\' && *(r + 1) && *(r + 1) != '\n')
					r++;
				else if (*r == '\0' || *r == '\n') {
					*col = (unsigned)(open - line) + 1;
					return "a quoted field has no closing quote";
				}
				*w++ = *r++;
			}
			r++;
			if (!is_end(*r) && !is_blank(*r)) {
				*col = (unsigned)(r - line) + 1;
				return "text right after a closing quote (put a blank between fields)";
			}
		}
		if (!is_end(*r))
			r++; /* past the blank: the terminator may go there */
		*w = '\0';
	}
}

char *mlist_quote(const char *field)
{
	size_t len = strlen(field), extra = 0;
	bool quote = !len || field[0] == '#';
	char *out, *w;

	for (const char *c = field; *c; c++) {
		if (*c == '"' || *c == '\\')
			extra++;
		if (*c == '"' || *c == '\r' || *c == '\n' || is_blank(*c))
			quote = true;
	}
	out = malloc(len + extra + 3);
	if (!out)
		return NULL;
	if (!quote) {
		memcpy(out, field, len + 1);
		return out;
	}
	w = out;
	*w++ = '"';
	for (const char *c = field; *c; c++) {
		if (*c == '"' || *c == '\\')
			*w++ = '\\';
		*w++ = *c;
	}
	*w++ = '"';
	*w = '\0';
	return out;
}
