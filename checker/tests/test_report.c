/*
 * test_report.c - unit tests of the violation report: fingerprints,
 * filters, the max_violations cap, context capture, and the YAML document
 * (read back with libyaml's loader: layout, values, quoting, atomic write).
 */
#include "report.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

static char tmpdir[64];

static void setup(void)
{
	strcpy(tmpdir, "/tmp/msr-report-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(report, .init = setup, .fini = teardown);

static struct msr_violation make_violation(enum msr_vkind kind, int strand,
					   uint64_t iseq, uint64_t pa)
{
	struct msr_violation v;

	memset(&v, 0, sizeof(v));
	v.kind = kind;
	v.strand = strand;
	v.core = strand >= 0 ? strand / 8 : -1;
	v.iseq = iseq;
	v.pa = pa;
	v.size = 4;
	v.ts = 1000 + (uint32_t)iseq;
	v.event = 10 * iseq;
	v.offset = 100 * iseq;
	snprintf(v.message, sizeof(v.message), "load got the wrong value: no");
	return v;
}

Test(report, fingerprint_is_stable_and_documented)
{
	char a[17], b[17];

	/* Values computed independently from the definition in report.h. */
	msr_report_fingerprint(MSR_V_LOAD_VALUE, 13, 5, 0x102000, a);
	cr_assert_str_eq(a, "a4ebb37343094482");
	msr_report_fingerprint(MSR_V_MEM_CHECK, -1, 0, 0x40, a);
	cr_assert_str_eq(a, "997e972ddbf4a502");
	msr_report_fingerprint(MSR_V_LOAD_VALUE, 13, 6, 0x102000, b);
	cr_assert_str_neq(a, b);
}

Test(report, filter_parsing)
{
	struct msr_report_filter f;
	struct msr_violation v = make_violation(MSR_V_LOAD_VALUE, 5, 1, 0x1000);

	memset(&f, 0, sizeof(f));
	cr_assert(msr_report_filter_match(&f, &v));
	cr_assert(msr_report_filter_strands(&f, "0-3,5,60-63", 64));
	cr_assert(msr_report_filter_match(&f, &v));
	v.strand = 4;
	cr_assert_not(msr_report_filter_match(&f, &v));
	v.strand = -1;
	cr_assert_not(msr_report_filter_match(&f, &v));
	cr_assert_not(msr_report_filter_strands(&f, "64", 64));
	cr_assert_not(msr_report_filter_strands(&f, "3-1", 64));
	cr_assert_not(msr_report_filter_strands(&f, "1,", 64));
	cr_assert_not(msr_report_filter_strands(&f, "a", 64));
	cr_assert_not(msr_report_filter_strands(&f, "", 64));

	memset(&f, 0, sizeof(f));
	v.strand = 5;
	cr_assert(msr_report_filter_cycles(&f, "1000:1001"));
	cr_assert(msr_report_filter_match(&f, &v), "ts 1001 inclusive");
	cr_assert(msr_report_filter_cycles(&f, "1002:"));
	cr_assert_not(msr_report_filter_match(&f, &v));
	cr_assert(msr_report_filter_cycles(&f, ":1001"));
	cr_assert(msr_report_filter_match(&f, &v));
	cr_assert_not(msr_report_filter_cycles(&f, "5:4"));
	cr_assert_not(msr_report_filter_cycles(&f, "5"));
	cr_assert_not(msr_report_filter_cycles(&f, "1:99999999999"));

	memset(&f, 0, sizeof(f));
	cr_assert(msr_report_filter_pa(&f, "0x1003:0x1003"));
	cr_assert(msr_report_filter_match(&f, &v), "[0x1000,0x1004) overlaps 0x1003");
	cr_assert(msr_report_filter_pa(&f, "0x1004:"));
	cr_assert_not(msr_report_filter_match(&f, &v));
	cr_assert_not(msr_report_filter_pa(&f, "0xg:1"));
}

Test(report, counts_filters_and_cap)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_report_filter f;
	struct msr_error err = MSR_ERROR_INIT;

	msr_config_default(&cfg);
	cfg.max_violations = 2;
	cr_assert_eq(msr_report_create(&cfg, NULL, &r, &err), MSR_OK);
	memset(&f, 0, sizeof(f));
	cr_assert(msr_report_filter_strands(&f, "1-2", 64));
	msr_report_set_filter(r, &f);
	for (int i = 0; i < 5; i++) {
		struct msr_violation v = make_violation(MSR_V_STORE_DATA, i % 3, (uint64_t)i, 8);

		cr_assert_eq(msr_report_add(r, &v), i % 3 != 0);
	}
	cr_assert_eq(msr_report_shown(r), 3);
	cr_assert_eq(msr_report_filtered(r), 2);
	cr_assert_eq(msr_report_kept(r), 2);
	cr_assert_eq(msr_report_kind_count(r, MSR_V_STORE_DATA), 3);
	cr_assert_eq(msr_report_get(r, 0)->strand, 1);
	cr_assert_eq(msr_report_get(r, 1)->strand, 2);
	cr_assert_null(msr_report_get(r, 2));
	msr_report_destroy(r);
}

Test(report, context_is_captured_on_arrival)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_event ev;
	const char *const *lines;
	struct msr_violation v = make_violation(MSR_V_LOAD_VALUE, 3, 2, 0x2004);

	msr_config_default(&cfg);
	cfg.context_len = 2;
	cr_assert_eq(msr_history_create(64, &h, &err), MSR_OK);
	cr_assert_eq(msr_report_create(&cfg, h, &r, &err), MSR_OK);
	memset(&ev, 0, sizeof(ev));
	for (unsigned i = 0; i < 6; i++) {
		ev.index = i;
		ev.offset = 13 * i;
		ev.code = MSR_LD_DATA;
		ev.tnum = (uint8_t)(i == 1 || i == 4 ? 3 : 9);
		ev.pa = i == 2 ? 0x2000 : 0x9000;
		msr_history_add(h, &ev);
	}
	v.event = 3;
	msr_report_add(r, &v);
	/* events after the violation's own do not change what was captured */
	ev.index = 6;
	ev.tnum = 3;
	msr_history_add(h, &ev);
	cr_assert_eq(msr_report_get_context(r, 0, &lines), 2);
	cr_assert(!strncmp(lines[0], "event=1 offset=13 ", 18), "%s", lines[0]);
	cr_assert(!strncmp(lines[1], "event=2 offset=26 ", 18), "%s", lines[1]);
	cr_assert(strstr(lines[1], "pa=0x0000002000"), "%s", lines[1]);
	msr_report_destroy(r);
	msr_history_destroy(h);
}

/* ---- reading the YAML back -------------------------------------------- */

static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *m, const char *key)
{
	cr_assert_eq(m->type, YAML_MAPPING_NODE);
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
	     p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(d, p->key);

		if (!strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

static const char *scalar_of(yaml_node_t *n, yaml_scalar_style_t *style)
{
	cr_assert_not_null(n);
	cr_assert_eq(n->type, YAML_SCALAR_NODE);
	if (style)
		*style = n->data.scalar.style;
	return (const char *)n->data.scalar.value;
}

static const char *path_get(yaml_document_t *d, const char *path,
			    yaml_scalar_style_t *style)
{
	char buf[128], *save, *tok;
	yaml_node_t *n = yaml_document_get_root_node(d);

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		if (tok[0] >= '0' && tok[0] <= '9') {
			long i = strtol(tok, NULL, 10);

			cr_assert_eq(n->type, YAML_SEQUENCE_NODE, "%s", path);
			cr_assert(n->data.sequence.items.start + i < n->data.sequence.items.top,
				  "%s", path);
			n = yaml_document_get_node(d, n->data.sequence.items.start[i]);
		} else {
			n = map_get(d, n, tok);
			cr_assert_not_null(n, "no %s", path);
		}
	}
	return scalar_of(n, style);
}

static void load_yaml(const char *path, yaml_document_t *d)
{
	yaml_parser_t p;
	FILE *f = fopen(path, "rb");

	cr_assert_not_null(f, "%s", path);
	cr_assert(yaml_parser_initialize(&p));
	yaml_parser_set_input_file(&p, f);
	cr_assert(yaml_parser_load(&p, d), "bad yaml: %s", p.problem);
	yaml_parser_delete(&p);
	fclose(f);
}

Test(report, yaml_document_layout_and_quoting)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_history *h;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_report_summary sum;
	struct msr_event ev;
	char path[128], fp[17];
	yaml_document_t d;
	yaml_scalar_style_t st;
	struct msr_violation v = make_violation(MSR_V_LOAD_VALUE, 13, 5, 0x102000);
	struct msr_violation t = make_violation(MSR_V_TSO_STORE_ORDER, 2, 7, 0x80);

	msr_config_default(&cfg);
	cr_assert_eq(msr_history_create(16, &h, &err), MSR_OK);
	memset(&ev, 0, sizeof(ev));
	ev.index = 40;
	ev.code = MSR_SSTEP;
	ev.tnum = 13;
	msr_history_add(h, &ev);
	cr_assert_eq(msr_report_create(&cfg, h, &r, &err), MSR_OK);
	cr_assert_eq(msr_report_add_input(r, "trace", "no", 123, &err), MSR_OK);
	v.has_values = true;
	v.vlen = 4;
	memcpy(v.expected, "\x00\x00\x00\x07", 4);
	memcpy(v.observed, "\xde\xad\xbe\xef", 4);
	v.source = "L2";
	v.pc = 0x80001000;
	v.expected_from = (struct msr_store_ref){true, 3, 4, 2, 9, 1240, 44};
	msr_report_add(r, &v);
	t.nproof = 2;
	t.proof[0] = (struct msr_proof_op){2, MSR_STEP_ST, MSR_REL_PO, 7, 0x10, 0x80, 1, 1, 5, 50};
	t.proof[1] = (struct msr_proof_op){2, MSR_STEP_ST, MSR_REL_CO, 8, 0x14, 0x88, 2, 1, 6, 60};
	msr_report_add(r, &t);
	memset(&sum, 0, sizeof(sum));
	sum.events = 1000;
	sum.steps = 10;
	sum.complete = false;
	snprintf(sum.error, sizeof(sum.error), "x.trace offset=99: truncated message");
	sum.elapsed = 0.5;
	msr_report_set_summary(r, &sum);
	snprintf(path, sizeof(path), "%s/out.yaml", tmpdir);
	cr_assert_eq(msr_report_write_yaml(r, path, &err), MSR_OK, "%s", err.cause[0].text);

	load_yaml(path, &d);
	cr_assert_str_eq(path_get(&d, "tool.name", NULL), "msync-replay");
	cr_assert_str_eq(path_get(&d, "inputs.0.role", NULL), "trace");
	cr_assert_str_eq(path_get(&d, "inputs.0.path", &st), "no");
	cr_assert_eq(st, YAML_DOUBLE_QUOTED_SCALAR_STYLE, "'no' would read as a bool");
	cr_assert_str_eq(path_get(&d, "inputs.0.size", NULL), "123");
	cr_assert_str_eq(path_get(&d, "config.cores", NULL), "8");
	cr_assert_str_eq(path_get(&d, "summary.events", NULL), "1000");
	cr_assert_str_eq(path_get(&d, "summary.violations", NULL), "2");
	cr_assert_str_eq(path_get(&d, "summary.per_kind.load-value", NULL), "1");
	cr_assert_str_eq(path_get(&d, "summary.per_kind.tso-store-order", NULL), "1");
	cr_assert_str_eq(path_get(&d, "summary.complete", NULL), "false");
	cr_assert_str_eq(path_get(&d, "summary.error", NULL),
			 "x.trace offset=99: truncated message");
	cr_assert_str_eq(path_get(&d, "summary.events_per_second", NULL), "2000");
	cr_assert_str_eq(path_get(&d, "violations.0.id", NULL), "V1");
	cr_assert_str_eq(path_get(&d, "violations.0.kind", NULL), "load-value");
	msr_report_fingerprint(MSR_V_LOAD_VALUE, 13, 5, 0x102000, fp);
	cr_assert_str_eq(path_get(&d, "violations.0.fingerprint", &st), fp);
	cr_assert_eq(st, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	cr_assert_str_eq(path_get(&d, "violations.0.strand", NULL), "13");
	cr_assert_str_eq(path_get(&d, "violations.0.core", NULL), "1");
	cr_assert_str_eq(path_get(&d, "violations.0.pc", &st), "0x80001000");
	cr_assert_eq(st, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	cr_assert_str_eq(path_get(&d, "violations.0.pa", NULL), "0x0000102000");
	cr_assert_str_eq(path_get(&d, "violations.0.expected", NULL), "0x00000007");
	cr_assert_str_eq(path_get(&d, "violations.0.observed", NULL), "0xdeadbeef");
	cr_assert_str_eq(path_get(&d, "violations.0.source", NULL), "L2");
	cr_assert_str_eq(path_get(&d, "violations.0.expected_from.strand", NULL), "3");
	cr_assert_str_eq(path_get(&d, "violations.0.expected_from.event", NULL), "44");
	cr_assert_null(map_get(&d, yaml_document_get_node(&d,
		yaml_document_get_root_node(&d)->data.mapping.pairs.start[0].value), "nope"));
	cr_assert_str_eq(path_get(&d, "violations.0.message", NULL),
			 "load got the wrong value: no");
	cr_assert_str_eq(path_get(&d, "violations.0.context.0", NULL),
			 "event=40 offset=0 SSTEP tnum=13");
	cr_assert_str_eq(path_get(&d, "violations.1.kind", NULL), "tso-store-order");
	cr_assert_str_eq(path_get(&d, "violations.1.proof.1.rel", NULL), "co");
	cr_assert_str_eq(path_get(&d, "violations.1.proof.0.op", NULL), "st");
	cr_assert_str_eq(path_get(&d, "violations.1.proof.0.value", NULL), "0x01");
	yaml_document_delete(&d);
	msr_report_destroy(r);
	msr_history_destroy(h);

	/* renamed into place: no temporary file is left beside the report */
	DIR *dir = opendir(tmpdir);
	struct dirent *de;
	int files = 0;

	while ((de = readdir(dir)))
		if (de->d_name[0] != '.' || strlen(de->d_name) > 2)
			files += de->d_name[0] != '.' || (de->d_name[1] && de->d_name[1] != '.');
	closedir(dir);
	cr_assert_eq(files, 1);
}

Test(report, long_values_never_fold)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_violation v = make_violation(MSR_V_MEM_CHECK, -1, 0, 0x40);
	char path[128], line[4096];
	bool found = false;
	FILE *f;

	msr_config_default(&cfg);
	cr_assert_eq(msr_report_create(&cfg, NULL, &r, &err), MSR_OK);
	v.has_values = true;
	v.vlen = 64;
	memset(v.observed, 0xab, 64);
	memset(v.message, 'm', 300);
	v.message[300] = '\0';
	msr_report_add(r, &v);
	snprintf(path, sizeof(path), "%s/wide.yaml", tmpdir);
	cr_assert_eq(msr_report_write_yaml(r, path, &err), MSR_OK);
	f = fopen(path, "r");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "observed: \"0xabab") && strlen(line) > 130)
			found = true;
	fclose(f);
	cr_assert(found, "the 64-byte value is on one line");
	cr_assert_str_eq(line, "...\n", "the document ends explicitly, newline included");
	msr_report_destroy(r);
}

Test(report, unwritable_target_is_an_io_error)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_error err = MSR_ERROR_INIT;

	msr_config_default(&cfg);
	cr_assert_eq(msr_report_create(&cfg, NULL, &r, &err), MSR_OK);
	cr_assert_eq(msr_report_write_yaml(r, "/nonexistent-dir/out.yaml", &err), MSR_E_IO);
	cr_assert(strstr(err.cause[0].text, "temporary file"), "%s", err.cause[0].text);
	msr_report_destroy(r);
}

Test(report, non_regular_targets_are_written_in_place)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_error err = MSR_ERROR_INIT;
	char target[128], link[128];
	struct stat st;
	FILE *f;

	msr_config_default(&cfg);
	cr_assert_eq(msr_report_create(&cfg, NULL, &r, &err), MSR_OK);
	snprintf(target, sizeof(target), "%s/real.yaml", tmpdir);
	snprintf(link, sizeof(link), "%s/link.yaml", tmpdir);
	f = fopen(target, "w");
	fputs("old\n", f);
	fclose(f);
	cr_assert_eq(symlink(target, link), 0);
	cr_assert_eq(msr_report_write_yaml(r, link, &err), MSR_OK, "%s", err.cause[0].text);
	cr_assert_eq(lstat(link, &st), 0);
	cr_assert(S_ISLNK(st.st_mode), "the link is not replaced by a file");
	cr_assert_eq(stat(target, &st), 0);
	cr_assert_gt(st.st_size, 100, "the report went through the link");
	msr_report_destroy(r);
}

Test(report, unlimited_still_bounded)
{
	struct msr_config cfg;
	struct msr_report *r;
	struct msr_error err = MSR_ERROR_INIT;

	msr_config_default(&cfg);
	cfg.max_violations = 0;
	cr_assert_eq(msr_report_create(&cfg, NULL, &r, &err), MSR_OK);
	for (unsigned i = 0; i < MSR_REPORT_DEFAULT_CAP + 5; i++) {
		struct msr_violation v = make_violation(MSR_V_LOAD_VALUE, 1, i, 8 * i);

		cr_assert(msr_report_add(r, &v));
	}
	cr_assert_eq(msr_report_kept(r), MSR_REPORT_DEFAULT_CAP);
	cr_assert_eq(msr_report_shown(r), MSR_REPORT_DEFAULT_CAP + 5);
	cr_assert_eq(msr_report_kind_count(r, MSR_V_LOAD_VALUE), MSR_REPORT_DEFAULT_CAP + 5);
	msr_report_destroy(r);
}
