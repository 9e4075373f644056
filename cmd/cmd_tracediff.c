/*
 * cmd_tracediff.c - msync-replay tracediff: where do two dumps of the same
 * test part ways?
 *
 * Each strand's own event subsequence (events carrying that tnum; register
 * deltas count as the strand of their header tid) is compared position by
 * position between trace A and trace B; events without a strand (EVICT,
 * EVICT_INV, MEM_SLAM, DMA_ST, MEM_CHECK, ...) form one more stream. Both
 * inputs are read once, in lock step; an event waits in its stream's queue
 * only until the other side's event at the same position arrives, so memory
 * is bounded by how far the two interleavings drift apart (--window), never
 * by trace length. This file must never load a trace whole or reorder
 * events within a stream.
 */
#include "cmd-trace-internal.h"
#include "utf8.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define TD_CTX 3 /* events of context before and after a divergence */

static const char tracediff_help[] =
	"usage: msync-replay tracediff [options] A B\n"
	"\n"
	"Compare two traces of the same test event by event, per strand: the\n"
	"k-th event of strand t in A is compared with the k-th event of strand t\n"
	"in B. Events without a strand (EVICT, EVICT_INV, MEM_SLAM, DMA_ST,\n"
	"MEM_CHECK) form one more stream, 'global'. For each stream the first\n"
	"difference is printed with a few events of context (stream position,\n"
	"event index in each trace, canonical text from both sides); streams\n"
	"that agree are reported equal. Timestamps are ignored unless --ts.\n"
	"\n"
	"options:\n"
	"  --ts               also compare ts fields\n"
	"  --format FMT       text (default) or yaml\n"
	"  --window N         events of one stream that may wait for their\n"
	"                     counterpart in the other trace (default 1048576)\n"
	"  -o, --output FILE  write the result to FILE instead of standard output\n"
	"  --cores N          cores of the system (default 8): cid must be < N\n"
	"  --threads N        threads per core (default 8): tnum must be < cores*N\n"
	MSR_CLI_SINGLE_THREAD_HELP
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 the traces are equal, 1 they differ, 2 unusable input\n"
	"or usage error.\n";

enum { OPT_TS = MSR_OPT_FIRST_LOCAL, OPT_FORMAT, OPT_WINDOW };

struct td_opts {
	const char *path[2];
	const char *out;
	bool ts;
	bool yaml;
	uint64_t window;
	unsigned cores, threads;
	bool single_thread;
};

/* A ring of events of one side waiting for the other side. */
struct td_queue {
	struct msr_event *buf;
	size_t cap, head, len;
	int side;
};

struct td_stream {
	uint64_t count[2];   /* events of this stream seen per side */
	struct td_queue q;
	/* the last TD_CTX matched pairs before the divergence (ring) */
	struct msr_event before[TD_CTX][2];
	unsigned nbefore;
	bool diverged;
	uint64_t pos;        /* stream position of the first difference */
	bool have[2];        /* side has an event at `pos` */
	struct msr_event at[2];
	struct msr_event after[2][TD_CTX];
	unsigned nafter[2];
};

struct td {
	struct td_opts *o;
	unsigned nstreams;   /* strands + 1 (the global stream, last) */
	struct td_stream *st;
	int rd_tid[2];
};

static int parse_args(int argc, char **argv, struct td_opts *o)
{
	static const struct option longopts[] = {
		{"ts", no_argument, NULL, OPT_TS},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"window", required_argument, NULL, OPT_WINDOW},
		{"output", required_argument, NULL, 'o'},
		{"cores", required_argument, NULL, MSR_OPT_CORES},
		{"threads", required_argument, NULL, MSR_OPT_THREADS},
		{"single-thread", no_argument, NULL, MSR_OPT_SINGLE_THREAD},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(tracediff_help, stdout);
			return 0;
		case 'o': o->out = optarg; break;
		case OPT_TS: o->ts = true; break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "yaml"))
				o->yaml = true;
			else if (strcmp(optarg, "text"))
				return msr_cli_usage_error("tracediff", "bad --format=%s: "
							   "expected text or yaml", optarg);
			break;
		case OPT_WINDOW:
			if (!msr_cli_parse_u64(optarg, &o->window) || !o->window ||
			    o->window > (1u << 30))
				return msr_cli_usage_error("tracediff", "bad --window=%s: "
							   "expected 1 to 1073741824", optarg);
			break;
		case MSR_OPT_CORES:
			if (!msr_cli_trace_size("tracediff", "--cores", optarg, 32, &o->cores))
				return MSR_EXIT_UNUSABLE;
			break;
		case MSR_OPT_THREADS:
			if (!msr_cli_trace_size("tracediff", "--threads", optarg, 256,
						&o->threads))
				return MSR_EXIT_UNUSABLE;
			break;
		case MSR_OPT_SINGLE_THREAD: o->single_thread = true; break;
		case ':':
			return msr_cli_usage_error("tracediff", "option %s needs a value",
						   argv[optind - 1]);
		default:
			return msr_cli_usage_error("tracediff", "unknown option %s",
						   argv[optind - 1]);
		}
	}
	if (optind + 2 != argc)
		return msr_cli_usage_error("tracediff", optind + 2 > argc
					   ? "expected two traces A and B" : "too many arguments");
	o->path[0] = argv[optind];
	o->path[1] = argv[optind + 1];
	if (!strcmp(o->path[0], "-") && !strcmp(o->path[1], "-"))
		return msr_cli_usage_error("tracediff", "only one of A and B can be "
					   "standard input");
	return -1;
}

/* Which stream an event belongs to; updates the side's register-delta tid. */
static unsigned stream_of(struct td *td, int side, const struct msr_event *ev)
{
	unsigned global = td->nstreams - 1;

	if (ev->code == MSR_REGDELTA || ev->code == MSR_REGDELTA_END) {
		if (ev->code == MSR_REGDELTA && (ev->flags & MSR_EVF_RD_HEADER))
			td->rd_tid[side] = ev->rd_tid;
		return td->rd_tid[side] >= 0 && (unsigned)td->rd_tid[side] < global
			       ? (unsigned)td->rd_tid[side] : global;
	}
	if ((msr_event_has(ev) & MSR_EVHAS_TNUM) && ev->tnum < global)
		return ev->tnum;
	return global;
}

/* Equal as messages: same encoded bytes, ts zeroed unless --ts. */
static bool same_event(const struct td *td, const struct msr_event *a,
		       const struct msr_event *b)
{
	uint8_t ba[MSR_EVENT_BIN_MAX], bb[MSR_EVENT_BIN_MAX];
	size_t na, nb;

	if (a->code != b->code)
		return false;
	if (a->code == MSR_REGDELTA || a->code == MSR_REGDELTA_END) {
		char ta[MSR_EVENT_TEXT_MAX], tb[MSR_EVENT_TEXT_MAX];

		msr_event_format_text(a, ta, sizeof(ta));
		msr_event_format_text(b, tb, sizeof(tb));
		return !strcmp(ta, tb);
	}
	na = msr_event_encode_bin(a, ba);
	nb = msr_event_encode_bin(b, bb);
	if (na != nb)
		return false;
	if (!td->o->ts) {
		struct msr_event ca = *a, cb = *b;
		const struct msr_msgdef *def = msr_msgdef_get(a->code);

		ca.ts = cb.ts = 0;
		if (def && !def->memory && def->other_ts_at) {
			memset(ca.bytes + def->other_ts_at - 1, 0, 4);
			memset(cb.bytes + def->other_ts_at - 1, 0, 4);
		}
		na = msr_event_encode_bin(&ca, ba);
		nb = msr_event_encode_bin(&cb, bb);
	}
	return !memcmp(ba, bb, na);
}

static int queue_push(struct td_queue *q, const struct msr_event *ev, uint64_t limit)
{
	if (q->len == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 64;
		struct msr_event *nb;

		if (q->len >= limit)
			return MSR_E_NOMEM;
		nb = malloc(ncap * sizeof(*nb));
		if (!nb)
			return MSR_E_NOMEM;
		for (size_t i = 0; i < q->len; i++)
			nb[i] = q->buf[(q->head + i) & (q->cap - 1)];
		free(q->buf);
		q->buf = nb;
		q->cap = ncap;
		q->head = 0;
	}
	if (q->len >= limit)
		return MSR_E_NOMEM;
	q->buf[(q->head + q->len) & (q->cap - 1)] = *ev;
	q->len++;
	return MSR_OK;
}

static const struct msr_event *queue_pop(struct td_queue *q)
{
	const struct msr_event *ev = &q->buf[q->head];

	q->head = (q->head + 1) & (q->cap - 1);
	q->len--;
	return ev;
}

/* Record the first difference of a stream at position `pos`; `ev[side]`
 * may be NULL when that side has no event there (its trace ended). The
 * rest of the queue becomes after-context of its side. */
static void diverge(struct td_stream *s, uint64_t pos, const struct msr_event *a,
		    const struct msr_event *b)
{
	const struct msr_event *ev[2] = {a, b};

	s->diverged = true;
	s->pos = pos;
	for (int i = 0; i < 2; i++) {
		s->have[i] = ev[i] != NULL;
		if (ev[i])
			s->at[i] = *ev[i];
	}
	while (s->q.len) {
		int side = s->q.side;
		const struct msr_event *e = queue_pop(&s->q);

		if (s->nafter[side] < TD_CTX)
			s->after[side][s->nafter[side]++] = *e;
	}
}

static int feed(struct td *td, int side, const struct msr_event *ev, struct msr_error *err)
{
	unsigned si = stream_of(td, side, ev);
	struct td_stream *s = &td->st[si];
	uint64_t pos = s->count[side]++;

	if (s->diverged) {
		if (pos > s->pos && s->nafter[side] < TD_CTX)
			s->after[side][s->nafter[side]++] = *ev;
		return MSR_OK;
	}
	if (s->q.len && s->q.side != side) {
		struct msr_event other = *queue_pop(&s->q);
		const struct msr_event *a = side ? &other : ev, *b = side ? ev : &other;

		if (same_event(td, a, b)) {
			unsigned k = s->nbefore++ % TD_CTX;

			s->before[k][0] = *a;
			s->before[k][1] = *b;
		} else {
			diverge(s, pos, a, b);
		}
		return MSR_OK;
	}
	s->q.side = side;
	if (queue_push(&s->q, ev, td->o->window)) {
		char where[160];

		snprintf(where, sizeof(where), "%s event=%llu", td->o->path[side],
			 (unsigned long long)ev->index);
		if (si + 1 == td->nstreams)
			return msr_error_set(err, MSR_E_NOMEM, "tracediff", where,
					     "more than window=%llu events without a strand "
					     "wait for their counterpart in the other trace; "
					     "raise --window", (unsigned long long)td->o->window);
		return msr_error_set(err, MSR_E_NOMEM, "tracediff", where,
				     "more than window=%llu events of strand=%u wait for "
				     "their counterpart in the other trace; raise --window",
				     (unsigned long long)td->o->window, si);
	}
	return MSR_OK;
}

/* Both traces ended: a stream with events left in its queue differs at
 * the first of them (the other side has nothing there). */
static void finish(struct td *td)
{
	for (unsigned i = 0; i < td->nstreams; i++) {
		struct td_stream *s = &td->st[i];

		if (s->diverged || !s->q.len)
			continue;
		int side = s->q.side;
		struct msr_event first = *queue_pop(&s->q);

		diverge(s, s->count[1 - side], side ? NULL : &first, side ? &first : NULL);
	}
}

static int compare(struct td *td, struct msr_error *err)
{
	struct msr_trace_opts topts;
	struct msr_trace_reader *r[2] = {NULL, NULL};
	struct msr_event ev;
	bool done[2] = {false, false};
	int rc = MSR_OK;

	msr_trace_opts_default(&topts);
	topts.cores = td->o->cores;
	topts.strands = td->o->cores * td->o->threads;
	for (int i = 0; i < 2 && !rc; i++) {
		rc = msr_trace_reader_open(td->o->path[i], &topts, &r[i], err);
		if (!rc)
			msr_cli_reader_ahead(r[i], td->o->single_thread);
	}
	while (!rc && (!done[0] || !done[1])) {
		for (int i = 0; i < 2 && !rc; i++) {
			if (done[i])
				continue;
			rc = msr_trace_reader_next(r[i], &ev, err);
			if (rc == MSR_END) {
				done[i] = true;
				rc = MSR_OK;
			} else if (rc == MSR_OK) {
				rc = feed(td, i, &ev, err);
			}
		}
	}
	if (!rc)
		finish(td);
	msr_trace_reader_close(r[0]);
	msr_trace_reader_close(r[1]);
	return rc;
}

static void stream_name(const struct td *td, unsigned i, char *buf, size_t n)
{
	if (i + 1 == td->nstreams)
		snprintf(buf, n, "global");
	else
		snprintf(buf, n, "strand %u", i);
}

static void text_line(FILE *f, const char *mark, uint64_t pos, const char *side,
		      const struct msr_event *ev)
{
	char t[MSR_EVENT_TEXT_MAX];

	if (!ev) {
		fprintf(f, "  %s %8llu  %s          -  (end of trace)\n", mark,
			(unsigned long long)pos, side);
		return;
	}
	msr_event_format_text(ev, t, sizeof(t));
	fprintf(f, "  %s %8llu  %s %10llu  %s\n", mark, (unsigned long long)pos, side,
		(unsigned long long)ev->index, t);
}

static void print_text(const struct td *td, FILE *f)
{
	char name[32];

	for (unsigned i = 0; i < td->nstreams; i++) {
		const struct td_stream *s = &td->st[i];

		if (!s->count[0] && !s->count[1])
			continue;
		stream_name(td, i, name, sizeof(name));
		if (!s->diverged) {
			fprintf(f, "%s: equal (%llu events)\n", name,
				(unsigned long long)s->count[0]);
			continue;
		}
		fprintf(f, "%s: differs at strand event %llu (A event %s%llu, B event %s%llu; "
			"A has %llu events, B %llu)\n", name, (unsigned long long)s->pos,
			s->have[0] ? "" : "none ", s->have[0] ? (unsigned long long)s->at[0].index : 0ull,
			s->have[1] ? "" : "none ", s->have[1] ? (unsigned long long)s->at[1].index : 0ull,
			(unsigned long long)s->count[0], (unsigned long long)s->count[1]);
		unsigned nb = s->nbefore < TD_CTX ? s->nbefore : TD_CTX;
		for (unsigned k = 0; k < nb; k++) {
			const struct msr_event (*p)[2] = &s->before[(s->nbefore - nb + k) % TD_CTX];
			uint64_t pos = s->pos - nb + k;

			text_line(f, " ", pos, "A", &(*p)[0]);
			text_line(f, " ", pos, "B", &(*p)[1]);
		}
		text_line(f, ">", s->pos, "A", s->have[0] ? &s->at[0] : NULL);
		text_line(f, ">", s->pos, "B", s->have[1] ? &s->at[1] : NULL);
		for (unsigned k = 0; k < TD_CTX; k++)
			for (int side = 0; side < 2; side++)
				if (k < s->nafter[side])
					text_line(f, " ", s->pos + 1 + k, side ? "B" : "A",
						  &s->after[side][k]);
	}
}

/* ---- YAML ---------------------------------------------------------------- */

static int y_scalar(yaml_emitter_t *em, const char *v)
{
	yaml_event_t e;

	return msr_utf8_yaml_scalar(&e, v, true, true, YAML_ANY_SCALAR_STYLE) &&
	       yaml_emitter_emit(em, &e);
}

static int y_kv(yaml_emitter_t *em, const char *k, const char *v)
{
	return y_scalar(em, k) && y_scalar(em, v);
}

static int y_ku(yaml_emitter_t *em, const char *k, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", v);
	return y_kv(em, k, buf);
}

static int y_begin(yaml_emitter_t *em, bool map)
{
	yaml_event_t e;

	if (map)
		yaml_mapping_start_event_initialize(&e, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	else
		yaml_sequence_start_event_initialize(&e, NULL, NULL, 1,
						     YAML_BLOCK_SEQUENCE_STYLE);
	return yaml_emitter_emit(em, &e);
}

static int y_end(yaml_emitter_t *em, bool map)
{
	yaml_event_t e;

	if (map)
		yaml_mapping_end_event_initialize(&e);
	else
		yaml_sequence_end_event_initialize(&e);
	return yaml_emitter_emit(em, &e);
}

static int y_side(yaml_emitter_t *em, const char *k, const struct msr_event *ev)
{
	char t[MSR_EVENT_TEXT_MAX];

	if (!y_scalar(em, k))
		return 0;
	if (!ev)
		return y_scalar(em, "end");
	msr_event_format_text(ev, t, sizeof(t));
	return y_begin(em, true) && y_ku(em, "event", ev->index) && y_kv(em, "text", t) &&
	       y_end(em, true);
}

static int y_ctx(yaml_emitter_t *em, uint64_t pos, const struct msr_event *a,
		 const struct msr_event *b, bool has_a, bool has_b)
{
	int ok = y_begin(em, true) && y_ku(em, "position", pos);

	if (ok && has_a)
		ok = y_side(em, "a", a);
	if (ok && has_b)
		ok = y_side(em, "b", b);
	return ok && y_end(em, true);
}

static int y_diff(yaml_emitter_t *em, const struct td_stream *s)
{
	unsigned nb = s->nbefore < TD_CTX ? s->nbefore : TD_CTX;
	unsigned na = s->nafter[0] > s->nafter[1] ? s->nafter[0] : s->nafter[1];
	int ok = y_scalar(em, "first_difference") && y_begin(em, true) &&
		 y_ku(em, "position", s->pos) &&
		 y_side(em, "a", s->have[0] ? &s->at[0] : NULL) &&
		 y_side(em, "b", s->have[1] ? &s->at[1] : NULL) &&
		 y_scalar(em, "context") && y_begin(em, false);

	for (unsigned k = 0; ok && k < nb; k++) {
		const struct msr_event *p = s->before[(s->nbefore - nb + k) % TD_CTX];

		ok = y_ctx(em, s->pos - nb + k, &p[0], &p[1], true, true);
	}
	for (unsigned k = 0; ok && k < na; k++)
		ok = y_ctx(em, s->pos + 1 + k, &s->after[0][k], &s->after[1][k],
			   k < s->nafter[0], k < s->nafter[1]);
	return ok && y_end(em, false) && y_end(em, true);
}

static int y_write(void *ctx, unsigned char *buf, size_t size)
{
	return fwrite(buf, 1, size, ctx) == size;
}

static bool print_yaml(const struct td *td, FILE *f, bool differ)
{
	yaml_emitter_t em;
	yaml_event_t e;
	char name[32];
	int ok;

	if (!yaml_emitter_initialize(&em))
		return false;
	yaml_emitter_set_output(&em, y_write, f);
	yaml_emitter_set_unicode(&em, 1);
	yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING);
	ok = yaml_emitter_emit(&em, &e);
	yaml_document_start_event_initialize(&e, NULL, NULL, NULL, 0);
	ok = ok && yaml_emitter_emit(&em, &e) && y_begin(&em, true) &&
	     y_kv(&em, "a", td->o->path[0]) && y_kv(&em, "b", td->o->path[1]) &&
	     y_kv(&em, "compare_ts", td->o->ts ? "true" : "false") &&
	     y_kv(&em, "equal", differ ? "false" : "true") && y_scalar(&em, "streams") &&
	     y_begin(&em, false);
	for (unsigned i = 0; ok && i < td->nstreams; i++) {
		const struct td_stream *s = &td->st[i];

		if (!s->count[0] && !s->count[1])
			continue;
		stream_name(td, i, name, sizeof(name));
		ok = y_begin(&em, true) &&
		     (i + 1 == td->nstreams ? y_kv(&em, "stream", "global")
					    : y_ku(&em, "strand", i)) &&
		     y_ku(&em, "events_a", s->count[0]) && y_ku(&em, "events_b", s->count[1]) &&
		     y_kv(&em, "equal", s->diverged ? "false" : "true") &&
		     (!s->diverged || y_diff(&em, s)) && y_end(&em, true);
	}
	ok = ok && y_end(&em, false) && y_end(&em, true);
	yaml_document_end_event_initialize(&e, 1);
	ok = ok && yaml_emitter_emit(&em, &e);
	yaml_stream_end_event_initialize(&e);
	ok = ok && yaml_emitter_emit(&em, &e);
	yaml_emitter_delete(&em);
	return ok;
}

static int run(struct td_opts *o)
{
	struct td td = {.o = o, .rd_tid = {-1, -1}};
	struct msr_error err = MSR_ERROR_INIT;
	FILE *f = stdout;
	bool differ = false;
	int rc, ex = MSR_EXIT_UNUSABLE;

	if (o->cores * o->threads > 256)
		return msr_cli_usage_error("tracediff", "--cores %u --threads %u make more "
					   "than 256 strands", o->cores, o->threads);
	td.nstreams = o->cores * o->threads + 1;
	td.st = calloc(td.nstreams, sizeof(*td.st));
	if (!td.st) {
		fprintf(stderr, "msync-replay: tracediff: out of memory\n");
		return MSR_EXIT_UNUSABLE;
	}
	rc = compare(&td, &err);
	if (rc < 0) {
		msr_cli_print_error(&err);
		goto out;
	}
	for (unsigned i = 0; i < td.nstreams; i++)
		differ |= td.st[i].diverged;
	if (strcmp(o->out, "-") && !(f = fopen(o->out, "w"))) {
		fprintf(stderr, "msync-replay: %s: cannot open for writing\n", o->out);
		goto out;
	}
	if (o->yaml) {
		if (!print_yaml(&td, f, differ)) {
			fprintf(stderr, "msync-replay: tracediff: cannot write the yaml result\n");
			goto out;
		}
	} else {
		print_text(&td, f);
	}
	if (fflush(f)) {
		fprintf(stderr, "msync-replay: %s: write failed\n", o->out);
		goto out;
	}
	ex = differ ? MSR_EXIT_VIOLATIONS : MSR_EXIT_CLEAN;
out:
	if (f && f != stdout)
		fclose(f);
	for (unsigned i = 0; i < td.nstreams; i++)
		free(td.st[i].q.buf);
	free(td.st);
	return ex;
}

int msr_cmd_tracediff(int argc, char **argv)
{
	struct td_opts o = {.out = "-", .window = 1u << 20, .cores = 8, .threads = 8};
	int rc = parse_args(argc, argv, &o);

	return rc >= 0 ? rc : run(&o);
}
