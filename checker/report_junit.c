/*
 * report_junit.c - writes the collected report as JUnit XML, the format CI
 * systems (Jenkins, GitLab) ingest (PRODUCT.md "--junit FILE").
 *
 * Layout: <testsuites> holding one <testsuite> named after the trace; in it
 * a "replay" testcase (an <error> when the input was unusable or the run
 * interrupted, <skipped> when --fail-fast stopped it) and one testcase per
 * violation kind the run could report, in the order of enum msr_vkind:
 * failing with one line per listed violation, or passing. Every string is
 * escaped for XML 1.0: markup characters become entities, characters XML
 * cannot carry at all (control characters, invalid UTF-8) become the text
 * "\xNN". The document goes to a temporary file renamed into place (a device,
 * FIFO or symbolic link is written in place instead). It never
 * changes the collected data and never prints pointers; the only
 * wall-clock value is the run's elapsed time in the `time` attributes.
 */
#include "msr_version.h"
#include "report-internal.h"
#include "utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Escaping                                                                  */
/* ------------------------------------------------------------------------ */

/* Write `s` escaped; `attr` also keeps tabs and line breaks as references
 * (an attribute value would normalise them to spaces). */
static void xml_text(FILE *f, const char *s, bool attr)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n;

		switch (*p) {
		case '&': fputs("&amp;", f); p++; continue;
		case '<': fputs("&lt;", f); p++; continue;
		case '>': fputs("&gt;", f); p++; continue;
		case '"': fputs(attr ? "&quot;" : "\"", f); p++; continue;
		case '\'': fputs(attr ? "&apos;" : "'", f); p++; continue;
		case '\t': fputs(attr ? "&#9;" : "\t", f); p++; continue;
		case '\n': fputs(attr ? "&#10;" : "\n", f); p++; continue;
		case '\r': fputs("&#13;", f); p++; continue;
		default: break;
		}
		n = *p < 0x20 || *p == 0x7f ? 0 : msr_utf8_char(p);
		if (!n) {
			fprintf(f, "\\x%02x", *p);
			p++;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
}

static void xml_attr(FILE *f, const char *name, const char *value)
{
	fprintf(f, " %s=\"", name);
	xml_text(f, value, true);
	fputc('"', f);
}

static void xml_attr_u64(FILE *f, const char *name, uint64_t v)
{
	fprintf(f, " %s=\"%llu\"", name, (unsigned long long)v);
}

/* ------------------------------------------------------------------------ */
/* What the run could report                                                 */
/* ------------------------------------------------------------------------ */

static const char *input_path(const struct msr_report *r, const char *role)
{
	for (size_t i = 0; i < r->ninputs; i++)
		if (!strcmp(r->inputs[i].role, role))
			return r->inputs[i].path;
	return NULL;
}

/* Kinds found only by comparing with the ISS step log. */
static bool needs_steps(enum msr_vkind k)
{
	switch (k) {
	case MSR_V_LOAD_VALUE:
	case MSR_V_STORE_DATA:
	case MSR_V_DATA_NOT_READY:
	case MSR_V_STEP_KIND_MISMATCH:
	case MSR_V_STEP_LOG_SHORT:
	case MSR_V_STEP_LOG_LONG:
		return true;
	default:
		return false;
	}
}

static bool kind_checked(const struct msr_report *r, enum msr_vkind k)
{
	if (r->per_kind[k])
		return true;
	if (k >= MSR_V_TSO_STORE_ORDER && !r->sum.tso)
		return false;
	if (needs_steps(k) && !input_path(r, "steps"))
		return false;
	return true;
}

struct junit_counts {
	uint64_t tests, failures, errors, skipped;
};

/* The run stopped before the end: how the replay testcase reports it. */
static const char *replay_outcome(const struct msr_report *r)
{
	if (r->sum.complete)
		return NULL;
	if (!strcmp(r->sum.stopped, "fail-fast") && !r->sum.error[0])
		return "skipped";
	return "error";
}

static void count_tests(const struct msr_report *r, struct junit_counts *c)
{
	const char *outcome = replay_outcome(r);

	memset(c, 0, sizeof(*c));
	c->tests = 1;
	if (outcome && !strcmp(outcome, "error"))
		c->errors++;
	else if (outcome)
		c->skipped++;
	for (unsigned k = 0; k < MSR_V_COUNT; k++) {
		if (!kind_checked(r, (enum msr_vkind)k))
			continue;
		c->tests++;
		if (r->per_kind[k])
			c->failures++;
		else if (outcome)
			c->skipped++;
	}
}

/* ------------------------------------------------------------------------ */
/* Document                                                                  */
/* ------------------------------------------------------------------------ */

static void write_counts(FILE *f, const struct junit_counts *c, double secs)
{
	xml_attr_u64(f, "tests", c->tests);
	xml_attr_u64(f, "failures", c->failures);
	xml_attr_u64(f, "errors", c->errors);
	xml_attr_u64(f, "skipped", c->skipped);
	fprintf(f, " time=\"%.3f\"", secs);
}

static void property(FILE *f, const char *name, const char *value)
{
	fputs("      <property", f);
	xml_attr(f, "name", name);
	xml_attr(f, "value", value);
	fputs("/>\n", f);
}

static void property_u64(FILE *f, const char *name, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	property(f, name, buf);
}

/* Inputs as input.<role>, run totals as summary.<name> (as in the YAML). */
static void write_properties(FILE *f, const struct msr_report *r)
{
	char name[32];

	fputs("    <properties>\n", f);
	property(f, "tool", "msync-replay " MSR_VERSION);
	for (size_t i = 0; i < r->ninputs; i++) {
		snprintf(name, sizeof(name), "input.%s", r->inputs[i].role);
		property(f, name, r->inputs[i].path);
	}
	property_u64(f, "summary.events", r->sum.events);
	property_u64(f, "summary.steps", r->sum.steps);
	property_u64(f, "summary.violations", r->shown);
	property_u64(f, "summary.listed", r->list.n);
	property_u64(f, "summary.filtered_out", r->filtered);
	property(f, "summary.complete", r->sum.complete ? "true" : "false");
	fputs("    </properties>\n", f);
}

static void testcase_open(FILE *f, const char *classname, const char *name,
			  double secs)
{
	fputs("    <testcase", f);
	xml_attr(f, "classname", classname);
	xml_attr(f, "name", name);
	fprintf(f, " time=\"%.3f\"", secs);
}

static void write_replay(FILE *f, const struct msr_report *r, const char *cls)
{
	const char *outcome = replay_outcome(r);
	const char *why = r->sum.error[0] ? r->sum.error
			  : r->sum.stopped[0] ? r->sum.stopped
					      : "the replay did not reach the end of the trace";

	testcase_open(f, cls, "replay", r->sum.elapsed);
	if (!outcome) {
		fputs("/>\n", f);
		return;
	}
	fputs(">\n", f);
	if (!strcmp(outcome, "skipped")) {
		fputs("      <skipped message=\"stopped at the first violation "
		      "(--fail-fast)\"/>\n", f);
	} else {
		fputs("      <error type=\"unusable-input\"", f);
		xml_attr(f, "message", why);
		fputs(">", f);
		xml_text(f, why, false);
		fputs("</error>\n", f);
	}
	fputs("    </testcase>\n", f);
}

static void violation_line(FILE *f, const struct msr_report *r, size_t i)
{
	const struct report_entry *e = &r->list.e[i];
	const struct msr_violation *v = &e->v;

	fprintf(f, "V%zu fingerprint=%s", i + 1, e->fp);
	if (v->strand >= 0)
		fprintf(f, " strand=%d", v->strand);
	fprintf(f, " iseq=%llu pa=0x%010llx ts=%u event=%llu",
		(unsigned long long)v->iseq, (unsigned long long)v->pa, v->ts,
		(unsigned long long)v->event);
	if (e->count > 1)
		fprintf(f, " count=%llu", (unsigned long long)e->count);
	fputs(": ", f);
	xml_text(f, v->message, false);
	fputc('\n', f);
}

static void write_kind(FILE *f, const struct msr_report *r, const char *cls,
		       enum msr_vkind k)
{
	const char *name = msr_vkind_name(k);
	uint64_t n = r->per_kind[k], listed = 0;
	char msg[160];

	testcase_open(f, cls, name, 0.0);
	if (!n) {
		if (replay_outcome(r))
			fputs(">\n      <skipped message=\"the replay did not reach the "
			      "end of the trace\"/>\n    </testcase>\n", f);
		else
			fputs("/>\n", f);
		return;
	}
	snprintf(msg, sizeof(msg), "%llu violation%s of kind %s",
		 (unsigned long long)n, n == 1 ? "" : "s", name);
	fputs(">\n      <failure", f);
	xml_attr(f, "type", name);
	xml_attr(f, "message", msg);
	fputs(">", f);
	for (size_t i = 0; i < r->list.n; i++)
		if (r->list.e[i].v.kind == k) {
			violation_line(f, r, i);
			listed++;
		}
	if (listed < n)
		fprintf(f, "(%llu more not listed: report.max_violations)\n",
			(unsigned long long)(n - listed));
	fputs("</failure>\n    </testcase>\n", f);
}

/* "msync-replay.<trace file name>" with dots made underscores, so that
 * Jenkins does not read the file's extension as a class name. */
static void class_name(const char *trace, char *out, size_t size)
{
	const char *base = strrchr(trace, '/');
	size_t n;

	base = base ? base + 1 : trace;
	snprintf(out, size, "msync-replay.%s", *base ? base : "trace");
	for (n = strlen("msync-replay."); out[n]; n++)
		if (out[n] == '.')
			out[n] = '_';
}

static void write_document(FILE *f, const struct msr_report *r)
{
	const char *trace = input_path(r, "trace");
	struct junit_counts c;
	char cls[256];

	if (!trace || !strcmp(trace, "-"))
		trace = trace ? "<stdin>" : "msync-replay";
	class_name(trace, cls, sizeof(cls));
	count_tests(r, &c);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", f);
	xml_attr(f, "name", "msync-replay check");
	write_counts(f, &c, r->sum.elapsed);
	fputs(">\n  <testsuite", f);
	xml_attr(f, "name", trace);
	write_counts(f, &c, r->sum.elapsed);
	fputs(">\n", f);
	write_properties(f, r);
	write_replay(f, r, cls);
	for (unsigned k = 0; k < MSR_V_COUNT; k++)
		if (kind_checked(r, (enum msr_vkind)k))
			write_kind(f, r, cls, (enum msr_vkind)k);
	fputs("  </testsuite>\n</testsuites>\n", f);
}

/* ------------------------------------------------------------------------ */
/* Output file                                                               */
/* ------------------------------------------------------------------------ */

static int write_to(const struct msr_report *r, FILE *f, const char *path,
		    struct msr_error *err)
{
	write_document(f, r);
	if (fflush(f) || ferror(f))
		return msr_error_set(err, MSR_E_IO, "junit", path,
				     "cannot write the JUnit report: %s", strerror(errno));
	return MSR_OK;
}

static int write_body(FILE *f, const void *ctx, const char *path,
		      struct msr_error *err)
{
	return write_to(ctx, f, path, err);
}

int msr_report_write_junit(const struct msr_report *r, const char *path,
			   struct msr_error *err)
{
	const struct report_file_sink sink = {"junit", "JUnit report", write_body, r};

	return report_file_write(path, &sink, err);
}
