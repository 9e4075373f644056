/*
 * tso.c - the TSO checker pass (semantics.md section 5).
 *
 * Input: the engine's commits (global commit order co, one total order of
 * all stores) and executed operations (program order per strand). Because co
 * is given and strands interact only through stores, each strand's loads are
 * placed greedily, in program order, at the earliest gap of co that their
 * constraints allow (earlier loads, membar #StoreLoad / atomic floors, the
 * store read). A load reading store w at byte b must sit before the next
 * store to b after w; that next store is known from per-byte "next" links
 * kept in a ring of recent commits. Every commit a load reads from precedes
 * the load in the input, so a placement never exceeds the newest co seen and
 * every check completes when the load (or store) is processed. Ops whose
 * constraints name a commit not seen yet wait in a per-strand queue.
 * Memory: a ring of recent commits, per-strand store rings (in-flight
 * stores), per-block facts (touched footprint), queues (in-flight window).
 * It never reads traces, never allocates per operation in the steady state,
 * and never reports an execution that TSO allows.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tso-internal.h"
#include "hugepage.h"

#define RING_DEFAULT (1u << 14)
#define ST_RING_INIT 64u
#define ST_RING_MAX (1u << 16)
#define QUEUE_INIT 16u
#define QUEUE_MAX 512u /* ops waiting per strand (about 1 MiB) */
#define MEMBAR_STORELOAD 0x62u /* #StoreLoad, #MemIssue, #Sync */

/* ------------------------------------------------------------------------ */
/* Rings                                                                     */
/* ------------------------------------------------------------------------ */

static struct tso_crec *crec_mut(struct msr_tso *t, uint64_t co)
{
	return (struct tso_crec *)tso_crec_get(t, co);
}

static bool srec_pending(const struct tso_srec *r)
{
	return r->sseq && r->have_op != (r->co != 0);
}

static int srec_grow(struct tso_strand *s)
{
	size_t ncap = s->st_cap * 2, i;
	struct tso_srec *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -1;
	for (i = 0; i < s->st_cap; i++)
		if (s->st[i].sseq)
			n[s->st[i].sseq & (ncap - 1)] = s->st[i];
	free(s->st);
	s->st = n;
	s->st_cap = ncap;
	return 0;
}

/* The entry of store `sseq`, created when new. An older entry in the slot
 * that still waits for its op or commit makes the ring grow. */
static struct tso_srec *srec_put(struct msr_tso *t, struct tso_strand *s,
				 uint64_t sseq)
{
	struct tso_srec *r = tso_srec_get(s, sseq);

	if (r)
		return r;
	r = &s->st[sseq & (s->st_cap - 1)];
	while (srec_pending(r) && s->st_cap < ST_RING_MAX) {
		if (srec_grow(s) < 0) {
			t->nomem = true;
			break;
		}
		r = &s->st[sseq & (s->st_cap - 1)];
	}
	memset(r, 0, sizeof(*r));
	r->sseq = sseq;
	return r;
}

static struct tso_strand *strand_new(struct msr_tso *t, unsigned idx)
{
	struct tso_strand *s = &t->s[idx];

	s->st = calloc(ST_RING_INIT, sizeof(*s->st));
	s->st_cap = ST_RING_INIT;
	/* the own-store map starts small (8 entries of 160 bytes) and
	 * doubles: most strands keep a few blocks of own stores at a time */
	if (!s->st || tso_map_init(&s->own, sizeof(struct tso_own), 8) < 0) {
		free(s->st);
		s->st = NULL;
		t->nomem = true;
		return NULL;
	}
	return s;
}

static inline struct tso_strand *strand_get(struct msr_tso *t, unsigned idx)
{
	return t->s[idx].st ? &t->s[idx] : strand_new(t, idx);
}

void msr_tso_warm(struct msr_tso *t, unsigned strand, uint64_t pa8)
{
	uint64_t h = tso_hash64(pa8 + 1);
	const struct tso_strand *s = &t->s[strand % MSR_MAX_STRANDS];

	if (t->blocks.cap)
		__builtin_prefetch(tso_map_slot(&t->blocks,
						h & (t->blocks.cap - 1)));
	if (s->own.cap)
		__builtin_prefetch(tso_map_slot(&s->own, h & (s->own.cap - 1)));
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                  */
/* ------------------------------------------------------------------------ */

int msr_tso_create(const struct msr_config *cfg,
		   const struct msr_engine_sink *sink, struct msr_tso **out,
		   struct msr_error *err)
{
	struct msr_tso *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		goto nomem;
	if (sink)
		t->sink = *sink;
	t->tpc = cfg && cfg->threads_per_core ? cfg->threads_per_core : 8;
	t->ring_cap = RING_DEFAULT;
	/* calloc: the ring (under MSR_HUGEPAGE_MIN) is then touched, and
	 * faulted in, by the thread that runs the pass as it fills */
	t->ring = calloc(t->ring_cap, sizeof(*t->ring));
	t->s = calloc(MSR_MAX_STRANDS, sizeof(*t->s));
	if (!t->ring || !t->s ||
	    tso_map_init(&t->blocks, sizeof(struct tso_block), 1024) < 0)
		goto nomem;
	t->narrow.esz = sizeof(struct tso_nbytes);
	t->wide.esz = sizeof(struct tso_bytes);
	t->ownx.esz = sizeof(struct tso_own_bytes);
	*out = t;
	return MSR_OK;
nomem:
	msr_tso_destroy(t);
	return msr_error_set(err, MSR_E_NOMEM, "checker", NULL,
			     "cannot allocate the tso checker state");
}

void msr_tso_destroy(struct msr_tso *t)
{
	unsigned i;

	if (!t)
		return;
	if (t->s)
		for (i = 0; i < MSR_MAX_STRANDS; i++) {
			free(t->s[i].st);
			tso_map_release(&t->s[i].own);
			free(t->s[i].done);
			free(t->s[i].q);
		}
	free(t->s);
	free(t->ring);
	tso_map_release(&t->blocks);
	msr_hugepage_release(t->narrow.a, t->narrow.cap * t->narrow.esz);
	msr_hugepage_release(t->wide.a, t->wide.cap * t->wide.esz);
	msr_hugepage_release(t->ownx.a, t->ownx.cap * t->ownx.esz);
	free(t);
}

/* ------------------------------------------------------------------------ */
/* Commits                                                                   */
/* ------------------------------------------------------------------------ */

/* A whole-block commit over bytes whose newest commit is one and the same
 * (the usual case): link them all at once. False when they differ. */
static bool link_all(struct msr_tso *t, struct tso_bytes *b, uint64_t co)
{
	uint64_t l0 = b->latest[0];
	struct tso_crec *prev;
	unsigned i, same = 1;

	for (i = 1; i < 8; i++)
		same &= b->latest[i] == l0;
	if (!same)
		return false;
	if (!l0) {
		for (i = 0; i < 8; i++)
			b->first[i] = co;
	} else if ((prev = crec_mut(t, l0))) {
		for (i = 0; i < 8; i++)
			prev->next[i] = co;
	}
	for (i = 0; i < 8; i++)
		b->latest[i] = co;
	return true;
}

/* The per-byte facts of block `b` (mixed or not) into *w. */
static void block_get(const struct msr_tso *t, const struct tso_block *b,
		      struct tso_bytes *w)
{
	const struct tso_nbytes *r;
	uint64_t base;
	unsigned i;

	if (!(b->latest & TSO_BLK_MIXED)) {
		for (i = 0; i < 8; i++) {
			w->latest[i] = b->latest;
			w->first[i] = b->first;
		}
		return;
	}
	if (b->first & TSO_BLK_WIDE) {
		memcpy(w, tso_pool_at(&t->wide, b->first & ~TSO_BLK_WIDE),
		       sizeof(*w));
		return;
	}
	r = (const struct tso_nbytes *)(const void *)(t->narrow.a +
						     b->first * t->narrow.esz);
	base = (b->latest & ~TSO_BLK_MIXED) - 1;
	for (i = 0; i < 8; i++) {
		w->latest[i] = r->latest[i] ? base + r->latest[i] : 0;
		w->first[i] = r->first[i] ? base + r->first[i] : 0;
	}
}

/* Store *w as block `b`'s facts: uniform when its bytes share one history
 * again (the record goes back to its pool), else narrow when the offsets
 * fit (a wide record stays wide). False when out of memory. */
static bool block_set(struct msr_tso *t, struct tso_block *b,
		      const struct tso_bytes *w)
{
	bool mixed = b->latest & TSO_BLK_MIXED;
	bool wide = mixed && (b->first & TSO_BLK_WIDE);
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned i, same = 1;
	size_t idx;

	for (i = 1; i < 8; i++)
		same &= w->latest[i] == w->latest[0] &&
			w->first[i] == w->first[0];
	if (same) {
		if (wide)
			tso_pool_put(&t->wide, b->first & ~TSO_BLK_WIDE);
		else if (mixed)
			tso_pool_put(&t->narrow, b->first);
		b->latest = w->latest[0];
		b->first = w->first[0];
		return true;
	}
	for (i = 0; i < 8; i++) {
		if (w->first[i] && w->first[i] < lo)
			lo = w->first[i];
		if (w->latest[i] > hi)
			hi = w->latest[i];
	}
	if (!wide && hi - lo < UINT32_MAX) {
		struct tso_nbytes *r;

		if (!mixed && (idx = tso_pool_get(&t->narrow)) == SIZE_MAX)
			return false;
		if (mixed)
			idx = b->first;
		r = (struct tso_nbytes *)(void *)(t->narrow.a +
						  idx * t->narrow.esz);
		for (i = 0; i < 8; i++) {
			r->latest[i] = w->latest[i]
					       ? (uint32_t)(w->latest[i] - lo + 1)
					       : 0;
			r->first[i] = w->first[i]
					      ? (uint32_t)(w->first[i] - lo + 1)
					      : 0;
		}
		b->latest = TSO_BLK_MIXED | lo;
		b->first = idx;
		return true;
	}
	if (wide) {
		idx = b->first & ~TSO_BLK_WIDE;
	} else {
		if ((idx = tso_pool_get(&t->wide)) == SIZE_MAX)
			return false;
		if (mixed)
			tso_pool_put(&t->narrow, b->first);
	}
	memcpy(tso_pool_at(&t->wide, idx), w, sizeof(*w));
	b->latest = TSO_BLK_MIXED;
	b->first = idx | TSO_BLK_WIDE;
	return true;
}

/* Give uniform block `b` a narrow record for commit `co` (which must fit
 * its offsets); false when out of memory. */
static bool narrow_split(struct msr_tso *t, struct tso_block *b, uint64_t co)
{
	uint64_t lo = b->latest ? b->first : co;
	uint32_t l = b->latest ? (uint32_t)(b->latest - lo + 1) : 0;
	struct tso_nbytes *r;
	size_t idx = tso_pool_get(&t->narrow);
	unsigned i;

	if (idx == SIZE_MAX)
		return false;
	r = tso_narrow_rec(t, idx);
	for (i = 0; i < 8; i++) {
		r->latest[i] = l;
		r->first[i] = l ? 1 : 0;
	}
	b->latest = TSO_BLK_MIXED | lo;
	b->first = idx;
	return true;
}

/* Byte i of narrow record `r` (base `base`) takes commit `co` (offset
 * `d`); *pd / *prev: the previous commit last looked up. */
static inline void narrow_byte(struct msr_tso *t, struct tso_nbytes *r,
			       unsigned i, uint64_t base, uint32_t d,
			       uint64_t co, uint32_t *pd,
			       struct tso_crec **prev)
{
	if (!r->latest[i]) {
		r->first[i] = d;
	} else {
		if (r->latest[i] != *pd) {
			*pd = r->latest[i];
			*prev = crec_mut(t, base + *pd);
		}
		if (*prev)
			(*prev)->next[i] = co;
	}
	r->latest[i] = d;
}

/* Link commit `c` into narrow record `r` of block `b` in place (its co
 * fits the record's offsets: it is the newest, the base stays). */
static void narrow_link(struct msr_tso *t, struct tso_block *b,
			struct tso_nbytes *r, const struct msr_commit *c)
{
	uint64_t base = (b->latest & ~TSO_BLK_MIXED) - 1, f[4];
	uint32_t d = (uint32_t)(c->co - base), pd = 0;
	struct tso_crec *prev = NULL;
	unsigned i, m;

	if (c->mask != 0xff) {
		for (m = c->mask; m; m &= ~(0x80u >> i)) {
			i = (unsigned)__builtin_clz(m) - 24u;
			narrow_byte(t, r, i, base, d, c->co, &pd, &prev);
		}
		return; /* some byte's newest is older: still mixed */
	}
	for (i = 0; i < 8; i++)
		narrow_byte(t, r, i, base, d, c->co, &pd, &prev);
	/* all eight firsts equal (as four pairs): one history again, back
	 * to uniform */
	memcpy(f, r->first, sizeof(f));
	if (f[0] == f[1] && f[1] == f[2] && f[2] == f[3] &&
	    (uint32_t)f[0] == (uint32_t)(f[0] >> 32)) {
		size_t idx = (size_t)b->first;

		b->latest = c->co;
		b->first = base + r->first[0];
		tso_pool_put(&t->narrow, idx);
	}
}

static void commit_link(struct msr_tso *t, const struct msr_commit *c,
			uint64_t h)
{
	struct tso_block *b;
	struct tso_bytes w;
	struct tso_crec *prev = NULL;
	uint64_t pco = 0;
	unsigned i, m;

	if (!c->mask || (c->pa8 & TSO_IO_BIT))
		return;
	b = tso_map_at_h(&t->blocks, c->pa8, h, true, sizeof(*b));
	if (!b) {
		t->nomem = true;
		return;
	}
	if (!(b->latest & TSO_BLK_MIXED)) {
		if (c->mask == 0xff) {
			/* the usual case: a uniform block stays uniform */
			if (!b->latest)
				b->first = c->co;
			else if ((prev = crec_mut(t, b->latest)))
				for (i = 0; i < 8; i++)
					prev->next[i] = c->co;
			b->latest = c->co;
			return;
		}
		if ((!b->latest || c->co - b->first < UINT32_MAX) &&
		    !narrow_split(t, b, c->co)) {
			t->nomem = true;
			return;
		}
	}
	if ((b->latest & TSO_BLK_MIXED) && !(b->first & TSO_BLK_WIDE) &&
	    c->co - (b->latest & ~TSO_BLK_MIXED) < UINT32_MAX) {
		narrow_link(t, b, tso_narrow_rec(t, b->first), c);
		return;
	}
	/* offsets too big for a narrow record: the general way */
	block_get(t, b, &w);
	if (c->mask != 0xff || !link_all(t, &w, c->co)) {
		/* the bytes' previous commits are usually one commit: look
		 * it up once, not per byte */
		for (m = c->mask; m; m &= ~(0x80u >> i)) {
			i = (unsigned)__builtin_clz(m) - 24u;
			if (!w.latest[i]) {
				w.first[i] = c->co;
			} else {
				if (w.latest[i] != pco) {
					pco = w.latest[i];
					prev = crec_mut(t, pco);
				}
				if (prev)
					prev->next[i] = c->co;
			}
			w.latest[i] = c->co;
		}
	}
	if (!block_set(t, b, &w))
		t->nomem = true;
}

static void drain(struct msr_tso *t, struct tso_strand *s, bool force);

/* A commit may unblock any waiting strand: retry each (they are few). */
static void drain_blocked(struct msr_tso *t)
{
	uint8_t list[MSR_MAX_STRANDS];
	unsigned i, n = t->nblocked;

	memcpy(list, t->blocked, n);
	for (i = 0; i < n; i++)
		if (t->s[list[i]].qlen)
			drain(t, &t->s[list[i]], false);
}

static uint64_t later_co(struct tso_strand *s)
{
	struct tso_srec *r = tso_srec_get(s, s->ss_last);

	return r ? r->co : 0;
}

static void commit_record(struct msr_tso *t, const struct msr_commit *c,
			  const struct tso_srec *sr)
{
	struct tso_crec *rec = &t->ring[c->co & (t->ring_cap - 1)];
	bool op = sr && sr->have_op;

	memset(rec->next, 0, sizeof(rec->next));
	rec->co = c->co;
	rec->pa8 = c->pa8;
	rec->sseq = c->sseq;
	rec->iseq = op ? sr->info.iseq : c->iseq;
	rec->pc = op ? sr->info.pc : 0;
	rec->step_op = op ? sr->info.op
			  : (c->atomic ? MSR_STEP_CAS : MSR_STEP_ST);
	rec->event = c->event;
	rec->ts = c->ts;
	rec->strand = c->strand;
	rec->mask = c->mask;
	memcpy(rec->data, c->data, 8);
}

void msr_tso_add_commit(struct msr_tso *t, const struct msr_commit *c)
{
	struct tso_strand *s;
	struct tso_srec *sr = NULL;
	struct tso_own *own;
	uint64_t h = tso_hash64(c->pa8 + 1); /* for both maps */
	unsigned i;

	if (t->nomem || c->co <= t->n)
		return; /* co must grow; the engine numbers commits */
	s = strand_get(t, c->strand);
	if (!s)
		return;
	t->n = c->co;
	if (c->sseq) { /* 0: a commit the engine bound to no store */
		sr = srec_put(t, s, c->sseq);
		sr->co = c->co;
		sr->rmo = c->rmo;
		sr->atomic = c->atomic;
	}
	commit_record(t, c, sr);
	commit_link(t, c, h);
	if (!sr)
		return;
	own = tso_own_find_h(s, c->pa8, h);
	if (own) {
		unsigned hit = 0;

		if (!own->wide) { /* one store holds every live byte */
			if (own->sseq == c->sseq) {
				own->co = c->co;
				hit = own->live;
			}
		} else {
			struct tso_own_bytes *w = tso_own_bytes(t, own);

			for (i = 0; i < 8; i++)
				if (w->sseq[i] == c->sseq) {
					w->co[i] = c->co;
					hit |= 0x80u >> i;
				}
		}
		/* the newest co: above every co already in the entry */
		if (hit) {
			own->pend &= (uint8_t)~hit;
			own->maxco = c->co;
			if (!own->pend)
				tso_own_done(t, s, own);
		}
	}
	if (!c->rmo) {
		if (c->sseq < s->ss_last)
			tso_report_store_order(t, c, later_co(s));
		else
			s->ss_last = c->sseq;
	}
	if (t->nblocked)
		drain_blocked(t);
}

/* ------------------------------------------------------------------------ */
/* Floors                                                                    */
/* ------------------------------------------------------------------------ */

/* The StoreLoad witness: own store `r`, ordered before by the barrier. */
static void sl_wit(const struct msr_tso *t, struct tso_strand *s,
		   const struct tso_srec *r)
{
	struct tso_wit *w = &s->w_sl;

	memset(w, 0, sizeof(*w));
	w->type = TSO_WIT_OWN;
	w->co = r->co;
	w->rmo = r->rmo;
	w->barrier = s->barrier_op;
	w->has_barrier = !(s->barrier_is_atomic && r->atomic &&
			   r->info.iseq == s->barrier_op.iseq);
	tso_proof_store(t, r->co, r->info.pa, &w->store);
	w->store.iseq = r->info.iseq;
	w->store.pc = r->info.pc;
	w->store.op = r->info.op;
}

/* Fold the strand's executed stores up to sseq `upto` into the StoreLoad
 * floor. False when one of them has not committed yet (unless `force`).
 * Only the store that raises the floor last names the witness, so it is
 * built once. */
static bool scan_more(const struct msr_tso *t, struct tso_strand *s,
		      uint64_t upto, bool force)
{
	const struct tso_srec *top = NULL;
	bool ok = true;

	while (s->scanned < upto) {
		uint64_t sseq = s->scanned + 1;
		const struct tso_srec *r = tso_srec_get(s, sseq);

		/* RMO stores are acknowledged before they commit, so a
		 * barrier does not wait for their commit */
		if (r && r->have_op && !r->rmo) {
			if (!r->co) {
				if (!force) {
					ok = false;
					break;
				}
			} else if (r->co > s->f_sl) {
				s->f_sl = r->co;
				top = r;
			}
		}
		s->scanned = sseq;
	}
	if (top)
		sl_wit(t, s, top);
	return ok;
}

/* Usually there is nothing new to fold: no call then. */
static inline bool scan_stores(const struct msr_tso *t, struct tso_strand *s,
			       uint64_t upto, bool force)
{
	return s->scanned >= upto || scan_more(t, s, upto, force);
}

static inline bool rf_seen(const struct msr_tso *t,
			   const struct msr_op *op)
{
	unsigned b, k;

	for (b = 0; b < op->nblocks; b++)
		for (k = 0; k < op->blk[b].nrf; k++)
			if (op->blk[b].rf[k].kind == MSR_RF_COMMIT &&
			    op->blk[b].rf[k].co > t->n)
				return false;
	return true;
}

static bool op_ready(struct msr_tso *t, struct tso_strand *s,
		     const struct msr_op *op, bool force)
{
	struct tso_srec *r;

	if (op->kind == MSR_OP_LOAD) {
		if (op->pa & TSO_IO_BIT)
			return true;
		if (!scan_stores(t, s, s->barrier_upto, force))
			return false;
		return force || rf_seen(t, op);
	}
	if (op->kind != MSR_OP_ATOMIC || !op->nblocks || !op->blk[0].sseq)
		return true; /* (an atomic without store entry: a plain load) */
	if (!scan_stores(t, s, s->barrier_upto, force))
		return false;
	r = tso_srec_get(s, op->blk[0].sseq);
	if (!force && (!r || !r->co))
		return false;
	/* stores between the last barrier and the atomic: the atomic orders
	 * them before its own read */
	tso_proof_load(op, &s->barrier_op);
	s->barrier_is_atomic = true;
	s->barrier_upto = op->blk[0].sseq - 1;
	if (!scan_stores(t, s, s->barrier_upto, force))
		return false;
	return force || rf_seen(t, op);
}

/* ------------------------------------------------------------------------ */
/* Atomics, stores, barriers                                                 */
/* ------------------------------------------------------------------------ */

/* The proof op of a multi-block op, built once for all its blocks. */
struct op_proof {
	bool ok;
	struct msr_proof_op p;
};

/* Executed store entry: remember it for proofs and own-store checks. */
static struct tso_srec *store_exec(struct msr_tso *t, struct tso_strand *s,
				   const struct msr_op *op,
				   const struct msr_op_block *blk,
				   struct op_proof *pp)
{
	struct tso_srec *r;
	struct tso_crec *c;
	bool again;

	if (!blk->sseq)
		return NULL; /* no store entry: nothing to order */
	r = srec_put(t, s, blk->sseq);
	again = r->have_op; /* else r->info is still all zero */
	r->have_op = true;
	r->rmo = op->rmo;
	r->atomic = op->kind == MSR_OP_ATOMIC;
	if (op->nblocks == 1) {
		/* the value is only shown in reports: keep the bytes */
		const struct msr_op_block *b0 = &op->blk[0];

		if (again)
			memset(&r->info, 0, sizeof(r->info));
		r->info.strand = op->strand;
		r->info.op = op->step_op;
		r->info.iseq = op->iseq;
		r->info.pc = op->pc;
		r->info.size = op->size;
		r->info.ts = op->ts;
		r->info.event = op->event;
		r->lazy = true;
		r->raw_mask = b0->mask;
		memcpy(r->raw, op->kind == MSR_OP_STORE ? b0->store : b0->load,
		       sizeof(r->raw));
	} else {
		if (!pp->ok) {
			tso_proof_load(op, &pp->p);
			pp->ok = true;
		}
		r->info = pp->p;
		r->lazy = false;
	}
	r->info.pa = blk->pa8;
	if (r->co && (c = crec_mut(t, r->co))) {
		c->iseq = op->iseq;
		c->pc = op->pc;
		c->step_op = op->step_op;
	}
	if (blk->sseq > s->last_st_sseq)
		s->last_st_sseq = blk->sseq;
	return r;
}

static void run_store(struct msr_tso *t, struct tso_strand *s,
		      const struct msr_op *op)
{
	bool reported = false;
	struct op_proof pp;
	unsigned b;

	pp.ok = false;
	for (b = 0; b < op->nblocks; b++) {
		const struct msr_op_block *blk = &op->blk[b];
		struct tso_srec *r = store_exec(t, s, op, blk, &pp);

		if (!r)
			continue;
		/* a commit seen before its store executed may precede a
		 * position an earlier load already holds (through a barrier
		 * the non-RMO case is a StoreStore break, reported at the
		 * commit) */
		if (r->co && !reported && s->f_ll >= r->co &&
		    (s->w_ll.type == TSO_WIT_RF ||
		     (s->w_ll.type == TSO_WIT_OWN && op->rmo &&
		      s->w_ll.via.iseq)) &&
		    !(op->pa & TSO_IO_BIT)) {
			tso_report_load_store(t, &s->w_ll, op, r->co, blk);
			reported = true;
		}
		tso_own_store(t, s, blk, r->co, op->rmo);
	}
}

static void run_atomic(struct msr_tso *t, struct tso_strand *s,
		       const struct msr_op *op)
{
	struct tso_srec *r =
		op->nblocks ? tso_srec_get(s, op->blk[0].sseq) : NULL;
	struct tso_load *l = &t->ld;
	uint64_t co_a = r ? r->co : 0, q;
	struct op_proof pp;
	unsigned i, b;

	if (!co_a) { /* never committed: check it as a plain load */
		tso_place_load(t, s, op);
		goto store;
	}
	q = co_a - 1;
	tso_load_begin(l, op);
	tso_load_resolve(t, s, l, 0, op->nblocks);
	if (s->f_ll > q && s->w_ll.type == TSO_WIT_RF)
		tso_report_atomic(t, l, MSR_V_TSO_LOAD_STORE, co_a, NULL, &s->w_ll);
	for (i = 0; i < l->nb && !l->reported; i++) {
		const struct tso_byte *y = &l->b[i];

		if (y->lo > q || (y->hi && y->hi <= q))
			tso_report_atomic(t, l, MSR_V_TSO_ATOMICITY, co_a, y, NULL);
	}
	if (q > s->f_ll) {
		s->f_ll = q;
		memset(&s->w_ll, 0, sizeof(s->w_ll));
		s->w_ll.type = TSO_WIT_OWN;
		s->w_ll.co = co_a;
		tso_proof_store(t, co_a, op->pa, &s->w_ll.store);
	}
store:
	pp.ok = false;
	for (b = 0; b < op->nblocks; b++) {
		struct tso_srec *sr = store_exec(t, s, op, &op->blk[b], &pp);

		if (sr && !op->store_failed)
			tso_own_store(t, s, &op->blk[b], sr->co, false);
	}
	s->barrier_upto = s->last_st_sseq;
	/* with a store entry op_ready already made this op the barrier */
	if (!op->nblocks || !op->blk[0].sseq)
		tso_proof_load(op, &s->barrier_op);
	s->barrier_is_atomic = true;
}

static void op_run(struct msr_tso *t, struct tso_strand *s,
		   const struct msr_op *op)
{
	switch (op->kind) {
	case MSR_OP_LOAD:
		if (op->pa & TSO_IO_BIT)
			return; /* non-cacheable: outside TSO */
		if (op->step_op != MSR_STEP_LDBLK) {
			tso_place_load(t, s, op);
			return;
		}
		tso_place_block_load(t, s, op);
		return;
	case MSR_OP_STORE:
		run_store(t, s, op);
		return;
	case MSR_OP_ATOMIC:
		run_atomic(t, s, op);
		return;
	case MSR_OP_MEMBAR:
		if (op->membar_mask & MEMBAR_STORELOAD) {
			s->barrier_upto = s->last_st_sseq;
			tso_proof_load(op, &s->barrier_op);
			s->barrier_is_atomic = false;
		}
		return;
	default:
		return;
	}
}

/* ------------------------------------------------------------------------ */
/* Waiting ops and the public entry points                                   */
/* ------------------------------------------------------------------------ */

static void queue_pop(struct msr_tso *t, struct tso_strand *s)
{
	unsigned i, idx = (unsigned)(s - t->s);

	s->qhead = (s->qhead + 1) & (s->qcap - 1);
	if (--s->qlen)
		return;
	for (i = 0; i < t->nblocked; i++)
		if (t->blocked[i] == idx) {
			memmove(t->blocked + i, t->blocked + i + 1,
				t->nblocked - i - 1);
			break;
		}
	t->nblocked--;
}

static void drain(struct msr_tso *t, struct tso_strand *s, bool force)
{
	while (s->qlen) {
		const struct msr_op *op = &s->q[s->qhead];

		if (!op_ready(t, s, op, force))
			return;
		op_run(t, s, op);
		queue_pop(t, s);
	}
}

static int queue_push(struct msr_tso *t, struct tso_strand *s,
		      const struct msr_op *op)
{
	if (s->qlen == s->qcap) {
		size_t ncap = s->qcap ? s->qcap * 2 : QUEUE_INIT;

		if (ncap > QUEUE_MAX) {
			/* bounded window: decide the oldest without the
			 * commit it waits for (weaker, never wrong) */
			op_ready(t, s, &s->q[s->qhead], true);
			op_run(t, s, &s->q[s->qhead]);
			queue_pop(t, s);
			drain(t, s, false);
			if (!s->qlen) {
				if (op_ready(t, s, op, false)) {
					op_run(t, s, op);
					return 0;
				}
			}
			return queue_push(t, s, op);
		}
		if (tso_ring_regrow((void **)&s->q, sizeof(*s->q), &s->qcap,
				    &s->qhead, s->qlen, ncap) < 0)
			return -1;
	}
	if (s->qlen++ == 0)
		t->blocked[t->nblocked++] = (uint8_t)(s - t->s);
	/* only the blocks in use: an op is 2 KiB, most of it unused blocks */
	memcpy(&s->q[(s->qhead + s->qlen - 1) & (s->qcap - 1)], op,
	       offsetof(struct msr_op, blk) +
		       sizeof(op->blk[0]) * (op->nblocks < MSR_OP_MAX_BLOCKS
						     ? op->nblocks
						     : MSR_OP_MAX_BLOCKS));
	return 0;
}

void msr_tso_add_op(struct msr_tso *t, const struct msr_op *op)
{
	struct tso_strand *s;

	if (t->nomem)
		return;
	s = strand_get(t, op->strand);
	if (!s)
		return;
	/* stores and barriers never wait: no readiness test; a load after
	 * a scanned barrier only needs the commits it read */
	if (!s->qlen &&
	    ((op->kind != MSR_OP_LOAD && op->kind != MSR_OP_ATOMIC) ||
	     (op->kind == MSR_OP_LOAD && s->scanned >= s->barrier_upto
		      ? (op->pa & TSO_IO_BIT) || rf_seen(t, op)
		      : op_ready(t, s, op, false)))) {
		op_run(t, s, op);
		return;
	}
	if (queue_push(t, s, op) < 0)
		t->nomem = true;
}

int msr_tso_finish(struct msr_tso *t, struct msr_error *err)
{
	unsigned i;

	for (i = 0; i < MSR_MAX_STRANDS; i++)
		if (t->s[i].qlen)
			drain(t, &t->s[i], true);
	if (t->nomem)
		return msr_error_set(err, MSR_E_NOMEM, "checker", NULL,
				     "out of memory in the tso checker: "
				     "results are incomplete");
	return MSR_OK;
}
