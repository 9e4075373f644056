/*
 * engine.c - the memory-sync engine's entry points: create/destroy, event
 * dispatch, violation construction, statistics and end-of-input handling.
 *
 * Semantic problems are violations sent to the sink, never errors: apply
 * returns a negative status only when the run cannot go on (step-log error,
 * out of memory). This file must never print, exit or keep global state.
 */
#include "engine-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct strand *msr_eng_strand(struct msr_engine *e, unsigned tnum)
{
	return tnum < e->nstrands ? &e->strands[tnum] : NULL;
}

uint64_t msr_eng_next_iseq(struct msr_engine *e, unsigned tnum)
{
	struct strand *s = msr_eng_strand(e, tnum);

	return s ? s->executed + 1 : 0;
}

void msr_eng_where(struct msr_engine *e, uint64_t index, uint64_t offset,
		   uint32_t ts)
{
	memset(&e->where, 0, sizeof(e->where));
	e->where.index = index;
	e->where.offset = offset;
	e->where.ts = ts;
	e->ev = &e->where;
}

void msr_hex(char *buf, size_t size, const uint8_t *b, unsigned n)
{
	static const char dig[] = "0123456789abcdef";
	size_t k = 0;

	if (size < 4)
		return;
	buf[k++] = '0';
	buf[k++] = 'x';
	for (unsigned i = 0; i < n && k + 3 <= size; i++) {
		buf[k++] = dig[b[i] >> 4];
		buf[k++] = dig[b[i] & 15];
	}
	buf[k] = 0;
}

void msr_eng_viol_init(struct msr_engine *e, struct msr_violation *v,
		       enum msr_vkind kind, int strand)
{
	const struct msr_event *ev = e->ev;

	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->strand = strand;
	v->core = strand >= 0 ? strand / (int)e->tpc : -1;
	if (strand >= 0 && (unsigned)strand < e->nstrands)
		v->iseq = e->strands[strand].executed + 1;
	if (ev) {
		v->ts = ev->code == MSR_SSTEP || ev->code == MSR_LD_POP ||
				ev->code == MSR_ST_POP || ev->code == MSR_MEM_CHECK
			? e->last_ts : ev->ts;
		v->event = ev->index;
		v->offset = ev->offset;
	} else {
		v->ts = e->last_ts;
	}
}

void msr_eng_viol_emit(struct msr_engine *e, struct msr_violation *v,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
	va_end(ap);
	e->st.violations++;
	if ((unsigned)v->kind < MSR_V_COUNT)
		e->st.per_kind[v->kind]++;
	if (e->sink.violation)
		e->sink.violation(e->sink.ctx, v);
}

void msr_eng_report(struct msr_engine *e, enum msr_vkind kind, int strand,
		    uint64_t iseq, uint64_t pa, unsigned size, const char *fmt,
		    ...)
{
	struct msr_violation v;
	va_list ap;

	msr_eng_viol_init(e, &v, kind, strand);
	if (iseq)
		v.iseq = iseq;
	/* the pc is known for the instruction the current step executes */
	if (strand >= 0 && (unsigned)strand < e->nstrands &&
	    v.iseq == e->strands[strand].executed)
		v.pc = e->strands[strand].last_pc;
	if (kind == MSR_V_UNMATCHED_EVICT_INV && e->ev)
		v.core = e->ev->cid;
	v.pa = pa;
	v.size = size;
	va_start(ap, fmt);
	vsnprintf(v.message, sizeof(v.message), fmt, ap);
	va_end(ap);
	e->st.violations++;
	e->st.per_kind[kind]++;
	if (e->sink.violation)
		e->sink.violation(e->sink.ctx, &v);
}

void msr_eng_store_ref(struct msr_engine *e, const struct msr_src *s,
		       struct msr_store_ref *ref)
{
	struct strand *st;
	struct st_ent *se;
	struct chist *h;

	memset(ref, 0, sizeof(*ref));
	if (s->kind != MSR_RF_COMMIT && s->kind != MSR_RF_BYPASS)
		return;
	ref->valid = true;
	ref->strand = s->strand;
	ref->sseq = s->sseq;
	ref->co = s->kind == MSR_RF_COMMIT ? s->co : 0;
	h = msr_hist_get(e, ref->co);
	if (h) {
		ref->iseq = h->iseq;
		ref->ts = h->ts;
		ref->event = h->event;
	}
	st = msr_eng_strand(e, s->strand);
	se = st ? msr_ring_at(&st->st, s->sseq) : NULL;
	if (se) {
		if (se->iseq)
			ref->iseq = se->iseq;
		if (!h) {
			bool c = se->flags & STF_COMMITTED;

			ref->ts = c ? se->commit_ts : se->issue_ts;
			ref->event = c ? se->commit_event : se->issue_event;
		}
	}
}

int msr_engine_create(const struct msr_config *cfg,
		      const struct msr_engine_sink *sink,
		      struct msr_engine **out, struct msr_error *err)
{
	struct msr_engine *e;
	uint64_t lim;

	*out = NULL;
	if (!cfg->cores || cfg->cores > MSR_MAX_CORES || !cfg->threads_per_core ||
	    msr_config_strands(cfg) > MSR_MAX_STRANDS || !cfg->l2_banks ||
	    cfg->l1_line < 8 || cfg->l1_line > MSR_L1_LINE_MAX ||
	    (cfg->l1_line & (cfg->l1_line - 1)))
		return msr_error_set(err, MSR_E_CONFIG, "engine", NULL,
			"unsupported system cores=%u threads_per_core=%u l1_line=%u l2_banks=%u",
			cfg->cores, cfg->threads_per_core, cfg->l1_line,
			cfg->l2_banks);
	e = calloc(1, sizeof(*e));
	if (!e)
		goto nomem;
	e->cfg = *cfg;
	e->cfg.images = NULL; /* not owned here */
	e->cfg.nimages = 0;
	if (sink)
		e->sink = *sink;
	e->nstrands = msr_config_strands(cfg);
	e->tpc = cfg->threads_per_core;
	e->line = cfg->l1_line;
	e->mab_window = cfg->mab_window ? cfg->mab_window : MSR_DEFAULT_MAB_WINDOW;
	lim = cfg->max_inflight;
	e->strands = calloc(e->nstrands, sizeof(*e->strands));
	e->fill_recs = calloc((size_t)e->nstrands * MSR_FILLS,
			      sizeof(*e->fill_recs));
	e->banks = calloc(cfg->l2_banks, sizeof(*e->banks));
	e->evict_floor = calloc((size_t)cfg->l2_banks * cfg->cores,
				sizeof(*e->evict_floor));
	if (!e->strands || !e->fill_recs || !e->banks || !e->evict_floor ||
	    msr_mem_init(e) < 0)
		goto nomem;
	for (unsigned t = 0; t < e->nstrands; t++) {
		struct strand *s = &e->strands[t];

		s->fills = e->fill_recs + (size_t)t * MSR_FILLS;
		msr_ring_init(&s->ld, sizeof(struct ld_ent), lim);
		msr_ring_init(&s->st, sizeof(struct st_ent), lim);
		if (msr_map_init(&s->st_blocks, 16) < 0 ||
		    msr_map_init(&s->ld_keys, 16) < 0)
			goto nomem;
	}
	msr_ring_init(&e->mab, sizeof(struct mab_ent), 0);
	msr_pool_init(&e->pend_nodes, sizeof(struct pend_node));
	if (msr_map_init(&e->pend, 64) < 0)
		goto nomem;
	for (unsigned b = 0; b < cfg->l2_banks; b++)
		msr_ring_init(&e->banks[b], sizeof(uint64_t), 0);
	/* the rings' numbers and the strands' cursors over them start at 1 */
	msr_eng_seq_start(e, 1);
	*out = e;
	return MSR_OK;
nomem:
	msr_engine_destroy(e);
	return msr_error_set(err, MSR_E_NOMEM, "engine", NULL,
			     "out of memory creating the engine");
}

void msr_eng_seq_start(struct msr_engine *e, uint64_t first)
{
	for (unsigned t = 0; t < e->nstrands; t++) {
		struct strand *s = &e->strands[t];

		s->ld.head = s->ld.tail = first;
		s->st.head = s->st.tail = first;
		s->ld_exec_cur = s->ld_live_tail = first;
		s->st_exec_cur = s->st_live_tail = first;
		s->st_rmo_ack_cur = first;
	}
	e->mab.head = e->mab.tail = first;
	for (unsigned b = 0; b < e->cfg.l2_banks; b++)
		e->banks[b].head = e->banks[b].tail = first;
}

void msr_engine_destroy(struct msr_engine *e)
{
	if (!e)
		return;
	if (e->strands) {
		for (unsigned t = 0; t < e->nstrands; t++) {
			msr_ring_release(&e->strands[t].ld);
			msr_ring_release(&e->strands[t].st);
			if (e->strands[t].st_blocks.slots)
				msr_map_release(&e->strands[t].st_blocks);
			if (e->strands[t].ld_keys.slots)
				msr_map_release(&e->strands[t].ld_keys);
			free(e->strands[t].acks);
		}
	}
	if (e->banks)
		for (unsigned b = 0; b < e->cfg.l2_banks; b++)
			msr_ring_release(&e->banks[b]);
	msr_ring_release(&e->mab);
	if (e->pend.slots)
		msr_map_release(&e->pend);
	msr_pool_release(&e->pend_nodes);
	msr_mem_release(e);
	free(e->strands);
	free(e->fill_recs);
	free(e->banks);
	free(e->evict_floor);
	free(e);
}

void msr_engine_set_steps(struct msr_engine *e,
			  const struct msr_step_source *src)
{
	if (src && src->next) {
		e->steps = *src;
		e->have_steps = true;
	} else {
		memset(&e->steps, 0, sizeof(e->steps));
		e->have_steps = false;
	}
}

/* Codes ST_ISSUE..DMA_ST carry a ts, except the pops and MEM_CHECK. */
static bool has_ts(unsigned code)
{
	const uint32_t with_ts = ((1u << (MSR_DMA_ST - MSR_ST_ISSUE + 1)) - 1) &
		~(1u << (MSR_LD_POP - MSR_ST_ISSUE)) &
		~(1u << (MSR_ST_POP - MSR_ST_ISSUE)) &
		~(1u << (MSR_MEM_CHECK - MSR_ST_ISSUE));
	unsigned k = code - MSR_ST_ISSUE;

	return k <= MSR_DMA_ST - MSR_ST_ISSUE && ((with_ts >> k) & 1);
}

/* The reader bounds tnum; a caller that does not gets a violation. Out of
 * line and cold, so the check on every event stays a compare. */
static __attribute__((noinline, cold)) bool
strand_bad(struct msr_engine *e, const struct msr_event *ev)
{
	msr_eng_report(e, MSR_V_ORDER_ASSUMPTION, -1, 0, ev->pa, 0,
		       "event names strand %u but the system has %u strands",
		       ev->tnum, e->nstrands);
	return false;
}

static inline bool strand_ok(struct msr_engine *e, const struct msr_event *ev)
{
	return ev->tnum < e->nstrands || strand_bad(e, ev);
}

int msr_engine_apply(struct msr_engine *e, const struct msr_event *ev,
		     struct msr_error *err)
{
	int rc = MSR_OK;

	e->ev = ev;
	e->last_index = ev->index;
	e->last_offset = ev->offset;
	e->st.events++;
	if (has_ts(ev->code))
		e->last_ts = ev->ts;
	switch (ev->code) {
	case MSR_SSTEP:
		e->st.steps++;
		if (strand_ok(e, ev))
			rc = msr_eng_sstep(e, ev, err);
		break;
	case MSR_LD_ISSUE:
		if (strand_ok(e, ev))
			msr_eng_ld_issue(e, ev);
		break;
	case MSR_LD_DATA:
		if (strand_ok(e, ev))
			msr_eng_ld_data(e, ev);
		break;
	case MSR_LD_FILL:
		if (strand_ok(e, ev))
			msr_eng_ld_fill(e, ev);
		break;
	case MSR_LD_POP:
		if (strand_ok(e, ev))
			msr_eng_ld_pop(e, ev);
		break;
	case MSR_ST_ISSUE:
		if (strand_ok(e, ev))
			msr_eng_st_issue(e, ev);
		break;
	case MSR_ST_COMMIT:
		e->st.commits++;
		if (strand_ok(e, ev))
			msr_eng_st_commit(e, ev);
		break;
	case MSR_ST_ACK:
		if (strand_ok(e, ev))
			msr_eng_st_ack(e, ev);
		break;
	case MSR_ST_INV:
	case MSR_ST_UPDATE:
		if (strand_ok(e, ev))
			msr_eng_st_inv(e, ev, ev->code == MSR_ST_UPDATE);
		break;
	case MSR_ST_POP:
		if (strand_ok(e, ev))
			msr_eng_st_pop(e, ev);
		break;
	case MSR_EVICT:
		msr_eng_evict(e, ev);
		break;
	case MSR_EVICT_INV:
		msr_eng_evict_inv(e, ev);
		break;
	case MSR_DMA_ST:
		msr_eng_dma(e, ev);
		break;
	case MSR_MEM_SLAM:
		msr_eng_slam(e, ev);
		break;
	case MSR_MEM_CHECK:
		msr_eng_mem_check(e, ev);
		break;
	default:
		e->st.other_messages++;
		break;
	}
	e->ev = NULL;
	if (rc >= 0 && e->nomem)
		rc = msr_error_set(err, MSR_E_NOMEM, "engine", NULL,
				   "out of memory at event=%llu",
				   (unsigned long long)ev->index);
	return rc < 0 ? rc : MSR_OK;
}

int msr_engine_finish(struct msr_engine *e, bool complete,
		      struct msr_error *err)
{
	if (!complete)
		return MSR_OK;
	msr_eng_where(e, e->last_index, e->last_offset, e->last_ts);
	msr_mab_leftovers(e);
	for (unsigned t = 0; t < e->nstrands; t++) {
		struct strand *s = &e->strands[t];
		uint64_t left = 0;

		msr_eng_strand_leftovers(e, t);
		if (!e->have_steps || !e->steps.remaining)
			continue;
		if (e->steps.remaining(e->steps.ctx, t, &left, err) < 0) {
			e->ev = NULL;
			return err ? err->status : MSR_E_INTERNAL;
		}
		msr_eng_where(e, e->last_index, e->last_offset, e->last_ts);
		if (left)
			msr_eng_report(e, MSR_V_STEP_LOG_LONG, (int)t,
				       s->executed + 1, 0, 0,
				       "strand %u has %llu step-log lines left after the trace ended (it executed %llu instructions)",
				       t, (unsigned long long)left,
				       (unsigned long long)s->executed);
	}
	e->ev = NULL;
	return e->nomem ? msr_error_set(err, MSR_E_NOMEM, "engine", NULL,
					"out of memory at the end of input")
			: MSR_OK;
}

void msr_engine_get_stats(const struct msr_engine *e,
			  struct msr_engine_stats *st)
{
	*st = e->st;
}
