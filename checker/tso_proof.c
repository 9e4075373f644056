/*
 * tso_proof.c - turns a broken TSO axiom found by tso.c into a
 * `struct msr_violation`: location, the stores read and expected, a plain
 * message and the proof cycle. It decides nothing about TSO itself and never
 * keeps state between violations.
 */
#include <stdio.h>
#include <string.h>

#include "tso-internal.h"

/* The bytes at `src` (block order) as a big-endian number. */
static uint64_t be64(const uint8_t *src)
{
	uint64_t v;

	memcpy(&v, src, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

uint64_t tso_proof_value(const uint8_t *src, unsigned m)
{
	uint64_t v = 0;
	unsigned first, tz, i;

	if (!m)
		return 0;
	first = (unsigned)__builtin_clz(m) - 24u;
	tz = (unsigned)__builtin_ctz(m);
	if (!((m >> tz) & ((m >> tz) + 1))) /* one run of set bits */
		return (be64(src) << (8 * first)) >> (8 * (first + tz));
	for (; m; m &= ~(0x80u >> i)) {
		i = (unsigned)__builtin_clz(m) - 24u;
		v = v << 8 | src[i];
	}
	return v;
}

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
	/* the set bits of each block's mask, lowest address first; a
	 * contiguous mask (the usual case) is one shift of the block */
	if (op->nblocks == 1) {
		out->value = tso_proof_value(op->kind == MSR_OP_STORE
						     ? op->blk[0].store
						     : op->blk[0].load,
					     op->blk[0].mask);
		return;
	}
	for (b = 0; b < op->nblocks && n < 8; b++) {
		const uint8_t *src = op->kind == MSR_OP_STORE ? op->blk[b].store
							       : op->blk[b].load;
		unsigned m = op->blk[b].mask, first, tz, k;

		if (!m)
			continue;
		first = (unsigned)__builtin_clz(m) - 24u; /* bit 7 = byte 0 */
		tz = (unsigned)__builtin_ctz(m);
		if (!((m >> tz) & ((m >> tz) + 1))) { /* one run of set bits */
			unsigned cnt = 8u - tz - first;
			uint64_t chunk;

			k = cnt < 8 - n ? cnt : 8 - n;
			chunk = (be64(src) << (8 * first)) >> (64 - 8 * k);
			out->value = k == 8 ? chunk : out->value << (8 * k) | chunk;
			n += k;
			continue;
		}
		for (; m && n < 8; n++) {
			i = (unsigned)__builtin_clz(m) - 24u;
			out->value = out->value << 8 | src[i];
			m &= ~(0x80u >> i);
		}
	}
}

void tso_proof_store(const struct msr_tso *t, uint64_t co, uint64_t pa,
		     struct msr_proof_op *out)
{
	const struct tso_crec *c = tso_crec_get(t, co);
	unsigned first, n;

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
	if (!c->mask) {
		out->pa = c->pa8;
		out->size = 8;
		return;
	}
	/* the bytes from the first to the last one written */
	first = (unsigned)__builtin_clz(c->mask) - 24u;
	n = 8u - (unsigned)__builtin_ctz(c->mask) - first;
	out->pa = c->pa8 + first;
	out->size = (uint8_t)n;
	out->value = (be64(c->data) << (8 * first)) >> (64 - 8 * n);
}

/* A DMA_ST / MEM_SLAM write is no op of any strand: strand 0, iseq 0. */
void tso_proof_dma(uint64_t pa, uint8_t val, struct msr_proof_op *out)
{
	memset(out, 0, sizeof(*out));
	out->op = MSR_STEP_NOP;
	out->pa = pa;
	out->size = 1;
	out->value = val;
}

void tso_desc_store(const struct msr_tso *t, uint64_t co, char *buf,
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

void tso_report_store_order(struct msr_tso *t, const struct msr_commit *c,
			    uint64_t later_co)
{
	struct tso_report r;
	struct msr_proof_op p1, p2;
	char d1[96], d2[96];

	tso_proof_store(t, c->co, c->pa8, &p1);
	tso_report_init(&r, MSR_V_TSO_STORE_ORDER, NULL);
	r.at = &p1;
	r.pa = p1.pa;
	r.size = p1.size;
	r.ts = c->ts;
	r.event = c->event;
	r.offset = c->offset;
	r.observed_co = c->co;
	r.expected_co = later_co;
	tso_report_push(&r, &p1, MSR_REL_PO);
	tso_proof_store(t, later_co, 0, &p2);
	if (!later_co)
		p2.strand = c->strand;
	tso_report_push(&r, &p2, MSR_REL_CO);
	tso_desc_store(t, c->co, d1, sizeof(d1));
	tso_desc_store(t, later_co, d2, sizeof(d2));
	snprintf(r.message, sizeof(r.message),
		 "%s committed after %s, which comes later in program order: "
		 "stores must commit in program order", d1, d2);
	tso_report_emit(t, &r);
}

void tso_report_bypass(struct msr_tso *t, struct tso_load *l,
		       const struct msr_rf *rf, const struct msr_proof_op *sp,
		       uint64_t pa)
{
	struct tso_report r;

	if (l->reported)
		return;
	l->reported = true;
	tso_load_self(l);
	tso_report_init(&r, MSR_V_TSO_VALUE, l->op);
	r.pa = pa;
	tso_report_push(&r, sp, MSR_REL_RF);
	tso_report_push(&r, &l->self, MSR_REL_NONE);
	snprintf(r.message, sizeof(r.message),
		 "load at pa=0x%llx took its value from the store buffer "
		 "entry sseq=%llu of strand %u, which is not the youngest "
		 "earlier store of this strand to pa=0x%llx",
		 (unsigned long long)l->op->pa, (unsigned long long)rf->sseq,
		 rf->strand, (unsigned long long)pa);
	tso_report_emit(t, &r);
}

void tso_report_own_later(struct msr_tso *t, struct tso_load *l, uint64_t c,
			  uint64_t pa)
{
	struct tso_report r;
	struct msr_proof_op sp;

	if (l->reported)
		return;
	l->reported = true;
	tso_load_self(l);
	tso_proof_store(t, c, pa, &sp);
	tso_report_init(&r, tso_overlaps(l->op->pa, l->op->size, sp.pa, sp.size)
				    ? MSR_V_TSO_COHERENCE
				    : MSR_V_TSO_LOAD_STORE,
			l->op);
	r.pa = pa;
	r.observed_co = c;
	tso_report_push(&r, &l->self, MSR_REL_PO);
	tso_report_push(&r, &sp, MSR_REL_RF);
	snprintf(r.message, sizeof(r.message),
		 "load at pa=0x%llx read the value of its own strand's later "
		 "store (co=%llu): a load precedes every later store of its "
		 "strand",
		 (unsigned long long)l->op->pa, (unsigned long long)c);
	tso_report_emit(t, &r);
}

void tso_report_own_stale(struct msr_tso *t, struct tso_load *l,
			  const struct tso_byte *b, uint64_t yco,
			  const struct msr_proof_op *yp)
{
	struct tso_report r;
	struct msr_proof_op sp;
	char d[96];

	if (l->reported)
		return;
	l->reported = true;
	tso_load_self(l);
	if (yco) {
		tso_proof_store(t, yco, b->pa, &sp);
		sp.iseq = yp->iseq;
		sp.pc = yp->pc;
	} else {
		sp = *yp;
	}
	tso_report_init(&r, MSR_V_TSO_COHERENCE, l->op);
	r.pa = b->pa;
	r.observed_co = b->dma ? 0 : b->src;
	r.expected_co = yco;
	tso_report_push(&r, &sp, MSR_REL_PO);
	tso_report_push(&r, &l->self, MSR_REL_FR);
	if (b->dma)
		snprintf(d, sizeof(d), "a DMA or back-door write made after "
			 "co=%llu", (unsigned long long)b->src);
	else
		tso_desc_store(t, b->src, d, sizeof(d));
	snprintf(r.message, sizeof(r.message),
		 "load at pa=0x%llx read %s, older than its own strand's "
		 "earlier store iseq=%llu%s to pa=0x%llx: a strand must see "
		 "its own stores",
		 (unsigned long long)l->op->pa, d,
		 (unsigned long long)yp->iseq,
		 yco ? "" : " (still in its store buffer)",
		 (unsigned long long)b->pa);
	tso_report_emit(t, &r);
}

/* `w` with its via op's value filled in (in `buf`) when it was kept raw. */
static const struct tso_wit *wit_full(const struct tso_wit *w,
				      struct tso_wit *buf)
{
	if (!w || !w->via_lazy)
		return w;
	*buf = *w;
	buf->via.value = tso_proof_value(w->via_raw, w->via_mask);
	buf->via_lazy = false;
	return buf;
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
	if (hi != w->co || w->dma)
		tso_report_push(r, &nx, MSR_REL_CO);
	tso_report_push(r, &w->store, MSR_REL_RF);
}

void tso_report_stale(struct msr_tso *t, struct tso_load *l,
			 const struct tso_wit *w, enum msr_vkind kind,
			 const struct tso_byte *b)
{
	struct tso_wit wf;
	struct tso_report r;
	char dr[96], dn[96], dw[96];
	const char *why, *tail;

	w = wit_full(w, &wf);
	l->reported = true;
	tso_load_self(l);
	tso_report_init(&r, kind, l->op);
	r.pa = b->pa;
	r.observed_co = b->src;
	r.expected_co = b->hi;
	push_cycle(t, &r, w, l, b->hi, b->pa);
	tso_desc_store(t, b->src, dr, sizeof(dr));
	tso_desc_store(t, b->hi, dn, sizeof(dn));
	if (w->dma)
		snprintf(dw, sizeof(dw), "a DMA or back-door write made after "
			 "co=%llu", (unsigned long long)w->co);
	else if (kind == MSR_V_TSO_MEMBAR)
		snprintf(dw, sizeof(dw), "iseq=%llu (co=%llu)",
			 (unsigned long long)w->store.iseq,
			 (unsigned long long)w->co);
	else
		tso_desc_store(t, w->co, dw, sizeof(dw));
	switch (kind) {
	case MSR_V_TSO_MEMBAR:
		why = w->has_barrier ? "membar #StoreLoad orders it after its "
				       "strand's earlier store"
				     : "it comes after its strand's earlier "
				       "atomic";
		tail = "";
		break;
	case MSR_V_TSO_COHERENCE:
		why = "an earlier load of the same bytes had already seen";
		tail = ": a strand must not see a value go back in time";
		break;
	case MSR_V_TSO_VALUE:
		why = "other bytes of the same load came from";
		tail = ": no single point in memory order holds this value";
		break;
	default:
		why = "an earlier load of its strand had already seen";
		tail = ": loads must stay in program order";
		break;
	}
	snprintf(r.message, sizeof(r.message),
		 "load at pa=0x%llx read %s, overwritten by %s, but %s %s%s",
		 (unsigned long long)b->pa, dr, dn, why, dw, tail);
	tso_report_emit(t, &r);
}

/* A load placed no later than the store's commit: LoadStore. */
void tso_report_load_store(struct msr_tso *t, const struct tso_wit *w,
			   const struct msr_op *op, uint64_t co,
			   const struct msr_op_block *blk)
{
	struct tso_wit wf;
	struct tso_report r;
	struct msr_proof_op me;
	char dw[96];
	bool coh = tso_overlaps(w->via_pa, w->via_size, op->pa, op->size);

	w = wit_full(w, &wf);
	tso_report_init(&r, coh ? MSR_V_TSO_COHERENCE : MSR_V_TSO_LOAD_STORE,
			op);
	r.observed_co = w->co;
	tso_proof_store(t, co, blk->pa8, &me);
	me.iseq = op->iseq;
	me.pc = op->pc;
	me.op = op->step_op;
	if (w->type == TSO_WIT_OWN) {
		/* store -po-> [membar -po->] load -po-> this store -co-> */
		tso_report_push(&r, &w->store, MSR_REL_PO);
		if (w->has_barrier)
			tso_report_push(&r, &w->barrier, MSR_REL_PO);
		tso_report_push(&r, &w->via, MSR_REL_PO);
		tso_report_push(&r, &me, MSR_REL_CO);
		snprintf(r.message, sizeof(r.message),
			 "store to pa=0x%llx committed (co=%llu) before the "
			 "earlier store (co=%llu) that a barrier orders before "
			 "the earlier load iseq=%llu: a load precedes every "
			 "later store of its strand",
			 (unsigned long long)op->pa, (unsigned long long)co,
			 (unsigned long long)w->co,
			 (unsigned long long)w->via.iseq);
		tso_report_emit(t, &r);
		return;
	}
	tso_report_push(&r, &w->via, MSR_REL_PO);
	tso_report_push(&r, &me, w->co == co ? MSR_REL_RF : MSR_REL_CO);
	if (w->co != co)
		tso_report_push(&r, &w->store, MSR_REL_RF);
	tso_desc_store(t, w->co, dw, sizeof(dw));
	snprintf(r.message, sizeof(r.message),
		 "store to pa=0x%llx committed (co=%llu) before %s, which an "
		 "earlier load of its strand (iseq=%llu) read: a load precedes "
		 "every later store of its strand",
		 (unsigned long long)op->pa, (unsigned long long)co, dw,
		 (unsigned long long)w->via.iseq);
	tso_report_emit(t, &r);
}

void tso_report_atomic(struct msr_tso *t, struct tso_load *l,
			  enum msr_vkind kind, uint64_t co_a,
			  const struct tso_byte *b, const struct tso_wit *w)
{
	struct tso_wit wf;
	struct tso_report r;
	char d1[96], d2[96];

	w = wit_full(w, &wf);
	l->reported = true;
	tso_load_self(l);
	tso_report_init(&r, kind, l->op);
	r.pa = b ? b->pa : l->op->pa;
	if (w) { /* earlier load already after the atomic */
		r.observed_co = w->co;
		tso_report_push(&r, &w->via, MSR_REL_PO);
		tso_report_push(&r, &l->self,
				w->co == co_a ? MSR_REL_RF : MSR_REL_CO);
		if (w->co != co_a)
			tso_report_push(&r, &w->store, MSR_REL_RF);
		tso_desc_store(t, w->co, d1, sizeof(d1));
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
		tso_desc_store(t, b->src, d1, sizeof(d1));
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
		tso_desc_store(t, b->src, d1, sizeof(d1));
		tso_desc_store(t, b->hi, d2, sizeof(d2));
		snprintf(r.message, sizeof(r.message),
			 "atomic at pa=0x%llx read %s, but %s committed "
			 "between its read and its write (co=%llu)",
			 (unsigned long long)b->pa, d1, d2,
			 (unsigned long long)co_a);
	}
	tso_report_emit(t, &r);
}

void tso_report_init(struct tso_report *r, enum msr_vkind kind,
		     const struct msr_op *op)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->op = op;
	if (op) {
		r->pa = op->pa;
		r->size = op->size;
		r->ts = op->ts;
		r->event = op->event;
		r->offset = op->offset;
	}
}

void tso_report_push(struct tso_report *r, const struct msr_proof_op *p,
		     enum msr_rel rel)
{
	if (r->nproof >= MSR_PROOF_MAX)
		return;
	r->proof[r->nproof] = *p;
	r->proof[r->nproof].rel = (uint8_t)rel;
	r->nproof++;
}

static void store_ref(const struct msr_tso *t, uint64_t co,
		      struct msr_store_ref *ref)
{
	const struct tso_crec *c = tso_crec_get(t, co);

	memset(ref, 0, sizeof(*ref));
	if (!c)
		return;
	ref->valid = true;
	ref->strand = c->strand;
	ref->iseq = c->iseq;
	ref->sseq = c->sseq;
	ref->co = c->co;
	ref->ts = c->ts;
	ref->event = c->event;
}

void tso_report_emit(struct msr_tso *t, const struct tso_report *r)
{
	struct msr_violation v;
	size_t n;

	t->reported++;
	if (!t->sink.violation)
		return;
	memset(&v, 0, sizeof(v));
	v.kind = r->kind;
	if (r->op) {
		v.strand = r->op->strand;
		v.iseq = r->op->iseq;
		v.pc = r->op->pc;
	} else if (r->at) {
		v.strand = r->at->strand;
		v.iseq = r->at->iseq;
		v.pc = r->at->pc;
	} else {
		v.strand = -1;
	}
	v.core = v.strand >= 0 && t->tpc ? (int)((unsigned)v.strand / t->tpc)
					 : -1;
	v.pa = r->pa;
	v.size = r->size;
	v.ts = r->ts;
	v.event = r->event;
	v.offset = r->offset;
	store_ref(t, r->observed_co, &v.observed_from);
	store_ref(t, r->expected_co, &v.expected_from);
	n = strlen(r->message);
	if (n >= sizeof(v.message))
		n = sizeof(v.message) - 1;
	memcpy(v.message, r->message, n);
	v.message[n] = 0;
	v.nproof = r->nproof;
	memcpy(v.proof, r->proof, sizeof(v.proof[0]) * r->nproof);
	t->sink.violation(t->sink.ctx, &v);
}
