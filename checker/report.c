/*
 * report.c - the violation collector: numbering, fingerprints, waivers,
 * filters, merging of repeats, the max_violations cap and context capture
 * (see report.h).
 *
 * Context lines are copied from the event history when a violation arrives,
 * because the history is a bounded ring that will have moved on by the time
 * the report is written; the events after it are collected as they arrive,
 * for at most REPORT_PENDING_MAX violations at a time. Memory is bounded by
 * max_violations x context (max_violations 0 lists up to
 * MSR_REPORT_DEFAULT_CAP, so that a badly broken trace cannot make the
 * report grow with its length); repeats of a fingerprint cost nothing.
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

bool msr_report_filter_strands(struct msr_report_filter *f, const char *list,
			       unsigned strands)
{
	const char *p = list;
	uint8_t set[MSR_MAX_STRANDS / 8] = {0};

	if (strands > MSR_MAX_STRANDS)
		strands = MSR_MAX_STRANDS;
	for (;;) {
		uint64_t lo, hi;

		if (!msr_scan_u64(&p, &lo))
			return false;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!msr_scan_u64(&p, &hi))
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

bool msr_report_filter_cycles(struct msr_report_filter *f, const char *range)
{
	uint64_t lo, hi;

	if (!msr_parse_range(range, UINT32_MAX, &lo, &hi))
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

	if (!msr_parse_range(range, UINT64_MAX, &lo, &hi))
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
/* Waivers and the fingerprint map                                           */
/* ------------------------------------------------------------------------ */

/* Sort the fingerprint waivers (insertion sort keeps equal keys in file
 * order, so the first listed of two identical waivers is the one used). */
static int index_waivers(struct msr_report *r)
{
	const struct msr_config *c = &r->cfg;
	uint64_t *vals;

	r->waiver_uses = calloc(c->nwaivers ? c->nwaivers : 1, sizeof(uint64_t));
	vals = calloc(c->nwaivers ? c->nwaivers : 1, sizeof(uint64_t));
	r->wfp_keys = calloc(c->nwaivers ? c->nwaivers : 1, sizeof(uint64_t));
	r->wfp_idx = calloc(c->nwaivers ? c->nwaivers : 1, sizeof(unsigned));
	if (!r->waiver_uses || !vals || !r->wfp_keys || !r->wfp_idx) {
		free(vals);
		return MSR_E_NOMEM;
	}
	for (unsigned i = 0; i < c->nwaivers; i++)
		vals[i] = strtoull(c->waivers[i].fingerprint, NULL, 16);
	for (unsigned i = 0; i < c->nwaivers; i++) {
		unsigned j = r->nwfp++;

		if (!c->waivers[i].by_fingerprint) {
			r->nwfp--;
			continue;
		}
		while (j > 0 && vals[r->wfp_idx[j - 1]] > vals[i]) {
			r->wfp_idx[j] = r->wfp_idx[j - 1];
			j--;
		}
		r->wfp_idx[j] = i;
	}
	for (unsigned j = 0; j < r->nwfp; j++)
		r->wfp_keys[j] = vals[r->wfp_idx[j]];
	free(vals);
	return MSR_OK;
}

/* The waiver matching a violation (-1 = none): fingerprint waivers first,
 * then kind + range (+ strand) waivers in file order. */
static int match_waiver(const struct msr_report *r,
			const struct msr_violation *v, uint64_t fp)
{
	const struct msr_config *c = &r->cfg;
	uint64_t last = v->pa + (v->size ? v->size - 1 : 0);
	unsigned lo = 0, hi = r->nwfp;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (r->wfp_keys[mid] < fp)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->nwfp && r->wfp_keys[lo] == fp)
		return (int)r->wfp_idx[lo];
	for (unsigned i = 0; i < c->nwaivers; i++) {
		const struct msr_waiver *w = &c->waivers[i];

		if (!w->by_fingerprint && w->kind == (unsigned)v->kind &&
		    (w->strand < 0 || w->strand == v->strand) &&
		    last >= w->pa_lo && v->pa <= w->pa_hi)
			return (int)i;
	}
	return -1;
}

static bool fp_grow(struct msr_report *r)
{
	size_t ncap = r->fp_cap ? r->fp_cap * 2 : 64;
	uint64_t *keys = malloc(ncap * sizeof(*keys));
	uint32_t *vals = malloc(ncap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return false;
	}
	memset(vals, 0xff, ncap * sizeof(*vals));
	for (size_t i = 0; i < r->fp_cap; i++) {
		size_t j;

		if (r->fp_vals[i] == UINT32_MAX)
			continue;
		/* fingerprints are already well mixed: the low bits index */
		for (j = r->fp_keys[i] & (ncap - 1); vals[j] != UINT32_MAX;
		     j = (j + 1) & (ncap - 1))
			;
		keys[j] = r->fp_keys[i];
		vals[j] = r->fp_vals[i];
	}
	free(r->fp_keys);
	free(r->fp_vals);
	r->fp_keys = keys;
	r->fp_vals = vals;
	r->fp_cap = ncap;
	return true;
}

/* The slot of `fp`: its value, or UINT32_MAX at the free slot to fill. */
static size_t fp_slot(const struct msr_report *r, uint64_t fp)
{
	size_t j = fp & (r->fp_cap - 1);

	while (r->fp_vals[j] != UINT32_MAX && r->fp_keys[j] != fp)
		j = (j + 1) & (r->fp_cap - 1);
	return j;
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
	r->cfg.waivers = NULL;
	r->cfg.nwaivers = 0;
	r->cfg.waiver_file = NULL;
	if (r->cfg.context_len > MSR_CONTEXT_MAX)
		r->cfg.context_len = MSR_CONTEXT_MAX;
	if (r->cfg.context_after > MSR_CONTEXT_MAX)
		r->cfg.context_after = MSR_CONTEXT_MAX;
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
	if (msr_config_copy_waivers(&r->cfg, cfg, err) || index_waivers(r) ||
	    !fp_grow(r))
		goto oom;
	if (history && r->cfg.context_after) {
		r->pend_evs = calloc((size_t)REPORT_PENDING_MAX * r->cfg.context_after,
				     sizeof(*r->pend_evs));
		if (!r->pend_evs)
			goto oom;
		for (unsigned i = 0; i < REPORT_PENDING_MAX; i++)
			r->pend[i].evs = r->pend_evs + (size_t)i * r->cfg.context_after;
	}
	r->hist = history;
	r->first_entry = NO_ENTRY;
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

/* Format events as context lines into one allocated block (NULL when there
 * are none or memory is short: context is best effort). */
static char **format_lines(struct msr_report *r, const struct msr_event *evs,
			   size_t n)
{
	size_t used = 0, off[MSR_CONTEXT_MAX];
	char *text = r->ctxtext;
	char **lines;

	if (!n)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct msr_event *ev = &evs[i];
		char *dst = text + used;
		int len = snprintf(dst, CTX_LINE_MAX, "event=%llu offset=%llu ",
				   (unsigned long long)ev->index,
				   (unsigned long long)ev->offset);

		msr_event_format_text(ev, dst + len, CTX_LINE_MAX - (size_t)len);
		squeeze_name_padding(dst + len);
		off[i] = used;
		used += strlen(dst) + 1;
	}
	lines = malloc(n * sizeof(char *) + used);
	if (!lines)
		return NULL;
	memcpy(lines + n, text, used);
	for (size_t i = 0; i < n; i++)
		lines[i] = (char *)(lines + n) + off[i];
	return lines;
}

static uint64_t context_block(const struct msr_violation *v)
{
	return (v->pa || v->size) ? v->pa & ~(uint64_t)7 : UINT64_MAX;
}

/* Copy the violation's context before it out of the history. */
static void capture_context(struct msr_report *r, struct report_entry *e)
{
	const struct msr_violation *v = &e->v;
	size_t n;

	e->nctx = 0;
	e->ctx = NULL;
	if (!r->hist || !r->cfg.context_len)
		return;
	n = msr_history_context(r->hist, v->strand, context_block(v), v->event,
				r->cfg.context_len, r->ctxbuf);
	e->ctx = format_lines(r, r->ctxbuf, n);
	if (e->ctx)
		e->nctx = (unsigned)n;
}

/* A pending after-context is complete (or cut short): format it. */
static void pending_finish(struct msr_report *r, struct report_pending *p)
{
	struct report_entry *e = &r->list.e[p->entry];

	e->after = format_lines(r, p->evs, p->n);
	e->nafter = e->after ? p->n : 0;
	p->active = false;
	r->npending--;
}

/*
 * Start the after-context of a new entry: the events after the violation
 * that the history already holds (the TSO pass reports some violations
 * later than the event they name), then watch msr_report_observe for the
 * rest. With every watch slot busy the oldest watch is cut short.
 */
static void pending_start(struct msr_report *r, size_t entry)
{
	const struct msr_violation *v = &r->list.e[entry].v;
	unsigned want = r->cfg.context_after, slot = 0;
	struct report_pending *p;

	if (!r->pend_evs || !want)
		return;
	for (unsigned i = 0; i < REPORT_PENDING_MAX; i++) {
		if (!r->pend[i].active) {
			slot = i;
			break;
		}
		if (r->pend[i].age < r->pend[slot].age)
			slot = i;
	}
	p = &r->pend[slot];
	if (p->active)
		pending_finish(r, p);
	p->active = true;
	p->entry = entry;
	p->age = r->pend_age++;
	p->strand = v->strand;
	p->pa8 = context_block(v);
	r->npending++;
	p->n = (unsigned)msr_history_after(r->hist, p->strand, p->pa8, v->event,
					     want, p->evs);
	if (p->n == want)
		pending_finish(r, p);
}

bool msr_report_watching(const struct msr_report *r)
{
	return r->npending > 0;
}

void msr_report_observe(struct msr_report *r, const struct msr_event *ev)
{
	if (!r->npending)
		return;
	for (unsigned i = 0; i < REPORT_PENDING_MAX; i++) {
		struct report_pending *p = &r->pend[i];

		if (!p->active)
			continue;
		/* the history has `ev` already */
		if (!msr_history_touches(r->hist, p->strand, p->pa8, ev->index))
			continue;
		p->evs[p->n++] = *ev;
		if (p->n == r->cfg.context_after)
			pending_finish(r, p);
	}
}

/* Append a new entry to a list; NULL when the list is full. */
static struct report_entry *list_add(struct msr_report *r,
				     struct report_list *l,
				     const struct msr_violation *v,
				     const char *fp, int waiver)
{
	struct report_entry *e;

	if (l->n >= (r->cfg.max_violations ? r->cfg.max_violations
					    : MSR_REPORT_DEFAULT_CAP))
		return NULL;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		struct report_entry *grown = realloc(l->e, ncap * sizeof(*grown));

		if (!grown)
			return NULL;
		l->e = grown;
		l->cap = ncap;
	}
	if (2 * (r->fp_count + 1) > r->fp_cap && !fp_grow(r))
		return NULL;
	e = &l->e[l->n++];
	memset(e, 0, sizeof(*e));
	e->v = *v;
	e->v.message[sizeof(e->v.message) - 1] = '\0';
	if (e->v.nproof > MSR_PROOF_MAX)
		e->v.nproof = MSR_PROOF_MAX;
	if (e->v.vlen > 64)
		e->v.vlen = 64;
	memcpy(e->fp, fp, 17);
	e->count = 1;
	e->last_event = v->event;
	e->waiver = waiver;
	return e;
}

/*
 * Merge into the entry of the same fingerprint, or add one. Returns the
 * entry's index, NO_ENTRY when it is not listed (cap reached).
 */
static size_t merge(struct msr_report *r, const struct msr_violation *v,
		    const char *fp, uint64_t fp64, int waiver)
{
	struct report_list *l = waiver >= 0 ? &r->wlist : &r->list;
	uint32_t tag = waiver >= 0 ? 0x80000000u : 0;
	size_t slot = fp_slot(r, fp64);
	struct report_entry *e;

	if (r->fp_vals[slot] != UINT32_MAX &&
	    (r->fp_vals[slot] & 0x80000000u) == tag) {
		e = &l->e[r->fp_vals[slot] & 0x7fffffffu];
		e->count++;
		if (v->event > e->last_event)
			e->last_event = v->event;
		return r->fp_vals[slot] & 0x7fffffffu;
	}
	if (r->fp_vals[slot] != UINT32_MAX || !(e = list_add(r, l, v, fp, waiver)))
		return NO_ENTRY;
	/* list_add may have grown the map */
	slot = fp_slot(r, fp64);
	r->fp_keys[slot] = fp64;
	r->fp_vals[slot] = (uint32_t)(l->n - 1) | tag;
	r->fp_count++;
	if (waiver < 0) {
		capture_context(r, e);
		pending_start(r, l->n - 1);
	}
	return l->n - 1;
}

bool msr_report_add(struct msr_report *r, const struct msr_violation *v)
{
	char fp[17];
	uint64_t fp64;
	size_t idx;
	int w;

	msr_report_fingerprint(v->kind, v->strand, v->iseq, v->pa, fp);
	fp64 = strtoull(fp, NULL, 16);
	/* waivers are matched before the filters, so a waiver is "used" even
	 * when a filter hides what it matched */
	w = match_waiver(r, v, fp64);
	if (w >= 0)
		r->waiver_uses[w]++;
	if (!msr_report_filter_match(&r->filter, v)) {
		r->filtered++;
		return false;
	}
	if (w >= 0) {
		r->waived++;
		merge(r, v, fp, fp64, w);
		return false;
	}
	r->shown++;
	if ((unsigned)v->kind < MSR_V_COUNT)
		r->per_kind[v->kind]++;
	idx = merge(r, v, fp, fp64, -1);
	if (idx == NO_ENTRY)
		r->dropped++;
	if (!r->has_first || v->event < r->first.event) {
		r->has_first = true;
		r->first = *v;
		r->first_entry = idx;
	}
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
	for (unsigned i = 0; i < REPORT_PENDING_MAX; i++)
		if (r->pend[i].active)
			pending_finish(r, &r->pend[i]);
}

uint64_t msr_report_shown(const struct msr_report *r)
{
	return r->shown;
}

uint64_t msr_report_filtered(const struct msr_report *r)
{
	return r->filtered;
}

uint64_t msr_report_waived(const struct msr_report *r)
{
	return r->waived;
}

size_t msr_report_kept(const struct msr_report *r)
{
	return r->list.n;
}

uint64_t msr_report_kind_count(const struct msr_report *r, enum msr_vkind k)
{
	return (unsigned)k < MSR_V_COUNT ? r->per_kind[k] : 0;
}

const struct msr_violation *msr_report_get(const struct msr_report *r, size_t i)
{
	return i < r->list.n ? &r->list.e[i].v : NULL;
}

const char *msr_report_get_fingerprint(const struct msr_report *r, size_t i)
{
	return i < r->list.n ? r->list.e[i].fp : NULL;
}

uint64_t msr_report_get_count(const struct msr_report *r, size_t i)
{
	return i < r->list.n ? r->list.e[i].count : 0;
}

uint64_t msr_report_get_last_event(const struct msr_report *r, size_t i)
{
	return i < r->list.n ? r->list.e[i].last_event : 0;
}

size_t msr_report_get_context(const struct msr_report *r, size_t i,
			      const char *const **lines)
{
	if (i >= r->list.n) {
		*lines = NULL;
		return 0;
	}
	*lines = (const char *const *)r->list.e[i].ctx;
	return r->list.e[i].nctx;
}

size_t msr_report_get_context_after(const struct msr_report *r, size_t i,
				    const char *const **lines)
{
	if (i >= r->list.n) {
		*lines = NULL;
		return 0;
	}
	*lines = (const char *const *)r->list.e[i].after;
	return r->list.e[i].nafter;
}

const struct msr_violation *msr_report_first(const struct msr_report *r,
					     size_t *index)
{
	if (index)
		*index = r->has_first ? r->first_entry : NO_ENTRY;
	return r->has_first ? &r->first : NULL;
}

size_t msr_report_waived_kept(const struct msr_report *r)
{
	return r->wlist.n;
}

const struct msr_violation *msr_report_get_waived(const struct msr_report *r,
						  size_t i, uint64_t *count,
						  const char **reason)
{
	if (i >= r->wlist.n)
		return NULL;
	if (count)
		*count = r->wlist.e[i].count;
	if (reason)
		*reason = r->cfg.waivers[r->wlist.e[i].waiver].reason;
	return &r->wlist.e[i].v;
}

uint64_t msr_report_waiver_uses(const struct msr_report *r, unsigned w)
{
	return w < r->cfg.nwaivers ? r->waiver_uses[w] : 0;
}

static void list_release(struct report_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->e[i].ctx);
		free(l->e[i].after);
	}
	free(l->e);
}

void msr_report_destroy(struct msr_report *r)
{
	if (!r)
		return;
	list_release(&r->list);
	list_release(&r->wlist);
	free(r->fp_keys);
	free(r->fp_vals);
	free(r->wfp_keys);
	free(r->wfp_idx);
	free(r->waiver_uses);
	free(r->pend_evs);
	for (size_t i = 0; i < r->ninputs; i++)
		free(r->inputs[i].path);
	free(r->inputs);
	msr_config_release(&r->cfg);
	free(r);
}
