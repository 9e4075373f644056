/*
 * test_report_read.c - unit tests of the report reader used by diff: the
 * fields it keeps, what it skips, a round trip through the YAML writer, and
 * precise file:line:column errors for reports that are not reports.
 */
#include "report.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int load_str(const char *text, struct msr_report_doc **d,
		    struct msr_error *err)
{
	return msr_report_doc_load_mem("r.yaml", text, strlen(text), d, err);
}

/* The error text of a report that must be rejected. */
static void expect_error(const char *text, int status, const char *want)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_report_doc *d = NULL;
	char buf[1024];
	int rc = load_str(text, &d, &err);

	cr_assert_eq(rc, status, "status %d for:\n%s", rc, text);
	cr_assert_null(d);
	msr_error_format(&err, buf, sizeof(buf));
	cr_assert(strstr(buf, want), "error '%s' lacks '%s'", buf, want);
}

static const char sample[] =
	"---\n"
	"tool: {name: msync-replay, version: \"0.1.0\"}\n"
	"summary:\n"
	"  events: 12\n"
	"  violations: 5\n"
	"  listed: 3\n"
	"  per_kind: {load-value: 2}\n"
	"  complete: false\n"
	"violations:\n"
	"- id: V1\n"
	"  kind: load-value\n"
	"  fingerprint: \"A4EBB37343094482\"\n"
	"  strand: 13\n"
	"  iseq: 5\n"
	"  pa: \"0x0000102000\"\n"
	"  expected_from: {strand: 1, iseq: 2}\n"
	"  message: \"load & <store> \\\"quoted\\\"\"\n"
	"  proof:\n"
	"  - {strand: 1, op: st}\n"
	"  context:\n"
	"  - \"event=0 MEM_SLAM\"\n"
	"- id: V2\n"
	"  kind: mem-check\n"
	"  fingerprint: \"997e972ddbf4a502\"\n"
	"  pa: 64\n"
	"  count: 3\n"
	"- {id: V3, kind: some-future-kind, fingerprint: \"0000000000000001\", strand: -1}\n"
	"...\n";

Test(report_read, keeps_the_fields_diff_needs)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_report_doc *d;
	const struct msr_report_item *it;

	cr_assert_eq(load_str(sample, &d, &err), MSR_OK);
	cr_assert_eq(msr_report_doc_count(d), 3);
	cr_assert_not(msr_report_doc_complete(d));
	cr_assert_eq(msr_report_doc_violations(d), 5);
	cr_assert_eq(msr_report_doc_listed(d), 3);

	it = msr_report_doc_get(d, 0);
	cr_assert_str_eq(it->id, "V1");
	cr_assert_str_eq(it->kind, "load-value");
	cr_assert_str_eq(it->fingerprint, "a4ebb37343094482");
	cr_assert_eq(it->fp, 0xa4ebb37343094482ULL);
	cr_assert_eq(it->strand, 13);
	cr_assert(it->has_iseq && it->iseq == 5);
	cr_assert(it->has_pa && it->pa == 0x102000);
	cr_assert_str_eq(it->message, "load & <store> \"quoted\"");
	cr_assert_eq(it->count, 1);
	cr_assert_eq(it->line, 10);
	cr_assert_eq(it->column, 3);

	it = msr_report_doc_get(d, 1);
	cr_assert_str_eq(it->kind, "mem-check");
	cr_assert_eq(it->strand, -1);
	cr_assert_not(it->has_iseq);
	cr_assert_eq(it->pa, 64);
	cr_assert_eq(it->count, 3);
	cr_assert_str_eq(it->message, "");

	it = msr_report_doc_get(d, 2);
	cr_assert_str_eq(it->kind, "some-future-kind");
	cr_assert_eq(it->strand, -1);
	cr_assert_null(msr_report_doc_get(d, 3));
	msr_report_doc_free(d);
}

Test(report_read, defaults_without_summary)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_report_doc *d;

	cr_assert_eq(load_str("violations:\n- {id: V1, kind: leftover, "
			      "fingerprint: \"00000000000000ff\", count: 4}\n",
			      &d, &err), MSR_OK);
	cr_assert(msr_report_doc_complete(d));
	cr_assert_eq(msr_report_doc_violations(d), 4);
	cr_assert_eq(msr_report_doc_listed(d), 4);
	msr_report_doc_free(d);

	cr_assert_eq(load_str("violations: []\n", &d, &err), MSR_OK);
	cr_assert_eq(msr_report_doc_count(d), 0);
	cr_assert_eq(msr_report_doc_violations(d), 0);
	msr_report_doc_free(d);

	/* a hand-written baseline may leave the list empty */
	cr_assert_eq(load_str("violations:\n", &d, &err), MSR_OK);
	cr_assert_eq(msr_report_doc_count(d), 0);
	msr_report_doc_free(d);
}

Test(report_read, errors_name_line_column_and_field)
{
	expect_error("", MSR_E_FORMAT, "r.yaml:1:1: empty file");
	expect_error("- a\n- b\n", MSR_E_FORMAT,
		     "r.yaml:1:1: expected a mapping at the top, got a list");
	expect_error("tool: x\nsummary: {}\n", MSR_E_FORMAT,
		     "r.yaml:1:1: no 'violations' list");
	expect_error("violations: none\n", MSR_E_FORMAT,
		     "r.yaml:1:13: violations: expected a list, got a scalar");
	expect_error("violations: {a: 1}\n", MSR_E_FORMAT,
		     "r.yaml:1:13: violations: expected a list, got a mapping");
	expect_error("violations:\n- V1\n", MSR_E_FORMAT,
		     "r.yaml:2:3: violations[0]: expected a mapping, got a scalar");
	expect_error("violations:\n- id: V1\n  kind: leftover\n", MSR_E_FORMAT,
		     "r.yaml:2:3: violations[0]: missing key 'fingerprint'");
	expect_error("violations:\n- {id: V1, kind: k, fingerprint: \"00\"}\n- x\n",
		     MSR_E_FORMAT, "r.yaml:2:34: violations[0].fingerprint='00': "
		     "expected 16 hex digits");
	expect_error("violations:\n- id: V1\n  kind: k\n  fingerprint: \"0000000000000001\"\n"
		     "  strand: lots\n", MSR_E_FORMAT,
		     "r.yaml:5:11: violations[0].strand='lots': expected a strand number");
	expect_error("violations:\n- id: V1\n  kind: k\n  fingerprint: \"0000000000000001\"\n"
		     "  iseq: [1]\n", MSR_E_FORMAT,
		     "r.yaml:5:9: violations[0].iseq: expected a scalar, got a list");
	expect_error("violations:\n- id: V1\n  kind: k\n  fingerprint: \"0000000000000001\"\n"
		     "  count: 0\n", MSR_E_FORMAT,
		     "r.yaml:5:10: violations[0].count='0': expected a count of at least 1");
	expect_error("violations:\n- id: V1\n  id: V2\n", MSR_E_FORMAT,
		     "r.yaml:3:3: violations[0]: duplicate key 'id'");
	expect_error("violations: []\nviolations: []\n", MSR_E_FORMAT,
		     "r.yaml:2:1: duplicate key 'violations'");
	expect_error("summary: {complete: maybe}\nviolations: []\n", MSR_E_FORMAT,
		     "r.yaml:1:21: summary.complete='maybe': expected true or false");
	expect_error("violations: [\n", MSR_E_FORMAT, "r.yaml:2:1: not valid YAML");
	expect_error("violations: []\n---\nviolations: []\n", MSR_E_FORMAT,
		     "r.yaml:2:1: more than one YAML document");
	expect_error("violations: [\"\xff\"]\n", MSR_E_FORMAT, "r.yaml offset=14: not valid YAML");
}

Test(report_read, unreadable_file_is_an_io_error)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_report_doc *d = NULL;
	char buf[512];

	cr_assert_eq(msr_report_doc_load("/nonexistent/base.yaml", &d, &err), MSR_E_IO);
	cr_assert_null(d);
	msr_error_format(&err, buf, sizeof(buf));
	cr_assert(strstr(buf, "/nonexistent/base.yaml"), "%s", buf);
	cr_assert(strstr(buf, "cannot open the report"), "%s", buf);
}

/* What the YAML writer emits, the reader gets back. */
Test(report_read, round_trip_through_the_writer)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_report_doc *d;
	struct msr_report_summary sum;
	struct msr_violation v;
	char dir[] = "/tmp/msr-rread-XXXXXX", path[64];

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.yaml", dir);
	msr_config_default(&cfg);
	cr_assert_eq(msr_report_create(&cfg, NULL, &r, &err), MSR_OK);
	memset(&v, 0, sizeof(v));
	v.kind = MSR_V_LOAD_VALUE;
	v.strand = 13;
	v.core = 1;
	v.iseq = 5;
	v.pa = 0x102000;
	snprintf(v.message, sizeof(v.message), "no: 0x10 & <yes>\tat 'x'");
	msr_report_add(r, &v);
	v.kind = MSR_V_MEM_CHECK;
	v.strand = -1;
	v.iseq = 0;
	v.pa = 0x40;
	msr_report_add(r, &v);
	memset(&sum, 0, sizeof(sum));
	sum.complete = true;
	msr_report_set_summary(r, &sum);
	cr_assert_eq(msr_report_write_yaml(r, path, &err), MSR_OK);

	cr_assert_eq(msr_report_doc_load(path, &d, &err), MSR_OK);
	cr_assert_eq(msr_report_doc_count(d), 2);
	cr_assert_str_eq(msr_report_doc_get(d, 0)->fingerprint, "a4ebb37343094482");
	cr_assert_str_eq(msr_report_doc_get(d, 0)->message, "no: 0x10 & <yes>\tat 'x'");
	cr_assert_eq(msr_report_doc_get(d, 0)->strand, 13);
	cr_assert_str_eq(msr_report_doc_get(d, 1)->id, "V2");
	cr_assert_str_eq(msr_report_doc_get(d, 1)->fingerprint, "997e972ddbf4a502");
	cr_assert_eq(msr_report_doc_get(d, 1)->strand, -1);
	cr_assert(msr_report_doc_complete(d));
	cr_assert_eq(msr_report_doc_violations(d), 2);
	msr_report_doc_free(d);
	msr_report_destroy(r);
	msr_config_release(&cfg);
	unlink(path);
	rmdir(dir);
}
