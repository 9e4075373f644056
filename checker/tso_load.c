/*
 * tso_load.c - where each byte of a load may sit in memory order, and the
 * placement of loads (part of the TSO pass; tso.c has the model).
 *
 * A load is resolved one source (a run of bytes from one store) at a time
 * against the strand's own stores and the block's commit facts, giving
 * each byte an interval of commit-order positions (after the store it read,
 * before the next store to that byte); the load is then placed at the
 * earliest position its strand allows, or reported under the rule it
 * breaks. The usual load is placed from a summary of its sources
 * (load_sum); the byte-by-byte walk is kept for reportable or unusual ones.
 */
#include <stddef.h>
#include <string.h>

#include "tso-internal.h"

/* The facts of block `pa8` for a load (into *v), NULL when no commit has
 * touched it. */
static const struct tso_bview *bview_get(struct msr_tso *t, uint64_t pa8,
					 struct tso_bview *v)
{
	const struct tso_block *b = tso_block_find(&t->blocks, pa8, false);

	if (!b)
		return NULL;
	v->r = NULL;
	if (!(b->latest & TSO_BLK_MIXED)) {
		v->latest = &b->latest;
		v->first = &b->first;
		v->m = 0;
		return v;
	}
	if (b->first & TSO_BLK_WIDE) {
		const struct tso_bytes *w =
			tso_pool_at(&t->wide, b->first & ~TSO_BLK_WIDE);

		v->latest = w->latest;
		v->first = w->first;
		v->m = 7;
		return v;
	}
	v->r = tso_narrow_rec(t, b->first);
	v->base = (b->latest & ~TSO_BLK_MIXED) - 1;
	return v;
}

/* co of the next store to byte `pa` after the store with co `co`, 0 when
 * none has committed yet. Beyond the commit ring the newest store to the
 * byte stands in: an upper bound, so no false alarm can come of it. */
static uint64_t next_store(const struct msr_tso *t,
			   const struct tso_bview *b, uint64_t co, uint64_t pa)
{
	const struct tso_crec *c;
	unsigned i = pa & 7;
	uint64_t l;

	if (!co)
		return b ? tso_bv_first(b, i) : 0;
	c = tso_crec_get(t, co);
	if (c && c->pa8 == (pa & ~7ull))
		return c->next[i];
	if (!b || (l = tso_bv_latest(b, i)) <= co)
		return 0;
	return l;
}

/* co of the first commit to byte `pa` after position `d` (d commits seen);
 * 0 when none yet. Walks the per-byte chain a few steps, then falls back
 * to the newest commit to the byte (an upper bound: never a false alarm). */
static uint64_t next_after(const struct msr_tso *t,
			   const struct tso_bview *b, uint64_t d, uint64_t pa)
{
	unsigned i = pa & 7, k;
	uint64_t c, l;

	if (!b || (l = tso_bv_latest(b, i)) <= d)
		return 0;
	for (c = tso_bv_first(b, i), k = 0; c && c <= d && k < 64; k++) {
		const struct tso_crec *r = tso_crec_get(t, c);

		if (!r || r->pa8 != (pa & ~7ull))
			return l;
		c = r->next[i];
	}
	return c && c > d ? c : l;
}

/* The proof op of own store entry `sseq` (zero when it did not execute). */
static void own_proof(struct tso_strand *s, uint64_t sseq,
		      struct msr_proof_op *out)
{
	const struct tso_srec *y = tso_srec_get(s, sseq);

	memset(out, 0, sizeof(*out));
	if (y && y->have_op)
		tso_srec_info(y, out);
}

/* A byte written by DMA_ST / MEM_SLAM at a known place of the commit
 * order: the load sits after that place and before the next commit. */
static bool dma_resolve(struct msr_tso *t, struct tso_strand *s,
			const struct tso_bview *bk, struct tso_load *l,
			const struct msr_rf *rf, uint64_t yco, bool own,
			uint64_t ysseq, struct tso_byte *out)
{
	struct msr_proof_op yp;

	if (!rf->placed || rf->co > t->n)
		return false; /* place unknown: no constraint */
	out->dma = true;
	out->lo = out->src = rf->co;
	out->hi = next_after(t, bk, rf->co, out->pa);
	if (own && (!yco || rf->co < yco)) {
		own_proof(s, ysseq, &yp);
		tso_report_own_stale(t, l, out, yco, &yp);
		return false;
	}
	return true;
}

/* Resolve one source byte of a load against the strand's own stores;
 * false (and a violation) when the source alone breaks an axiom. The
 * general case (bypasses, DMA writes, unaligned blocks): src_resolve
 * handles the usual commits and initial values a source at a time. */
static bool byte_resolve(struct msr_tso *t, struct tso_strand *s,
			 struct tso_load *l, const struct msr_rf *rf,
			 const struct tso_own *own, const struct tso_bview *bk,
			 uint64_t pa, struct tso_byte *out)
{
	unsigned i = pa & 7;
	uint64_t ysseq = own ? tso_own_sseq(t, own, i) : 0;
	uint64_t yco = own ? tso_own_co(t, own, i) : 0;
	bool yrmo = own && (own->rmo & (0x80u >> i));
	bool mine = rf->strand == l->op->strand;
	uint64_t c = rf->kind == MSR_RF_COMMIT ? rf->co : 0;
	struct msr_proof_op yp;

	out->pa = pa;
	out->dma = false;
	if (rf->kind == MSR_RF_BYPASS) {
		struct tso_srec *bs = mine ? tso_srec_get(s, rf->sseq) : NULL;

		if (mine && !ysseq && rf->sseq <= s->last_st_sseq &&
		    (!bs || (bs->co && bs->co <= s->f_ll))) {
			/* its entry retired: committed before the strand's
			 * position, so the bypass is a read of that commit */
			out->lo = 0;
			out->src = bs ? bs->co : 0;
			out->hi = out->src ? next_store(t, bk, out->src, pa) : 0;
			return true;
		}
		if (!mine || rf->sseq != ysseq) {
			/* the proof op exists only on report paths: not
			 * cleared per byte */
			memset(&yp, 0, sizeof(yp));
			yp.strand = rf->strand;
			if (bs && bs->have_op)
				tso_srec_info(bs, &yp);
			tso_report_bypass(t, l, rf, &yp, pa);
			return false;
		}
		out->lo = 0;
		out->src = yco;
		out->hi = yco ? next_store(t, bk, yco, pa) : 0;
		return true;
	}
	if (rf->kind == MSR_RF_DMA)
		return dma_resolve(t, s, bk, l, rf, ysseq && !yrmo ? yco : 0,
				   ysseq && !yrmo, ysseq, out);
	if (rf->kind == MSR_RF_COMMIT && c > t->n)
		return false; /* never committed (end of input) */
	if (rf->kind == MSR_RF_COMMIT && mine &&
	    l->op->kind == MSR_OP_ATOMIC && rf->sseq == l->op->blk[0].sseq) {
		out->lo = out->src = c; /* its own write: an atomicity break */
		out->hi = next_store(t, bk, c, pa);
		return true;
	}
	if (rf->kind == MSR_RF_COMMIT && mine && rf->sseq > s->last_st_sseq) {
		tso_report_own_later(t, l, c, pa);
		return false;
	}
	out->src = c;
	out->hi = next_store(t, bk, c, pa);
	if (ysseq && rf->kind == MSR_RF_COMMIT && mine && rf->sseq == ysseq) {
		out->lo = 0; /* its own youngest store: bypass or not */
		return true;
	}
	if (ysseq && !yrmo && (!yco || c < yco)) {
		own_proof(s, ysseq, &yp);
		tso_report_own_stale(t, l, out, yco, &yp);
		return false;
	}
	out->lo = c;
	return true;
}

static const uint64_t no_next[8];

/*
 * The bytes `m` of block `blk` that source `rf` (a commit or the initial
 * value) supplied: byte_resolve's rules with the per-source facts worked
 * out once and the per-byte part reduced to the next-store link and the
 * own-store check.
 */
static void src_resolve(struct msr_tso *t, struct tso_strand *s,
			struct tso_load *l, const struct msr_op_block *blk,
			const struct msr_rf *rf, unsigned m,
			const struct tso_own *own, const struct tso_bview *bk)
{
	bool commit = rf->kind == MSR_RF_COMMIT;
	bool mine = commit && rf->strand == l->op->strand;
	uint64_t c = commit ? rf->co : 0;
	const uint64_t *nx = NULL; /* next store per byte, else the newest */
	unsigned nxm = 7, i; /* byte i's next store: nx[i & nxm] */
	uint64_t firsts[8];

	if (commit && c > t->n)
		return; /* never committed (end of input) */
	if (mine && l->op->kind == MSR_OP_ATOMIC &&
	    rf->sseq == l->op->blk[0].sseq) {
		own = NULL; /* its own write: an atomicity break */
	} else if (mine && rf->sseq > s->last_st_sseq) {
		if (l->nb < 64)
			tso_report_own_later(t, l, c,
					     blk->pa8 + (unsigned)__builtin_clz(m) - 24u);
		return;
	}
	if (!c) {
		nx = bk ? tso_bv_firsts(bk, firsts, &nxm) : no_next;
	} else {
		const struct tso_crec *cr = tso_crec_get(t, c);

		if (cr && cr->pa8 == blk->pa8)
			nx = cr->next;
	}
	for (; m; m &= ~(0x80u >> i)) {
		struct tso_byte *out = &l->b[l->nb];
		uint64_t lo = c;

		i = (unsigned)__builtin_clz(m) - 24u;
		if (l->nb >= 64)
			return;
		out->pa = blk->pa8 + i;
		out->val = blk->load[i];
		out->dma = false;
		out->src = c;
		out->hi = nx ? nx[i & nxm]
			     : bk && tso_bv_latest(bk, i) > c ? tso_bv_latest(bk, i) : 0;
		if (own && (own->live & (0x80u >> i))) {
			uint64_t ysseq = tso_own_sseq(t, own, i);
			uint64_t yco = tso_own_co(t, own, i);

			if (mine && rf->sseq == ysseq) {
				lo = 0; /* its own youngest store */
			} else if (!(own->rmo & (0x80u >> i)) &&
				   (!yco || c < yco)) {
				struct msr_proof_op yp;

				out->lo = 0;
				own_proof(s, ysseq, &yp);
				tso_report_own_stale(t, l, out, yco, &yp);
				continue;
			}
		}
		out->lo = lo;
		l->nb++;
	}
}

void tso_load_resolve(struct msr_tso *t, struct tso_strand *s,
		      struct tso_load *l, unsigned b0, unsigned bn)
{
	unsigned b, k, i;

	l->nb = 0;
	for (b = b0; b < b0 + bn && b < l->op->nblocks; b++) {
		const struct msr_op_block *blk = &l->op->blk[b];
		const struct tso_own *own =
			tso_own_find(s, blk->pa8);
		struct tso_bview bv;
		const struct tso_bview *bk = bview_get(t, blk->pa8, &bv);

		for (k = 0; k < blk->nrf; k++) {
			const struct msr_rf *rf = &blk->rf[k];
			unsigned m = rf->mask & blk->mask;

			if (!m)
				continue;
			if ((rf->kind != MSR_RF_BYPASS &&
			     rf->kind != MSR_RF_DMA) && !(blk->pa8 & 7)) {
				src_resolve(t, s, l, blk, rf, m, own, bk);
				continue;
			}
			for (i = 0; i < 8; i++) {
				if (!(m & (0x80u >> i)))
					continue;
				if (l->nb >= 64)
					continue;
				memset(&l->b[l->nb], 0, sizeof(l->b[0]));
				l->b[l->nb].val = blk->load[i];
				if (byte_resolve(t, s, l, rf, own, bk,
						 blk->pa8 + i, &l->b[l->nb]))
					l->nb++;
			}
		}
	}
}

/* Witness for a byte whose interval ends at or before the position. */
static void stale_pick(struct msr_tso *t, struct tso_strand *s,
		       struct tso_load *l, const struct tso_byte *b,
		       const struct tso_wit *self)
{
	if (s->f_ll >= b->hi && s->w_ll.type == TSO_WIT_RF &&
	    tso_overlaps(s->w_ll.via_pa, s->w_ll.via_size, b->pa, 1))
		tso_report_stale(t, l, &s->w_ll, MSR_V_TSO_COHERENCE, b);
	else if (s->f_sl >= b->hi && s->w_sl.type == TSO_WIT_OWN)
		tso_report_stale(t, l, &s->w_sl, MSR_V_TSO_MEMBAR, b);
	else if (s->f_ll >= b->hi && s->w_ll.type == TSO_WIT_OWN)
		tso_report_stale(t, l, &s->w_ll, MSR_V_TSO_MEMBAR, b);
	else if (s->f_ll >= b->hi && s->w_ll.type == TSO_WIT_RF)
		tso_report_stale(t, l, &s->w_ll, MSR_V_TSO_LOAD_ORDER, b);
	else
		tso_report_stale(t, l, self, MSR_V_TSO_VALUE, b);
}

/* Start the scratch load: only its header, the byte slots are set one by
 * one as load_resolve fills them and the proof op is built on demand
 * (clearing all 64 slots costs more than the whole placement of a small
 * load). */
void tso_load_begin(struct tso_load *l, const struct msr_op *op)
{
	l->op = op;
	l->nb = 0;
	l->reported = false;
	l->self_ok = false;
}

/* The witness's via op, the load itself: a single-block load's value stays
 * raw (built only for a report) unless its proof op exists already. */
static void wit_via(struct tso_load *l, struct tso_wit *w)
{
	const struct msr_op *op = l->op;

	if (l->self_ok || op->nblocks != 1) {
		w->via = *tso_load_self(l);
		w->via_lazy = false;
		return;
	}
	w->via.strand = op->strand;
	w->via.op = op->step_op;
	w->via.rel = 0;
	w->via.iseq = op->iseq;
	w->via.pc = op->pc;
	w->via.pa = op->pa;
	w->via.value = 0;
	w->via.size = op->size;
	w->via.ts = op->ts;
	w->via.event = op->event;
	w->via_lazy = true;
	w->via_mask = op->blk[0].mask;
	memcpy(w->via_raw, op->kind == MSR_OP_STORE ? op->blk[0].store
						    : op->blk[0].load,
	       sizeof(w->via_raw));
}

/* The witness "this load read store `lo` at byte `b`". */
static void self_wit(const struct msr_tso *t, struct tso_load *l,
		     uint64_t lo, const struct tso_byte *b, struct tso_wit *w)
{
	if (!lo) {
		memset(w, 0, sizeof(*w));
		return;
	}
	/* every field an RF witness shows is set (`barrier` is read only
	 * with has_barrier): no clearing first */
	w->type = TSO_WIT_RF;
	w->has_barrier = false;
	w->rmo = false;
	w->co = lo;
	wit_via(l, w);
	w->via_pa = l->op->pa;
	w->via_size = l->op->size;
	w->dma = b->dma;
	if (w->dma)
		tso_proof_dma(b->pa, b->val, &w->store);
	else
		tso_proof_store(t, lo, b->pa, &w->store);
}

/* load_sum for the bytes `m` a load took from its store buffer: their lo is
 * 0, only the next-store bound counts. False when byte_resolve would
 * report them. */
static bool bypass_sum(struct msr_tso *t, struct tso_strand *s,
		       const struct msr_op *op, const struct msr_op_block *blk,
		       const struct msr_rf *rf, unsigned m,
		       const struct tso_own *own, const struct tso_bview *bk,
		       uint64_t *hi1, unsigned *nb)
{
	const struct tso_srec *bs;
	unsigned i;

	if (rf->strand != op->strand)
		return false;
	bs = tso_srec_get(s, rf->sseq);
	for (; m; m &= ~(0x80u >> i)) {
		uint64_t ysseq, src, h;

		i = (unsigned)__builtin_clz(m) - 24u;
		ysseq = own ? tso_own_sseq(t, own, i) : 0;
		if (!ysseq && rf->sseq <= s->last_st_sseq &&
		    (!bs || (bs->co && bs->co <= s->f_ll)))
			src = bs ? bs->co : 0; /* its entry retired */
		else if (rf->sseq != ysseq)
			return false;
		else
			src = tso_own_co(t, own, i);
		h = src ? next_store(t, bk, src, blk->pa8 + i) : 0;
		if (h - 1 < *hi1)
			*hi1 = h - 1;
		++*nb;
	}
	return true;
}

/*
 * The usual load piece without byte records: every source a commit or the
 * initial value, aligned blocks, no bytes of the strand's own stores and
 * nothing to report while resolving. Gives what place_piece needs: the
 * highest lo (and the first byte holding it) and the lowest hi - 1. False
 * when the piece is not that simple; it changes nothing, so the caller
 * can then resolve byte by byte instead.
 */
static bool load_sum(struct msr_tso *t, struct tso_strand *s,
		     const struct tso_load *l, unsigned b0, unsigned bn,
		     uint64_t *lo, struct tso_byte *lo_b, uint64_t *hi1)
{
	const struct msr_op *op = l->op;
	uint64_t vlo = 0, vhi1 = UINT64_MAX, lo_pa = 0; /* in registers */
	uint8_t lo_val = 0;
	unsigned b, k, i, nb = 0;

	for (b = b0; b < b0 + bn && b < op->nblocks; b++) {
		const struct msr_op_block *blk = &op->blk[b];
		const struct tso_own *own;
		struct tso_bview bv;
		const struct tso_bview *bk = NULL;
		bool bk_ok = false; /* bk looked up: most sources never need it */

		if (blk->pa8 & 7)
			return false;
		own = tso_own_find(s, blk->pa8);
		for (k = 0; k < blk->nrf; k++) {
			const struct msr_rf *rf = &blk->rf[k];
			unsigned m = rf->mask & blk->mask;
			bool commit = rf->kind == MSR_RF_COMMIT;
			bool mine = commit && rf->strand == op->strand;
			uint64_t c = commit ? rf->co : 0;
			const uint64_t *nx = NULL;
			unsigned nxm = 7; /* byte i's next store: nx[i & nxm] */
			uint64_t firsts[8];
			unsigned om; /* bytes to check against own stores */

			if (!m)
				continue;
			if (rf->kind == MSR_RF_DMA)
				return false;
			if (!bk_ok && rf->kind == MSR_RF_BYPASS) {
				bk = bview_get(t, blk->pa8, &bv);
				bk_ok = true;
			}
			if (rf->kind == MSR_RF_BYPASS) {
				if (!bypass_sum(t, s, op, blk, rf, m, own, bk,
						&vhi1, &nb))
					return false;
				if (nb > 64)
					return false;
				continue;
			}
			if (commit && c > t->n)
				continue; /* never committed: no byte */
			om = own ? own->live & m : 0;
			if (mine && op->kind == MSR_OP_ATOMIC &&
			    rf->sseq == op->blk[0].sseq)
				om = 0; /* its own write */
			else if (mine && rf->sseq > s->last_st_sseq)
				return false;
			if (c) {
				const struct tso_crec *cr = tso_crec_get(t, c);

				if (cr && cr->pa8 == blk->pa8)
					nx = cr->next;
			}
			if (!nx && !bk_ok) {
				bk = bview_get(t, blk->pa8, &bv);
				bk_ok = true;
			}
			if (!c) {
				nx = bk ? tso_bv_firsts(bk, firsts, &nxm)
					: no_next;
			}
			i = (unsigned)__builtin_clz(m) - 24u;
			if (om) {
				/* bytes of own stores: the youngest one itself
				 * (lo 0), or one older than a stale read
				 * would be (reported by the byte path) */
				unsigned j;

				for (j = 0; j < 8; j++) {
					uint64_t yco;

					if (!(om & (0x80u >> j)) ||
					    (mine &&
					     rf->sseq == tso_own_sseq(t, own, j)))
						continue;
					yco = tso_own_co(t, own, j);
					if (!(own->rmo & (0x80u >> j)) &&
					    (!yco || c < yco))
						return false;
				}
				/* the first byte whose lo is c */
				for (j = i; j < 8; j++)
					if ((m & (0x80u >> j)) &&
					    !((om & (0x80u >> j)) && mine &&
					      rf->sseq == tso_own_sseq(t, own, j)))
						break;
				if (j < 8 && c > vlo) {
					vlo = c;
					lo_pa = blk->pa8 + j;
					lo_val = blk->load[j];
				}
			} else if (c > vlo) {
				vlo = c;
				lo_pa = blk->pa8 + i;
				lo_val = blk->load[i];
			}
			if (m == 0xff && nx) { /* a whole block: no bit walk */
				for (i = 0; i < 8; i++)
					vhi1 = nx[i & nxm] - 1 < vhi1
						       ? nx[i & nxm] - 1 : vhi1;
				nb += 8;
				m = 0;
			}
			for (; m; m &= ~(0x80u >> i)) {
				uint64_t h;

				i = (unsigned)__builtin_clz(m) - 24u;
				h = nx ? nx[i & nxm]
				       : bk && tso_bv_latest(bk, i) > c ? tso_bv_latest(bk, i) : 0;
				if (h - 1 < vhi1)
					vhi1 = h - 1;
				nb++;
			}
			if (nb > 64)
				return false;
		}
	}
	*lo = vlo;
	*hi1 = vhi1;
	lo_b->pa = lo_pa;
	lo_b->val = lo_val;
	lo_b->dma = false;
	return true;
}

/* The position moves up to `p` (into *f / *w), held by this load: through
 * the store it read (`lo`, at byte `b`) or else through its StoreLoad
 * floor. */
static void hold(struct msr_tso *t, struct tso_strand *s, struct tso_load *l,
		 uint64_t p, uint64_t lo, const struct tso_byte *b,
		 uint64_t *f, struct tso_wit *w)
{
	*f = p;
	if (p == lo) {
		self_wit(t, l, lo, b, w); /* names this load as via */
		return;
	}
	*w = s->w_sl;
	wit_via(l, w); /* the load holding it */
	w->via_pa = l->op->pa;
	w->via_size = l->op->size;
}

/* Place a load (or one 16-byte piece of a block load, begun by the
 * caller) after the strand's earlier loads and barriers (s->f_ll). A
 * position above *fmax goes to *fmax / *wmax: s->f_ll / s->w_ll for a
 * plain load, the pieces' running maximum for a block load. */
static void place_piece(struct msr_tso *t, struct tso_strand *s,
			unsigned b0, unsigned bn, uint64_t *fmax,
			struct tso_wit *wmax)
{
	struct tso_load *l = &t->ld;
	uint64_t p, lo, hi1; /* highest lo, lowest (hi - 1) */
	struct tso_byte lo_b;
	unsigned i, lo_i = 0;

	l->reported = false;
	if (load_sum(t, s, l, b0, bn, &lo, &lo_b, &hi1)) {
		p = lo;
		if (s->f_sl > p)
			p = s->f_sl;
		if (s->f_ll > p)
			p = s->f_ll;
		if (p <= hi1) { /* no byte to report */
			if (p > *fmax)
				hold(t, s, l, p, lo, &lo_b, fmax, wmax);
			return;
		}
	}
	lo = 0;
	hi1 = UINT64_MAX;
	tso_load_resolve(t, s, l, b0, bn);
	for (i = 0; i < l->nb; i++) {
		if (l->b[i].lo > lo) {
			lo = l->b[i].lo;
			lo_i = i;
		}
		if (l->b[i].hi - 1 < hi1)
			hi1 = l->b[i].hi - 1;
	}
	p = lo;
	if (s->f_sl > p)
		p = s->f_sl;
	if (s->f_ll > p)
		p = s->f_ll;
	/* some byte's interval ends at or before p: report the first */
	if (!l->reported && p > hi1) {
		struct tso_wit self;

		self_wit(t, l, lo, &l->b[lo_i], &self);
		for (i = 0; i < l->nb && !l->reported; i++)
			if (l->b[i].hi && p >= l->b[i].hi)
				stale_pick(t, s, l, &l->b[i], &self);
	}
	if (p > *fmax)
		hold(t, s, l, p, lo, &l->b[lo_i], fmax, wmax);
}

void tso_place_load(struct msr_tso *t, struct tso_strand *s,
		    const struct msr_op *op)
{
	tso_load_begin(&t->ld, op);
	place_piece(t, s, 0, op->nblocks, &s->f_ll, &s->w_ll);
}

/*
 * A block load returns four 16-byte pieces, each single-copy atomic but not
 * atomic together: each piece follows the strand's earlier loads, the
 * pieces are unordered among themselves, and later loads follow them all.
 * The pieces all start from the unchanged s->f_ll / s->w_ll, so only the
 * highest position's witness is built and nothing is restored between
 * them.
 */
void tso_place_block_load(struct msr_tso *t, struct tso_strand *s,
			  const struct msr_op *op)
{
	uint64_t fmax = s->f_ll;
	struct tso_wit wmax;
	unsigned b, n;

	tso_load_begin(&t->ld, op); /* one proof op for all pieces */
	for (b = 0; b < op->nblocks; b += n) {
		for (n = 1; b + n < op->nblocks &&
			    op->blk[b + n].pa8 >> 4 == op->blk[b].pa8 >> 4;
		     n++)
			;
		place_piece(t, s, b, n, &fmax, &wmax);
	}
	if (fmax > s->f_ll) {
		s->f_ll = fmax;
		s->w_ll = wmax;
	}
}
