/*
 * cmd_diff.c - `msync-replay diff BASE.yaml NEW.yaml`: which violations of
 * a new report are new, which of the baseline are fixed, which are
 * unchanged, matched by fingerprint, for CI jobs that fail only on new
 * violations.
 *
 * A fingerprint that occurs several times is counted: with 2 in BASE and 3
 * in NEW, 2 are unchanged and 1 is new; an entry with `count: N` stands for
 * N occurrences. Output is a table (default) or YAML (libyaml emitter, lines
 * never folded), in a fixed order: new rows in NEW's order, fixed rows in
 * BASE's order, unchanged rows in NEW's order. Exit 1 when NEW has
 * violations BASE does not, 0 otherwise, 2 when a report is unreadable or
 * the command line is wrong. It only reads the two reports; it never
 * rewrites them.
 */
#include "cmd.h"
#include "msr_version.h"
#include "report.h"
#include "utf8.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

enum diff_status { DS_NEW, DS_FIXED, DS_UNCHANGED, DS_COUNT };

static const char *const status_names[DS_COUNT] = {"new", "fixed", "unchanged"};

/* All occurrences of one fingerprint in both reports. */
struct diff_group {
	uint64_t fp;
	uint64_t nbase, nnew;            /* occurrences (counts summed) */
	size_t head[2], tail[2];         /* item chains per side, SIZE_MAX = none */
	bool emitted[DS_COUNT];
};

/* One side's item and how its occurrences split. */
struct diff_item {
	const struct msr_report_item *it;
	size_t group;
	size_t next;       /* next item of the same group and side */
	uint64_t first;    /* index of its first occurrence within the group */
	uint64_t changed;  /* occurrences that are new (NEW) or fixed (BASE) */
};

struct diff_side {
	const char *path;
	struct msr_report_doc *doc;
	struct diff_item *items;
	size_t n;
};

struct diff_row {
	enum diff_status status;
	const struct diff_group *g;
	const struct diff_item *rep; /* first item of the row */
	uint64_t count;
};

struct diff {
	struct diff_side side[2]; /* 0 = BASE, 1 = NEW */
	struct diff_group *groups;
	size_t ngroups;
	size_t *slots;            /* hash map fp -> group index + 1 */
	size_t mask;
	struct diff_row *rows;
	size_t nrows;
	uint64_t total[DS_COUNT];
};

static const char diff_help[] =
	"usage: msync-replay diff BASE.yaml NEW.yaml [options]\n"
	"\n"
	"Compare two violation reports of msync-replay check and list the violations\n"
	"that are new (in NEW, not in BASE), fixed (in BASE, not in NEW) and unchanged,\n"
	"matched by fingerprint (kind, strand, instruction number and address). A\n"
	"fingerprint found several times is counted: 2 in BASE and 3 in NEW make 2\n"
	"unchanged and 1 new. '-' reads one of the reports from standard input.\n"
	"\n"
	"options:\n"
	"  -f, --format FMT   table (default, for people) or yaml (for programs)\n"
	"  -q, --quiet        print nothing; only the exit code tells\n"
	"  -h, --help         this help\n"
	"\n"
	"exit codes: 0 no new violations; 1 NEW has violations BASE does not;\n"
	"2 a report is unreadable or not a report, or a usage error.\n";

/* ------------------------------------------------------------------------ */
/* Matching                                                                  */
/* ------------------------------------------------------------------------ */

static uint64_t fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

/* The group of fingerprint fp, created when new. */
static size_t group_of(struct diff *d, uint64_t fp)
{
	size_t i = (size_t)fmix64(fp) & d->mask;
	struct diff_group *g;

	for (; d->slots[i]; i = (i + 1) & d->mask)
		if (d->groups[d->slots[i] - 1].fp == fp)
			return d->slots[i] - 1;
	g = &d->groups[d->ngroups];
	memset(g, 0, sizeof(*g));
	g->fp = fp;
	g->head[0] = g->head[1] = g->tail[0] = g->tail[1] = SIZE_MAX;
	d->slots[i] = ++d->ngroups;
	return d->ngroups - 1;
}

static bool side_index(struct diff *d, int s)
{
	struct diff_side *sd = &d->side[s];

	sd->n = msr_report_doc_count(sd->doc);
	sd->items = calloc(sd->n ? sd->n : 1, sizeof(*sd->items));
	if (!sd->items)
		return false;
	for (size_t i = 0; i < sd->n; i++) {
		struct diff_item *di = &sd->items[i];
		struct diff_group *g;

		di->it = msr_report_doc_get(sd->doc, i);
		di->group = group_of(d, di->it->fp);
		di->next = SIZE_MAX;
		g = &d->groups[di->group];
		di->first = s ? g->nnew : g->nbase;
		if (s)
			g->nnew += di->it->count;
		else
			g->nbase += di->it->count;
		if (g->tail[s] == SIZE_MAX)
			g->head[s] = i;
		else
			sd->items[g->tail[s]].next = i;
		g->tail[s] = i;
	}
	return true;
}

/* Occurrences of [first, first+count) at or beyond `other` (the other
 * side's total): those have no partner. */
static uint64_t beyond(uint64_t first, uint64_t count, uint64_t other)
{
	if (first + count <= other)
		return 0;
	return first >= other ? count : first + count - other;
}

static void add_row(struct diff *d, enum diff_status st, struct diff_group *g,
		    const struct diff_item *rep, uint64_t count)
{
	struct diff_row *r = &d->rows[d->nrows++];

	r->status = st;
	r->g = g;
	r->rep = rep;
	r->count = count;
	g->emitted[st] = true;
	d->total[st] += count;
}

/* Rows of one status: one per group, ordered by the group's first item of
 * that status on side s. */
static void rows_of(struct diff *d, enum diff_status st, int s)
{
	struct diff_side *sd = &d->side[s];

	for (size_t i = 0; i < sd->n; i++) {
		struct diff_item *di = &sd->items[i];
		struct diff_group *g = &d->groups[di->group];
		bool mine = st == DS_UNCHANGED ? di->changed < di->it->count
					       : di->changed > 0;

		if (!mine || g->emitted[st])
			continue;
		if (st == DS_UNCHANGED)
			add_row(d, st, g, di, g->nbase < g->nnew ? g->nbase : g->nnew);
		else
			add_row(d, st, g, di, s ? g->nnew - g->nbase : g->nbase - g->nnew);
	}
}

static bool diff_match(struct diff *d)
{
	size_t n, cap = 16;

	n = msr_report_doc_count(d->side[0].doc) + msr_report_doc_count(d->side[1].doc);
	while (cap < 2 * n)
		cap *= 2;
	d->mask = cap - 1;
	d->slots = calloc(cap, sizeof(*d->slots));
	d->groups = calloc(n ? n : 1, sizeof(*d->groups));
	d->rows = calloc(n ? n : 1, sizeof(*d->rows));
	if (!d->slots || !d->groups || !d->rows || !side_index(d, 0) || !side_index(d, 1))
		return false;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < d->side[s].n; i++) {
			struct diff_item *di = &d->side[s].items[i];
			const struct diff_group *g = &d->groups[di->group];

			di->changed = beyond(di->first, di->it->count, s ? g->nbase : g->nnew);
		}
	rows_of(d, DS_NEW, 1);
	rows_of(d, DS_FIXED, 0);
	rows_of(d, DS_UNCHANGED, 1);
	return true;
}

/* ------------------------------------------------------------------------ */
/* Table                                                                     */
/* ------------------------------------------------------------------------ */

#define IDS_SHOWN 4

/* The ids of a row's items ("V2,V7"), at most IDS_SHOWN then "+N". */
static void row_ids(const struct diff *d, const struct diff_row *r, int s,
		    bool unchanged_part, char *out, size_t size)
{
	const struct diff_side *sd = &d->side[s];
	size_t pos = 0, shown = 0, more = 0;

	out[0] = '\0';
	for (size_t i = r->g->head[s]; i != SIZE_MAX; i = sd->items[i].next) {
		const struct diff_item *di = &sd->items[i];
		bool mine = unchanged_part ? di->changed < di->it->count : di->changed > 0;

		if (!mine)
			continue;
		if (shown == IDS_SHOWN) {
			more++;
			continue;
		}
		if (pos < size)
			pos += (size_t)snprintf(out + pos, size - pos, "%s%s",
						shown ? "," : "", di->it->id);
		shown++;
	}
	if (more && pos < size)
		snprintf(out + pos, size - pos, ",+%zu", more);
}

struct diff_cells {
	char count[24], strand[16], iseq[24], pa[24], ids[160];
};

static void row_cells(const struct diff *d, const struct diff_row *r,
		      struct diff_cells *c)
{
	const struct msr_report_item *it = r->rep->it;

	snprintf(c->count, sizeof(c->count), "%llu", (unsigned long long)r->count);
	if (it->strand >= 0)
		snprintf(c->strand, sizeof(c->strand), "%d", it->strand);
	else
		snprintf(c->strand, sizeof(c->strand), "-");
	if (it->has_iseq)
		snprintf(c->iseq, sizeof(c->iseq), "%llu", (unsigned long long)it->iseq);
	else
		snprintf(c->iseq, sizeof(c->iseq), "-");
	if (it->has_pa)
		snprintf(c->pa, sizeof(c->pa), "0x%010llx", (unsigned long long)it->pa);
	else
		snprintf(c->pa, sizeof(c->pa), "-");
	if (r->status == DS_UNCHANGED) {
		char base[72];

		row_ids(d, r, 1, true, c->ids, 72);
		row_ids(d, r, 0, true, base, sizeof(base));
		if (strcmp(base, c->ids)) {
			size_t n = strlen(c->ids);

			snprintf(c->ids + n, sizeof(c->ids) - n, " (was %s)", base);
		}
	} else {
		row_ids(d, r, r->status == DS_NEW ? 1 : 0, false, c->ids, sizeof(c->ids));
	}
}

/* A message on one line: control characters become spaces. */
static void put_line(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

static int width(int w, const char *s)
{
	int n = (int)strlen(s);

	return n > w ? n : w;
}

static void print_table(const struct diff *d, FILE *f)
{
	int wk = 4, wc = 5, ws = 6, wi = 4, wp = 2, wd = 2;
	struct diff_cells c;

	for (size_t i = 0; i < d->nrows; i++) {
		row_cells(d, &d->rows[i], &c);
		wk = width(wk, d->rows[i].rep->it->kind);
		wc = width(wc, c.count);
		ws = width(ws, c.strand);
		wi = width(wi, c.iseq);
		wp = width(wp, c.pa);
		wd = width(wd, c.ids);
	}
	fprintf(f, "%-9s  %*s  %-*s  %*s  %*s  %-*s  %-16s  %-*s  %s\n", "STATUS",
		wc, "COUNT", wk, "KIND", ws, "STRAND", wi, "ISEQ", wp, "PA",
		"FINGERPRINT", wd, "ID", "MESSAGE");
	for (size_t i = 0; i < d->nrows; i++) {
		const struct diff_row *r = &d->rows[i];

		row_cells(d, r, &c);
		fprintf(f, "%-9s  %*s  %-*s  %*s  %*s  %-*s  %-16s  %-*s  ",
			status_names[r->status], wc, c.count, wk, r->rep->it->kind,
			ws, c.strand, wi, c.iseq, wp, c.pa, r->rep->it->fingerprint,
			wd, c.ids);
		put_line(f, r->rep->it->message);
		fputc('\n', f);
	}
}

static void print_text(const struct diff *d, FILE *f)
{
	fprintf(f, "msync-replay diff: %llu new, %llu fixed, %llu unchanged\n",
		(unsigned long long)d->total[DS_NEW],
		(unsigned long long)d->total[DS_FIXED],
		(unsigned long long)d->total[DS_UNCHANGED]);
	for (int s = 0; s < 2; s++) {
		uint64_t v = msr_report_doc_violations(d->side[s].doc);

		fprintf(f, "  %s %s (%llu violation%s%s)\n", s ? "new: " : "base:",
			d->side[s].path, (unsigned long long)v, v == 1 ? "" : "s",
			msr_report_doc_complete(d->side[s].doc) ? "" : ", incomplete");
	}
	if (d->nrows) {
		fputc('\n', f);
		print_table(d, f);
	}
}

/* ------------------------------------------------------------------------ */
/* YAML                                                                      */
/* ------------------------------------------------------------------------ */

struct dy {
	yaml_emitter_t em;
	bool failed;
};

static void dy_emit(struct dy *w, yaml_event_t *ev)
{
	if (w->failed) {
		yaml_event_delete(ev);
		return;
	}
	if (!yaml_emitter_emit(&w->em, ev))
		w->failed = true;
}

/* Plain only for words YAML 1.1 cannot retype (no numbers, booleans, null). */
static bool plain_word(const char *s)
{
	static const char *const words[] = {
		"y", "n", "yes", "no", "on", "off", "true", "false", "null",
	};

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcasecmp(s, words[i]))
			return false;
	return true;
}

static void dy_scalar(struct dy *w, const char *s, bool quoted)
{
	msr_utf8_yaml_emit(&w->em, &w->failed, s, quoted);
}

static void dy_str(struct dy *w, const char *k, const char *v)
{
	dy_scalar(w, k, false);
	dy_scalar(w, v, !plain_word(v));
}

static void dy_u64(struct dy *w, const char *k, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	dy_scalar(w, k, false);
	dy_scalar(w, buf, false);
}

static void dy_collection(struct dy *w, bool seq, bool start, bool flow)
{
	yaml_event_t ev;

	if (seq && start)
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, flow
			? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
	else if (start)
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, flow
			? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
	else if (seq)
		yaml_sequence_end_event_initialize(&ev);
	else
		yaml_mapping_end_event_initialize(&ev);
	dy_emit(w, &ev);
}

/* key: [ids of side s that belong to the row] */
static void dy_ids(struct dy *w, const struct diff *d, const struct diff_row *r,
		   const char *key, int s, bool unchanged_part)
{
	const struct diff_side *sd = &d->side[s];

	dy_scalar(w, key, false);
	dy_collection(w, true, true, true);
	for (size_t i = r->g->head[s]; i != SIZE_MAX; i = sd->items[i].next) {
		const struct diff_item *di = &sd->items[i];

		if (unchanged_part ? di->changed < di->it->count : di->changed > 0)
			dy_scalar(w, di->it->id, !plain_word(di->it->id));
	}
	dy_collection(w, true, false, true);
}

static void dy_row(struct dy *w, const struct diff *d, const struct diff_row *r)
{
	const struct msr_report_item *it = r->rep->it;
	char buf[24];

	dy_collection(w, false, true, false);
	dy_str(w, "status", status_names[r->status]);
	dy_str(w, "kind", it->kind);
	dy_scalar(w, "fingerprint", false);
	dy_scalar(w, it->fingerprint, true);
	dy_u64(w, "count", r->count);
	if (it->strand >= 0)
		dy_u64(w, "strand", (uint64_t)it->strand);
	if (it->has_iseq)
		dy_u64(w, "iseq", it->iseq);
	if (it->has_pa) {
		snprintf(buf, sizeof(buf), "0x%010llx", (unsigned long long)it->pa);
		dy_scalar(w, "pa", false);
		dy_scalar(w, buf, true);
	}
	if (r->status != DS_FIXED)
		dy_ids(w, d, r, "new_ids", 1, r->status == DS_UNCHANGED);
	if (r->status != DS_NEW)
		dy_ids(w, d, r, "base_ids", 0, r->status == DS_UNCHANGED);
	dy_scalar(w, "message", false);
	dy_scalar(w, it->message, true);
	dy_collection(w, false, false, false);
}

static void dy_document(struct dy *w, const struct diff *d)
{
	yaml_event_t ev;

	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	dy_emit(w, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0);
	dy_emit(w, &ev);
	dy_collection(w, false, true, false);
	dy_scalar(w, "tool", false);
	dy_collection(w, false, true, false);
	dy_str(w, "name", "msync-replay");
	dy_scalar(w, "version", false);
	dy_scalar(w, MSR_VERSION, true);
	dy_collection(w, false, false, false);
	for (int s = 0; s < 2; s++) {
		dy_scalar(w, s ? "new" : "base", false);
		dy_collection(w, false, true, false);
		dy_scalar(w, "path", false);
		dy_scalar(w, d->side[s].path, true);
		dy_u64(w, "violations", msr_report_doc_violations(d->side[s].doc));
		dy_u64(w, "listed", msr_report_doc_listed(d->side[s].doc));
		dy_scalar(w, "complete", false);
		dy_scalar(w, msr_report_doc_complete(d->side[s].doc) ? "true" : "false",
			  false);
		dy_collection(w, false, false, false);
	}
	dy_scalar(w, "summary", false);
	dy_collection(w, false, true, false);
	for (int st = 0; st < DS_COUNT; st++)
		dy_u64(w, status_names[st], d->total[st]);
	dy_collection(w, false, false, false);
	dy_scalar(w, "violations", false);
	dy_collection(w, true, true, false);
	for (size_t i = 0; i < d->nrows; i++)
		dy_row(w, d, &d->rows[i]);
	dy_collection(w, true, false, false);
	dy_collection(w, false, false, false);
	yaml_document_end_event_initialize(&ev, 0);
	dy_emit(w, &ev);
	yaml_stream_end_event_initialize(&ev);
	dy_emit(w, &ev);
}

static bool print_yaml(const struct diff *d, FILE *f)
{
	struct dy w;

	memset(&w, 0, sizeof(w));
	if (!yaml_emitter_initialize(&w.em))
		return false;
	yaml_emitter_set_output_file(&w.em, f);
	yaml_emitter_set_width(&w.em, -1);
	yaml_emitter_set_unicode(&w.em, 1);
	dy_document(&w, d);
	if (!w.failed && !yaml_emitter_flush(&w.em))
		w.failed = true;
	yaml_emitter_delete(&w.em);
	return !w.failed;
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                               */
/* ------------------------------------------------------------------------ */

/* Warnings that make the comparison less than complete. */
static void warn_partial(const struct diff *d)
{
	for (int s = 0; s < 2; s++) {
		const struct msr_report_doc *doc = d->side[s].doc;
		uint64_t v = msr_report_doc_violations(doc), l = msr_report_doc_listed(doc);

		if (!msr_report_doc_complete(doc))
			fprintf(stderr, "msync-replay diff: warning: %s is a partial report "
				"(complete: false): %s\n", d->side[s].path,
				s ? "violations past its end show as fixed"
				  : "violations past its end show as new");
		if (l < v)
			fprintf(stderr, "msync-replay diff: warning: %s lists %llu of %llu "
				"violations (max_violations): the rest are not compared\n",
				d->side[s].path, (unsigned long long)l, (unsigned long long)v);
	}
}

static void diff_free(struct diff *d)
{
	for (int s = 0; s < 2; s++) {
		free(d->side[s].items);
		msr_report_doc_free(d->side[s].doc);
	}
	free(d->groups);
	free(d->slots);
	free(d->rows);
}

static const struct option diff_longopts[] = {
	{"format", required_argument, NULL, 'f'},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* Returns -1 to go on, or the exit code. */
static int diff_args(int argc, char **argv, bool *yaml, bool *quiet)
{
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:qh", diff_longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "table") && strcmp(optarg, "yaml"))
				return msr_cli_usage_error("diff", "--format=%s: expected "
							   "table or yaml", optarg);
			*yaml = !strcmp(optarg, "yaml");
			break;
		case 'q': *quiet = true; break;
		case 'h': fputs(diff_help, stdout); return MSR_EXIT_CLEAN;
		case 'V': printf("msync-replay %s\n", MSR_VERSION); return MSR_EXIT_CLEAN;
		case ':':
			return msr_cli_usage_error("diff", "option %s needs a value",
						   argv[optind - 1]);
		default:
			return msr_cli_usage_error("diff", "unknown option %s",
						   argv[optind - 1]);
		}
	}
	if (argc - optind < 2)
		return msr_cli_usage_error("diff", "expected two reports: BASE.yaml NEW.yaml");
	if (argc - optind > 2)
		return msr_cli_usage_error("diff", "unexpected argument '%s'",
					   argv[optind + 2]);
	if (!strcmp(argv[optind], "-") && !strcmp(argv[optind + 1], "-"))
		return msr_cli_usage_error("diff", "only one of the reports can be "
					   "standard input");
	return -1;
}

int msr_cmd_diff(int argc, char **argv)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct diff d;
	bool yaml = false, quiet = false;
	int code;

	memset(&d, 0, sizeof(d));
	code = diff_args(argc, argv, &yaml, &quiet);
	if (code >= 0)
		return code;
	d.side[0].path = argv[optind];
	d.side[1].path = argv[optind + 1];
	for (int s = 0; s < 2; s++)
		if (msr_report_doc_load(d.side[s].path, &d.side[s].doc, &err)) {
			msr_cli_print_error(&err);
			code = MSR_EXIT_UNUSABLE;
			goto out;
		}
	if (!diff_match(&d)) {
		fprintf(stderr, "msync-replay diff: out of memory\n");
		code = MSR_EXIT_UNUSABLE;
		goto out;
	}
	warn_partial(&d);
	if (!quiet && yaml && !print_yaml(&d, stdout)) {
		fprintf(stderr, "msync-replay diff: cannot write the YAML output\n");
		code = MSR_EXIT_UNUSABLE;
		goto out;
	}
	if (!quiet && !yaml)
		print_text(&d, stdout);
	if (fflush(stdout)) {
		fprintf(stderr, "msync-replay diff: cannot write the output\n");
		code = MSR_EXIT_UNUSABLE;
		goto out;
	}
	code = d.total[DS_NEW] ? MSR_EXIT_VIOLATIONS : MSR_EXIT_CLEAN;
out:
	diff_free(&d);
	return code;
}
