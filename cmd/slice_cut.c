/*
 * slice_cut.c - where `slice` cuts: for each kept strand the last quiet
 * point before the first involved operation (its start) and the first quiet
 * point after the last one (its end), the 8-byte blocks the kept strands
 * touch in between, and the ST_INV/ST_UPDATE answers to their commits that
 * arrive after a strand's end (pass 2).
 *
 * It only reads the trace through the pipeline; it never writes anything.
 */
#include "slice-internal.h"

#include <stdlib.h>

bool msr_slice_in_window_block(const struct msr_slice_run *s, uint64_t pa8)
{
	uint64_t l = msr_slice_blocks_last(&s->blk, pa8);

	return l != UINT64_MAX && l >= s->P;
}

int msr_slice_touch_range(struct msr_slice_run *s, uint64_t pa, unsigned len, uint64_t idx)
{
	for (uint64_t a = pa & ~7ULL; a < pa + len; a += 8)
		if (msr_slice_blocks_put(&s->blk, a, idx))
			return MSR_E_NOMEM;
	return MSR_OK;
}

/* ------------------------------------------------------------------------ */
/* Pass 2: cut points and touched blocks                                     */
/* ------------------------------------------------------------------------ */

/* No load in flight or awaiting its fill, every store committed and acked: only answers to
 * its commits may still come (the slice drops those to commits before its
 * start, and keeps those to commits before its end). */
static bool quiet(const struct msr_engine *e, unsigned t)
{
	struct msr_strand_inflight f;

	if (msr_engine_strand_inflight(e, t, &f))
		return false;
	return !(f.loads || f.fills || f.unacked || f.uncommitted);
}

/* Whether event `i` of kept strand t lies in that strand's part of the slice */
bool msr_slice_in_strand_window(const struct msr_slice_run *s, unsigned t, uint64_t i)
{
	return s->inv[t] && i >= s->Pt[t] && i < s->Qt[t];
}

static int touch_event(struct msr_slice_run *s, const struct msr_event *ev)
{
	unsigned len = 8;

	if (!(msr_event_has(ev) & MSR_EVHAS_PA) || !(msr_event_has(ev) & MSR_EVHAS_TNUM) ||
	    !s->inv[ev->tnum] || !msr_msgdef_get(ev->code) || !msr_msgdef_get(ev->code)->memory)
		return MSR_OK;
	switch (ev->code) {
	case MSR_LD_ISSUE:
		len = ev->itype == MSR_IT_BLOCK_LOAD ? 64 : ev->itype == MSR_IT_QUAD_LOAD ? 16 :
		      1u << (ev->size & 3);
		break;
	case MSR_ST_ISSUE:
		if (ev->itype == MSR_IT_BLK_INIT_ST)
			return msr_slice_touch_range(s, ev->pa & ~63ULL, 64, ev->index);
		break;
	default:
		/* data and fills move whole 16-byte L1 lines */
		return msr_slice_touch_range(s, ev->pa & ~15ULL, 16, ev->index);
	}
	return msr_slice_touch_range(s, ev->pa, len, ev->index);
}

/*
 * Follow the answers to the kept strands' commits. Returns true when `ev`
 * answers a commit made before Q (the slice keeps it).
 */
int msr_slice_track_answers(struct msr_slice_run *s, const struct msr_event *ev, bool *keep)
{
	bool after_q = s->qdone[ev->tnum];
	uint64_t line = ev->pa & ~15ULL;
	unsigned cid;

	*keep = false;
	s->answer_of = UINT64_MAX;
	if (ev->code == MSR_ST_COMMIT && ev->invvec) {
		if (s->nans == s->capans) {
			size_t nc = s->capans ? 2 * s->capans : 64;
			struct msr_slice_answer *g;

			/* drop answered entries before growing */
			size_t w = 0;
			for (size_t r = 0; r < s->nans; r++)
				if (s->ans[r].await)
					s->ans[w++] = s->ans[r];
			s->nans = w;
			if (w == s->capans) {
				if (!(g = realloc(s->ans, nc * sizeof(*g))))
					return MSR_E_NOMEM;
				s->ans = g;
				s->capans = nc;
			}
		}
		s->ans[s->nans++] = (struct msr_slice_answer){line, ev->index, ev->invvec, ev->tnum,
						       !after_q};
		return MSR_OK;
	}
	if (ev->code != MSR_ST_INV && ev->code != MSR_ST_UPDATE)
		return MSR_OK;
	cid = ev->code == MSR_ST_INV ? ev->cid : ev->tnum / s->tpc;
	for (size_t r = 0; r < s->nans; r++) {
		struct msr_slice_answer *a = &s->ans[r];

		if (a->tnum != ev->tnum || a->line != line || !(a->await & (1u << cid)))
			continue;
		a->await &= ~(1u << cid);
		*keep = after_q && a->before_end;
		s->answer_of = a->commit_index;
		break;
	}
	return MSR_OK;
}

static bool answers_pending(const struct msr_slice_run *s)
{
	for (size_t r = 0; r < s->nans; r++)
		if (s->ans[r].await && s->ans[r].before_end)
			return true;
	return false;
}

static int cut_event(struct msr_slice_run *s, const struct msr_event *ev)
{
	bool keep = false;
	int rc = MSR_OK;

	if (!(msr_event_has(ev) & MSR_EVHAS_TNUM) || !s->inv[ev->tnum])
		return MSR_OK;
	if (!s->qdone[ev->tnum])
		rc = touch_event(s, ev);
	if (!rc)
		rc = msr_slice_track_answers(s, ev, &keep);
	if (!rc && keep)
		rc = msr_slice_push_u64(&s->tail, &s->ntail, &s->captail, ev->index);
	return rc;
}

/* Per kept strand: the last quiet point up to first_rel (its start)
 * and the first quiet point after last_rel (its end). */
static bool cut_points(struct msr_slice_run *s, const struct msr_engine *e, uint64_t i)
{
	bool all_done = true;

	for (unsigned t = 0; t < MSR_MAX_STRANDS; t++) {
		if (!s->inv[t])
			continue;
		if (i <= s->first_rel && quiet(e, t))
			s->Pt[t] = i;
		if (!s->qdone[t] && i > s->last_rel && quiet(e, t)) {
			s->qdone[t] = true;
			s->Qt[t] = i;
		}
		all_done &= s->qdone[t];
	}
	return all_done;
}

int msr_slice_pass_cut(struct msr_slice_run *s, struct msr_error *err)
{
	struct msr_slice_pipe p = {.ahead = !s->o->single_thread};
	struct msr_event ev;
	bool tail_done = false;
	uint64_t all_end = 0;
	int rc = msr_slice_pipe_open(&p, s->o->trace, s->o->steps, s->o,
				     s->o->image, err);

	while (!rc && (rc = msr_slice_pipe_read(&p, &ev, err)) == MSR_OK) {
		s->total = ev.index + 1;
		if (tail_done)
			continue; /* only count the rest, for the summary */
		if (cut_points(s, p.eng, ev.index) && !all_end)
			all_end = ev.index;
		if (all_end && (!answers_pending(s) || ev.index > all_end + SL_TAIL_MAX)) {
			tail_done = true;
			continue;
		}
		if ((rc = cut_event(s, &ev)) < 0)
			return msr_error_set(err, rc, "slice", NULL, "out of memory");
		rc = msr_slice_pipe_apply(&p, &ev, err);
	}
	if (rc == MSR_END)
		rc = MSR_OK;
	s->P = UINT64_MAX;
	s->Q = 0;
	for (unsigned t = 0; t < MSR_MAX_STRANDS; t++) {
		if (!s->inv[t])
			continue;
		if (!s->qdone[t])
			s->Qt[t] = s->total;
		if (s->Pt[t] < s->P)
			s->P = s->Pt[t];
		if (s->Qt[t] > s->Q)
			s->Q = s->Qt[t];
	}
	if (s->P == UINT64_MAX) {
		/* a violation of no strand (mem-check, an EVICT_INV without its
		 * EVICT): its own event, on the memory of that moment */
		s->P = s->v.event;
		s->Q = s->v.event + 1;
	}
	msr_slice_pipe_close(&p);
	return rc;
}

