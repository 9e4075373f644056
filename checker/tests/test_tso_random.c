/*
 * test_tso_random.c - robustness: the TSO pass fed random, inconsistent
 * op and commit streams (as an engine might emit after protocol
 * violations) must neither crash nor misbehave (run it under ASan/UBSan),
 * and must keep its violation count within one per op or commit.
 */
#include <criterion/criterion.h>

#include "test_tso_harness.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void random_commit(struct h_run *h, uint64_t *s)
{
	struct msr_commit c;

	memset(&c, 0, sizeof(c));
	c.co = rnd(s) % 16 ? ++h->co : rnd(s) % (h->co + 2); /* some repeat */
	c.strand = (uint8_t)(rnd(s) % 6);
	c.sseq = rnd(s) % 12;
	c.pa8 = 0x1000 + 8 * (rnd(s) % 6);
	if (rnd(s) % 20 == 0)
		c.pa8 |= 1ull << 39;
	c.mask = (uint8_t)rnd(s);
	c.rmo = rnd(s) % 5 == 0;
	c.atomic = rnd(s) % 5 == 0;
	c.event = ++h->event;
	msr_tso_add_commit(h->tso, &c);
}

static void random_op(struct h_run *h, uint64_t *s)
{
	struct msr_op op;
	unsigned b, k;

	memset(&op, 0, sizeof(op));
	op.kind = (uint8_t)(rnd(s) % 5);
	op.step_op = (uint8_t)(rnd(s) % MSR_STEP_OP_COUNT);
	op.strand = (uint8_t)(rnd(s) % 6);
	op.rmo = rnd(s) % 6 == 0;
	op.store_failed = rnd(s) % 6 == 0;
	op.membar_mask = (uint32_t)(rnd(s) % 128);
	op.iseq = ++h->iseq[op.strand];
	op.pa = 0x1000 + 8 * (rnd(s) % 6) + rnd(s) % 8;
	op.size = (uint8_t)(1 + rnd(s) % 64);
	op.event = ++h->event;
	op.nblocks = (uint8_t)(rnd(s) % (MSR_OP_MAX_BLOCKS + 1));
	for (b = 0; b < op.nblocks; b++) {
		struct msr_op_block *blk = &op.blk[b];

		blk->pa8 = 0x1000 + 8 * (rnd(s) % 6);
		blk->mask = (uint8_t)rnd(s);
		blk->sseq = rnd(s) % 12;
		blk->nrf = (uint8_t)(rnd(s) % 9);
		for (k = 0; k < blk->nrf; k++) {
			blk->rf[k].kind = (uint8_t)(rnd(s) % 5);
			blk->rf[k].mask = (uint8_t)rnd(s);
			blk->rf[k].strand = (uint8_t)(rnd(s) % 6);
			blk->rf[k].placed = (uint8_t)(rnd(s) % 2);
			blk->rf[k].sseq = rnd(s) % 12;
			blk->rf[k].co = rnd(s) % (h->co + 3);
		}
	}
	msr_tso_add_op(h->tso, &op);
}

Test(tso_random, inconsistent_streams)
{
	uint64_t seed = 0x2545f4914f6cdd1dull;
	unsigned round, i;

	for (round = 0; round < 40; round++) {
		struct h_run *h = malloc(sizeof(*h));
		unsigned n = 0;

		cr_assert_not_null(h);
		cr_assert_eq(h_init(h), MSR_OK);
		for (i = 0; i < 3000; i++, n++) {
			if (rnd(&seed) % 3)
				random_op(h, &seed);
			else
				random_commit(h, &seed);
		}
		h_fini(h);
		cr_assert_leq(h->nv, n, "round %u: %u violations for %u inputs",
			      round, h->nv, n);
		free(h);
	}
}
