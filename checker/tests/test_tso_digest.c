/*
 * test_tso_digest.c - regression guard for optimisations of the TSO pass:
 * seeded random op / commit streams (mostly engine-like, a third fully
 * inconsistent) go through the pass and every field of every violation and
 * proof op is folded into one digest. The expected digest was produced by
 * the pass before the change under test; any report difference changes it.
 * Built with -DTSO_DIGEST_MAIN it prints the digest instead, so a new
 * expected value can be taken from a trusted version of checker/tso*.c.
 * test_tso_digest_keep builds the pass with MSR_TSO_KEEP_SETTLED (settled
 * own-store entries never leave their map) and expects the same digest:
 * reports must not depend on when those entries are retired.
 * reports_unchanged_when_warmed runs the same streams with msr_tso_warm
 * called ahead of every commit and operation (and with out-of-range
 * arguments): a hint may not change a report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"

#define DIGEST_ROUNDS 60u
#define DIGEST_EXPECTED 0xab54d4bf32ec76bdull

struct gen {
	uint64_t s, co, ev;
	uint64_t iseq[8], sseq[8];
	bool engine; /* engine-like stream, else fully random */
	bool warm;   /* hint the pass before each commit and op */
	uint64_t digest;
};

static uint64_t rnd(struct gen *g)
{
	g->s ^= g->s << 13;
	g->s ^= g->s >> 7;
	g->s ^= g->s << 17;
	return g->s;
}

static void mix(struct gen *g, uint64_t x)
{
	unsigned i;

	for (i = 0; i < 8; i++) { /* FNV-1a over the 8 bytes */
		g->digest ^= (x >> (8 * i)) & 0xff;
		g->digest *= 0x100000001b3ull;
	}
}

static void sink(void *ctx, const struct msr_violation *v)
{
	struct gen *g = ctx;
	const struct msr_store_ref *f[2] = {&v->observed_from, &v->expected_from};
	unsigned i;

	mix(g, (uint64_t)v->kind);
	mix(g, (uint64_t)(int64_t)v->strand);
	mix(g, (uint64_t)(int64_t)v->core);
	mix(g, v->iseq);
	mix(g, v->pc);
	mix(g, v->pa);
	mix(g, v->size);
	mix(g, v->ts);
	mix(g, v->event);
	mix(g, v->offset);
	for (i = 0; i < 2; i++) {
		mix(g, f[i]->valid);
		mix(g, f[i]->strand);
		mix(g, f[i]->iseq);
		mix(g, f[i]->co);
		mix(g, f[i]->event);
	}
	for (i = 0; v->message[i]; i++)
		mix(g, (uint8_t)v->message[i]);
	mix(g, v->nproof);
	for (i = 0; i < v->nproof; i++) {
		const struct msr_proof_op *p = &v->proof[i];

		mix(g, p->strand);
		mix(g, p->op);
		mix(g, p->rel);
		mix(g, p->iseq);
		mix(g, p->pc);
		mix(g, p->pa);
		mix(g, p->value);
		mix(g, p->size);
		mix(g, p->ts);
		mix(g, p->event);
	}
}

static uint64_t pa8_rnd(struct gen *g)
{
	uint64_t p = 0x1000 + 8 * (rnd(g) % (g->engine ? 5 : 6));

	if (!g->engine && rnd(g) % 20 == 0)
		p |= 1ull << 39;
	if (!g->engine && rnd(g) % 30 == 0)
		p += 3;
	return p;
}

/* Engine-like streams: whole blocks or one contiguous run of bytes. */
static uint8_t mask_rnd(struct gen *g)
{
	unsigned a, n;

	if (!g->engine)
		return (uint8_t)rnd(g);
	if (rnd(g) % 2)
		return 0xff;
	a = rnd(g) % 8;
	n = 1 + rnd(g) % (8 - a);
	return (uint8_t)(((0xffu << (8 - n)) & 0xff) >> a);
}

static void gen_commit(struct gen *g, struct msr_tso *t)
{
	struct msr_commit c;
	unsigned i;

	memset(&c, 0, sizeof(c));
	c.co = (g->engine || rnd(g) % 16) ? ++g->co : rnd(g) % (g->co + 2);
	c.strand = (uint8_t)(rnd(g) % 6);
	c.sseq = g->engine ? 1 + rnd(g) % (g->sseq[c.strand] + 2)
			   : rnd(g) % 12;
	c.pa8 = pa8_rnd(g);
	c.mask = mask_rnd(g);
	for (i = 0; i < 8; i++)
		c.data[i] = (uint8_t)rnd(g);
	c.rmo = rnd(g) % (g->engine ? 12 : 5) == 0;
	c.atomic = rnd(g) % (g->engine ? 10 : 5) == 0;
	c.ts = (uint32_t)g->ev;
	c.event = ++g->ev;
	c.offset = g->ev * 7;
	c.iseq = rnd(g) % 4 ? 0 : rnd(g) % 50;
	if (g->warm) {
		msr_tso_warm(t, c.strand, c.pa8);
		msr_tso_warm(t, 255, ~7ull);
	}
	msr_tso_add_commit(t, &c);
}

static void gen_rf(struct gen *g, const struct msr_op *op,
		   struct msr_op_block *blk, unsigned k, unsigned *rem)
{
	struct msr_rf *rf = &blk->rf[k];
	bool e = g->engine;

	rf->kind = (uint8_t)(e ? (rnd(g) % 10 < 6 ? MSR_RF_COMMIT : rnd(g) % 4)
			       : rnd(g) % 5);
	if (e) {
		unsigned part = k + 1 == blk->nrf ? *rem : *rem & (uint8_t)rnd(g);

		rf->mask = (uint8_t)part;
		*rem &= ~part;
	} else {
		rf->mask = (uint8_t)rnd(g);
	}
	rf->strand = (uint8_t)(e && rnd(g) % 2 ? op->strand : rnd(g) % 6);
	rf->placed = (uint8_t)(rnd(g) % 2);
	rf->sseq = e ? 1 + rnd(g) % (g->sseq[rf->strand] + 1) : rnd(g) % 12;
	rf->co = e ? (g->co > 8 ? g->co - rnd(g) % 8 : rnd(g) % (g->co + 1)) +
			     (rnd(g) % 20 == 0)
		   : rnd(g) % (g->co + 3);
}

static void gen_op(struct gen *g, struct msr_tso *t, struct msr_op *o)
{
	bool e = g->engine;
	unsigned b, k;

	memset(o, 0, sizeof(*o));
	o->kind = (uint8_t)(e ? (rnd(g) % 10 < 5 ? 1 : rnd(g) % 5) : rnd(g) % 5);
	o->step_op = (uint8_t)(rnd(g) % MSR_STEP_OP_COUNT);
	o->strand = (uint8_t)(rnd(g) % 6);
	o->rmo = rnd(g) % 6 == 0;
	o->store_failed = rnd(g) % 6 == 0;
	o->membar_mask = (uint32_t)(rnd(g) % 128);
	o->iseq = ++g->iseq[o->strand];
	o->pc = 0x4000 + 4 * o->iseq;
	o->pa = 0x1000 + 8 * (rnd(g) % 6) + rnd(g) % 8;
	o->size = (uint8_t)(1 + rnd(g) % 64);
	o->ts = (uint32_t)g->ev;
	o->event = ++g->ev;
	o->offset = g->ev * 3;
	o->nblocks = (uint8_t)(e ? 1 + (rnd(g) % 8 == 0 ? rnd(g) % 8 : 0)
				 : rnd(g) % (MSR_OP_MAX_BLOCKS + 1));
	if (e && o->nblocks > 1)
		o->step_op = rnd(g) % 2 ? MSR_STEP_LDBLK : o->step_op;
	for (b = 0; b < o->nblocks; b++) {
		struct msr_op_block *blk = &o->blk[b];
		unsigned rem;

		blk->pa8 = e ? 0x1000 + 8 * ((b + rnd(g) % 2) % 5) : pa8_rnd(g);
		blk->mask = mask_rnd(g);
		for (k = 0; k < 8; k++) {
			blk->load[k] = (uint8_t)rnd(g);
			blk->store[k] = (uint8_t)rnd(g);
		}
		blk->sseq = e ? ++g->sseq[o->strand] : rnd(g) % 12;
		if (e && o->kind != MSR_OP_STORE && o->kind != MSR_OP_ATOMIC &&
		    rnd(g) % 3)
			blk->sseq = 0;
		blk->nrf = (uint8_t)(e ? 1 + rnd(g) % 3 : rnd(g) % 9);
		rem = blk->mask;
		for (k = 0; k < blk->nrf; k++)
			gen_rf(g, o, blk, k, &rem);
	}
	if (g->warm && o->nblocks)
		msr_tso_warm(t, o->strand, o->blk[0].pa8);
	msr_tso_add_op(t, o);
}

/* The digest of all rounds; 0 on a setup failure. */
static uint64_t run_digest(bool warm)
{
	struct gen *g = calloc(1, sizeof(*g));
	struct msr_op *o = malloc(sizeof(*o));
	uint64_t d = 0;
	unsigned r, i;

	if (!g || !o)
		goto out;
	g->digest = 0xcbf29ce484222325ull;
	g->warm = warm;
	for (r = 0; r < DIGEST_ROUNDS; r++) {
		struct msr_engine_sink sk;
		struct msr_error err = MSR_ERROR_INIT;
		struct msr_config cfg;
		struct msr_tso *t;

		memset(&sk, 0, sizeof(sk));
		memset(&cfg, 0, sizeof(cfg));
		sk.ctx = g;
		sk.violation = sink;
		g->s = 0x9e3779b97f4a7c15ull * (r + 1);
		g->engine = r % 3 != 0;
		g->co = g->ev = 0;
		memset(g->iseq, 0, sizeof(g->iseq));
		memset(g->sseq, 0, sizeof(g->sseq));
		if (msr_tso_create(&cfg, &sk, &t, &err))
			goto out;
		if (warm) /* before the pass has any table */
			msr_tso_warm(t, 3, 0x1000);
		for (i = 0; i < 4000; i++) {
			if (rnd(g) % (g->engine ? 5 : 3) < 2)
				gen_op(g, t, o);
			else
				gen_commit(g, t);
		}
		msr_tso_finish(t, &err);
		msr_tso_destroy(t);
		mix(g, r);
	}
	d = g->digest;
out:
	free(g);
	free(o);
	return d;
}

#ifdef TSO_DIGEST_MAIN
int main(void)
{
	printf("0x%016llxull\n", (unsigned long long)run_digest(false));
	return 0;
}
#else
#include <criterion/criterion.h>

Test(tso_digest, reports_unchanged)
{
	uint64_t d = run_digest(false);

	cr_assert_eq(d, DIGEST_EXPECTED, "tso report digest 0x%016llx",
		     (unsigned long long)d);
}

Test(tso_digest, reports_unchanged_when_warmed)
{
	uint64_t d = run_digest(true);

	cr_assert_eq(d, DIGEST_EXPECTED, "tso report digest 0x%016llx",
		     (unsigned long long)d);
}
#endif
