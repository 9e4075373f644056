/*
 * test_many_junit.c - one JUnit document for check on several traces: the
 * replays' directory beside the document and its removal (with whatever a
 * killed replay left in it), and the merge's class names for traces that
 * share a file name.
 */
#include "many-junit-internal.h"
#include "report.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];

static void setup(void)
{
	strcpy(tmpdir, "/tmp/msr-mjunit-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(mjunit, .init = setup, .fini = teardown);

/* Entries of tmpdir (its "." and ".." not counted). */
static unsigned entries(void)
{
	char cmd[128];
	unsigned n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", tmpdir);
	p = popen(cmd, "r");
	cr_assert(p);
	cr_assert_eq(fscanf(p, "%u", &n), 1);
	pclose(p);
	return n;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

Test(mjunit, parts_live_beside_the_document_until_closed)
{
	char file[128];
	struct mjunit *j;
	struct stat st;
	const char *p0, *p1;

	snprintf(file, sizeof(file), "%s/all.xml", tmpdir);
	j = mjunit_open(file, 2);
	cr_assert_not_null(j);
	p0 = mjunit_part(j, 0);
	p1 = mjunit_part(j, 1);
	cr_assert(!strncmp(p0, tmpdir, strlen(tmpdir)) &&
		  strstr(p0, "/.msync-replay-junit-"), "%s", p0);
	cr_assert_str_neq(p0, p1);
	cr_assert_eq(entries(), 1, "one working directory");
	write_file(p0, "x");
	{ /* what a replay killed while writing leaves */
		char stray[256];

		snprintf(stray, sizeof(stray), "%.*s/.2.xml.tmp",
			 (int)(strrchr(p1, '/') - p1), p1);
		write_file(stray, "partial");
	}
	mjunit_close(j);
	cr_assert_eq(entries(), 0, "the directory and all in it are gone");
	cr_assert_neq(stat(file, &st), 0, "no document was asked for");
}

Test(mjunit, no_directory_no_parts)
{
	char file[128];

	snprintf(file, sizeof(file), "%s/missing/all.xml", tmpdir);
	errno = 0;
	cr_assert_null(mjunit_open(file, 3));
	cr_assert_eq(errno, ENOENT);
}

Test(mjunit, same_file_names_keep_their_directories)
{
	char file[128], cmd[256], *doc;
	const char *traces[] = {"runs/s1/nas.trace", "runs/s2/nas.trace", "other.trace"};
	const char *why[] = {"killed", "not run", "not run"};
	struct msr_error err = MSR_ERROR_INIT;
	struct mjunit *j;
	FILE *f;
	long n;

	snprintf(file, sizeof(file), "%s/all.xml", tmpdir);
	j = mjunit_open(file, 3);
	cr_assert_not_null(j);
	cr_assert_eq(mjunit_merge(j, traces, why, &err), MSR_OK);
	mjunit_close(j);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", file);
	cr_assert_eq(system(cmd), 0);
	f = fopen(file, "r");
	cr_assert(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	doc = calloc(1, (size_t)n + 1);
	cr_assert(doc);
	cr_assert_eq(fread(doc, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	/* one depth for all: the distinct basename gets what it has */
	cr_assert(strstr(doc, "classname=\"msync-replay.s1.nas_trace\""), "%s", doc);
	cr_assert(strstr(doc, "classname=\"msync-replay.s2.nas_trace\""));
	cr_assert(strstr(doc, "classname=\"msync-replay.other_trace\""));
	cr_assert(strstr(doc, "message=\"killed\""));
	cr_assert_eq(entries(), 1, "only the document is left");
	free(doc);
}
