/*
 * loads.c - the load side of the memory-sync model: LD_ISSUE (with the
 * model's own full-bypass decision), LD_DATA (binding and value capture from
 * the store buffer, the core's L1 or L2), LD_FILL (L1 pieces as of the
 * LD_DATA) and LD_POP.
 *
 * Lookups walk per-strand chains of live loads with the same key (8-byte
 * block, or address for I/O) and of live stores to the same block; nothing
 * here scans the MAB or a whole ring, or allocates per event.
 */
#include "engine-internal.h"

#include <stddef.h>
#include <string.h>

static uint8_t byte_mask(unsigned off, unsigned n)
{
	unsigned end = off + n > 8 ? 8 : off + n;

	return (uint8_t)((0xffu >> off) & ~(0xffu >> end));
}

/* ld_unlink of an I/O load, whose chain has an execution start too */
static __attribute__((noinline)) void
ld_unlink_io(struct strand *s, uint64_t q, const struct ld_ent *le,
	     uint32_t *v)
{
	uint32_t *x = msr_map_get(&s->ld_keys, le->key | LD_EXEC_KEY);

	if (!msr_chain_leave(&s->ld, v, x ? msr_map_aux(x) : NULL, q,
			     offsetof(struct ld_ent, link)))
		return;
	msr_map_del_at(&s->ld_keys, v);
	/* (deleting may move the other slot: look it up again) */
	if (x && (v = msr_map_get(&s->ld_keys, le->key | LD_EXEC_KEY)))
		msr_map_del_at(&s->ld_keys, v);
}

/* Load `q` leaves its key chain (retired, dropped or popped). */
static inline void ld_unlink(struct strand *s, uint64_t q,
			     const struct ld_ent *le)
{
	uint32_t *v = msr_map_get(&s->ld_keys, le->key);

	if (!v)
		return;
	if (le->flags & LDF_IO)
		ld_unlink_io(s, q, le, v);
	else if (msr_chain_leave(&s->ld, v, NULL, q,
				 offsetof(struct ld_ent, link)))
		msr_map_del_at(&s->ld_keys, v);
}

void msr_eng_ld_retire(struct msr_engine *e, struct strand *s)
{
	uint64_t head = s->ld.head;

	while (s->ld.head < s->ld.tail) {
		struct ld_ent *le = msr_ring_at(&s->ld, s->ld.head);
		/* a strand whose step log ran out executes nothing more */
		bool done = (le->flags & LDF_POPPED) ||
			((le->flags & LDF_DATA) &&
			 ((le->flags & LDF_EXEC) || !e->have_steps ||
			  s->short_reported));

		if (!done)
			break;
		ld_unlink(s, s->ld.head, le);
		s->ld.head++;
	}
	if (s->ld.head == head)
		return; /* the cursors are at or above an unmoved head */
	if (s->ld_exec_cur < s->ld.head)
		s->ld_exec_cur = s->ld.head;
	if (s->ld_live_tail < s->ld.head)
		s->ld_live_tail = s->ld.head;
}

/* The ring is at its limit: drop the oldest load so memory stays bounded. */
static void ld_force_drop(struct msr_engine *e, struct strand *s, unsigned t)
{
	struct ld_ent *le = msr_ring_at(&s->ld, s->ld.head);

	msr_eng_report(e, MSR_V_LEFTOVER, (int)t,
		       le->flags & LDF_EXEC ? le->iseq : 0, le->pa, le->acc,
		       "strand %u has %llu loads in flight (limit): dropped the oldest, issued at event %llu, which %s",
		       t, (unsigned long long)msr_ring_count(&s->ld),
		       (unsigned long long)le->issue_event,
		       le->flags & LDF_DATA ? "never executed"
					    : "never got its data");
	le->flags |= LDF_POPPED; /* leaves its chain as it retires */
	msr_eng_ld_retire(e, s);
}

/* Searchable while in the store buffer (until its ack) and, once acked,
 * until its commit has retired. */
static bool st_searchable(const struct st_ent *se)
{
	return !(se->flags & STF_POPPED) &&
	       (se->flags & (STF_ACKED | STF_CRETIRED)) !=
		       (STF_ACKED | STF_CRETIRED);
}

/* Whether store q, se, decides the load's bypass: the youngest older
 * store still searchable that writes any of its bytes does, and the
 * decision is then recorded in the load. */
static bool ld_bypass_decides(struct ld_ent *le, const struct st_ent *se,
			      uint64_t q)
{
	if (!st_searchable(se) || !(se->bmask & le->mask))
		return false;
	if (se->flags & STF_RMO)
		le->flags |= LDF_RMO_OVERLAP;
	else if ((se->bmask & le->mask) == le->mask) {
		le->bypass_sseq = q;
		memcpy(le->bypass_data, se->data, 8);
	}
	return true;
}

/* The decision by walking the block's whole chain, youngest first. */
static void ld_bypass_walk(struct msr_engine *e, struct strand *s,
			   struct ld_ent *le, uint64_t q)
{
	while (q >= s->st.head) {
		struct st_ent *se = msr_ring_at(&s->st, q);

		e->st.bind_steps++;
		if (!se)
			return;
		if (ld_bypass_decides(le, se, q))
			return;
		q = msr_chain_older(q, &se->link);
	}
}

/* The model's bypass decision for a load of `mask` in block pa8: the
 * youngest searchable store of the chain writing any of its bytes. It
 * starts at the chain's youngest store, which usually decides; a store
 * that does not (it writes none of the bytes, or is no longer searchable)
 * hands the bytes it was the candidate for on to their previous writers
 * (`wr_back`), and the youngest candidate is looked at next. So stores to
 * the block's other bytes cost nothing, however many a strand has in
 * flight. */
static void ld_bypass(struct msr_engine *e, struct strand *s,
		      struct ld_ent *le, uint64_t pa8)
{
	uint64_t q = msr_eng_st_youngest(s, pa8), w[8] = {0};
	uint8_t at = le->mask; /* the bytes whose candidate is q */

	while (q >= s->st.head) {
		const struct st_ent *se = msr_ring_at(&s->st, q);

		e->st.bind_steps++;
		if (!se)
			return;
		if (ld_bypass_decides(le, se, q))
			return;
		for (unsigned i = 0; i < 8; i++) {
			if (!(at & (0x80u >> i)))
				continue;
			if (se->wr_back[i] == ST_BACK_FAR) {
				ld_bypass_walk(e, s, le,
					       msr_chain_older(q, &se->link));
				return;
			}
			w[i] = se->wr_back[i] ? q - se->wr_back[i] : 0;
		}
		q = 0, at = 0;
		for (unsigned i = 0; i < 8; i++) {
			if (!(le->mask & (0x80u >> i)))
				continue;
			if (w[i] > q)
				q = w[i], at = 0;
			if (w[i] == q)
				at |= (uint8_t)(0x80u >> i);
		}
	}
}

void msr_eng_ld_issue(struct msr_engine *e, const struct msr_event *ev)
{
	struct strand *s = &e->strands[ev->tnum];
	unsigned itype = ev->itype ? ev->itype : MSR_IT_LOAD;
	unsigned nent = 1, acc;
	uint64_t base = ev->pa, group = 0;
	bool io = ev->pa & MSR_IO_BIT;

	if (itype == MSR_IT_PREFETCH)
		return; /* no memory-model effect */
	switch (itype) {
	case MSR_IT_BLOCK_LOAD:
		nent = 8, acc = 64, base = ev->pa & ~63ULL;
		break;
	case MSR_IT_QUAD_LOAD:
		nent = 2, acc = 16, base = ev->pa & ~15ULL;
		break;
	case MSR_IT_DOUBLE_LOAD:
		acc = 8;
		break;
	default:
		acc = 1u << (ev->size > 3 ? 3 : ev->size);
		break;
	}
	if (!io) {
		msr_mem_prefetch(e, base);
		msr_l1_prefetch(e, ev->tnum / e->tpc, base);
	}
	if (!e->have_steps) {
		if (itype == MSR_IT_ATOMIC)
			e->st.atomics++;
		else
			e->st.loads++;
	}
	for (unsigned k = 0; k < nent; k++) {
		struct ld_ent *le;
		uint64_t seq;
		uint32_t *v;
		bool found;

		if (msr_ring_full(&s->ld))
			ld_force_drop(e, s, ev->tnum);
		le = msr_ring_push_raw(&s->ld);
		if (!le) {
			e->nomem = 1;
			return;
		}
		/* data, src and bypass_data are written before they are read
		 * (capture, or the repair read of a load without data) */
		memset(le, 0, offsetof(struct ld_ent, bypass_data));
		seq = s->ld.tail - 1;
		if (!group)
			group = seq;
		le->pa = nent > 1 ? base + 8 * k : ev->pa;
		le->key = io ? le->pa : le->pa & ~7ULL;
		v = msr_map_upsert(&s->ld_keys, le->key, &found);
		if (v)
			msr_chain_push(&s->ld, v, found, seq,
				       offsetof(struct ld_ent, link),
				       offsetof(struct ld_ent, flags),
				       LDF_POPPED | LDF_DATA);
		else
			e->nomem = 1;
		if (v && io && !found) {
			/* a new I/O chain: its execution start (msr_eng_ld_io) */
			v = msr_map_upsert(&s->ld_keys, le->key | LD_EXEC_KEY,
					   &found);
			if (v)
				*v = *msr_map_aux(v) = (uint32_t)seq;
			else
				e->nomem = 1;
		}
		le->group = group;
		le->itype = (uint8_t)itype;
		le->nent = (uint8_t)nent;
		le->acc = (uint8_t)acc;
		le->mask = acc >= 8 ? 0xff : byte_mask(le->pa & 7, acc);
		le->issue_event = ev->index;
		le->issue_offset = ev->offset;
		le->issue_ts = ev->ts;
		if (io)
			le->flags |= LDF_IO;
		if (seq != group)
			le->flags |= LDF_LATER;
		if (nent == 1 && !io && itype != MSR_IT_ATOMIC)
			ld_bypass(e, s, le, le->pa & ~7ULL);
	}
	s->ld_live_tail = s->ld.tail;
}

/*
 * The strand's oldest unexecuted load of I/O address pa (the first entry
 * of its group), or NULL; the caller executes it. I/O loads may execute by
 * address, those of one address in program order, so the walk starts
 * where the last one stopped (msr_chain_bind, from the address's
 * execution start) and passes each executed entry once.
 */
struct ld_ent *msr_eng_ld_io(struct msr_engine *e, struct strand *s,
			     uint64_t pa, uint64_t *seq)
{
	uint32_t *v = msr_map_get(&s->ld_keys, pa | LD_EXEC_KEY);

	return v ? msr_chain_bind(&s->ld, v, offsetof(struct ld_ent, link),
				  offsetof(struct ld_ent, flags),
				  LDF_EXEC | LDF_POPPED | LDF_LATER, seq,
				  &e->st.bind_steps)
		 : NULL;
}

static uint64_t ld_iseq(struct msr_engine *e, unsigned t,
			const struct ld_ent *le)
{
	return le->flags & LDF_EXEC ? le->iseq : msr_eng_next_iseq(e, t);
}

/* The slot of an L1 line in a core's fill_lines counts. */
static inline unsigned fill_slot(const struct msr_engine *e, uint64_t line)
{
	return (unsigned)(line >> __builtin_ctz(e->line)) % MSR_FILL_SLOTS;
}

/* Keep the core's mask of strands with fills outstanding (tpc <= 64). */
static inline void fills_mark(struct msr_engine *e, const struct strand *s)
{
	unsigned t = (unsigned)(s - e->strands);
	uint64_t bit = 1ULL << (t % e->tpc % 64);

	if (s->fill_n)
		e->core_fills[t / e->tpc] |= bit;
	else
		e->core_fills[t / e->tpc] &= ~bit;
}

/* Record an L2 miss's line as of now. */
static void ld_push_fill(struct msr_engine *e, struct strand *s,
			 const struct ld_ent *le, uint64_t seq)
{
	struct fill_rec *f;
	uint64_t line = le->pa & ~(uint64_t)(e->line - 1);
	uint16_t *lines = e->fill_lines[(unsigned)(s - e->strands) / e->tpc];

	if (s->fill_n == MSR_FILLS) { /* the RTL never filled the oldest */
		lines[fill_slot(e, s->fills[s->fill_head].line)]--;
		s->fill_head = (s->fill_head + 1) % MSR_FILLS;
		s->fill_n--;
	}
	f = &s->fills[(s->fill_head + s->fill_n) % MSR_FILLS];
	s->fill_n++;
	fills_mark(e, s);
	lines[fill_slot(e, line)]++;
	f->line = line;
	f->lseq = seq;
	f->mpos = e->mab.tail;
	f->dead = false;
	/* the load's own block too: le holds it expanded, memory compact */
	msr_l1_capture(e, f);
}

static void ld_capture(struct msr_engine *e, unsigned t, struct ld_ent *le,
		       uint64_t seq, const struct msr_event *ev)
{
	struct strand *s = &e->strands[t];
	uint64_t pa8 = le->pa & ~7ULL;
	unsigned core = t / e->tpc;
	unsigned dsrc = ev->dsrc;

	le->dsrc = (uint8_t)dsrc;
	le->data_event = ev->index;
	le->data_ts = ev->ts;
	le->flags |= LDF_DATA;
	if (dsrc == MSR_DSRC_STB) {
		if (le->bypass_sseq) {
			memcpy(le->data, le->bypass_data, 8);
			le->src_pb = false;
			le->src_zm = le->src_m2 = 0;
			le->src[0].kind = MSR_RF_BYPASS;
			le->src[0].strand = (uint8_t)t;
			le->src[0].sseq = le->bypass_sseq;
			le->src[0].co = 0;
			le->known = 0xff;
			return;
		}
		if (le->flags & LDF_RMO_OVERLAP)
			msr_eng_report(e, MSR_V_ORDER_ASSUMPTION, (int)t,
				       ld_iseq(e, t, le), le->pa, le->acc,
				       "strand %u got store-buffer data for its load of 0x%llx at cycle %u, but the youngest older store to those bytes is an RMO store, whose data is never bypassed",
				       t, (unsigned long long)le->pa, ev->ts);
		else
			msr_eng_report(e, MSR_V_BYPASS_NOT_COVERED, (int)t,
				       ld_iseq(e, t, le), le->pa, le->acc,
				       "strand %u got store-buffer data for its load of %u bytes at 0x%llx at cycle %u, but no older store of the strand fully covers those bytes",
				       t, le->acc, (unsigned long long)le->pa,
				       ev->ts);
	} else if (dsrc == MSR_DSRC_L1) {
		if (msr_l1_read_c(e, core, pa8, le->data, &le->known, le->src,
				  &le->src_zm, &le->src_m2, &le->src_pb,
				  &le->l1_fill_ts))
			return;
		msr_eng_report(e, MSR_V_L1_HIT_NOT_PRESENT, (int)t,
			       ld_iseq(e, t, le), le->pa, le->acc,
			       "strand %u (core %u) hit its L1 for 0x%llx at cycle %u, but core %u does not hold that line (never filled, or invalidated/evicted since)",
			       t, core, (unsigned long long)le->pa, ev->ts, core);
	}
	le->src_pb = msr_mem_read_c(e, pa8, le->data, &le->known, le->src,
				    &le->src_zm, &le->src_m2);
	if (dsrc == MSR_DSRC_L2 && !(le->flags & LDF_IO) &&
	    (le->itype == MSR_IT_LOAD || le->itype == MSR_IT_DOUBLE_LOAD ||
	     (le->itype == MSR_IT_QUAD_LOAD && seq == le->group)))
		ld_push_fill(e, s, le, seq);
}

/*
 * Bind LD_DATA to the oldest data-less live load with `key` (the caller
 * gives it its data). LD_DATA binds in program order per key, so the walk
 * starts where the last one stopped (msr_chain_bind) and never passes the
 * loads that have their data but have not retired (behind a load that
 * never gets its data, all the strand's later loads, tens of thousands:
 * loads retire in order) nor the loads still waiting behind the one it
 * binds (tens of thousands issued to one block before their data).
 */
static struct ld_ent *ld_bind_dataless(struct msr_engine *e, struct strand *s,
				       uint64_t key, uint64_t *seq_out)
{
	uint32_t *v = msr_map_get(&s->ld_keys, key);

	return v ? msr_chain_bind(&s->ld, v, offsetof(struct ld_ent, link),
				  offsetof(struct ld_ent, flags),
				  LDF_POPPED | LDF_DATA, seq_out,
				  &e->st.bind_steps)
		 : NULL;
}

void msr_eng_ld_data(struct msr_engine *e, const struct msr_event *ev)
{
	unsigned t = ev->tnum;
	struct strand *s = &e->strands[t];
	bool io = ev->pa & MSR_IO_BIT;
	uint64_t key = io ? ev->pa : ev->pa & ~7ULL, seq;
	struct ld_ent *le = ld_bind_dataless(e, s, key, &seq);

	if (!le) {
		msr_eng_report(e, MSR_V_UNMATCHED_LD_DATA, (int)t, 0, ev->pa, 0,
			       "strand %u got load data for 0x%llx at cycle %u, but it has no issued load to that %s still waiting for data",
			       t, (unsigned long long)ev->pa, ev->ts,
			       io ? "address" : "8-byte block");
		return;
	}
	ld_capture(e, t, le, seq, ev);
	/* quad and block loads bind in 16-byte pieces: two entries */
	if (le->itype == MSR_IT_QUAD_LOAD || le->itype == MSR_IT_BLOCK_LOAD) {
		struct ld_ent *l2 = msr_ring_at(&s->ld, seq + 1);

		if (l2 && l2->group == le->group &&
		    !(l2->flags & (LDF_DATA | LDF_POPPED)))
			ld_capture(e, t, l2, seq + 1, ev);
	}
	msr_eng_ld_retire(e, s);
}

void msr_eng_ld_fill(struct msr_engine *e, const struct msr_event *ev)
{
	unsigned t = ev->tnum;
	struct strand *s = &e->strands[t];
	uint64_t line = ev->pa & ~(uint64_t)(e->line - 1);
	unsigned core = t / e->tpc;

	for (unsigned i = 0; i < s->fill_n; i++) {
		struct fill_rec *f = &s->fills[(s->fill_head + i) % MSR_FILLS];

		if (f->line != line)
			continue;
		if (!f->dead && !msr_l1_fill(e, core, f, ev->ts))
			return;
		e->fill_lines[core][fill_slot(e, line)]--;
		/* close the gap: at most MSR_FILLS records move */
		for (unsigned j = i; j + 1 < s->fill_n; j++)
			s->fills[(s->fill_head + j) % MSR_FILLS] =
				s->fills[(s->fill_head + j + 1) % MSR_FILLS];
		s->fill_n--;
		fills_mark(e, s);
		return;
	}
	msr_eng_report(e, MSR_V_UNMATCHED_LD_FILL, (int)t, 0, ev->pa, e->line,
		       "strand %u filled the L1 line 0x%llx of core %u at cycle %u, but it has no outstanding L2 load miss to that line",
		       t, (unsigned long long)line, core, ev->ts);
}

/*
 * The core applies its crossbar returns in order: a data return (LD_DATA)
 * is written into L1 before any invalidation or update queued behind it,
 * even when the monitor reports the LD_FILL after that answer. So an
 * answer for a commit (or EVICT) newer than the fill's data acts on the
 * fill: an invalidation drops it, an update patches its piece. An answer
 * for an older entry left the fill alone: its data already holds the store.
 */
static inline void fills_answer_strand(struct msr_engine *e, struct strand *s,
				uint64_t pa, unsigned len, uint64_t mseq,
				const struct mab_ent *m, bool update)
{
	uint64_t lmask = (uint64_t)e->line - 1;
	unsigned k = (unsigned)((pa & lmask) / 8);

	for (unsigned i = 0; i < s->fill_n; i++) {
		struct fill_rec *f = &s->fills[(s->fill_head + i) % MSR_FILLS];

		if (f->dead || f->mpos > mseq ||
		    f->line + e->line <= pa || f->line >= pa + len)
			continue;
		if (!update) {
			f->dead = true;
			continue;
		}
		memcpy(f->data + 8 * k, m->data, 8);
		f->per_byte[k] = m->per_byte;
		f->zmask[k] = m->zmask;
		f->m2[k] = m->m2;
		if (m->per_byte) {
			memcpy(f->src + 8 * k, m->src, sizeof(m->src));
		} else {
			f->src[8 * k] = m->src[0];
			if (m->m2)
				f->src[8 * k + 1] = m->src[1];
		}
		f->known[k] = m->known;
	}
}

void msr_eng_fills_answer(struct msr_engine *e, unsigned core, uint64_t pa,
			  unsigned len, uint64_t mseq, const struct mab_ent *m,
			  bool update)
{
	struct strand *first = &e->strands[core * e->tpc];
	uint64_t lmask = (uint64_t)e->line - 1;
	bool any = false;

	/* most answers are for lines with no fill outstanding on the core */
	for (uint64_t l = pa & ~lmask; l <= ((pa + len - 1) & ~lmask);
	     l += e->line)
		any |= e->fill_lines[core][fill_slot(e, l)] != 0;
	if (!any)
		return;
	if (e->tpc > 64) {
		for (unsigned i = 0; i < e->tpc; i++)
			fills_answer_strand(e, first + i, pa, len, mseq, m,
					    update);
		return;
	}
	/* only the core's strands with a fill outstanding */
	for (uint64_t todo = e->core_fills[core]; todo; todo &= todo - 1)
		fills_answer_strand(e, first + __builtin_ctzll(todo), pa, len,
				    mseq, m, update);
}

void msr_eng_ld_pop(struct msr_engine *e, const struct msr_event *ev)
{
	unsigned t = ev->tnum;
	struct strand *s = &e->strands[t];
	struct ld_ent *le = s->ld_live_tail > s->ld.head
		? msr_ring_at(&s->ld, s->ld_live_tail - 1) : NULL;
	uint64_t g;

	if (!le || (le->flags & LDF_EXEC)) {
		msr_eng_report(e, MSR_V_POP_EMPTY, (int)t, 0, 0, 0,
			       "strand %u popped its youngest load, but it has no issued load that has not executed",
			       t);
		return;
	}
	g = le->group < s->ld.head ? s->ld.head : le->group;
	for (uint64_t q = s->ld_live_tail; q-- > g;) { /* youngest first */
		struct ld_ent *p = msr_ring_at(&s->ld, q);

		ld_unlink(s, q, p);
		p->flags |= LDF_POPPED;
	}
	s->ld_live_tail = g;
	while (s->ld_live_tail > s->ld.head) {
		struct ld_ent *p = msr_ring_at(&s->ld, s->ld_live_tail - 1);

		if (!(p->flags & LDF_POPPED))
			break;
		s->ld_live_tail--;
	}
	msr_eng_ld_retire(e, s);
}
