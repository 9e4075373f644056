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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tso-internal.h"

#define RING_DEFAULT (1u << 14)
#define ST_RING_INIT 64u
#define ST_RING_MAX (1u << 16)
#define QUEUE_INIT 16u
#define QUEUE_MAX (1u << 16)
#define MEMBAR_STORELOAD 0x62u /* #StoreLoad, #MemIssue, #Sync */

/* ------------------------------------------------------------------------ */
/* Maps and rings                                                            */
/* ------------------------------------------------------------------------ */

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static int map_init(struct tso_map *m, size_t esz, size_t cap)
{
	m->slots = calloc(cap, esz);
	m->esz = esz;
	m->cap = m->slots ? cap : 0;
	m->n = 0;
	return m->slots ? 0 : -1;
}

static void *map_slot(const struct tso_map *m, size_t i)
{
	return m->slots + i * m->esz;
}

static int map_grow(struct tso_map *m)
{
	struct tso_map nm;
	size_t i;

	if (map_init(&nm, m->esz, m->cap * 2) < 0)
		return -1;
	for (i = 0; i < m->cap; i++) {
		uint64_t key;
		size_t j;

		memcpy(&key, map_slot(m, i), sizeof(key));
		if (!key)
			continue;
		j = hash64(key) & (nm.cap - 1);
		for (;;) {
			uint64_t k2;

			memcpy(&k2, map_slot(&nm, j), sizeof(k2));
			if (!k2)
				break;
			j = (j + 1) & (nm.cap - 1);
		}
		memcpy(map_slot(&nm, j), map_slot(m, i), m->esz);
		nm.n++;
	}
	free(m->slots);
	*m = nm;
	return 0;
}

/* Entry of block `pa8`; created (zeroed) when `create`. NULL when absent
 * or out of memory (t->nomem is set by the caller's check). */
static void *map_find(struct tso_map *m, uint64_t pa8, bool create)
{
	uint64_t key = pa8 + 1;
	size_t i;

	if (!m->cap)
		return NULL;
	if (create && (m->n + 1) * 2 > m->cap && map_grow(m) < 0)
		return NULL;
	i = hash64(key) & (m->cap - 1);
	for (;;) {
		void *e = map_slot(m, i);
		uint64_t k;

		memcpy(&k, e, sizeof(k));
		if (k == key)
			return e;
		if (!k) {
			if (!create)
				return NULL;
			memset(e, 0, m->esz);
			memcpy(e, &key, sizeof(key));
			m->n++;
			return e;
		}
		i = (i + 1) & (m->cap - 1);
	}
}

const struct tso_crec *tso_crec_get(const struct msr_tso *t, uint64_t co)
{
	const struct tso_crec *c;

	if (!co)
		return NULL;
	c = &t->ring[co & (t->ring_cap - 1)];
	return c->co == co ? c : NULL;
}

static struct tso_crec *crec_mut(struct msr_tso *t, uint64_t co)
{
	return (struct tso_crec *)tso_crec_get(t, co);
}

static struct tso_srec *srec_get(struct tso_strand *s, uint64_t sseq)
{
	struct tso_srec *r;

	if (!s->st || !sseq)
		return NULL;
	r = &s->st[sseq & (s->st_cap - 1)];
	return r->sseq == sseq ? r : NULL;
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
	struct tso_srec *r = srec_get(s, sseq);

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

static struct tso_strand *strand_get(struct msr_tso *t, unsigned idx)
{
	struct tso_strand *s = &t->s[idx];

	if (s->st)
		return s;
	s->st = calloc(ST_RING_INIT, sizeof(*s->st));
	s->st_cap = ST_RING_INIT;
	if (!s->st || map_init(&s->own, sizeof(struct tso_own), 64) < 0) {
		free(s->st);
		s->st = NULL;
		t->nomem = true;
		return NULL;
	}
	return s;
}

/* ------------------------------------------------------------------------ */
/* Proof operations                                                          */
/* ------------------------------------------------------------------------ */

void tso_proof_load(const struct msr_op *op, struct msr_proof_op *out)
{
	unsigned b, i, n = 0;

	memset(out, 0, sizeof(*out));
	out->strand = op->strand;
	out->op = op->step_op;
	out->iseq = op->iseq;
	out->pc = op->pc;
	out->pa = op->pa;
	out->size = op->size;
	out->ts = op->ts;
	out->event = op->event;
	for (b = 0; b < op->nblocks && n < 8; b++)
		for (i = 0; i < 8 && n < 8; i++)
			if (op->blk[b].mask & (0x80u >> i)) {
				const uint8_t *src = op->kind == MSR_OP_STORE
							     ? op->blk[b].store
							     : op->blk[b].load;
				out->value = out->value << 8 | src[i];
				n++;
			}
}

void tso_proof_store(const struct msr_tso *t, uint64_t co, uint64_t pa,
		     struct msr_proof_op *out)
{
	const struct tso_crec *c = tso_crec_get(t, co);
	unsigned i, first = 8, n = 0;

	memset(out, 0, sizeof(*out));
	out->pa = pa;
	if (!c)
		return;
	out->strand = c->strand;
	out->op = c->step_op;
	out->iseq = c->iseq;
	out->pc = c->pc;
	out->ts = c->ts;
	out->event = c->event;
	for (i = 0; i < 8; i++)
		if (c->mask & (0x80u >> i)) {
			if (first == 8)
				first = i;
			n = i - first + 1;
		}
	if (first == 8) {
		out->pa = c->pa8;
		out->size = 8;
		return;
	}
	out->pa = c->pa8 + first;
	out->size = (uint8_t)n;
	for (i = first; i < first + n; i++)
		out->value = out->value << 8 | c->data[i];
}

static void desc_store(const struct msr_tso *t, uint64_t co, char *buf,
		       size_t size)
{
	const struct tso_crec *c = tso_crec_get(t, co);

	if (!co)
		snprintf(buf, size, "the initial value");
	else if (!c)
		snprintf(buf, size, "the store with co=%llu",
			 (unsigned long long)co);
	else
		snprintf(buf, size, "strand %u's store iseq=%llu (co=%llu)",
			 c->strand, (unsigned long long)c->iseq,
			 (unsigned long long)co);
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
	t->ring = calloc(t->ring_cap, sizeof(*t->ring));
	t->s = calloc(MSR_MAX_STRANDS, sizeof(*t->s));
	if (!t->ring || !t->s ||
	    map_init(&t->blocks, sizeof(struct tso_block), 1024) < 0)
		goto nomem;
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
			free(t->s[i].own.slots);
			free(t->s[i].q);
		}
	free(t->s);
	free(t->ring);
	free(t->blocks.slots);
	free(t);
}

/* ------------------------------------------------------------------------ */
/* Commits                                                                   */
/* ------------------------------------------------------------------------ */

static void report_store_order(struct msr_tso *t, struct tso_strand *s,
			       const struct msr_commit *c)
{
	struct tso_report r;
	struct tso_srec *later = srec_get(s, s->ss_last);
	struct msr_proof_op p1, p2;
	char d1[96], d2[96];

	tso_proof_store(t, c->co, c->pa8, &p1);
	tso_report_init(&r, MSR_V_TSO_STORE_ORDER, NULL);
	r.at = &p1;
	r.pa = p1.pa;
	r.size = p1.size;
	r.ts = c->ts;
	r.event = c->event;
	r.observed_co = c->co;
	tso_report_push(&r, &p1, MSR_REL_PO);
	if (later && later->co) {
		tso_proof_store(t, later->co, 0, &p2);
		r.expected_co = later->co;
	} else {
		memset(&p2, 0, sizeof(p2));
		p2.strand = c->strand;
	}
	tso_report_push(&r, &p2, MSR_REL_CO);
	desc_store(t, c->co, d1, sizeof(d1));
	desc_store(t, later ? later->co : 0, d2, sizeof(d2));
	snprintf(r.message, sizeof(r.message),
		 "%s committed after %s, which comes later in program order: "
		 "stores must commit in program order", d1, d2);
	tso_report_emit(t, &r);
}

static void commit_link(struct msr_tso *t, const struct msr_commit *c)
{
	struct tso_block *b;
	unsigned i;

	if (!c->mask || (c->pa8 & TSO_IO_BIT))
		return;
	b = map_find(&t->blocks, c->pa8, true);
	if (!b) {
		t->nomem = true;
		return;
	}
	for (i = 0; i < 8; i++) {
		struct tso_crec *prev;

		if (!(c->mask & (0x80u >> i)))
			continue;
		if (!b->latest[i]) {
			b->first[i] = c->co;
		} else if ((prev = crec_mut(t, b->latest[i]))) {
			prev->next[i] = c->co;
		}
		b->latest[i] = c->co;
	}
}

static void drain(struct msr_tso *t, struct tso_strand *s, bool force);

void msr_tso_add_commit(struct msr_tso *t, const struct msr_commit *c)
{
	struct tso_strand *s;
	struct tso_srec *sr;
	struct tso_crec *rec;
	struct tso_own *own;
	unsigned i;

	if (t->nomem || c->co <= t->n)
		return; /* co must grow; the engine numbers commits */
	s = strand_get(t, c->strand);
	if (!s)
		return;
	t->n = c->co;
	sr = srec_put(t, s, c->sseq);
	sr->co = c->co;
	sr->rmo = c->rmo;
	sr->atomic = c->atomic;
	rec = &t->ring[c->co & (t->ring_cap - 1)];
	memset(rec, 0, sizeof(*rec));
	rec->co = c->co;
	rec->pa8 = c->pa8;
	rec->sseq = c->sseq;
	rec->iseq = sr->have_op ? sr->info.iseq : c->iseq;
	rec->pc = sr->have_op ? sr->info.pc : 0;
	rec->step_op = sr->have_op ? sr->info.op
				   : (c->atomic ? MSR_STEP_CAS : MSR_STEP_ST);
	rec->event = c->event;
	rec->ts = c->ts;
	rec->strand = c->strand;
	rec->mask = c->mask;
	rec->rmo = c->rmo;
	rec->atomic = c->atomic;
	memcpy(rec->data, c->data, 8);
	commit_link(t, c);
	own = map_find(&s->own, c->pa8, false);
	for (i = 0; own && i < 8; i++)
		if (own->sseq[i] == c->sseq)
			own->co[i] = c->co;
	if (!c->rmo) {
		if (c->sseq < s->ss_last)
			report_store_order(t, s, c);
		else
			s->ss_last = c->sseq;
	}
	if (!t->nblocked)
		return;
	if (s->qlen)
		drain(t, s, false);
	for (i = 0; i < MSR_MAX_STRANDS && t->nblocked; i++)
		if (t->s[i].qlen)
			drain(t, &t->s[i], false);
}

/* ------------------------------------------------------------------------ */
/* Floors                                                                    */
/* ------------------------------------------------------------------------ */

/* Fold the strand's executed stores up to sseq `upto` into the StoreLoad
 * floor. False when one of them has not committed yet (unless `force`). */
static bool scan_stores(const struct msr_tso *t, struct tso_strand *s,
			uint64_t upto, bool force)
{
	while (s->scanned < upto) {
		uint64_t sseq = s->scanned + 1;
		struct tso_srec *r = srec_get(s, sseq);

		if (r && r->have_op) {
			if (!r->co) {
				if (!force)
					return false;
			} else if (r->co > s->f_sl) {
				struct tso_wit *w = &s->w_sl;

				s->f_sl = r->co;
				memset(w, 0, sizeof(*w));
				w->type = TSO_WIT_OWN;
				w->co = r->co;
				w->rmo = r->rmo;
				w->barrier = s->barrier_op;
				w->has_barrier =
					!(s->barrier_is_atomic && r->atomic &&
					  r->info.iseq == s->barrier_op.iseq);
				tso_proof_store(t, r->co, r->info.pa, &w->store);
				w->store.iseq = r->info.iseq;
				w->store.pc = r->info.pc;
				w->store.op = r->info.op;
			}
		}
		s->scanned = sseq;
	}
	return true;
}

static bool rf_seen(const struct msr_tso *t, const struct msr_op *op)
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
	if (op->kind != MSR_OP_ATOMIC || !op->nblocks)
		return true;
	if (!scan_stores(t, s, s->barrier_upto, force))
		return false;
	r = srec_get(s, op->blk[0].sseq);
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
/* Where each byte of a load may sit in memory order                         */
/* ------------------------------------------------------------------------ */

/* co of the next store to byte `pa` after the store with co `co`, 0 when
 * none has committed yet. Beyond the commit ring the newest store to the
 * byte stands in: an upper bound, so no false alarm can come of it. */
static uint64_t next_store(const struct msr_tso *t, uint64_t co, uint64_t pa)
{
	struct tso_block *b = map_find((struct tso_map *)&t->blocks,
				       pa & ~7ull, false);
	const struct tso_crec *c;
	unsigned i = pa & 7;

	if (!co)
		return b ? b->first[i] : 0;
	c = tso_crec_get(t, co);
	if (c)
		return c->next[i];
	if (!b || b->latest[i] == co)
		return 0;
	return b->latest[i];
}

static bool overlaps(uint64_t pa, unsigned size, uint64_t lo, unsigned n)
{
	return pa < lo + n && lo < pa + size;
}

static void rf_bad(struct msr_tso *t, struct tso_load *l, enum msr_vkind kind,
		   const struct msr_proof_op *store, enum msr_rel self_rel,
		   uint64_t co, const char *why)
{
	struct tso_report r;

	if (l->reported)
		return;
	l->reported = true;
	tso_report_init(&r, kind, l->op);
	r.observed_co = co;
	tso_report_push(&r, store, self_rel == MSR_REL_FR ? MSR_REL_PO
							  : MSR_REL_RF);
	if (self_rel != MSR_REL_NONE)
		tso_report_push(&r, &l->self, self_rel);
	snprintf(r.message, sizeof(r.message), "load at pa=0x%llx %s",
		 (unsigned long long)l->op->pa, why);
	tso_report_emit(t, &r);
}

/* Resolve one source byte of a load against the strand's own stores;
 * false (and a violation) when the source alone breaks an axiom. */
static bool byte_resolve(struct msr_tso *t, struct tso_strand *s,
			 struct tso_load *l, const struct msr_rf *rf,
			 uint64_t pa, struct tso_byte *out)
{
	struct tso_own *own = map_find(&s->own, pa & ~7ull, false);
	unsigned i = pa & 7;
	uint64_t ysseq = own ? own->sseq[i] : 0, yco = own ? own->co[i] : 0;
	uint64_t c = rf->kind == MSR_RF_COMMIT ? rf->co : 0;
	struct tso_srec *y = srec_get(s, ysseq);
	struct msr_proof_op yp, sp;
	char buf[200];

	out->pa = pa;
	memset(&yp, 0, sizeof(yp));
	if (y && y->have_op)
		yp = y->info;
	if (rf->kind == MSR_RF_BYPASS) {
		if (rf->strand != l->op->strand || rf->sseq != ysseq) {
			struct tso_srec *bs = rf->strand == l->op->strand
						      ? srec_get(s, rf->sseq)
						      : NULL;

			memset(&sp, 0, sizeof(sp));
			sp.strand = rf->strand;
			if (bs && bs->have_op)
				sp = bs->info;
			snprintf(buf, sizeof(buf),
				 "took its value from the store buffer entry "
				 "sseq=%llu of strand %u, which is not the "
				 "youngest earlier store of this strand to "
				 "pa=0x%llx",
				 (unsigned long long)rf->sseq, rf->strand,
				 (unsigned long long)pa);
			rf_bad(t, l, MSR_V_TSO_VALUE, &sp, MSR_REL_NONE, 0,
			       buf);
			return false;
		}
		out->lo = 0;
		out->src = yco;
		out->hi = yco ? next_store(t, yco, pa) : 0;
		return true;
	}
	if (rf->kind == MSR_RF_COMMIT && c > t->n)
		return false; /* never committed (end of input) */
	if (l->op->kind == MSR_OP_ATOMIC && rf->kind == MSR_RF_COMMIT &&
	    rf->strand == l->op->strand && rf->sseq == l->op->blk[0].sseq) {
		out->lo = out->src = c; /* its own write: an atomicity break */
		out->hi = next_store(t, c, pa);
		return true;
	}
	if (rf->kind == MSR_RF_COMMIT && rf->strand == l->op->strand &&
	    rf->sseq > s->last_st_sseq) {
		tso_proof_store(t, c, pa, &sp);
		snprintf(buf, sizeof(buf),
			 "read the value of its own strand's later store "
			 "(co=%llu): a load precedes every later store of its "
			 "strand", (unsigned long long)c);
		if (!l->reported) {
			struct tso_report r;

			l->reported = true;
			tso_report_init(&r, overlaps(l->op->pa, l->op->size,
						     sp.pa, sp.size)
						    ? MSR_V_TSO_COHERENCE
						    : MSR_V_TSO_LOAD_STORE,
					l->op);
			r.observed_co = c;
			tso_report_push(&r, &l->self, MSR_REL_PO);
			tso_report_push(&r, &sp, MSR_REL_RF);
			snprintf(r.message, sizeof(r.message),
				 "load at pa=0x%llx %s",
				 (unsigned long long)l->op->pa, buf);
			tso_report_emit(t, &r);
		}
		return false;
	}
	if (ysseq && rf->kind == MSR_RF_COMMIT && rf->strand == l->op->strand &&
	    rf->sseq == ysseq) {
		out->lo = 0;
		out->src = c;
		out->hi = next_store(t, c, pa);
		return true;
	}
	if (ysseq && (!yco || c < yco)) {
		char d[96];

		desc_store(t, c, d, sizeof(d));
		snprintf(buf, sizeof(buf),
			 "read %s, older than its own strand's earlier store "
			 "iseq=%llu to pa=0x%llx: a strand must see its own "
			 "stores", d, (unsigned long long)yp.iseq,
			 (unsigned long long)pa);
		if (yco)
			tso_proof_store(t, yco, pa, &sp);
		else
			sp = yp;
		sp.iseq = yp.iseq;
		sp.pc = yp.pc;
		if (!l->reported) {
			struct tso_report r;

			l->reported = true;
			tso_report_init(&r, MSR_V_TSO_COHERENCE, l->op);
			r.pa = pa;
			r.observed_co = c;
			r.expected_co = yco;
			tso_report_push(&r, &sp, MSR_REL_PO);
			tso_report_push(&r, &l->self, MSR_REL_FR);
			snprintf(r.message, sizeof(r.message),
				 "load at pa=0x%llx %s",
				 (unsigned long long)l->op->pa, buf);
			tso_report_emit(t, &r);
		}
		return false;
	}
	out->lo = c;
	out->src = c;
	out->hi = next_store(t, c, pa);
	return true;
}

static void load_resolve(struct msr_tso *t, struct tso_strand *s,
			 struct tso_load *l, unsigned b0, unsigned bn)
{
	unsigned b, k, i;

	l->nb = 0;
	for (b = b0; b < b0 + bn && b < l->op->nblocks; b++) {
		const struct msr_op_block *blk = &l->op->blk[b];

		for (k = 0; k < blk->nrf; k++) {
			const struct msr_rf *rf = &blk->rf[k];

			if (rf->kind == MSR_RF_DMA)
				continue; /* outside co: no constraint */
			for (i = 0; i < 8; i++) {
				if (!(rf->mask & blk->mask & (0x80u >> i)))
					continue;
				if (l->nb < 64 &&
				    byte_resolve(t, s, l, rf, blk->pa8 + i,
						 &l->b[l->nb]))
					l->nb++;
			}
		}
	}
}

/* The cycle: [why the strand is at or after w->co] -> load -fr-> the store
 * `hi` that overwrote what it read -co-> the witness store. */
static void push_cycle(struct msr_tso *t, struct tso_report *r,
		       const struct tso_wit *w, const struct tso_load *l,
		       uint64_t hi, uint64_t pa)
{
	struct msr_proof_op nx;

	tso_proof_store(t, hi, pa, &nx);
	if (w->type == TSO_WIT_OWN) {
		tso_report_push(r, &w->store, MSR_REL_PO);
		if (w->has_barrier)
			tso_report_push(r, &w->barrier, MSR_REL_PO);
		tso_report_push(r, &l->self, MSR_REL_FR);
		if (hi != w->co)
			tso_report_push(r, &nx, MSR_REL_CO);
		return;
	}
	if (w->via.iseq != l->self.iseq || w->via.strand != l->self.strand)
		tso_report_push(r, &w->via, MSR_REL_PO);
	tso_report_push(r, &l->self, MSR_REL_FR);
	if (hi != w->co)
		tso_report_push(r, &nx, MSR_REL_CO);
	tso_report_push(r, &w->store, MSR_REL_RF);
}

static void report_stale(struct msr_tso *t, struct tso_load *l,
			 const struct tso_wit *w, enum msr_vkind kind,
			 const struct tso_byte *b)
{
	struct tso_report r;
	char dr[96], dn[96], dw[96];
	const char *why;

	l->reported = true;
	tso_report_init(&r, kind, l->op);
	r.pa = b->pa;
	r.observed_co = b->src;
	r.expected_co = b->hi;
	push_cycle(t, &r, w, l, b->hi, b->pa);
	desc_store(t, b->src, dr, sizeof(dr));
	desc_store(t, b->hi, dn, sizeof(dn));
	desc_store(t, w->co, dw, sizeof(dw));
	switch (kind) {
	case MSR_V_TSO_MEMBAR:
		why = w->has_barrier ? "must follow its strand's earlier "
				       "store across membar #StoreLoad"
				     : "must follow its strand's earlier "
				       "atomic";
		break;
	case MSR_V_TSO_COHERENCE:
		why = "comes after an earlier load of the same bytes that "
		      "already saw";
		break;
	case MSR_V_TSO_VALUE:
		why = "also took bytes from";
		break;
	default:
		why = "comes after an earlier load of its strand that "
		      "already saw";
		break;
	}
	snprintf(r.message, sizeof(r.message),
		 "load at pa=0x%llx read %s, overwritten by %s, but it %s %s",
		 (unsigned long long)b->pa, dr, dn, why, dw);
	tso_report_emit(t, &r);
}

/* Witness for a byte whose interval ends at or before the position. */
static void stale_pick(struct msr_tso *t, struct tso_strand *s,
		       struct tso_load *l, const struct tso_byte *b,
		       bool rmo, const struct tso_wit *self)
{
	if (!rmo && s->f_ll >= b->hi && s->w_ll.type == TSO_WIT_RF &&
	    overlaps(s->w_ll.via_pa, s->w_ll.via_size, b->pa, 1))
		report_stale(t, l, &s->w_ll, MSR_V_TSO_COHERENCE, b);
	else if (s->f_sl >= b->hi && s->w_sl.type == TSO_WIT_OWN)
		report_stale(t, l, &s->w_sl, MSR_V_TSO_MEMBAR, b);
	else if (!rmo && s->f_ll >= b->hi && s->w_ll.type == TSO_WIT_OWN)
		report_stale(t, l, &s->w_ll, MSR_V_TSO_MEMBAR, b);
	else if (!rmo && s->f_ll >= b->hi && s->w_ll.type == TSO_WIT_RF)
		report_stale(t, l, &s->w_ll, MSR_V_TSO_LOAD_ORDER, b);
	else
		report_stale(t, l, self, MSR_V_TSO_VALUE, b);
}

/* Place a (piece of a) plain load. RMO pieces (block loads) are ordered
 * only by barriers. */
static void place_load(struct msr_tso *t, struct tso_strand *s,
		       const struct msr_op *op, unsigned b0, unsigned bn,
		       bool rmo)
{
	struct tso_load *l = &t->ld;
	struct tso_wit self;
	uint64_t p, lo = 0;
	unsigned i, lo_i = 0;

	memset(l, 0, sizeof(*l));
	l->op = op;
	tso_proof_load(op, &l->self);
	load_resolve(t, s, l, b0, bn);
	for (i = 0; i < l->nb; i++)
		if (l->b[i].lo > lo) {
			lo = l->b[i].lo;
			lo_i = i;
		}
	memset(&self, 0, sizeof(self));
	if (lo) {
		self.type = TSO_WIT_RF;
		self.co = lo;
		self.via = l->self;
		self.via_pa = op->pa;
		self.via_size = op->size;
		tso_proof_store(t, lo, l->b[lo_i].pa, &self.store);
	}
	p = lo;
	if (s->f_sl > p)
		p = s->f_sl;
	if (!rmo && s->f_ll > p)
		p = s->f_ll;
	for (i = 0; i < l->nb && !l->reported; i++)
		if (l->b[i].hi && p >= l->b[i].hi)
			stale_pick(t, s, l, &l->b[i], rmo, &self);
	if (!rmo && p > s->f_ll) {
		s->f_ll = p;
		s->w_ll = p == lo ? self : s->w_sl;
	}
}

/* ------------------------------------------------------------------------ */
/* Atomics, stores, barriers                                                 */
/* ------------------------------------------------------------------------ */

static void own_store(struct msr_tso *t, struct tso_strand *s,
		      const struct msr_op_block *blk, uint64_t co, bool rmo)
{
	struct tso_own *e = map_find(&s->own, blk->pa8, true);
	unsigned i;

	if (!e) {
		t->nomem = true;
		return;
	}
	for (i = 0; i < 8; i++)
		if (blk->mask & (0x80u >> i)) {
			e->sseq[i] = blk->sseq;
			e->co[i] = co;
			if (rmo)
				e->rmo |= (uint8_t)(0x80u >> i);
			else
				e->rmo &= (uint8_t)~(0x80u >> i);
		}
}

/* Executed store entry: remember it for proofs and own-store checks. */
static struct tso_srec *store_exec(struct msr_tso *t, struct tso_strand *s,
				   const struct msr_op *op,
				   const struct msr_op_block *blk)
{
	struct tso_srec *r = srec_put(t, s, blk->sseq);
	struct tso_crec *c;

	r->have_op = true;
	r->rmo = op->rmo;
	r->atomic = op->kind == MSR_OP_ATOMIC;
	tso_proof_load(op, &r->info);
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

/* A load placed no later than the store's commit: LoadStore. */
static void report_load_store(struct msr_tso *t, struct tso_strand *s,
			      const struct msr_op *op, uint64_t co,
			      const struct msr_op_block *blk)
{
	const struct tso_wit *w = &s->w_ll;
	struct tso_report r;
	struct msr_proof_op me;
	char dw[96];
	bool coh = overlaps(w->via_pa, w->via_size, blk->pa8, 8);

	tso_report_init(&r, coh ? MSR_V_TSO_COHERENCE : MSR_V_TSO_LOAD_STORE,
			op);
	r.observed_co = w->co;
	tso_proof_store(t, co, blk->pa8, &me);
	me.iseq = op->iseq;
	me.pc = op->pc;
	me.op = op->step_op;
	tso_report_push(&r, &w->via, MSR_REL_PO);
	tso_report_push(&r, &me, w->co == co ? MSR_REL_RF : MSR_REL_CO);
	if (w->co != co)
		tso_report_push(&r, &w->store, MSR_REL_RF);
	desc_store(t, w->co, dw, sizeof(dw));
	snprintf(r.message, sizeof(r.message),
		 "store to pa=0x%llx committed (co=%llu) before %s, which an "
		 "earlier load of its strand (iseq=%llu) read: a load precedes "
		 "every later store of its strand",
		 (unsigned long long)op->pa, (unsigned long long)co, dw,
		 (unsigned long long)w->via.iseq);
	tso_report_emit(t, &r);
}

static void run_store(struct msr_tso *t, struct tso_strand *s,
		      const struct msr_op *op)
{
	bool reported = false;
	unsigned b;

	for (b = 0; b < op->nblocks; b++) {
		const struct msr_op_block *blk = &op->blk[b];
		struct tso_srec *r = store_exec(t, s, op, blk);

		/* a commit seen before its store executed may precede a
		 * position an earlier load already holds */
		if (r->co && !reported && s->w_ll.type == TSO_WIT_RF &&
		    s->f_ll >= r->co && !(op->pa & TSO_IO_BIT)) {
			report_load_store(t, s, op, r->co, blk);
			reported = true;
		}
		own_store(t, s, blk, r->co, op->rmo);
	}
}

static void report_atomic(struct msr_tso *t, struct tso_load *l,
			  enum msr_vkind kind, uint64_t co_a,
			  const struct tso_byte *b, const struct tso_wit *w)
{
	struct tso_report r;
	char d1[96], d2[96];

	l->reported = true;
	tso_report_init(&r, kind, l->op);
	r.pa = b ? b->pa : l->op->pa;
	if (w && w->type == TSO_WIT_OWN) { /* RMO store before the atomic */
		tso_report_push(&r, &w->store, MSR_REL_PO);
		tso_report_push(&r, &l->self, MSR_REL_CO);
		desc_store(t, w->co, d1, sizeof(d1));
		snprintf(r.message, sizeof(r.message),
			 "atomic at pa=0x%llx committed (co=%llu) before %s, "
			 "an earlier store of its strand: an atomic waits for "
			 "the strand's earlier stores",
			 (unsigned long long)l->op->pa,
			 (unsigned long long)co_a, d1);
	} else if (w) { /* earlier load already after the atomic */
		r.observed_co = w->co;
		tso_report_push(&r, &w->via, MSR_REL_PO);
		tso_report_push(&r, &l->self,
				w->co == co_a ? MSR_REL_RF : MSR_REL_CO);
		if (w->co != co_a)
			tso_report_push(&r, &w->store, MSR_REL_RF);
		desc_store(t, w->co, d1, sizeof(d1));
		snprintf(r.message, sizeof(r.message),
			 "atomic at pa=0x%llx committed (co=%llu) before %s, "
			 "which an earlier load of its strand (iseq=%llu) "
			 "read: a load precedes every later store of its "
			 "strand",
			 (unsigned long long)l->op->pa,
			 (unsigned long long)co_a, d1,
			 (unsigned long long)w->via.iseq);
	} else if (b->lo == co_a) { /* read its own write */
		r.observed_co = b->src;
		tso_report_push(&r, &l->self, MSR_REL_RF);
		snprintf(r.message, sizeof(r.message),
			 "atomic at pa=0x%llx read its own write (co=%llu) "
			 "instead of the value before it",
			 (unsigned long long)b->pa, (unsigned long long)co_a);
	} else if (b->lo > co_a) { /* read a store after its own write */
		struct msr_proof_op x;

		r.observed_co = b->src;
		tso_proof_store(t, b->src, b->pa, &x);
		tso_report_push(&r, &l->self, MSR_REL_CO);
		tso_report_push(&r, &x, MSR_REL_RF);
		desc_store(t, b->src, d1, sizeof(d1));
		snprintf(r.message, sizeof(r.message),
			 "atomic at pa=0x%llx read %s, which committed after "
			 "the atomic's own write (co=%llu)",
			 (unsigned long long)b->pa, d1,
			 (unsigned long long)co_a);
	} else { /* another store between its read and its write */
		struct msr_proof_op x;

		r.observed_co = b->src;
		r.expected_co = b->hi;
		tso_proof_store(t, b->hi, b->pa, &x);
		tso_report_push(&r, &l->self, MSR_REL_FR);
		tso_report_push(&r, &x, MSR_REL_CO);
		desc_store(t, b->src, d1, sizeof(d1));
		desc_store(t, b->hi, d2, sizeof(d2));
		snprintf(r.message, sizeof(r.message),
			 "atomic at pa=0x%llx read %s, but %s committed "
			 "between its read and its write (co=%llu)",
			 (unsigned long long)b->pa, d1, d2,
			 (unsigned long long)co_a);
	}
	tso_report_emit(t, &r);
}

static void run_atomic(struct msr_tso *t, struct tso_strand *s,
		       const struct msr_op *op)
{
	struct tso_srec *r = op->nblocks ? srec_get(s, op->blk[0].sseq) : NULL;
	struct tso_load *l = &t->ld;
	uint64_t co_a = r ? r->co : 0, q;
	unsigned i, b;

	if (!co_a) { /* never committed: check it as a plain load */
		place_load(t, s, op, 0, op->nblocks, false);
		goto store;
	}
	q = co_a - 1;
	memset(l, 0, sizeof(*l));
	l->op = op;
	tso_proof_load(op, &l->self);
	load_resolve(t, s, l, 0, op->nblocks);
	if (s->f_ll > q && s->w_ll.type == TSO_WIT_RF)
		report_atomic(t, l, MSR_V_TSO_LOAD_STORE, co_a, NULL, &s->w_ll);
	if (!l->reported && s->f_sl > q && s->w_sl.rmo)
		report_atomic(t, l, MSR_V_TSO_MEMBAR, co_a, NULL, &s->w_sl);
	for (i = 0; i < l->nb && !l->reported; i++) {
		const struct tso_byte *y = &l->b[i];

		if (y->lo > q || (y->hi && y->hi <= q))
			report_atomic(t, l, MSR_V_TSO_ATOMICITY, co_a, y, NULL);
	}
	if (q > s->f_ll) {
		s->f_ll = q;
		memset(&s->w_ll, 0, sizeof(s->w_ll));
		s->w_ll.type = TSO_WIT_OWN;
		s->w_ll.co = co_a;
		tso_proof_store(t, co_a, op->pa, &s->w_ll.store);
	}
store:
	for (b = 0; b < op->nblocks; b++) {
		struct tso_srec *sr = store_exec(t, s, op, &op->blk[b]);

		if (!op->store_failed)
			own_store(t, s, &op->blk[b], sr->co, false);
	}
	s->barrier_upto = s->last_st_sseq;
	tso_proof_load(op, &s->barrier_op);
	s->barrier_is_atomic = true;
}

static void op_run(struct msr_tso *t, struct tso_strand *s,
		   const struct msr_op *op)
{
	unsigned b, n;

	switch (op->kind) {
	case MSR_OP_LOAD:
		if (op->pa & TSO_IO_BIT)
			return; /* non-cacheable: outside TSO */
		if (op->step_op != MSR_STEP_LDBLK) {
			place_load(t, s, op, 0, op->nblocks, false);
			return;
		}
		/* block load: four independent 16-byte pieces */
		for (b = 0; b < op->nblocks; b += n) {
			for (n = 1; b + n < op->nblocks &&
				    op->blk[b + n].pa8 >> 4 == op->blk[b].pa8 >> 4;
			     n++)
				;
			place_load(t, s, op, b, n, true);
		}
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
	s->qhead = (s->qhead + 1) & (s->qcap - 1);
	if (--s->qlen == 0)
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
		size_t ncap = s->qcap ? s->qcap * 2 : QUEUE_INIT, i;
		struct msr_op *nq;

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
		nq = malloc(ncap * sizeof(*nq));
		if (!nq)
			return -1;
		for (i = 0; i < s->qlen; i++)
			nq[i] = s->q[(s->qhead + i) & (s->qcap - 1)];
		free(s->q);
		s->q = nq;
		s->qcap = ncap;
		s->qhead = 0;
	}
	if (s->qlen++ == 0)
		t->nblocked++;
	s->q[(s->qhead + s->qlen - 1) & (s->qcap - 1)] = *op;
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
	if (!s->qlen && op_ready(t, s, op, false)) {
		op_run(t, s, op);
		return;
	}
	if (queue_push(t, s, op) < 0)
		t->nomem = true;
}

int msr_tso_finish(struct msr_tso *t, struct msr_error *err)
{
	unsigned i;

	t->finishing = true;
	for (i = 0; i < MSR_MAX_STRANDS; i++)
		if (t->s[i].qlen)
			drain(t, &t->s[i], true);
	if (t->nomem)
		return msr_error_set(err, MSR_E_NOMEM, "checker", NULL,
				     "out of memory in the tso checker: "
				     "results are incomplete");
	return MSR_OK;
}
