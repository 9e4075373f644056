/*
 * stores.c - the store side of the memory-sync model: ST_ISSUE, ST_COMMIT
 * (binding, merge into L2, commit history, MAB entry, msr_commit emission),
 * ST_ACK (normal and RMO), ST_INV / ST_UPDATE and ST_POP.
 *
 * A store entry stays in its strand's ring (store buffer, then retired or
 * RMO buffer) and bypass-searchable until its commit has retired from the
 * MAB. Commits bind through the strand's chain of live stores to the block
 * (youngest first, kept here for the bypass decision too); acks use cursors;
 * nothing here scans the MAB or allocates per event.
 */
#include "engine-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Store `q` committed and awaits its ST_ACK (struct strand's `acks`:
 * stores mostly commit in program order, so the push usually stops at
 * once). False when memory is short. */
static bool ackq_push(struct strand *s, uint64_t q)
{
	uint32_t i;

	if (s->acks_n == s->acks_cap) {
		uint32_t cap = s->acks_cap ? 2 * s->acks_cap : 16;
		uint64_t *a = realloc(s->acks, (size_t)cap * sizeof(*a));

		if (!a)
			return false;
		s->acks = a;
		s->acks_cap = cap;
	}
	for (i = s->acks_n++; i; i = (i - 1) / 2) {
		uint64_t p = s->acks[(i - 1) / 2];

		if (p <= q)
			break;
		s->acks[i] = p;
	}
	s->acks[i] = q;
	return true;
}

/* Remove the oldest store from `acks`. */
static void ackq_pop(struct strand *s)
{
	uint32_t n = --s->acks_n, i = 0;
	uint64_t last = s->acks[n];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && s->acks[c + 1] < s->acks[c])
			c++;
		if (last <= s->acks[c])
			break;
		s->acks[i] = s->acks[c];
		i = c;
	}
	if (n)
		s->acks[i] = last;
}

/* Store `q` leaves the block chains (retired, dropped or popped). */
static inline void st_unlink(struct strand *s, uint64_t q,
			     const struct st_ent *se)
{
	uint32_t *v = msr_map_get(&s->st_blocks, se->pa & ~7ULL);

	if (v && msr_chain_leave(&s->st, v, NULL, q,
				 offsetof(struct st_ent, link)))
		msr_map_del_at(&s->st_blocks, v);
}

/* A new store `seq` after store `prev` in its block's chain: its bytes'
 * youngest older writers, from those of the store before it, so that the
 * bypass decision reaches them without walking the chain. */
static void st_link_bytes(struct strand *s, struct st_ent *se, uint64_t seq,
			  uint64_t prev)
{
	const struct st_ent *p = msr_ring_at(&s->st, prev);
	uint64_t gap = seq - prev;
	uint16_t g = gap > ST_BACK_FAR ? ST_BACK_FAR : (uint16_t)gap;
#ifdef __SSE2__
	/* lane i is byte i (mask bit 0x80 >> i); branch-free, since the masks
	 * are data, and a link past ST_BACK_FAR saturates there */
	const __m128i bit = _mm_set_epi16(0x01, 0x02, 0x04, 0x08, 0x10, 0x20,
					  0x40, (short)0x80);
	__m128i back = _mm_loadu_si128((const __m128i *)p->wr_back);
	__m128i gv = _mm_set1_epi16((short)g);
	__m128i on = _mm_cmpeq_epi16(
		_mm_and_si128(_mm_set1_epi16(p->bmask), bit), bit);
	__m128i none = _mm_cmpeq_epi16(back, _mm_setzero_si128());
	__m128i further = _mm_andnot_si128(none, _mm_adds_epu16(back, gv));

	_mm_storeu_si128((__m128i *)se->wr_back,
			 _mm_or_si128(_mm_and_si128(on, gv),
				      _mm_andnot_si128(on, further)));
#else
	for (unsigned i = 0; i < 8; i++) {
		uint32_t d = 0;

		if (p->bmask & (0x80u >> i))
			d = g;
		else if (p->wr_back[i])
			d = (uint32_t)g + p->wr_back[i];
		se->wr_back[i] = (uint16_t)(d > ST_BACK_FAR ? ST_BACK_FAR : d);
	}
#endif
}

void msr_eng_st_retire(struct msr_engine *e, struct strand *s)
{
	uint64_t head = s->st.head;

	while (s->st.head < s->st.tail) {
		struct st_ent *se = msr_ring_at(&s->st, s->st.head);
		unsigned need = STF_COMMITTED | STF_ACKED | STF_CRETIRED;
		bool done = (se->flags & STF_POPPED) ||
			((se->flags & need) == need &&
			 ((se->flags & STF_EXEC) || !e->have_steps ||
			  s->short_reported));

		if (!done)
			break;
		st_unlink(s, s->st.head, se);
		s->st.head++;
	}
	if (s->st.head == head)
		return; /* the cursors are at or above an unmoved head */
	if (s->st_exec_cur < s->st.head)
		s->st_exec_cur = s->st.head;
	if (s->st_rmo_ack_cur < s->st.head)
		s->st_rmo_ack_cur = s->st.head;
	if (s->st_live_tail < s->st.head)
		s->st_live_tail = s->st.head;
}

static void st_force_drop(struct msr_engine *e, struct strand *s, unsigned t)
{
	struct st_ent *se = msr_ring_at(&s->st, s->st.head);

	msr_eng_report(e, MSR_V_LEFTOVER, (int)t, se->iseq, se->pa, 0,
		       "strand %u has %llu stores in flight (limit): dropped the oldest, store #%llu issued at event %llu, which was never %s",
		       t, (unsigned long long)msr_ring_count(&s->st),
		       (unsigned long long)s->st.head,
		       (unsigned long long)se->issue_event,
		       !(se->flags & STF_COMMITTED) ? "committed"
		       : !(se->flags & STF_ACKED)   ? "acknowledged"
		       : !(se->flags & STF_CRETIRED) ? "retired"
						    : "executed");
	/* the oldest live store: if it awaits its ack, it is first in `acks`
	 * (it leaves its chain as it retires) */
	if (s->acks_n && s->acks[0] == s->st.head)
		ackq_pop(s);
	se->flags |= STF_POPPED;
	msr_eng_st_retire(e, s);
}

void msr_eng_st_issue(struct msr_engine *e, const struct msr_event *ev)
{
	unsigned t = ev->tnum;
	struct strand *s = &e->strands[t];
	struct st_ent *prev = s->st_live_tail > s->st.head
		? msr_ring_at(&s->st, s->st_live_tail - 1) : NULL;
	struct st_ent *first, *se;
	uint64_t seq, gseq = 0;
	uint32_t *v;
	bool found;

	/* the ST_ISSUEs of one block store form one group (for ST_POP) */
	if (prev && ev->itype == MSR_IT_BLOCK_STORE &&
	    prev->itype == MSR_IT_BLOCK_STORE &&
	    !(prev->flags & (STF_EXEC | STF_POPPED)) &&
	    (prev->pa & ~63ULL) == (ev->pa & ~63ULL)) {
		uint64_t g = msr_st_group(s->st_live_tail - 1, prev);

		first = msr_ring_at(&s->st, g);
		/* (a group spread over 65536 popped stores starts anew) */
		if (first && first->nent < 8 && s->st.tail - g <= UINT16_MAX)
			gseq = g;
	}
	if (msr_ring_full(&s->st))
		st_force_drop(e, s, t);
	/* may move the ring: no pointers kept */
	se = msr_ring_push_raw(&s->st);
	if (!se) {
		e->nomem = 1;
		return;
	}
	memset(se, 0, sizeof(*se));
	seq = s->st.tail - 1;
	first = gseq ? msr_ring_at(&s->st, gseq) : NULL;
	if (first) {
		se->gback = (uint16_t)(seq - gseq);
		first->nent++;
	} else {
		se->nent = 1;
		if (!e->have_steps && ev->itype != MSR_IT_ATOMIC)
			e->st.stores++;
	}
	if (!(ev->pa & MSR_IO_BIT))
		msr_mem_prefetch(e, ev->pa);
	se->pa = ev->pa;
	v = msr_map_upsert(&s->st_blocks, ev->pa & ~7ULL, &found);
	if (v) {
		uint64_t p = msr_chain_push(&s->st, v, found, seq,
					    offsetof(struct st_ent, link),
					    offsetof(struct st_ent, flags),
					    STF_POPPED | STF_COMMITTED);

		if (p)
			st_link_bytes(s, se, seq, p);
	} else {
		e->nomem = 1;
	}
	msr_be64_bytes(ev->data, se->data);
	se->bmask = ev->bmask;
	se->itype = ev->itype;
	if (ev->itype == MSR_IT_BLOCK_STORE || ev->itype == MSR_IT_BLK_INIT_ST)
		se->flags |= STF_RMO;
	se->issue_event = ev->index;
	se->issue_offset = ev->offset;
	se->issue_ts = ev->ts;
	s->st_live_tail = s->st.tail;
}

/*
 * Commits awaiting ST_INV/ST_UPDATE answers, per strand, L1 line and core,
 * in commit order: an answer takes the oldest commit of its strand to its
 * line that awaits its core, the first of that core's list. A commit is in
 * the list of each core it awaits until that core answers or the commit is
 * force-retired (msr_eng_pend_drop), so an answer looks at one commit,
 * however many others of its strand to its line wait for other cores (a
 * core that never answers keeps every commit to the lines it holds).
 */

/* Listed commits are in the MAB: rebuild their seqs from 32 bits. */
static uint64_t mab_seq32(const struct msr_engine *e, uint32_t v)
{
	return msr_ring_seq32(&e->mab, v);
}

/* The `pend` key of a strand's commits to the L1 line holding pa that
 * await `core`. */
static uint64_t pend_key(const struct msr_engine *e, uint64_t pa,
			 unsigned strand, unsigned core)
{
	return ((pa & ~(uint64_t)(e->line - 1)) << 8 | strand) << 5 | core;
}

static struct pend_node *pend_node(const struct msr_engine *e, uint32_t ref)
{
	return msr_pool_at(&e->pend_nodes, ref - 1);
}

/* Append commit `mseq` (m) to the list of each core it awaits. */
static void pend_add(struct msr_engine *e, struct strand *s, uint64_t mseq,
		     const struct mab_ent *m)
{
	for (uint32_t w = m->await; w; w &= w - 1) {
		unsigned core = (unsigned)__builtin_ctz(w);
		bool found;
		uint32_t *v = msr_map_upsert(&e->pend,
					     pend_key(e, m->pa, m->strand, core),
					     &found);
		uint32_t idx = msr_pool_alloc_raw(&e->pend_nodes);
		struct pend_node *n;

		if (!v || idx == UINT32_MAX) {
			if (v && !found)
				msr_map_del_at(&e->pend, v);
			e->nomem = 1;
			return;
		}
		n = pend_node(e, idx + 1);
		n->mseq = (uint32_t)mseq;
		n->next = 0;
		if (found)
			pend_node(e, *msr_map_aux(v))->next = idx + 1;
		else
			*v = idx + 1;
		*msr_map_aux(v) = idx + 1;
	}
	s->pend_n++;
}

/* Remove the first commit of the list at `v`. */
static void pend_pop(struct msr_engine *e, uint32_t *v)
{
	uint32_t ref = *v, next = pend_node(e, ref)->next;

	msr_pool_free(&e->pend_nodes, ref - 1);
	if (next)
		*v = next;
	else
		msr_map_del_at(&e->pend, v);
}

void msr_eng_pend_drop(struct msr_engine *e, uint64_t mseq,
		       const struct mab_ent *m)
{
	/* the MAB retires in order and a commit leaves a core's list when
	 * the core answers: a commit at the MAB head is first in each list
	 * it is still in */
	for (uint32_t w = m->await; w; w &= w - 1) {
		uint32_t *v = msr_map_get(&e->pend,
					  pend_key(e, m->pa, m->strand,
						   (unsigned)__builtin_ctz(w)));

		if (v && mab_seq32(e, pend_node(e, *v)->mseq) == mseq)
			pend_pop(e, v);
	}
	if (m->await)
		e->strands[m->strand].pend_n--;
}

/*
 * Bind a commit to the oldest uncommitted store of the strand to pa8.
 * Commits bind in program order per block, so the walk starts where the
 * last one stopped (msr_chain_bind) and never passes the committed stores
 * that wait for their commit to retire (behind a commit whose invalidation
 * never came, tens of thousands: the MAB retires in order) nor the
 * uncommitted stores behind the one it binds.
 */
static struct st_ent *st_bind_uncommitted(struct msr_engine *e,
					  struct strand *s, uint64_t pa8,
					  uint64_t *seq_out)
{
	uint32_t *v = msr_map_get(&s->st_blocks, pa8);

	return v ? msr_chain_bind(&s->st, v, offsetof(struct st_ent, link),
				  offsetof(struct st_ent, flags),
				  STF_POPPED | STF_COMMITTED, seq_out,
				  &e->st.bind_steps)
		 : NULL;
}

/* Apply the commit's bytes to L2; returns the bytes written in pa8. */
static uint8_t st_apply(struct msr_engine *e, const struct msr_event *ev,
			const struct st_ent *se, const struct msr_src *src,
			uint8_t *zeroed)
{
	uint64_t pa8 = ev->pa & ~7ULL;
	uint8_t wmask = ev->bmask & se->bmask;
	static const uint8_t zero[8];

	msr_mem_write(e, pa8, se->data, wmask, src);
	if (se->itype == MSR_IT_BLK_INIT_ST && !ev->l2hit) {
		/*
		 * An L2 miss of a block-init store zeroes the rest of the line.
		 * In its own block the zeroes belong to the commit; in the other
		 * blocks they are outside that block's commit order (like DMA).
		 */
		static const struct msr_src side = {0, 0, 0, MSR_RF_DMA};
		uint64_t l2 = pa8 & ~(uint64_t)(e->cfg.l2_line - 1);

		for (uint64_t a = l2; a < l2 + e->cfg.l2_line; a += 8)
			msr_mem_write(e, a, zero,
				      a == pa8 ? (uint8_t)~wmask : 0xff,
				      a == pa8 ? src : &side);
		*zeroed = (uint8_t)~wmask;
	}
	return wmask;
}

static void st_unmatched_commit(struct msr_engine *e,
				const struct msr_event *ev, uint64_t co)
{
	unsigned t = ev->tnum;
	uint64_t mseq;
	struct mab_ent *m;

	msr_eng_report(e, MSR_V_UNMATCHED_ST_COMMIT, (int)t, 0, ev->pa, 0,
		       "strand %u committed to 0x%llx at cycle %u (commit co=%llu), but it has no issued, uncommitted store to that 8-byte block",
		       t, (unsigned long long)ev->pa, ev->ts,
		       (unsigned long long)co);
	/* keep a data-less entry so the invalidations it caused still match */
	m = msr_mab_push(e, &mseq);
	if (!m)
		return;
	memset(m, 0, sizeof(*m));
	m->type = MAB_COMMIT;
	m->strand = (uint8_t)t;
	m->await = m->invvec = ev->invvec & ((1u << (e->cfg.cores - 1)) * 2 - 1);
	m->ts = ev->ts;
	m->pa = ev->pa & ~7ULL;
	m->co = co;
	m->event = ev->index;
	m->offset = ev->offset;
	if (m->await)
		pend_add(e, &e->strands[t], mseq, m);
	msr_mab_retire(e);
}

static void st_emit_commit(struct msr_engine *e, const struct msr_event *ev,
			   const struct st_ent *se, uint64_t sseq,
			   const struct mab_ent *m, uint8_t zeroed)
{
	struct msr_commit c;

	if (!e->sink.commit)
		return;
	memset(&c, 0, sizeof(c));
	c.co = m->co;
	c.strand = ev->tnum;
	c.sseq = sseq;
	c.iseq = (se->flags & STF_EXEC) ? se->iseq : 0;
	c.pa8 = m->pa;
	c.mask = m->mask | zeroed; /* block-init zeroes count as written */
	memcpy(c.data, m->data, 8);
	c.rmo = (se->flags & STF_RMO) != 0;
	c.atomic = se->itype == MSR_IT_ATOMIC;
	c.ts = ev->ts;
	c.event = ev->index;
	c.offset = ev->offset;
	e->sink.commit(e->sink.ctx, &c);
}

/* Enter the commit in the bounded history and its block's chain. */
static void st_record(struct msr_engine *e, const struct mab_ent *m,
		      const struct st_ent *se, uint8_t zeroed, struct blk *b)
{
	struct chist *h = &e->hist[m->co & (MSR_COMMIT_HISTORY - 1)];

	/* Each slot was last written 65,536 commits (4 MiB) ago, so its line
	 * has usually left the L2 and a store to it waits for the line; the
	 * stores after it can fill the store buffer behind it and stall the
	 * replay. Asking for the slot 16 commits ahead hides that wait. */
	__builtin_prefetch(&e->hist[(m->co + 16) & (MSR_COMMIT_HISTORY - 1)], 1);
	memset(h, 0, sizeof(*h));
	h->co = m->co;
	h->sseq = m->sseq;
	h->iseq = (se->flags & STF_EXEC) ? se->iseq : 0;
	h->prev_co = b ? b->last_co : 0;
	h->pa8 = m->pa;
	h->event = m->event;
	h->ts = m->ts;
	h->strand = m->strand;
	h->mask = m->mask | zeroed;
	memcpy(h->data, m->data, 8);
	if (b)
		b->last_co = m->co;
}

void msr_eng_st_commit(struct msr_engine *e, const struct msr_event *ev)
{
	unsigned t = ev->tnum;
	struct strand *s = &e->strands[t];
	uint64_t pa8 = ev->pa & ~7ULL, sseq = 0, mseq, co = ++e->co;
	struct st_ent *se = st_bind_uncommitted(e, s, pa8, &sseq);
	struct msr_src src;
	struct mab_ent *m;
	struct blk *b;
	uint8_t zeroed = 0;

	if (!se) {
		st_unmatched_commit(e, ev, co);
		return;
	}
	se->flags |= STF_COMMITTED;
	if (!(se->flags & STF_RMO) && !ackq_push(s, sseq))
		e->nomem = 1;
	se->co = co;
	se->commit_mask = ev->bmask;
	se->commit_event = ev->index;
	se->commit_ts = ev->ts;
	if (ev->bmask & ~se->bmask)
		msr_eng_report(e, MSR_V_ADDRESS_MISMATCH, (int)t,
			       se->flags & STF_EXEC ? se->iseq : 0, ev->pa, 8,
			       "strand %u committed bytes mask=0x%02x at 0x%llx at cycle %u, but its store #%llu only wrote mask=0x%02x",
			       t, ev->bmask, (unsigned long long)pa8, ev->ts,
			       (unsigned long long)sseq, se->bmask);
	src.co = co;
	src.sseq = sseq;
	src.strand = (uint8_t)t;
	src.kind = MSR_RF_COMMIT;
	m = msr_mab_push(e, &mseq);
	if (!m)
		return;
	m->type = MAB_COMMIT;
	m->strand = (uint8_t)t;
	m->mask = st_apply(e, ev, se, &src, &zeroed);
	m->rmo = (se->flags & STF_RMO) != 0;
	m->atomic = se->itype == MSR_IT_ATOMIC;
	/* every field is set here (data, known, sources by msr_mem_image) */
	m->await = m->invvec = ev->invvec & ((1u << (e->cfg.cores - 1)) * 2 - 1);
	m->ts = ev->ts;
	m->pa = pa8;
	m->sseq = sseq;
	m->co = co;
	m->event = ev->index;
	m->offset = ev->offset;
	b = msr_mem_image(e, pa8, m->data, &m->known, m->src, &m->per_byte,
			  &m->zmask, &m->m2);
	st_record(e, m, se, zeroed, b);
	if (m->await)
		pend_add(e, s, mseq, m);
	st_emit_commit(e, ev, se, sseq, m, zeroed);
	msr_mab_retire(e);
}

/* The store an ST_ACK acknowledges: the oldest RMO store not yet acked
 * (RMO stores may be acked before their commit), or the oldest committed,
 * unacknowledged normal store. */
static struct st_ent *st_find_ack(struct msr_engine *e, struct strand *s,
				  bool rmo)
{
	if (rmo) {
		uint64_t *cur = &s->st_rmo_ack_cur;

		/* the cursor passes what it skips: amortised O(1) */
		for (; *cur < s->st.tail; (*cur)++) {
			struct st_ent *se = msr_ring_at(&s->st, *cur);

			e->st.bind_steps++;
			if (!(se->flags & (STF_POPPED | STF_ACKED)) &&
			    (se->flags & STF_RMO))
				return se;
		}
		return NULL;
	}
	while (s->acks_n) {
		uint64_t q = s->acks[0];
		struct st_ent *se = q >= s->st.head ? msr_ring_at(&s->st, q)
						    : NULL;

		e->st.bind_steps++;
		ackq_pop(s);
		if (se && !(se->flags & (STF_POPPED | STF_ACKED)))
			return se;
	}
	return NULL;
}

void msr_eng_st_ack(struct msr_engine *e, const struct msr_event *ev)
{
	unsigned t = ev->tnum;
	struct strand *s = &e->strands[t];
	struct st_ent *se = st_find_ack(e, s, ev->rmo != 0);

	if (!se) {
		msr_eng_report(e, MSR_V_UNMATCHED_ST_ACK, (int)t, 0, 0, 0,
			       ev->rmo ? "strand %u got an RMO store acknowledgement at cycle %u, but it has no unacknowledged RMO store"
				       : "strand %u got a store acknowledgement at cycle %u, but it has no committed, unacknowledged store",
			       t, ev->ts);
		return;
	}
	se->flags |= STF_ACKED;
	msr_eng_st_retire(e, s);
}

/* The oldest commit of strand t to `line` that awaits `core`, taken off
 * that core's list; its MAB seq in *seq_out. */
static struct mab_ent *st_take_pending(struct msr_engine *e, unsigned t,
				       uint64_t line, unsigned core,
				       uint64_t *seq_out)
{
	uint32_t *v = msr_map_get(&e->pend, pend_key(e, line, t, core));

	while (v) {
		uint64_t q = mab_seq32(e, pend_node(e, *v)->mseq);
		struct mab_ent *m = msr_ring_at(&e->mab, q);
		bool last = !pend_node(e, *v)->next;

		e->st.bind_steps++;
		pend_pop(e, v);
		if (m && (m->await & (1u << core))) {
			*seq_out = q;
			return m;
		}
		if (last)
			break;
	}
	return NULL;
}

void msr_eng_st_inv(struct msr_engine *e, const struct msr_event *ev,
		    bool update)
{
	unsigned t = ev->tnum;
	unsigned core = update ? t / e->tpc : ev->cid;
	uint64_t line = ev->pa & ~(uint64_t)(e->line - 1);
	struct strand *s = &e->strands[t];
	struct mab_ent *m = NULL;
	uint64_t mseq = 0;

	if (core < e->cfg.cores)
		m = st_take_pending(e, t, line, core, &mseq);
	if (!update && core < e->cfg.cores)
		msr_l1_drop_range(e, core, line, e->line);
	if (!m) {
		msr_eng_report(e, update ? MSR_V_UNMATCHED_ST_UPDATE
					 : MSR_V_UNMATCHED_ST_INV,
			       (int)t, 0, ev->pa, e->line,
			       "core %u %s line 0x%llx at cycle %u for a store of strand %u, but no commit of that strand to the line awaits core %u",
			       core, update ? "updated" : "invalidated",
			       (unsigned long long)line, ev->ts, t, core);
		return;
	}
	m->await &= ~(1u << core);
	if (!m->await)
		s->pend_n--;
	if (update)
		msr_l1_update(e, core, m->pa, m->data, m->known, m->src,
			      m->per_byte, m->zmask, m->m2, ev->ts);
	msr_eng_fills_answer(e, core, m->pa, 8, mseq, m, update);
	if (!m->await)
		msr_mab_retire(e);
}

void msr_eng_st_pop(struct msr_engine *e, const struct msr_event *ev)
{
	unsigned t = ev->tnum;
	struct strand *s = &e->strands[t];
	struct st_ent *se = s->st_live_tail > s->st.head
		? msr_ring_at(&s->st, s->st_live_tail - 1) : NULL;
	uint64_t g;

	if (!se || (se->flags & (STF_EXEC | STF_COMMITTED))) {
		msr_eng_report(e, MSR_V_POP_EMPTY, (int)t, 0, 0, 0,
			       "strand %u popped its youngest store, but it has no issued store that has neither executed nor committed",
			       t);
		return;
	}
	g = msr_st_group(s->st_live_tail - 1, se);
	if (g < s->st.head)
		g = s->st.head;
	for (uint64_t q = s->st_live_tail; q-- > g;) { /* youngest first */
		struct st_ent *p = msr_ring_at(&s->st, q);

		st_unlink(s, q, p);
		p->flags |= STF_POPPED;
	}
	s->st_live_tail = g;
	while (s->st_live_tail > s->st.head) {
		struct st_ent *p = msr_ring_at(&s->st, s->st_live_tail - 1);

		if (!(p->flags & STF_POPPED))
			break;
		s->st_live_tail--;
	}
	msr_eng_st_retire(e, s);
}
