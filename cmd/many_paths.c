/*
 * many_paths.c - report and step-log paths derived from a trace's path,
 * for `check` on several traces (contract in many-paths-internal.h).
 */
#include "many-paths-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The component of `path` before *end, empty and "." ones skipped, with its
 * length in *len; *end moves before it. NULL at the start of the path. */
static const char *component_before(const char *path, const char **end, size_t *len)
{
	while (*end > path) {
		const char *c = *end;

		while (c > path && c[-1] != '/')
			c--;
		*len = (size_t)(*end - c);
		*end = c > path ? c - 1 : c;
		if (*len && !(*len == 1 && *c == '.'))
			return c;
	}
	return NULL;
}

unsigned mpath_depth(const char *trace)
{
	const char *end = trace + strlen(trace), *c;
	unsigned n = 0;
	size_t len;

	while (n < MPATH_DEPTH_MAX && (c = component_before(trace, &end, &len)) &&
	       !(len == 2 && !memcmp(c, "..", 2)))
		n++;
	return n;
}

/* The last `depth` components of trace, last first, in comp/clen: no more
 * than mpath_depth(trace) counts, so a ".." is never mirrored unless it is
 * the basename itself. Returns how many (at least 1: an empty basename
 * when there is none) and adds their lengths plus one each to *len. */
static unsigned last_components(const char *trace, unsigned depth,
				const char *comp[MPATH_DEPTH_MAX],
				size_t clen[MPATH_DEPTH_MAX], size_t *len)
{
	const char *end = trace + strlen(trace);
	unsigned k = 0, d = mpath_depth(trace);

	/* d == 0: the path ends in "..", only its basename */
	depth = !d ? 1 : d < depth ? d : depth;

	while (k < depth && k < MPATH_DEPTH_MAX &&
	       (comp[k] = component_before(trace, &end, &clen[k])))
		*len += clen[k++] + 1;
	if (!k) { /* nothing but '/' and '.': an empty basename */
		comp[0] = trace;
		clen[0] = 0;
		k = 1;
		*len += 1;
	}
	return k;
}

char *mpath_report(const char *dir, const char *trace, unsigned depth)
{
	const char *comp[MPATH_DEPTH_MAX];
	size_t clen[MPATH_DEPTH_MAX], len = 0;
	unsigned k = last_components(trace, depth, comp, clen, &len);
	char *out, *w;

	if (clen[0] > 4 && !memcmp(comp[0] + clen[0] - 4, ".zst", 4))
		clen[0] -= 4;
	out = malloc(strlen(dir) + len + 7);
	if (!out)
		return NULL;
	w = out + sprintf(out, "%s", dir);
	while (k--)
		w += sprintf(w, "/%.*s", (int)clen[k], comp[k]);
	strcpy(w, ".yaml");
	return out;
}

char *mpath_class(const char *trace, unsigned depth)
{
	static const char prefix[] = "msync-replay";
	const char *comp[MPATH_DEPTH_MAX];
	size_t clen[MPATH_DEPTH_MAX], len = 0;
	unsigned k = last_components(trace, depth, comp, clen, &len);
	char *out = malloc(sizeof(prefix) + len + strlen("trace"));
	char *w;

	if (!out)
		return NULL;
	w = out + sprintf(out, "%s", prefix);
	while (k--) {
		*w++ = '.';
		/* an empty basename: the single-trace check's stand-in */
		if (!clen[k])
			w += sprintf(w, "trace");
		for (size_t i = 0; i < clen[k]; i++)
			*w++ = comp[k][i] == '.' ? '_' : comp[k][i];
	}
	*w = '\0';
	return out;
}

char *mpath_steps_suffix(const char *trace, const char *suffix)
{
	const char *base = strrchr(trace, '/');
	const char *dot;
	size_t stem;
	char *out;

	base = base ? base + 1 : trace;
	dot = strchr(base, '.');
	stem = dot && dot != base ? (size_t)(dot - trace) : strlen(trace);
	out = malloc(stem + strlen(suffix) + 1);
	if (out)
		sprintf(out, "%.*s%s", (int)stem, trace, suffix);
	return out;
}

char *mpath_steps_beside(const char *trace, const char *name)
{
	const char *base = strrchr(trace, '/');
	size_t dir = base ? (size_t)(base - trace) + 1 : 0;
	char *out = malloc(dir + strlen(name) + 1);

	if (out)
		sprintf(out, "%.*s%s", (int)dir, trace, name);
	return out;
}

