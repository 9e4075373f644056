/*
 * many_junit.c - one JUnit document for `check` on several traces
 * (contract in many-junit-internal.h).
 */
#include "many-junit-internal.h"
#include "many-paths-internal.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mjunit {
	const char *file;
	char *dir;
	char **part;
	size_t n;
};

struct mjunit *mjunit_open(const char *file, size_t n)
{
	static const char name[] = ".msync-replay-junit-XXXXXX";
	const char *slash = strrchr(file, '/');
	size_t dlen = slash ? (size_t)(slash - file) + 1 : 0;
	struct mjunit *j = calloc(1, sizeof(*j));

	if (!j || !(j->dir = malloc(dlen + sizeof(name))) ||
	    !(j->part = calloc(n ? n : 1, sizeof(*j->part)))) {
		if (j)
			free(j->dir);
		free(j);
		errno = ENOMEM;
		return NULL;
	}
	j->file = file;
	memcpy(j->dir, file, dlen);
	memcpy(j->dir + dlen, name, sizeof(name));
	if (!mkdtemp(j->dir)) {
		int e = errno;

		free(j->part);
		free(j->dir);
		free(j);
		errno = e;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(j->dir) + 32;

		j->n++;
		if (!(j->part[i] = malloc(len))) {
			mjunit_close(j);
			errno = ENOMEM;
			return NULL;
		}
		snprintf(j->part[i], len, "%s/%zu.xml", j->dir, i + 1);
	}
	return j;
}

const char *mjunit_part(const struct mjunit *j, size_t i)
{
	return j->part[i];
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The class name of every trace (see mjunit_merge); false when out of
 * memory. */
static bool class_names(const char *const *traces, size_t n, char **cls)
{
	char **sorted = malloc((n ? n : 1) * sizeof(*sorted));
	unsigned deepest = 1;
	bool distinct = false;

	if (!sorted)
		return false;
	for (size_t i = 0; i < n; i++)
		if (mpath_depth(traces[i]) > deepest)
			deepest = mpath_depth(traces[i]);
	for (unsigned depth = 1; !distinct && depth <= deepest; depth++) {
		for (size_t i = 0; i < n; i++) {
			free(cls[i]);
			if (!(cls[i] = mpath_class(traces[i], depth))) {
				free(sorted);
				return false;
			}
			sorted[i] = cls[i];
		}
		qsort(sorted, n, sizeof(*sorted), str_cmp);
		distinct = true;
		for (size_t i = 1; i < n; i++)
			distinct &= strcmp(sorted[i - 1], sorted[i]) != 0;
	}
	free(sorted);
	return true;
}

int mjunit_merge(const struct mjunit *j, const char *const *traces,
		 const char *const *why, struct msr_error *err)
{
	struct msr_junit_part *parts = calloc(j->n ? j->n : 1, sizeof(*parts));
	char **cls = calloc(j->n ? j->n : 1, sizeof(*cls));
	int rc;

	if (!parts || !cls || !class_names(traces, j->n, cls)) {
		rc = msr_error_set(err, MSR_E_NOMEM, "junit", j->file, "out of memory");
	} else {
		for (size_t i = 0; i < j->n; i++) {
			parts[i].trace = traces[i];
			parts[i].classname = cls[i];
			if (!access(j->part[i], F_OK))
				parts[i].file = j->part[i];
			else
				parts[i].missing = why[i];
		}
		rc = msr_report_junit_merge(j->file, parts, j->n, err);
	}
	for (size_t i = 0; cls && i < j->n; i++)
		free(cls[i]);
	free(cls);
	free(parts);
	return rc;
}

void mjunit_close(struct mjunit *j)
{
	DIR *d;
	struct dirent *de;

	if (!j)
		return;
	d = opendir(j->dir);
	while (d && (de = readdir(d))) {
		size_t len = strlen(j->dir) + strlen(de->d_name) + 2;
		char *path;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !(path = malloc(len)))
			continue;
		snprintf(path, len, "%s/%s", j->dir, de->d_name);
		unlink(path);
		free(path);
	}
	if (d)
		closedir(d);
	rmdir(j->dir);
	for (size_t i = 0; i < j->n; i++)
		free(j->part[i]);
	free(j->part);
	free(j->dir);
	free(j);
}
