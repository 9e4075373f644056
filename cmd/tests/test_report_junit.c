/*
 * test_report_junit.c - unit tests of the JUnit writer: the testcases per
 * kind the run could report, failing and passing ones, the replay testcase
 * of incomplete runs, XML that a real parser (xmllint) accepts even when
 * paths and messages hold markup, quotes, control characters and bad UTF-8,
 * and the merge of several runs' documents into one.
 */
#include "report.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];
static char xml[128];

static void setup(void)
{
	strcpy(tmpdir, "/tmp/msr-junit-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
	snprintf(xml, sizeof(xml), "%s/out.xml", tmpdir);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(junit, .init = setup, .fini = teardown);

struct fixture {
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_report_summary sum;
};

static void fixture_init(struct fixture *fx, bool steps, bool tso,
			 const char *trace)
{
	struct msr_error err = MSR_ERROR_INIT;

	msr_config_default(&fx->cfg);
	cr_assert_eq(msr_report_create(&fx->cfg, NULL, &fx->r, &err), MSR_OK);
	cr_assert_eq(msr_report_add_input(fx->r, "trace", trace, 100, &err), MSR_OK);
	if (steps)
		cr_assert_eq(msr_report_add_input(fx->r, "steps", "s.log", 10, &err),
			     MSR_OK);
	memset(&fx->sum, 0, sizeof(fx->sum));
	fx->sum.complete = true;
	fx->sum.tso = tso;
	fx->sum.events = 42;
}

static void add(struct fixture *fx, enum msr_vkind k, int strand, uint64_t iseq,
		const char *msg)
{
	struct msr_violation v;

	memset(&v, 0, sizeof(v));
	v.kind = k;
	v.strand = strand;
	v.core = strand >= 0 ? strand / 8 : -1;
	v.iseq = iseq;
	v.pa = 0x1000 + 8 * iseq;
	snprintf(v.message, sizeof(v.message), "%s", msg);
	msr_report_add(fx->r, &v);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Validate a written document with xmllint and return its text. */
static char *valid_text(const char *path)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	cr_assert_eq(system(cmd), 0, "xmllint rejects %s", path);
	return read_text(path);
}

/* Write, validate with xmllint and return the document text (malloc'd). */
static char *write_and_read(struct fixture *fx)
{
	struct msr_error err = MSR_ERROR_INIT;

	msr_report_set_summary(fx->r, &fx->sum);
	cr_assert_eq(msr_report_write_junit(fx->r, xml, &err), MSR_OK);
	return valid_text(xml);
}

static void fixture_fini(struct fixture *fx)
{
	msr_report_destroy(fx->r);
	msr_config_release(&fx->cfg);
}

static unsigned occurrences(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

Test(junit, one_testcase_per_kind_failing_or_passing)
{
	struct fixture fx;
	char *doc, fp[17], want[256];

	fixture_init(&fx, true, true, "runs/nas.trace.zst");
	add(&fx, MSR_V_LOAD_VALUE, 13, 5, "load got 0x2 but the ISS saw 0x1");
	add(&fx, MSR_V_LOAD_VALUE, 14, 6, "second one");
	add(&fx, MSR_V_TSO_COHERENCE, 8, 3, "coherence cycle");
	doc = write_and_read(&fx);
	/* every kind plus the replay testcase */
	cr_assert_eq(occurrences(doc, "<testcase "), MSR_V_COUNT + 1, "%s", doc);
	cr_assert_eq(occurrences(doc, "<failure "), 2);
	cr_assert(strstr(doc, "<testsuite name=\"runs/nas.trace.zst\" tests=\"28\" "
			      "failures=\"2\" errors=\"0\" skipped=\"0\""), "%s", doc);
	cr_assert(strstr(doc, "classname=\"msync-replay.nas_trace_zst\" name=\"replay\""));
	msr_report_fingerprint(MSR_V_LOAD_VALUE, 13, 5, 0x1028, fp);
	snprintf(want, sizeof(want), "<failure type=\"load-value\" message=\"2 "
		 "violations of kind load-value\">V1 fingerprint=%s strand=13 iseq=5 "
		 "pa=0x0000001028 ts=0 event=0: load got 0x2", fp);
	cr_assert(strstr(doc, want), "%s", doc);
	cr_assert(strstr(doc, "V2 fingerprint="));
	cr_assert(strstr(doc, "name=\"store-data\" time=\"0.000\"/>"));
	cr_assert(strstr(doc, "<property name=\"input.steps\" value=\"s.log\"/>"));
	cr_assert(strstr(doc, "<property name=\"summary.events\" value=\"42\"/>"));
	free(doc);
	fixture_fini(&fx);
}

Test(junit, only_kinds_the_run_could_report)
{
	struct fixture fx;
	char *doc;

	fixture_init(&fx, false, false, "t.trace");
	doc = write_and_read(&fx);
	cr_assert_null(strstr(doc, "name=\"tso-"), "no TSO pass, no TSO testcases");
	cr_assert_null(strstr(doc, "name=\"load-value\""), "no step log, no load-value");
	cr_assert_null(strstr(doc, "name=\"step-log-short\""));
	cr_assert(strstr(doc, "name=\"unmatched-ld-data\""));
	cr_assert(strstr(doc, "name=\"mem-check\""));
	cr_assert(strstr(doc, "failures=\"0\" errors=\"0\""));
	cr_assert_null(strstr(doc, "<failure"));
	free(doc);
	fixture_fini(&fx);
}

Test(junit, unusable_input_is_an_error_testcase)
{
	struct fixture fx;
	char *doc;

	fixture_init(&fx, false, true, "t.trace");
	fx.sum.complete = false;
	snprintf(fx.sum.error, sizeof(fx.sum.error),
		 "trace: t.trace offset=18: truncated message code=0x21: expected 17 bytes, got 9");
	add(&fx, MSR_V_LEFTOVER, 2, 1, "leftover");
	doc = write_and_read(&fx);
	cr_assert(strstr(doc, "<error type=\"unusable-input\" message=\"trace: t.trace "
			      "offset=18: truncated message"), "%s", doc);
	cr_assert(strstr(doc, "errors=\"1\""));
	/* kinds without violations could not be fully checked */
	cr_assert(strstr(doc, "name=\"mem-check\" time=\"0.000\">\n      <skipped "));
	cr_assert_eq(occurrences(doc, "<failure "), 1);
	free(doc);
	fixture_fini(&fx);
}

Test(junit, fail_fast_skips_the_replay)
{
	struct fixture fx;
	char *doc;

	fixture_init(&fx, false, false, "t.trace");
	fx.sum.complete = false;
	snprintf(fx.sum.stopped, sizeof(fx.sum.stopped), "fail-fast");
	add(&fx, MSR_V_LEFTOVER, 2, 1, "leftover");
	doc = write_and_read(&fx);
	cr_assert(strstr(doc, "name=\"replay\" time=\"0.000\">\n      <skipped message="
			      "\"stopped at the first violation (--fail-fast)\"/>"), "%s", doc);
	cr_assert(strstr(doc, "errors=\"0\""));
	free(doc);
	fixture_fini(&fx);
}

Test(junit, escapes_markup_quotes_and_control_characters)
{
	struct fixture fx;
	char *doc;

	fixture_init(&fx, true, false, "dir/a&b <\"q'\">\x01.trace");
	add(&fx, MSR_V_MEM_CHECK, -1, 0,
	    "a & b < c > d \"e\" 'f' ]]> \x01\x1b\x7f tab\tend \xc3\xa9 bad\xff\xc3(");
	doc = write_and_read(&fx);
	cr_assert(strstr(doc, "<testsuite name=\"dir/a&amp;b &lt;&quot;q&apos;&quot;"
			      "&gt;\\x01.trace\""), "%s", doc);
	cr_assert(strstr(doc, "classname=\"msync-replay.a&amp;b &lt;&quot;q&apos;"
			      "&quot;&gt;\\x01_trace\""), "%s", doc);
	cr_assert(strstr(doc, ": a &amp; b &lt; c &gt; d \"e\" 'f' ]]&gt; \\x01\\x1b\\x7f "
			      "tab\tend \xc3\xa9 bad\\xff\\xc3(\n"), "%s", doc);
	cr_assert_null(strstr(doc, "strand="), "mem-check names no strand");
	free(doc);
	fixture_fini(&fx);
}

Test(junit, atomic_write_leaves_no_temporary)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct fixture fx;
	char cmd[160], bad[160];

	fixture_init(&fx, false, false, "t.trace");
	msr_report_set_summary(fx.r, &fx.sum);
	snprintf(bad, sizeof(bad), "%s/missing/out.xml", tmpdir);
	cr_assert_eq(msr_report_write_junit(fx.r, bad, &err), MSR_E_IO);
	cr_assert_eq(msr_report_write_junit(fx.r, xml, &err), MSR_OK);
	snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s)\" = out.xml", tmpdir);
	cr_assert_eq(system(cmd), 0, "only out.xml in %s", tmpdir);
	fixture_fini(&fx);
}

/* The document of a fixture, written to `path` (via the xml file). */
static void write_part(struct fixture *fx, const char *path)
{
	free(write_and_read(fx));
	cr_assert_eq(rename(xml, path), 0);
}

Test(junit, merge_keeps_every_suite_in_order_and_sums_the_totals)
{
	struct fixture a, b;
	struct msr_error err = MSR_ERROR_INIT;
	char pa[128], pb[128], junk[128], out[128], *doc, *first, *second;
	FILE *f;

	snprintf(pa, sizeof(pa), "%s/a.xml", tmpdir);
	snprintf(pb, sizeof(pb), "%s/b.xml", tmpdir);
	snprintf(junk, sizeof(junk), "%s/junk.xml", tmpdir);
	snprintf(out, sizeof(out), "%s/all.xml", tmpdir);
	fixture_init(&a, true, true, "s1/nas.trace");
	add(&a, MSR_V_LOAD_VALUE, 13, 5, "load got 0x2 but the ISS saw 0x1");
	write_part(&a, pa);
	fixture_init(&b, false, false, "s2/nas.trace");
	b.sum.complete = false;
	snprintf(b.sum.error, sizeof(b.sum.error), "s2/nas.trace offset=9: truncated");
	write_part(&b, pb);
	f = fopen(junk, "w");
	cr_assert(f);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"x\">\n", f);
	fclose(f);

	const struct msr_junit_part parts[] = {
		{"s1/nas.trace", "msync-replay.s1.nas_trace", pa, NULL},
		{"s2/nas.trace", NULL, pb, NULL},
		{"s3/<nas>.trace", "msync-replay.s3.<nas>_trace", NULL, "not run: stopped"},
		{"s4/nas.trace", NULL, junk, NULL},
	};
	cr_assert_eq(msr_report_junit_merge(out, parts, 4, &err), MSR_OK);
	doc = valid_text(out);
	/* a: the replay and every kind, one failing; b (no step log, no TSO
	 * pass): the replay, an error, and 14 kinds, skipped; c and d: one
	 * error each */
	cr_assert(strstr(doc, "<testsuites name=\"msync-replay check\" tests=\"45\" "
			      "failures=\"1\" errors=\"3\" skipped=\"14\""), "%s", doc);
	first = strstr(doc, "<testsuite name=\"s1/nas.trace\"");
	second = strstr(doc, "<testsuite name=\"s2/nas.trace\"");
	cr_assert(first && second && first < second);
	cr_assert(second < strstr(doc, "<testsuite name=\"s3/&lt;nas&gt;.trace\""));
	cr_assert_eq(occurrences(doc, "classname=\"msync-replay.s1.nas_trace\""),
		     MSR_V_COUNT + 1, "the given class name replaces the part's");
	/* b's 15 testcases and d's replay */
	cr_assert_eq(occurrences(doc, "classname=\"msync-replay.nas_trace\""), 16,
		     "without one, the part keeps its own; %s", doc);
	cr_assert(strstr(doc, "classname=\"msync-replay.s3.&lt;nas&gt;_trace\" name=\"replay\" "
			      "time=\"0.000\">\n      <error type=\"no-report\" "
			      "message=\"not run: stopped\">not run: stopped</error>"), "%s", doc);
	cr_assert(strstr(doc, "<testsuite name=\"s4/nas.trace\" tests=\"1\" failures=\"0\" "
			      "errors=\"1\""), "an unreadable part is an error suite");
	cr_assert(strstr(doc, "the replay's JUnit report could not be read"));
	/* the parts are unchanged */
	free(doc);
	doc = read_text(pa);
	cr_assert(strstr(doc, "classname=\"msync-replay.nas_trace\""));
	free(doc);
	fixture_fini(&a);
	fixture_fini(&b);
}

Test(junit, merge_of_parts_without_documents_only)
{
	struct msr_error err = MSR_ERROR_INIT;
	char out[128], *doc;
	const struct msr_junit_part parts[] = {
		{"a/t.trace", NULL, NULL, "the replay was killed by signal 9"},
		{"b/t.trace", NULL, NULL, NULL},
	};

	snprintf(out, sizeof(out), "%s/none.xml", tmpdir);
	cr_assert_eq(msr_report_junit_merge(out, parts, 2, &err), MSR_OK);
	doc = valid_text(out);
	cr_assert(strstr(doc, "<testsuites name=\"msync-replay check\" tests=\"2\" "
			      "failures=\"0\" errors=\"2\" skipped=\"0\""), "%s", doc);
	cr_assert(strstr(doc, "message=\"the replay was killed by signal 9\""));
	cr_assert(strstr(doc, "message=\"the replay wrote no report\""));
	cr_assert_eq(occurrences(doc, "classname=\"msync-replay.t_trace\""), 2);
	free(doc);
}
