/*
 * report_read.c - reads a YAML violation report back (for msync-replay
 * diff): the violations' id, kind, fingerprint, strand, iseq, pa, message
 * and count, and the summary's complete / violations / listed.
 *
 * It streams libyaml parser events and keeps only those fields, so a large
 * report with long context sections costs memory for the kept fields only.
 * Every error names file:line:column (1-based) and the field. It never
 * writes anything, never exits and keeps no global state.
 */
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define RD_WHERE_MAX 160

/* An item while parsing: strings are offsets into the arena (which moves). */
struct rd_item {
	struct msr_report_item it;
	size_t id_off, kind_off, msg_off;
};

struct msr_report_doc {
	struct rd_item *items;
	size_t n, cap;
	char *arena;
	size_t used, acap;
	bool complete;
	bool has_violations, has_listed;
	uint64_t violations, listed;
};

struct rd {
	yaml_parser_t p;
	const char *name;
	struct msr_report_doc *d;
	struct msr_error *err;
};

/* ------------------------------------------------------------------------ */
/* Errors and events                                                         */
/* ------------------------------------------------------------------------ */

static int rd_fail(struct rd *r, yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rd_fail(struct rd *r, yaml_mark_t m, const char *fmt, ...)
{
	char where[RD_WHERE_MAX], msg[400];
	va_list ap;

	snprintf(where, sizeof(where), "%s:%zu:%zu", r->name, m.line + 1,
		 m.column + 1);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return msr_error_set(r->err, MSR_E_FORMAT, "report", where, "%s", msg);
}

static int rd_next(struct rd *r, yaml_event_t *ev)
{
	char where[RD_WHERE_MAX];

	if (yaml_parser_parse(&r->p, ev))
		return MSR_OK;
	if (r->p.error != YAML_READER_ERROR)
		return rd_fail(r, r->p.problem_mark, "not valid YAML: %s%s%s",
			       r->p.problem ? r->p.problem : "parser error",
			       r->p.context ? " " : "",
			       r->p.context ? r->p.context : "");
	/* the reader knows only a byte offset (bad encoding or a read error) */
	snprintf(where, sizeof(where), "%s offset=%zu", r->name, r->p.problem_offset);
	if (r->p.problem && !strcmp(r->p.problem, "input error"))
		return msr_error_set(r->err, MSR_E_IO, "report", where,
				     "cannot read the report: %s", strerror(errno));
	return msr_error_set(r->err, MSR_E_FORMAT, "report", where,
			     "not valid YAML: %s", r->p.problem ? r->p.problem
								: "reader error");
}

static const char *ev_what(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT: return "a scalar";
	case YAML_SEQUENCE_START_EVENT: return "a list";
	case YAML_MAPPING_START_EVENT: return "a mapping";
	case YAML_ALIAS_EVENT: return "an alias";
	default: return "the end of a collection";
	}
}

static const char *ev_text(const yaml_event_t *ev)
{
	return (const char *)ev->data.scalar.value;
}

/* Skip the node that starts with `ev` (already taken). */
static int rd_skip(struct rd *r, yaml_event_t *ev)
{
	unsigned depth = 0;
	int rc = MSR_OK;

	if (ev->type != YAML_SEQUENCE_START_EVENT && ev->type != YAML_MAPPING_START_EVENT)
		return MSR_OK;
	depth = 1;
	while (depth) {
		yaml_event_t e;

		if ((rc = rd_next(r, &e)))
			return rc;
		if (e.type == YAML_SEQUENCE_START_EVENT || e.type == YAML_MAPPING_START_EVENT)
			depth++;
		else if (e.type == YAML_SEQUENCE_END_EVENT || e.type == YAML_MAPPING_END_EVENT)
			depth--;
		yaml_event_delete(&e);
	}
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Scalars                                                                   */
/* ------------------------------------------------------------------------ */

static bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

/* 16 hex digits (either case) -> lowercase text and number. */
static bool parse_fingerprint(const char *s, char out[17], uint64_t *fp)
{
	if (!msr_fingerprint_normalize(s, out))
		return false;
	*fp = strtoull(out, NULL, 16);
	return true;
}

/* Copy a string into the arena; returns its offset or SIZE_MAX. */
static size_t arena_put(struct msr_report_doc *d, const char *s, size_t n)
{
	size_t off;

	if (d->used + n + 1 > d->acap) {
		size_t ncap = d->acap ? d->acap : 4096;
		char *grown;

		while (d->used + n + 1 > ncap)
			ncap *= 2;
		grown = realloc(d->arena, ncap);
		if (!grown)
			return SIZE_MAX;
		d->arena = grown;
		d->acap = ncap;
	}
	off = d->used;
	memcpy(d->arena + off, s, n);
	d->arena[off + n] = '\0';
	d->used += n + 1;
	return off;
}

/* ------------------------------------------------------------------------ */
/* Violations                                                                */
/* ------------------------------------------------------------------------ */

enum { F_ID, F_KIND, F_FP, F_STRAND, F_ISEQ, F_PA, F_MSG, F_COUNT, F_N };

static const char *const field_names[F_N] = {
	"id", "kind", "fingerprint", "strand", "iseq", "pa", "message", "count",
};

static int field_index(const char *k)
{
	for (int i = 0; i < F_N; i++)
		if (!strcmp(k, field_names[i]))
			return i;
	return -1;
}

/* Store one field's scalar value `s` (at mark m) into the item. */
static int set_field(struct rd *r, struct rd_item *ri, size_t idx, int f,
		     const char *s, size_t len, yaml_mark_t m)
{
	struct msr_report_item *it = &ri->it;
	uint64_t v;
	size_t off;

	switch (f) {
	case F_FP:
		if (!parse_fingerprint(s, it->fingerprint, &it->fp))
			return rd_fail(r, m, "violations[%zu].fingerprint='%.40s': "
				       "expected 16 hex digits", idx, s);
		return MSR_OK;
	case F_STRAND:
		if (!parse_u64(s, &v) || v > 65535) {
			if (!strcmp(s, "-1")) {
				it->strand = -1;
				return MSR_OK;
			}
			return rd_fail(r, m, "violations[%zu].strand='%.40s': "
				       "expected a strand number", idx, s);
		}
		it->strand = (int)v;
		return MSR_OK;
	case F_ISEQ:
	case F_PA:
	case F_COUNT:
		if (!parse_u64(s, &v) || (f == F_COUNT && !v))
			return rd_fail(r, m, "violations[%zu].%s='%.40s': expected %s",
				       idx, field_names[f], s,
				       f == F_COUNT ? "a count of at least 1"
						    : "an unsigned number");
		if (f == F_ISEQ) {
			it->iseq = v;
			it->has_iseq = true;
		} else if (f == F_PA) {
			it->pa = v;
			it->has_pa = true;
		} else {
			it->count = v;
		}
		return MSR_OK;
	default:
		break;
	}
	if ((f == F_ID || f == F_KIND) && (!len || len > 64))
		return rd_fail(r, m, "violations[%zu].%s: expected a name of 1 to 64 "
			       "characters, got %zu", idx, field_names[f], len);
	off = arena_put(r->d, s, len);
	if (off == SIZE_MAX)
		return msr_error_set(r->err, MSR_E_NOMEM, "report", r->name,
				     "out of memory");
	if (f == F_ID)
		ri->id_off = off;
	else if (f == F_KIND)
		ri->kind_off = off;
	else
		ri->msg_off = off;
	return MSR_OK;
}

static struct rd_item *new_item(struct msr_report_doc *d)
{
	struct rd_item *ri;

	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 64;
		struct rd_item *grown = realloc(d->items, ncap * sizeof(*grown));

		if (!grown)
			return NULL;
		d->items = grown;
		d->cap = ncap;
	}
	ri = &d->items[d->n];
	memset(ri, 0, sizeof(*ri));
	ri->it.strand = -1;
	ri->it.count = 1;
	ri->msg_off = SIZE_MAX;
	return ri;
}

/* One violation mapping; `start` is its MAPPING_START event. */
static int rd_violation(struct rd *r, const yaml_event_t *start, size_t idx)
{
	struct rd_item *ri = new_item(r->d);
	unsigned seen = 0;
	int rc = MSR_OK;

	if (!ri)
		return msr_error_set(r->err, MSR_E_NOMEM, "report", r->name,
				     "out of memory");
	ri->it.line = (unsigned)start->start_mark.line + 1;
	ri->it.column = (unsigned)start->start_mark.column + 1;
	for (;;) {
		yaml_event_t k, v;
		int f;

		if ((rc = rd_next(r, &k)))
			return rc;
		if (k.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&k);
			break;
		}
		if (k.type != YAML_SCALAR_EVENT) {
			rc = rd_fail(r, k.start_mark, "violations[%zu]: expected a key, "
				     "got %s", idx, ev_what(&k));
			yaml_event_delete(&k);
			return rc;
		}
		f = field_index(ev_text(&k));
		if ((rc = rd_next(r, &v))) {
			yaml_event_delete(&k);
			return rc;
		}
		if (f >= 0 && (seen & (1u << f)))
			rc = rd_fail(r, k.start_mark, "violations[%zu]: duplicate key "
				     "'%s'", idx, field_names[f]);
		else if (f >= 0 && v.type != YAML_SCALAR_EVENT)
			rc = rd_fail(r, v.start_mark, "violations[%zu].%s: expected a "
				     "scalar, got %s", idx, field_names[f], ev_what(&v));
		else if (f >= 0)
			rc = set_field(r, ri, idx, f, ev_text(&v), v.data.scalar.length,
				       v.start_mark);
		else
			rc = rd_skip(r, &v);
		if (f >= 0)
			seen |= 1u << f;
		yaml_event_delete(&k);
		yaml_event_delete(&v);
		if (rc)
			return rc;
	}
	for (int f = F_ID; f <= F_FP; f++)
		if (!(seen & (1u << f)))
			return rd_fail(r, start->start_mark, "violations[%zu]: missing "
				       "key '%s'", idx, field_names[f]);
	r->d->n++;
	return MSR_OK;
}

static int rd_violations(struct rd *r)
{
	yaml_event_t ev;
	size_t idx = 0;
	int rc;

	if ((rc = rd_next(r, &ev)))
		return rc;
	if (ev.type == YAML_SCALAR_EVENT && ev.data.scalar.plain_implicit &&
	    (!ev.data.scalar.length || !strcmp(ev_text(&ev), "~") ||
	     !strcmp(ev_text(&ev), "null"))) {
		yaml_event_delete(&ev); /* `violations:` left empty: none */
		return MSR_OK;
	}
	if (ev.type != YAML_SEQUENCE_START_EVENT) {
		rc = rd_fail(r, ev.start_mark, "violations: expected a list, got %s",
			     ev_what(&ev));
		yaml_event_delete(&ev);
		return rc;
	}
	yaml_event_delete(&ev);
	for (;; idx++) {
		if ((rc = rd_next(r, &ev)))
			return rc;
		if (ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (ev.type != YAML_MAPPING_START_EVENT)
			rc = rd_fail(r, ev.start_mark, "violations[%zu]: expected a "
				     "mapping, got %s", idx, ev_what(&ev));
		else
			rc = rd_violation(r, &ev, idx);
		yaml_event_delete(&ev);
		if (rc)
			return rc;
	}
	yaml_event_delete(&ev);
	return MSR_OK;
}

/* ------------------------------------------------------------------------ */
/* Summary and document                                                      */
/* ------------------------------------------------------------------------ */

static int summary_field(struct rd *r, const char *key, const yaml_event_t *v)
{
	const char *s = ev_text(v);
	uint64_t n;

	if (!strcmp(key, "complete")) {
		if (!strcmp(s, "true"))
			r->d->complete = true;
		else if (!strcmp(s, "false"))
			r->d->complete = false;
		else
			return rd_fail(r, v->start_mark, "summary.complete='%.40s': "
				       "expected true or false", s);
		return MSR_OK;
	}
	if (strcmp(key, "violations") && strcmp(key, "listed"))
		return MSR_OK;
	if (!parse_u64(s, &n))
		return rd_fail(r, v->start_mark, "summary.%s='%.40s': expected an "
			       "unsigned number", key, s);
	if (!strcmp(key, "violations")) {
		r->d->violations = n;
		r->d->has_violations = true;
	} else {
		r->d->listed = n;
		r->d->has_listed = true;
	}
	return MSR_OK;
}

static int rd_summary(struct rd *r)
{
	yaml_event_t ev;
	int rc;

	if ((rc = rd_next(r, &ev)))
		return rc;
	if (ev.type != YAML_MAPPING_START_EVENT) {
		rc = rd_fail(r, ev.start_mark, "summary: expected a mapping, got %s",
			     ev_what(&ev));
		yaml_event_delete(&ev);
		return rc;
	}
	yaml_event_delete(&ev);
	for (;;) {
		yaml_event_t k, v;

		if ((rc = rd_next(r, &k)))
			return rc;
		if (k.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&k);
			return MSR_OK;
		}
		if ((rc = rd_next(r, &v))) {
			yaml_event_delete(&k);
			return rc;
		}
		if (k.type == YAML_SCALAR_EVENT && v.type == YAML_SCALAR_EVENT)
			rc = summary_field(r, ev_text(&k), &v);
		else
			rc = rd_skip(r, &v);
		if (!rc && k.type != YAML_SCALAR_EVENT)
			rc = rd_skip(r, &k);
		yaml_event_delete(&k);
		yaml_event_delete(&v);
		if (rc)
			return rc;
	}
}

/* The top-level mapping, after its MAPPING_START. */
static int rd_top(struct rd *r, yaml_mark_t top)
{
	bool seen_v = false, seen_s = false;
	int rc;

	for (;;) {
		yaml_event_t k, v;
		const char *key;

		if ((rc = rd_next(r, &k)))
			return rc;
		if (k.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&k);
			break;
		}
		if (k.type != YAML_SCALAR_EVENT) {
			rc = rd_fail(r, k.start_mark, "expected a top-level key, got %s",
				     ev_what(&k));
			yaml_event_delete(&k);
			return rc;
		}
		key = ev_text(&k);
		if ((!strcmp(key, "violations") && seen_v) ||
		    (!strcmp(key, "summary") && seen_s))
			rc = rd_fail(r, k.start_mark, "duplicate key '%s'", key);
		else if (!strcmp(key, "violations")) {
			seen_v = true;
			rc = rd_violations(r);
		} else if (!strcmp(key, "summary")) {
			seen_s = true;
			rc = rd_summary(r);
		} else if (!(rc = rd_next(r, &v))) {
			rc = rd_skip(r, &v);
			yaml_event_delete(&v);
		}
		yaml_event_delete(&k);
		if (rc)
			return rc;
	}
	if (!seen_v)
		return rd_fail(r, top, "no 'violations' list: not a msync-replay report");
	return MSR_OK;
}

static int rd_document(struct rd *r)
{
	yaml_event_t ev;
	int rc;

	if ((rc = rd_next(r, &ev)))
		return rc;
	yaml_event_delete(&ev); /* STREAM_START */
	if ((rc = rd_next(r, &ev)))
		return rc;
	if (ev.type != YAML_DOCUMENT_START_EVENT) {
		rc = rd_fail(r, ev.start_mark, "empty file: not a msync-replay report");
		yaml_event_delete(&ev);
		return rc;
	}
	yaml_event_delete(&ev);
	if ((rc = rd_next(r, &ev)))
		return rc;
	if (ev.type != YAML_MAPPING_START_EVENT) {
		rc = rd_fail(r, ev.start_mark, "expected a mapping at the top, got %s: "
			     "not a msync-replay report", ev_what(&ev));
		yaml_event_delete(&ev);
		return rc;
	}
	rc = rd_top(r, ev.start_mark);
	yaml_event_delete(&ev);
	if (rc || (rc = rd_next(r, &ev)))
		return rc;
	yaml_event_delete(&ev); /* DOCUMENT_END */
	if ((rc = rd_next(r, &ev)))
		return rc;
	if (ev.type != YAML_STREAM_END_EVENT)
		rc = rd_fail(r, ev.start_mark, "more than one YAML document: a report "
			     "is exactly one");
	yaml_event_delete(&ev);
	return rc;
}

/* Turn arena offsets into pointers once the arena no longer moves. */
static void fix_pointers(struct msr_report_doc *d)
{
	static const char empty[] = "";

	for (size_t i = 0; i < d->n; i++) {
		struct rd_item *ri = &d->items[i];

		ri->it.id = d->arena + ri->id_off;
		ri->it.kind = d->arena + ri->kind_off;
		ri->it.message = ri->msg_off == SIZE_MAX ? empty : d->arena + ri->msg_off;
	}
}

static int load(struct rd *r, struct msr_report_doc **out)
{
	int rc;

	r->d = calloc(1, sizeof(*r->d));
	if (!r->d)
		return msr_error_set(r->err, MSR_E_NOMEM, "report", r->name,
				     "out of memory");
	r->d->complete = true;
	rc = rd_document(r);
	yaml_parser_delete(&r->p);
	if (rc) {
		msr_report_doc_free(r->d);
		return rc;
	}
	fix_pointers(r->d);
	*out = r->d;
	return MSR_OK;
}

int msr_report_doc_load_mem(const char *name, const void *buf, size_t len,
			    struct msr_report_doc **out, struct msr_error *err)
{
	struct rd r;

	memset(&r, 0, sizeof(r));
	r.name = name;
	r.err = err;
	*out = NULL;
	if (!yaml_parser_initialize(&r.p))
		return msr_error_set(err, MSR_E_NOMEM, "report", name, "out of memory");
	yaml_parser_set_input_string(&r.p, buf, len);
	return load(&r, out);
}

int msr_report_doc_load(const char *path, struct msr_report_doc **out,
			struct msr_error *err)
{
	bool std_in = !strcmp(path, "-");
	struct rd r;
	FILE *f;
	int rc;

	memset(&r, 0, sizeof(r));
	r.name = std_in ? "<stdin>" : path;
	r.err = err;
	*out = NULL;
	f = std_in ? stdin : fopen(path, "rb");
	if (!f)
		return msr_error_set(err, MSR_E_IO, "report", path,
				     "cannot open the report: %s", strerror(errno));
	if (!yaml_parser_initialize(&r.p)) {
		if (!std_in)
			fclose(f);
		return msr_error_set(err, MSR_E_NOMEM, "report", path, "out of memory");
	}
	yaml_parser_set_input_file(&r.p, f);
	rc = load(&r, out);
	if (!rc && ferror(f)) {
		msr_report_doc_free(*out);
		*out = NULL;
		rc = msr_error_set(err, MSR_E_IO, "report", path,
				   "cannot read the report: %s", strerror(errno));
	}
	if (!std_in)
		fclose(f);
	return rc;
}

size_t msr_report_doc_count(const struct msr_report_doc *d)
{
	return d->n;
}

const struct msr_report_item *msr_report_doc_get(const struct msr_report_doc *d,
						 size_t i)
{
	return i < d->n ? &d->items[i].it : NULL;
}

bool msr_report_doc_complete(const struct msr_report_doc *d)
{
	return d->complete;
}

static uint64_t count_sum(const struct msr_report_doc *d)
{
	uint64_t s = 0;

	for (size_t i = 0; i < d->n; i++)
		s += d->items[i].it.count;
	return s;
}

uint64_t msr_report_doc_violations(const struct msr_report_doc *d)
{
	return d->has_violations ? d->violations : count_sum(d);
}

uint64_t msr_report_doc_listed(const struct msr_report_doc *d)
{
	return d->has_listed ? d->listed : count_sum(d);
}

void msr_report_doc_free(struct msr_report_doc *d)
{
	if (!d)
		return;
	free(d->items);
	free(d->arena);
	free(d);
}
