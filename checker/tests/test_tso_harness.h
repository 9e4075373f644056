/*
 * test_tso_harness.h - builds msr_op / msr_commit streams by hand for the
 * TSO checker tests and collects the violations it reports. Test-only; every
 * access is one aligned 8-byte word unless a test builds blocks itself.
 */
#ifndef MSR_TEST_TSO_HARNESS_H
#define MSR_TEST_TSO_HARNESS_H

#include <string.h>

#include "checker.h"

#define H_MAXV 64

struct h_run {
	struct msr_tso *tso;
	unsigned nv;
	struct msr_violation v[H_MAXV];
	unsigned per_kind[MSR_V_COUNT];
	uint64_t co;            /* last co given out */
	uint64_t event;
	uint64_t iseq[MSR_MAX_STRANDS];
	uint64_t sseq[MSR_MAX_STRANDS];
};

static inline void h_sink(void *ctx, const struct msr_violation *v)
{
	struct h_run *h = ctx;

	if (h->nv < H_MAXV)
		h->v[h->nv] = *v;
	h->nv++;
	if ((unsigned)v->kind < MSR_V_COUNT)
		h->per_kind[v->kind]++;
}

static inline int h_init(struct h_run *h)
{
	struct msr_engine_sink sink = {0};
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_config cfg;

	memset(h, 0, sizeof(*h));
	memset(&cfg, 0, sizeof(cfg));
	cfg.cores = 8;
	cfg.threads_per_core = 8;
	sink.ctx = h;
	sink.violation = h_sink;
	return msr_tso_create(&cfg, &sink, &h->tso, &err);
}

static inline void h_fini(struct h_run *h)
{
	struct msr_error err = MSR_ERROR_INIT;

	msr_tso_finish(h->tso, &err);
	msr_tso_destroy(h->tso);
	h->tso = NULL;
}

static inline void h_word(uint8_t out[8], uint64_t v)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		out[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* Commit store entry `sseq` of `strand`; returns its co. */
static inline uint64_t h_commit(struct h_run *h, unsigned strand,
				uint64_t sseq, uint64_t pa, uint64_t val,
				bool atomic)
{
	struct msr_commit c;

	memset(&c, 0, sizeof(c));
	c.co = ++h->co;
	c.strand = (uint8_t)strand;
	c.sseq = sseq;
	c.pa8 = pa & ~7ull;
	c.mask = 0xff;
	h_word(c.data, val);
	c.atomic = atomic;
	c.ts = (uint32_t)(10 * c.co);
	c.event = ++h->event;
	msr_tso_add_commit(h->tso, &c);
	return c.co;
}

static inline void h_op_init(struct h_run *h, struct msr_op *op,
			     unsigned strand, uint8_t kind, uint8_t step_op,
			     uint64_t pa)
{
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->step_op = step_op;
	op->strand = (uint8_t)strand;
	op->iseq = ++h->iseq[strand];
	op->pc = 0x4000 + 4 * op->iseq;
	op->pa = pa;
	op->size = 8;
	op->event = ++h->event;
	op->ts = (uint32_t)op->event;
	if (kind != MSR_OP_MEMBAR) {
		op->nblocks = 1;
		op->blk[0].pa8 = pa & ~7ull;
		op->blk[0].mask = 0xff;
	} else {
		op->size = 0;
	}
}

/* Store: returns its sseq (commit it later with h_commit). */
static inline uint64_t h_store(struct h_run *h, unsigned strand, uint64_t pa,
			       uint64_t val)
{
	struct msr_op op;

	h_op_init(h, &op, strand, MSR_OP_STORE, MSR_STEP_ST, pa);
	op.blk[0].sseq = ++h->sseq[strand];
	h_word(op.blk[0].store, val);
	msr_tso_add_op(h->tso, &op);
	return op.blk[0].sseq;
}

static inline void h_set_rf(struct msr_op_block *b, uint8_t kind,
			    unsigned strand, uint64_t sseq, uint64_t co)
{
	b->nrf = 1;
	b->rf[0].kind = kind;
	b->rf[0].mask = 0xff;
	b->rf[0].strand = (uint8_t)strand;
	b->rf[0].sseq = sseq;
	b->rf[0].co = co;
}

static inline struct msr_rf h_rf(uint8_t kind, uint8_t mask, unsigned strand,
				 uint64_t sseq, uint64_t co)
{
	struct msr_rf rf;

	memset(&rf, 0, sizeof(rf));
	rf.kind = kind;
	rf.mask = mask;
	rf.strand = (uint8_t)strand;
	rf.sseq = sseq;
	rf.co = co;
	return rf;
}

/* Load reading the committed store `co` (0 = initial value). */
static inline void h_load(struct h_run *h, unsigned strand, uint64_t pa,
			  uint64_t val, unsigned src_strand,
			  uint64_t src_sseq, uint64_t co)
{
	struct msr_op op;

	h_op_init(h, &op, strand, MSR_OP_LOAD, MSR_STEP_LD, pa);
	h_word(op.blk[0].load, val);
	h_set_rf(&op.blk[0], co ? MSR_RF_COMMIT : MSR_RF_INIT, src_strand,
		 src_sseq, co);
	msr_tso_add_op(h->tso, &op);
}

/* Load bypassing the strand's own store entry `sseq`. */
static inline void h_load_bypass(struct h_run *h, unsigned strand,
				 uint64_t pa, uint64_t val, uint64_t sseq)
{
	struct msr_op op;

	h_op_init(h, &op, strand, MSR_OP_LOAD, MSR_STEP_LD, pa);
	h_word(op.blk[0].load, val);
	h_set_rf(&op.blk[0], MSR_RF_BYPASS, strand, sseq, 0);
	msr_tso_add_op(h->tso, &op);
}

static inline void h_membar(struct h_run *h, unsigned strand, uint32_t mask)
{
	struct msr_op op;

	h_op_init(h, &op, strand, MSR_OP_MEMBAR, MSR_STEP_MEMBAR, 0);
	op.membar_mask = mask;
	msr_tso_add_op(h->tso, &op);
}

/* Atomic swap: the op of store entry `sseq` (already reserved with
 * h_next_sseq), reading committed store `co`. */
static inline void h_swap(struct h_run *h, unsigned strand, uint64_t pa,
			  uint64_t sseq, uint64_t old, uint64_t val,
			  unsigned src_strand, uint64_t src_sseq, uint64_t co)
{
	struct msr_op op;

	h_op_init(h, &op, strand, MSR_OP_ATOMIC, MSR_STEP_SWAP, pa);
	op.blk[0].sseq = sseq;
	h_word(op.blk[0].load, old);
	h_word(op.blk[0].store, val);
	h_set_rf(&op.blk[0], co ? MSR_RF_COMMIT : MSR_RF_INIT, src_strand,
		 src_sseq, co);
	msr_tso_add_op(h->tso, &op);
}

static inline uint64_t h_next_sseq(struct h_run *h, unsigned strand)
{
	return ++h->sseq[strand];
}

#endif /* MSR_TEST_TSO_HARNESS_H */
