/*
 * report.c - the violation collector: numbering, fingerprints, filters,
 * the max_violations cap and context capture (see report.h).
 *
 * Context lines are copied from the event history when a violation arrives,
 * because the history is a bounded ring that will have moved on by the time
 * the report is written. Memory is bounded by max_violations x context
 * (max_violations 0 lists up to MSR_REPORT_DEFAULT_CAP, so that a badly
 * broken trace cannot make the report grow with its length).
 * Never prints and never writes files (report_yaml.c does).
 */
#include "report-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------ */
/* Fingerprint                                                               */
/* ------------------------------------------------------------------------ */

void msr_report_fingerprint(enum msr_vkind kind, int strand, uint64_t iseq,
			    uint64_t pa, char out[17])
{
	char text[128];
	const char *name = msr_vkind_name(kind);
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 offset basis */
	int n;

	n = snprintf(text, sizeof(text), "%s:%d:%llu:0x%010llx",
		     name ? name : "unknown", strand, (unsigned long long)iseq,
		     (unsigned long long)pa);
	for (int i = 0; i < n && i < (int)sizeof(text) - 1; i++) {
		h ^= (uint8_t)text[i];
		h *= 0x100000001b3ULL;
	}
	/* murmur3 fmix64: spreads FNV's weak low-bit avalanche over all digits */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ------------------------------------------------------------------------ */
/* Filters                                                                   */
/* ------------------------------------------------------------------------ */

/* Parse a decimal or 0x-hex number in [*p, end) up to a non-digit. */
static bool parse_num(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned base = 10;
	bool any = false;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
		any = true;
	}
	*p = s;
	*out = v;
	return any;
}

bool msr_report_filter_strands(struct msr_report_filter *f, const char *list,
			       unsigned strands)
{
	const char *p = list;
	uint8_t set[MSR_MAX_STRANDS / 8] = {0};

	if (strands > MSR_MAX_STRANDS)
		strands = MSR_MAX_STRANDS;
	for (;;) {
		uint64_t lo, hi;

		if (!parse_num(&p, &lo))
			return false;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!parse_num(&p, &hi))
				return false;
		}
		if (lo > hi || hi >= strands)
			return false;
		for (uint64_t s = lo; s <= hi; s++)
			set[s / 8] |= (uint8_t)(1u << (s % 8));
		if (*p != ',')
			break;
		p++;
	}
	if (*p)
		return false;
	memcpy(f->strands, set, sizeof(set));
	f->by_strand = true;
	snprintf(f->strands_text, sizeof(f->strands_text), "%s", list);
	return true;
}

static bool parse_range(const char *range, uint64_t max, uint64_t *lo,
			uint64_t *hi)
{
	const char *p = range;

	*lo = 0;
	*hi = max;
	if (*p != ':' && !parse_num(&p, lo))
		return false;
	if (*p++ != ':')
		return false;
	if (*p && !parse_num(&p, hi))
		return false;
	return !*p && *lo <= *hi && *hi <= max;
}

bool msr_report_filter_cycles(struct msr_report_filter *f, const char *range)
{
	uint64_t lo, hi;

	if (!parse_range(range, UINT32_MAX, &lo, &hi))
		return false;
	f->by_cycles = true;
	f->cycle_lo = (uint32_t)lo;
	f->cycle_hi = (uint32_t)hi;
	snprintf(f->cycles_text, sizeof(f->cycles_text), "%s", range);
	return true;
}

bool msr_report_filter_pa(struct msr_report_filter *f, const char *range)
{
	uint64_t lo, hi;

	if (!parse_range(range, UINT64_MAX, &lo, &hi))
		return false;
	f->by_pa = true;
	f->pa_lo = lo;
	f->pa_hi = hi;
	snprintf(f->pa_text, sizeof(f->pa_text), "%s", range);
	return true;
}

bool msr_report_filter_match(const struct msr_report_filter *f,
			     const struct msr_violation *v)
{
	if (f->by_strand) {
		if (v->strand < 0 || v->strand >= MSR_MAX_STRANDS ||
		    !(f->strands[v->strand / 8] & (1u << (v->strand % 8))))
			return false;
	}
	if (f->by_cycles && (v->ts < f->cycle_lo || v->ts > f->cycle_hi))
		return false;
	if (f->by_pa) {
		uint64_t last = v->pa + (v->size ? v->size - 1 : 0);

		if (last < f->pa_lo || v->pa > f->pa_hi)
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* The collector                                                             */
/* ------------------------------------------------------------------------ */

int msr_report_create(const struct msr_config *cfg,
		      const struct msr_history *history,
		      struct msr_report **out, struct msr_error *err)
{
	struct msr_report *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		goto oom;
	r->cfg = *cfg;
	r->cfg.images = NULL;
	r->cfg.nimages = 0;
	if (r->cfg.context_len > MSR_CONTEXT_MAX)
		r->cfg.context_len = MSR_CONTEXT_MAX;
	if (cfg->nimages) {
		r->cfg.images = calloc(cfg->nimages, sizeof(char *));
		if (!r->cfg.images)
			goto oom;
		for (unsigned i = 0; i < cfg->nimages; i++) {
			r->cfg.images[i] = strdup(cfg->images[i]);
			if (!r->cfg.images[i])
				goto oom;
			r->cfg.nimages++;
		}
	}
	r->hist = history;
	r->sum.complete = true;
	*out = r;
	return MSR_OK;
oom:
	msr_report_destroy(r);
	return msr_error_set(err, MSR_E_NOMEM, "report", NULL, "out of memory");
}

void msr_report_set_filter(struct msr_report *r,
			   const struct msr_report_filter *f)
{
	r->filter = *f;
}

int msr_report_add_input(struct msr_report *r, const char *role,
			 const char *path, uint64_t size, struct msr_error *err)
{
	struct report_input *grown;
	struct stat st;

	grown = realloc(r->inputs, (r->ninputs + 1) * sizeof(*grown));
	if (!grown)
		return msr_error_set(err, MSR_E_NOMEM, "report", NULL, "out of memory");
	r->inputs = grown;
	grown += r->ninputs;
	grown->path = strdup(path);
	if (!grown->path)
		return msr_error_set(err, MSR_E_NOMEM, "report", NULL, "out of memory");
	snprintf(grown->role, sizeof(grown->role), "%s", role);
	if (!size && strcmp(path, "-") && stat(path, &st) == 0)
		size = (uint64_t)st.st_size;
	grown->size = size;
	r->ninputs++;
	return MSR_OK;
}

/* The canonical text pads message names into columns; one space is enough
 * inside a report line. */
static void squeeze_name_padding(char *s)
{
	char *sp = strchr(s, ' '), *q;

	if (!sp)
		return;
	for (q = sp; *q == ' '; q++)
		;
	if (q > sp + 1)
		memmove(sp + 1, q, strlen(q) + 1);
}

/* Copy the violation's context out of the history into one block. */
static void capture_context(struct msr_report *r, struct report_entry *e)
{
	const struct msr_violation *v = &e->v;
	uint64_t pa8 = (v->pa || v->size) ? v->pa & ~(uint64_t)7 : UINT64_MAX;
	size_t n, used = 0, off[MSR_CONTEXT_MAX];
	char *text = r->ctxtext;

	e->nctx = 0;
	e->ctx = NULL;
	if (!r->hist || !r->cfg.context_len)
		return;
	n = msr_history_context(r->hist, v->strand, pa8, v->event,
				r->cfg.context_len, r->ctxbuf);
	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct msr_event *ev = &r->ctxbuf[i];
		char *dst = text + used;
		int len = snprintf(dst, CTX_LINE_MAX, "event=%llu offset=%llu ",
				   (unsigned long long)ev->index,
				   (unsigned long long)ev->offset);

		msr_event_format_text(ev, dst + len, CTX_LINE_MAX - (size_t)len);
		squeeze_name_padding(dst + len);
		off[i] = used;
		used += strlen(dst) + 1;
	}
	e->ctx = malloc(n * sizeof(char *) + used);
	if (!e->ctx)
		return; /* context is best effort; the violation itself is kept */
	memcpy(e->ctx + n, text, used);
	for (size_t i = 0; i < n; i++)
		e->ctx[i] = (char *)(e->ctx + n) + off[i];
	e->nctx = (unsigned)n;
}

bool msr_report_add(struct msr_report *r, const struct msr_violation *v)
{
	struct report_entry *e;

	if (!msr_report_filter_match(&r->filter, v)) {
		r->filtered++;
		return false;
	}
	r->shown++;
	if ((unsigned)v->kind < MSR_V_COUNT)
		r->per_kind[v->kind]++;
	if (r->nkept >= (r->cfg.max_violations ? r->cfg.max_violations
					       : MSR_REPORT_DEFAULT_CAP)) {
		r->dropped++;
		return true;
	}
	if (r->nkept == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 16;
		struct report_entry *grown = realloc(r->entries, ncap * sizeof(*grown));

		if (!grown) {
			r->dropped++;
			return true;
		}
		r->entries = grown;
		r->cap = ncap;
	}
	e = &r->entries[r->nkept++];
	e->v = *v;
	e->v.message[sizeof(e->v.message) - 1] = '\0';
	if (e->v.nproof > MSR_PROOF_MAX)
		e->v.nproof = MSR_PROOF_MAX;
	if (e->v.vlen > 64)
		e->v.vlen = 64;
	msr_report_fingerprint(v->kind, v->strand, v->iseq, v->pa, e->fp);
	capture_context(r, e);
	return true;
}

void msr_report_sink_violation(void *ctx, const struct msr_violation *v)
{
	msr_report_add(ctx, v);
}

void msr_report_set_summary(struct msr_report *r,
			    const struct msr_report_summary *s)
{
	r->sum = *s;
}

uint64_t msr_report_shown(const struct msr_report *r)
{
	return r->shown;
}

uint64_t msr_report_filtered(const struct msr_report *r)
{
	return r->filtered;
}

size_t msr_report_kept(const struct msr_report *r)
{
	return r->nkept;
}

uint64_t msr_report_kind_count(const struct msr_report *r, enum msr_vkind k)
{
	return (unsigned)k < MSR_V_COUNT ? r->per_kind[k] : 0;
}

const struct msr_violation *msr_report_get(const struct msr_report *r, size_t i)
{
	return i < r->nkept ? &r->entries[i].v : NULL;
}

const char *msr_report_get_fingerprint(const struct msr_report *r, size_t i)
{
	return i < r->nkept ? r->entries[i].fp : NULL;
}

size_t msr_report_get_context(const struct msr_report *r, size_t i,
			      const char *const **lines)
{
	if (i >= r->nkept) {
		*lines = NULL;
		return 0;
	}
	*lines = (const char *const *)r->entries[i].ctx;
	return r->entries[i].nctx;
}

void msr_report_destroy(struct msr_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nkept; i++)
		free(r->entries[i].ctx);
	free(r->entries);
	for (size_t i = 0; i < r->ninputs; i++)
		free(r->inputs[i].path);
	free(r->inputs);
	msr_config_release(&r->cfg);
	free(r);
}
