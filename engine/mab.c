/*
 * mab.c - the memory access buffer (commits and evictions awaiting core
 * answers, retired in order from the head), the per-bank EVICT FIFOs, and
 * the messages that write or check memory directly (DMA_ST, MEM_SLAM,
 * MEM_CHECK).
 *
 * The MAB must stay bounded even when answers never come: an entry that
 * still waits after `mab_window` later entries is force-retired with a
 * `leftover` violation that names the silent cores. Entries that are
 * complete when they arrive (fills, updates, invalidations, DMA writes)
 * change state at once and are not queued. Never scans the whole MAB.
 */
#include "engine-internal.h"

#include <stdio.h>
#include <string.h>

static void cores_list(char *buf, size_t size, uint32_t mask)
{
	size_t k = 0;

	buf[0] = 0;
	for (unsigned c = 0; c < 32 && k + 4 < size; c++)
		if (mask & (1u << c))
			k += (size_t)snprintf(buf + k, size - k, "%s%u",
					      k ? "," : "", c);
}

static void mab_leftover(struct msr_engine *e, const struct mab_ent *m,
			 const char *why)
{
	char cores[100];

	cores_list(cores, sizeof(cores), m->await);
	if (m->type == MAB_COMMIT) {
		struct chist *h = msr_hist_get(e, m->co);

		msr_eng_report(e, MSR_V_LEFTOVER, m->strand,
			       h && h->iseq ? h->iseq : 0, m->pa, 8,
			       "commit co=%llu of store #%llu of strand %u to 0x%llx at cycle %u (event %llu) never got the invalidation/update answer of core(s) %s%s",
			       (unsigned long long)m->co,
			       (unsigned long long)m->sseq, m->strand,
			       (unsigned long long)m->pa, m->ts,
			       (unsigned long long)m->event, cores, why);
	} else {
		msr_eng_report(e, MSR_V_LEFTOVER, -1, 0, m->pa, 16,
			       "eviction of 0x%llx at cycle %u (event %llu) never got the EVICT_INV of core(s) %s%s",
			       (unsigned long long)m->pa, m->ts,
			       (unsigned long long)m->event, cores, why);
	}
}

void msr_mab_retire(struct msr_engine *e)
{
	while (e->mab.head < e->mab.tail) {
		struct mab_ent *m = msr_ring_at(&e->mab, e->mab.head);

		if (m->await)
			break;
		if (m->type == MAB_COMMIT && m->sseq) {
			struct strand *s = &e->strands[m->strand];
			struct st_ent *se = msr_ring_at(&s->st, m->sseq);

			if (se) {
				se->flags |= STF_CRETIRED;
				msr_eng_st_retire(e, s);
			}
		}
		e->mab.head++;
	}
}

struct mab_ent *msr_mab_push(struct msr_engine *e, uint64_t *seq)
{
	struct mab_ent *m;

	while (msr_ring_count(&e->mab) >= e->mab_window) {
		m = msr_ring_at(&e->mab, e->mab.head);
		if (m->await) {
			char why[80];

			snprintf(why, sizeof(why),
				 "; force-retired after %llu later entries",
				 (unsigned long long)e->mab_window);
			mab_leftover(e, m, why);
			if (m->type == MAB_COMMIT)
				msr_eng_pend_drop(e, e->mab.head, m);
			m->await = 0;
		}
		msr_mab_retire(e);
	}
	m = msr_ring_push_raw(&e->mab);
	if (!m) {
		e->nomem = 1;
		return NULL;
	}
	*seq = e->mab.tail - 1;
	return m;
}

void msr_mab_leftovers(struct msr_engine *e)
{
	for (uint64_t q = e->mab.head; q < e->mab.tail; q++) {
		struct mab_ent *m = msr_ring_at(&e->mab, q);

		if (!m->await)
			continue;
		msr_eng_where(e, m->event, m->offset, m->ts);
		mab_leftover(e, m, " before the trace ended");
	}
	msr_eng_where(e, e->last_index, e->last_offset, e->last_ts);
	for (size_t i = 0; i < e->dma_map.m.cap; i++) {
		uint64_t k = e->dma_map.m.slots[i].key;

		if (k == UINT64_MAX)
			continue;
		msr_eng_report(e, MSR_V_LEFTOVER, -1, 0, k, 16,
			       "%u DMA write(s) with inv=1 to 0x%llx were never followed by the EVICT of that 16-byte piece",
			       e->dma_map.m.slots[i].val, (unsigned long long)k);
	}
}

/* Drop answered (or force-retired) EVICTs from the front of a bank FIFO. */
static void bank_trim(struct msr_engine *e, struct msr_ring *r)
{
	while (r->head < r->tail) {
		struct mab_ent *m = msr_ring_at(&e->mab,
						*(uint64_t *)msr_ring_at(r, r->head));

		if (m && m->await)
			break;
		r->head++;
	}
}

void msr_eng_evict(struct msr_engine *e, const struct msr_event *ev)
{
	uint64_t pa = ev->pa & ~15ULL, mseq;
	unsigned bank = (unsigned)((pa >> 6) % e->cfg.l2_banks);
	struct mab_ent *m;
	uint64_t *bq;
	uint32_t *d = msr_omap_get(&e->dma_map, pa);

	if (d && --*d == 0)
		msr_omap_del_at(&e->dma_map, d);
	m = msr_mab_push(e, &mseq);
	if (!m)
		return;
	memset(m, 0, sizeof(*m));
	m->type = MAB_EVICT;
	m->await = m->invvec = ev->invvec & ((1u << (e->cfg.cores - 1)) * 2 - 1);
	m->ts = ev->ts;
	m->pa = pa;
	m->event = ev->index;
	m->offset = ev->offset;
	if (m->await) {
		bank_trim(e, &e->banks[bank]);
		bq = msr_ring_push_raw(&e->banks[bank]);
		if (bq)
			*bq = mseq;
		else
			e->nomem = 1;
	}
	msr_mab_retire(e);
}

/* An EVICT_INV answers the oldest EVICT of its bank awaiting its core:
 * the scan starts at the bank's floor for that core, past the EVICTs it
 * answered or found not waiting for it, so it never passes the same ones
 * again (behind an EVICT whose answer never comes, the bank's FIFO keeps
 * every later EVICT until the MAB window gives it up). */
void msr_eng_evict_inv(struct msr_engine *e, const struct msr_event *ev)
{
	unsigned core = ev->cid, bank = ev->bank;
	struct msr_ring *r;
	uint64_t *floor, q;

	if (core >= e->cfg.cores || bank >= e->cfg.l2_banks)
		goto unmatched;
	r = &e->banks[bank];
	bank_trim(e, r);
	floor = &e->evict_floor[(size_t)bank * e->cfg.cores + core];
	for (q = *floor > r->head ? *floor : r->head; q < r->tail; q++) {
		struct mab_ent *m = msr_ring_at(&e->mab,
						*(uint64_t *)msr_ring_at(r, q));

		e->st.bind_steps++;
		if (!m || !(m->await & (1u << core)))
			continue;
		*floor = q + 1;
		m->await &= ~(1u << core);
		msr_l1_drop_range(e, core, m->pa, 16);
		msr_eng_fills_answer(e, core, m->pa, 16,
				     *(uint64_t *)msr_ring_at(r, q), NULL, false);
		if (!m->await)
			msr_mab_retire(e);
		return;
	}
	*floor = q;
unmatched:
	msr_eng_report(e, MSR_V_UNMATCHED_EVICT_INV, -1, 0, 0, 0,
		       "core %u answered an eviction of L2 bank %u at cycle %u, but no eviction of that bank awaits core %u",
		       core, bank, ev->ts, core);
}

void msr_eng_dma(struct msr_engine *e, const struct msr_event *ev)
{
	static const struct msr_src dma = {0, 0, 0, MSR_RF_DMA};
	uint8_t d[8];

	msr_be64_bytes(ev->data, d);
	msr_mem_write(e, ev->pa & ~7ULL, d, ev->bmask, &dma);
	if (ev->inv) {
		uint64_t piece = ev->pa & ~15ULL;
		uint32_t *v = msr_omap_get(&e->dma_map, piece);

		if (v)
			++*v;
		else if (msr_omap_put(&e->dma_map, piece, 1) < 0)
			e->nomem = 1;
	}
}

void msr_eng_slam(struct msr_engine *e, const struct msr_event *ev)
{
	static const struct msr_src dma = {0, 0, 0, MSR_RF_DMA};
	static const struct msr_src init = {0, 0, 0, MSR_RF_INIT};
	uint64_t pa8 = ev->pa & ~7ULL;
	uint8_t d[8], cur[8], known, fresh = 0;
	struct msr_src src[8];

	/*
	 * Back-door memory write, visible at once. Bytes no store has written
	 * yet get their initial value this way (co 0); overwriting a stored
	 * byte is outside the commit order, like DMA.
	 */
	msr_be64_bytes(ev->data, d);
	msr_mem_read(e, pa8, cur, &known, src);
	for (unsigned i = 0; i < 8; i++)
		if (src[i].kind == MSR_RF_INIT)
			fresh |= (uint8_t)(0x80u >> i);
	msr_mem_write(e, pa8, d, ev->bmask & fresh, &init);
	msr_mem_write(e, pa8, d, ev->bmask & (uint8_t)~fresh, &dma);
}

void msr_eng_mem_check(struct msr_engine *e, const struct msr_event *ev)
{
	static const struct msr_src dma = {0, 0, 0, MSR_RF_DMA};
	struct msr_violation v;
	uint64_t pa = ev->pa & ~7ULL, first = UINT64_MAX;
	unsigned nbad = 0;

	msr_eng_viol_init(e, &v, MSR_V_MEM_CHECK, -1);
	for (unsigned k = 0; k < 8; k++) {
		uint8_t d[8], known, bad = 0;
		struct msr_src src[8];
		const uint8_t *want = ev->bytes + 8 * k;

		msr_mem_read(e, pa + 8 * k, d, &known, src);
		msr_mem_learn(e, pa + 8 * k, want, (uint8_t)~known);
		for (unsigned i = 0; i < 8; i++) {
			uint8_t bit = (uint8_t)(0x80u >> i);

			v.expected[8 * k + i] = want[i];
			v.observed[8 * k + i] = (known & bit) ? d[i] : want[i];
			if ((known & bit) && d[i] != want[i]) {
				bad |= bit;
				nbad++;
				if (first == UINT64_MAX) {
					first = pa + 8 * k + i;
					msr_eng_store_ref(e, &src[i],
							  &v.observed_from);
				}
			}
		}
		/* trust the testbench from here on: one report per corruption */
		msr_mem_write(e, pa + 8 * k, want, bad, &dma);
	}
	if (!nbad)
		return;
	v.pa = pa;
	v.size = 64;
	v.has_values = true;
	v.vlen = 64;
	v.source = "memory";
	msr_eng_viol_emit(e, &v,
			  "memory check of the 64 bytes at 0x%llx failed: %u byte(s) differ, first at 0x%llx (testbench expects 0x%02x, the replayed memory holds 0x%02x)",
			  (unsigned long long)pa, nbad, (unsigned long long)first,
			  v.expected[first - pa], v.observed[first - pa]);
}
