/*
 * utf8.c - text for the writers and for error messages (utf8.h): which
 * bytes form a UTF-8 character, strings with the others (and control
 * characters) escaped, and YAML scalars made from such strings.
 */
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t msr_utf8_char(const unsigned char *s)
{
	unsigned c = s[0], n, cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	for (unsigned i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also stops at the NUL: never reads past it */
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

/* msr_utf8_char, but 0 also for control characters other than tab and
 * line feed: written as \xNN, they cannot act on a terminal. */
static size_t text_char(const unsigned char *s)
{
	if (*s < 0x20 ? *s != '\t' && *s != '\n' : *s == 0x7f)
		return 0;
	return msr_utf8_char(s);
}

const char *msr_utf8_clean(const char *s, char **copy)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t bad = 0, n;
	char *out, *w;

	*copy = NULL;
	for (; *p; p += n ? n : 1)
		if (!(n = text_char(p)))
			bad++;
	if (!bad)
		return s;
	out = malloc((size_t)(p - (const unsigned char *)s) + 3 * bad + 1);
	if (!out)
		return NULL;
	for (p = (const unsigned char *)s, w = out; *p; p += n ? n : 1) {
		n = text_char(p);
		if (n) {
			memcpy(w, p, n);
			w += n;
		} else {
			snprintf(w, 5, "\\x%02x", *p);
			w += 4;
		}
	}
	*w = '\0';
	*copy = out;
	return out;
}

bool msr_utf8_yaml_scalar(yaml_event_t *ev, const char *s, bool plain_implicit,
			  bool quoted_implicit, yaml_scalar_style_t style)
{
	char *copy;
	const char *t = msr_utf8_clean(s, &copy);
	int ok = t && yaml_scalar_event_initialize(ev, NULL, NULL, (yaml_char_t *)t,
						   (int)strlen(t), plain_implicit,
						   quoted_implicit, style);

	free(copy); /* the event holds its own copy */
	return ok;
}

void msr_utf8_yaml_emit(yaml_emitter_t *em, bool *failed, const char *s,
			bool quoted)
{
	yaml_event_t ev;

	if (*failed)
		return;
	if (!msr_utf8_yaml_scalar(&ev, s, !quoted, true,
				  quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
					 : YAML_PLAIN_SCALAR_STYLE) ||
	    !yaml_emitter_emit(em, &ev))
		*failed = true;
}
