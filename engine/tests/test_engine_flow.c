/*
 * test_engine_flow.c - engine scenarios from the T2 event sequences:
 * op/commit emission field by field, stale L1 hits, commit retirement,
 * evictions, block-init stores, atomics, RMO acks, pops, DMA, I/O loads,
 * and independence of two engines.
 */
#include "engine-test.h"

#define C0 0  /* strand 0: core 0 */
#define C1 8  /* strand 8: core 1 */

/* a cacheable 8-byte L2 miss load of strand `tnum` with its fill */
static void miss_load(struct tctx *t, unsigned tnum, uint64_t pa,
		      uint64_t expect, uint32_t ts)
{
	step_ld(t, tnum, pa, 8, expect, true);
	ld_issue(t, tnum, pa, 3, MSR_IT_LOAD, ts);
	ld_data(t, tnum, pa, MSR_DSRC_L2, ts + 5);
	ld_fill(t, tnum, pa, ts + 6);
	sstep(t, tnum);
}

static void hit_load(struct tctx *t, unsigned tnum, uint64_t pa,
		     uint64_t expect, uint32_t ts)
{
	step_ld(t, tnum, pa, 8, expect, true);
	ld_issue(t, tnum, pa, 3, MSR_IT_LOAD, ts);
	ld_data(t, tnum, pa, MSR_DSRC_L1, ts + 1);
	sstep(t, tnum);
}

Test(flow, store_then_remote_load_emits_commit_and_ops)
{
	struct tctx *t = t_new(true);
	const struct msr_op *st, *ld;
	const struct msr_commit *c;

	step_st(t, C0, 0x1000, 8, 0x1122334455667788ULL);
	full_store(t, C0, 0x1000, 8, 0x1122334455667788ULL, 0, 100);
	miss_load(t, C1, 0x1000, 0x1122334455667788ULL, 200);
	t_finish(t);
	expect_clean(t);

	cr_assert_eq(t->nc, 1);
	c = &t->c[0];
	cr_assert_eq(c->co, 1);
	cr_assert_eq(c->strand, C0);
	cr_assert_eq(c->sseq, 1);
	cr_assert_eq(c->iseq, 1);
	cr_assert_eq(c->pa8, 0x1000);
	cr_assert_eq(c->mask, 0xff);
	cr_assert_eq(be_val(c->data, 8), 0x1122334455667788ULL);
	cr_assert_eq(c->ts, 110);
	cr_assert(!c->rmo && !c->atomic);

	cr_assert_eq(t->nops, 2);
	st = &t->ops[0];
	cr_assert_eq(st->kind, MSR_OP_STORE);
	cr_assert_eq(st->strand, C0);
	cr_assert_eq(st->iseq, 1);
	cr_assert_eq(st->nblocks, 1);
	cr_assert_eq(st->blk[0].pa8, 0x1000);
	cr_assert_eq(st->blk[0].mask, 0xff);
	cr_assert_eq(st->blk[0].sseq, 1);
	cr_assert_eq(be_val(st->blk[0].store, 8), 0x1122334455667788ULL);

	ld = &t->ops[1];
	cr_assert_eq(ld->kind, MSR_OP_LOAD);
	cr_assert_eq(ld->strand, C1);
	cr_assert_eq(ld->iseq, 1);
	cr_assert_eq(ld->pa, 0x1000);
	cr_assert_eq(ld->size, 8);
	cr_assert_eq(ld->nblocks, 1);
	cr_assert_eq(ld->blk[0].mask, 0xff);
	cr_assert_eq(be_val(ld->blk[0].load, 8), 0x1122334455667788ULL);
	cr_assert_eq(ld->blk[0].nrf, 1);
	cr_assert_eq(ld->blk[0].rf[0].kind, MSR_RF_COMMIT);
	cr_assert_eq(ld->blk[0].rf[0].co, 1);
	cr_assert_eq(ld->blk[0].rf[0].strand, C0);
	cr_assert_eq(ld->blk[0].rf[0].sseq, 1);
	cr_assert_eq(ld->blk[0].rf[0].mask, 0xff);
	cr_assert_eq(ld->blk[0].data_event, 5); /* LD_DATA index */
	t_free(t);
}

Test(flow, rf_per_byte_mixes_init_and_commit)
{
	struct tctx *t = t_new(true);
	const struct msr_op *ld;

	t_image(t, "@1000\n0102030405060708\n");
	step_st(t, C0, 0x1002, 2, 0xaabb);
	full_store(t, C0, 0x1002, 2, 0xaabb, 0, 100);
	miss_load(t, C1, 0x1000, 0x0102aabb05060708ULL, 200);
	t_finish(t);
	expect_clean(t);
	ld = &t->ops[1];
	cr_assert_eq(ld->blk[0].nrf, 2);
	cr_assert_eq(ld->blk[0].rf[0].kind, MSR_RF_INIT);
	cr_assert_eq(ld->blk[0].rf[0].mask, 0xcf);
	cr_assert_eq(ld->blk[0].rf[1].kind, MSR_RF_COMMIT);
	cr_assert_eq(ld->blk[0].rf[1].co, 1);
	cr_assert_eq(ld->blk[0].rf[1].mask, 0x30);
	cr_assert_eq(t->c[0].mask, 0x30);
	cr_assert_eq(be_val(t->c[0].data, 8), 0x0102aabb05060708ULL);
	t_free(t);
}

Test(flow, stale_l1_hit_is_legal_until_the_invalidation)
{
	struct tctx *t = t_new(true);
	const struct msr_violation *v;

	t_image(t, "@2000 0000000000001111 0000000000000000\n");
	miss_load(t, C1, 0x2000, 0x1111, 100);
	/* strand 0 stores; core 1 holds the line and must be invalidated */
	step_st(t, C0, 0x2000, 8, 0x2222);
	st_issue(t, C0, 0x2000, 0x2222, 0xff, MSR_IT_STORE, 200);
	sstep(t, C0);
	st_commit(t, C0, 0x2000, 0xff, 0x2, 1, 210);
	st_ack(t, C0, 0, 211);
	hit_load(t, C1, 0x2000, 0x1111, 215); /* old copy: legal */
	cr_assert_eq(t->nv, 0);
	cr_assert_eq(t->ops[2].blk[0].rf[0].kind, MSR_RF_INIT);
	st_inv(t, 1, C0, 0x2000, 220);
	hit_load(t, C1, 0x2000, 0x2222, 230); /* line is gone now */
	v = find_kind(t, MSR_V_L1_HIT_NOT_PRESENT);
	cr_assert_not_null(v);
	cr_assert_eq(v->strand, C1);
	cr_assert_eq(v->core, 1);
	cr_assert_eq(v->iseq, 3);
	cr_assert_eq(v->pa, 0x2000);
	cr_assert_eq(v->ts, 231);
	/* repaired from memory: the value is the committed one, no mismatch */
	cr_assert_eq(count_kind(t, MSR_V_LOAD_VALUE), 0);
	cr_assert_eq(t->nv, 1);
	t_free(t);
}

Test(flow, stale_l1_value_mismatch_names_the_newer_store)
{
	struct tctx *t = t_new(true);
	const struct msr_violation *v;

	t_image(t, "@2000 0000000000001111 0000000000000000\n");
	miss_load(t, C1, 0x2000, 0x1111, 100);
	step_st(t, C0, 0x2000, 8, 0x2222);
	st_issue(t, C0, 0x2000, 0x2222, 0xff, MSR_IT_STORE, 200);
	sstep(t, C0);
	st_commit(t, C0, 0x2000, 0xff, 0x2, 1, 210);
	hit_load(t, C1, 0x2000, 0x2222, 215); /* the run saw the new value */
	v = find_kind(t, MSR_V_LOAD_VALUE);
	cr_assert_not_null(v);
	cr_assert_str_eq(v->source, "L1");
	cr_assert_eq(be_val(v->expected, 8), 0x1111);
	cr_assert_eq(be_val(v->observed, 8), 0x2222);
	cr_assert(!v->expected_from.valid); /* initial memory */
	cr_assert(v->observed_from.valid);
	cr_assert_eq(v->observed_from.strand, C0);
	cr_assert_eq(v->observed_from.co, 1);
	cr_assert_eq(v->observed_from.iseq, 1);
	cr_assert_eq(v->observed_from.ts, 210);
	cr_assert(strstr(v->message, "L1 piece it hit (filled at cycle 106)"));
	t_free(t);
}

Test(flow, commit_does_not_retire_before_its_st_inv)
{
	struct tctx *t = t_new(false);
	const struct msr_violation *v;

	st_issue(t, C0, 0x3000, 0x55, 0xff, MSR_IT_STORE, 100);
	sstep(t, C0);
	st_commit(t, C0, 0x3000, 0xff, 0x2, 1, 110);
	st_ack(t, C0, 0, 111);
	/* acked but its commit still awaits core 1: bypass-searchable */
	ld_issue(t, C0, 0x3000, 3, MSR_IT_LOAD, 120);
	ld_data(t, C0, 0x3000, MSR_DSRC_STB, 121);
	cr_assert_eq(t->nv, 0);
	st_inv(t, 1, C0, 0x3000, 130);
	ld_issue(t, C0, 0x3000, 3, MSR_IT_LOAD, 140);
	ld_data(t, C0, 0x3000, MSR_DSRC_STB, 141);
	v = find_kind(t, MSR_V_BYPASS_NOT_COVERED);
	cr_assert_not_null(v);
	cr_assert_eq(v->event, 8);
	cr_assert_eq(t->nv, 1);
	t_free(t);
}

Test(flow, evict_inv_pairs_by_bank)
{
	struct tctx *t = t_new(true);
	const struct msr_violation *v;

	t_image(t, "@0 0000000000000001 0000000000000000\n"
		   "@40 0000000000000002 0000000000000000\n");
	miss_load(t, C1, 0x0, 1, 100);
	miss_load(t, C1, 0x40, 2, 110);
	evict(t, 0x0, 0x2, 120);  /* bank 0 */
	evict(t, 0x40, 0x2, 121); /* bank 1 */
	evict_inv(t, 1, 1, 122);  /* answers the bank-1 eviction */
	hit_load(t, C1, 0x0, 1, 130);
	cr_assert_eq(t->nv, 0);
	hit_load(t, C1, 0x40, 2, 140);
	v = find_kind(t, MSR_V_L1_HIT_NOT_PRESENT);
	cr_assert_not_null(v);
	cr_assert_eq(v->pa, 0x40);
	evict_inv(t, 3, 0, 150); /* core 3 is not awaited */
	v = find_kind(t, MSR_V_UNMATCHED_EVICT_INV);
	cr_assert_not_null(v);
	cr_assert_eq(v->strand, -1);
	evict_inv(t, 1, 0, 151);
	t_finish(t);
	cr_assert_eq(t->nv, 2);
	t_free(t);
}

static void blkinit(struct tctx *t, unsigned l2hit)
{
	struct msr_step *s;

	t_image(t, "@4000 ffffffffffffffff ffffffffffffffff ffffffffffffffff"
		   " ffffffffffffffff ffffffffffffffff ffffffffffffffff"
		   " ffffffffffffffff ffffffffffffffff\n");
	s = step_mem(t, C0, MSR_STEP_STBI, 0x4008, 8);
	step_set_st(s, 0x0102030405060708ULL);
	st_issue(t, C0, 0x4008, 0x0102030405060708ULL, 0xff,
		 MSR_IT_BLK_INIT_ST, 100);
	sstep(t, C0);
	st_ack(t, C0, 1, 105); /* RMO: acked before its commit */
	st_commit(t, C0, 0x4008, 0xff, 0, l2hit, 110);
}

Test(flow, block_init_store_l2_miss_zeroes_the_line)
{
	struct tctx *t = t_new(true);

	blkinit(t, 0);
	miss_load(t, C1, 0x4000, 0, 200);
	miss_load(t, C1, 0x4008, 0x0102030405060708ULL, 210);
	miss_load(t, C1, 0x4038, 0, 220);
	t_finish(t);
	expect_clean(t);
	cr_assert(t->c[0].rmo);
	cr_assert_eq(t->c[0].mask, 0xff);
	cr_assert_eq(t->ops[0].kind, MSR_OP_STORE);
	cr_assert(t->ops[0].rmo);
	/* zeroes in the other blocks of the line are outside their co */
	cr_assert_eq(t->ops[1].blk[0].rf[0].kind, MSR_RF_DMA);
	cr_assert_eq(t->ops[2].blk[0].rf[0].kind, MSR_RF_COMMIT);
	cr_assert_eq(t->ops[2].blk[0].rf[0].co, 1);
	t_free(t);
}

Test(flow, block_init_store_l2_hit_keeps_the_line)
{
	struct tctx *t = t_new(true);

	blkinit(t, 1);
	miss_load(t, C1, 0x4000, 0xffffffffffffffffULL, 200);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->ops[1].blk[0].rf[0].kind, MSR_RF_INIT);
	t_free(t);
}

static void cas(struct tctx *t, bool ok)
{
	struct msr_step *s = step_mem(t, C0, MSR_STEP_CAS, 0x5000, 8);

	step_set_ld(s, 5);
	if (ok)
		step_set_st(s, 9);
	ld_issue(t, C0, 0x5000, 3, MSR_IT_ATOMIC, 100);
	st_issue(t, C0, 0x5000, 9, 0xff, MSR_IT_ATOMIC, 100);
	ld_data(t, C0, 0x5000, MSR_DSRC_L2, 110);
	st_commit(t, C0, 0x5000, ok ? 0xff : 0, 0, 1, 111);
	sstep(t, C0);
	st_ack(t, C0, 0, 112);
}

Test(flow, failed_cas_writes_nothing)
{
	struct tctx *t = t_new(true);
	const struct msr_op *op;

	t_image(t, "@5000 0000000000000005\n");
	cas(t, false);
	miss_load(t, C1, 0x5000, 5, 200);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->nc, 1);
	cr_assert_eq(t->c[0].mask, 0);
	cr_assert(t->c[0].atomic);
	cr_assert_eq(t->c[0].iseq, 0); /* committed before its step */
	op = &t->ops[0];
	cr_assert_eq(op->kind, MSR_OP_ATOMIC);
	cr_assert(op->store_failed);
	cr_assert_eq(be_val(op->blk[0].load, 8), 5);
	cr_assert_eq(op->blk[0].rf[0].kind, MSR_RF_INIT);
	cr_assert_eq(op->blk[0].sseq, 1);
	cr_assert_eq(t->ops[1].blk[0].rf[0].kind, MSR_RF_INIT);
	t_free(t);
}

Test(flow, successful_cas_writes)
{
	struct tctx *t = t_new(true);
	const struct msr_op *op;

	t_image(t, "@5000 0000000000000005\n");
	cas(t, true);
	miss_load(t, C1, 0x5000, 9, 200);
	t_finish(t);
	expect_clean(t);
	op = &t->ops[0];
	cr_assert(!op->store_failed);
	cr_assert_eq(be_val(op->blk[0].store, 8), 9);
	cr_assert_eq(t->ops[1].blk[0].rf[0].co, 1);
	t_free(t);
}

Test(flow, failed_cas_with_a_writing_commit_is_store_data)
{
	struct tctx *t = t_new(true);
	struct msr_step *s = step_mem(t, C0, MSR_STEP_CAS, 0x5000, 8);
	const struct msr_violation *v;

	step_set_ld(s, 5);
	t_image(t, "@5000 0000000000000005\n");
	ld_issue(t, C0, 0x5000, 3, MSR_IT_ATOMIC, 100);
	st_issue(t, C0, 0x5000, 9, 0xff, MSR_IT_ATOMIC, 100);
	ld_data(t, C0, 0x5000, MSR_DSRC_L2, 110);
	st_commit(t, C0, 0x5000, 0xff, 0, 1, 111);
	sstep(t, C0);
	v = find_kind(t, MSR_V_STORE_DATA);
	cr_assert_not_null(v);
	cr_assert_eq(v->iseq, 1);
	t_free(t);
}

Test(flow, rmo_block_store_acks_before_out_of_order_commits)
{
	struct tctx *t = t_new(true);
	struct msr_step *s = step_mem(t, C0, MSR_STEP_STBLK, 0x6000, 64);
	static const unsigned order[8] = {3, 0, 7, 1, 2, 6, 5, 4};

	for (unsigned i = 0; i < 64; i++)
		s->st[i] = (uint8_t)i;
	s->st_len = 64;
	s->has |= MSR_STEP_HAS_ST;
	for (unsigned k = 0; k < 8; k++)
		st_issue(t, C0, 0x6000 + 8 * k, be_val(s->st + 8 * k, 8), 0xff,
			 MSR_IT_BLOCK_STORE, 100);
	sstep(t, C0);
	for (unsigned k = 0; k < 8; k++)
		st_ack(t, C0, 1, 110);
	for (unsigned k = 0; k < 8; k++)
		st_commit(t, C0, 0x6000 + 8 * order[k], 0xff, 0, 1, 120);
	miss_load(t, C1, 0x6018, 0x18191a1b1c1d1e1fULL, 200);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->nc, 8);
	cr_assert_eq(t->c[0].sseq, 4);
	cr_assert_eq(t->c[0].pa8, 0x6018);
	cr_assert_eq(t->c[0].iseq, 1);
	cr_assert(t->c[0].rmo);
	cr_assert_eq(t->ops[0].nblocks, 8);
	cr_assert(t->ops[0].rmo);
	cr_assert_eq(t->ops[0].blk[5].sseq, 6);
	cr_assert_eq(t->ops[1].blk[0].rf[0].co, 1);
	cr_assert_eq(t->ops[1].blk[0].rf[0].sseq, 4);
	t_free(t);
}

Test(flow, pops_drop_the_youngest_group)
{
	struct tctx *t = t_new(false);

	ld_issue(t, C0, 0x100, 3, MSR_IT_LOAD, 1);
	ld_issue(t, C0, 0x200, 3, MSR_IT_LOAD, 2);
	simple(t, MSR_LD_POP, C0);
	ld_data(t, C0, 0x200, MSR_DSRC_L2, 3); /* popped: nothing to bind */
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_LD_DATA), 1);
	ld_data(t, C0, 0x100, MSR_DSRC_L2, 4);  /* the older one survives */
	cr_assert_eq(t->nv, 1);
	for (unsigned k = 0; k < 8; k++)
		st_issue(t, C0, 0x6000 + 8 * k, 0, 0xff, MSR_IT_BLOCK_STORE, 5);
	simple(t, MSR_ST_POP, C0); /* all eight pieces go */
	simple(t, MSR_ST_POP, C0);
	cr_assert_eq(count_kind(t, MSR_V_POP_EMPTY), 1);
	st_commit(t, C0, 0x6000, 0xff, 0, 1, 6);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_COMMIT), 1);
	t_finish(t);
	t_free(t);
}

Test(flow, dma_write_before_its_evict)
{
	struct tctx *t = t_new(true);

	t_image(t, "@7000 0000000000000001 0000000000000000\n");
	miss_load(t, C1, 0x7000, 1, 100);
	dma_st(t, 0x7000, 0x77, 0xff, 1, 110);
	hit_load(t, C1, 0x7000, 1, 115); /* L1 still holds the old piece */
	evict(t, 0x7000, 0x2, 120);
	evict_inv(t, 1, (0x7000 >> 6) % 8, 121);
	miss_load(t, C1, 0x7000, 0x77, 130);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->ops[2].blk[0].rf[0].kind, MSR_RF_DMA);
	t_free(t);
}

Test(flow, dma_inv_without_evict_is_leftover)
{
	struct tctx *t = t_new(false);
	const struct msr_violation *v;

	dma_st(t, 0x7000, 0x77, 0xff, 1, 110);
	t_finish(t);
	v = find_kind(t, MSR_V_LEFTOVER);
	cr_assert_not_null(v);
	cr_assert_eq(v->pa, 0x7000);
	t_free(t);
}

Test(flow, io_load_data_out_of_order)
{
	struct tctx *t = t_new(true);
	uint64_t a = (1ULL << 39) | 0x100, b = (1ULL << 39) | 0x200;

	mem_slam(t, a, 0x11ULL << 32, 0xf0, 1);
	mem_slam(t, b, 0x22ULL << 32, 0xf0, 1);
	step_ld(t, C0, a, 4, 0x11, true);
	step_ld(t, C0, b, 4, 0x22, true);
	ld_issue(t, C0, a, 2, MSR_IT_LOAD, 10);
	ld_issue(t, C0, b, 2, MSR_IT_LOAD, 11);
	ld_data(t, C0, b, MSR_DSRC_L2, 12);
	ld_data(t, C0, a, MSR_DSRC_L2, 13);
	sstep(t, C0);
	sstep(t, C0);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->nops, 2);
	cr_assert_eq(t->ops[0].pa, a);
	cr_assert_eq(t->ops[0].blk[0].data_event, 5);
	cr_assert_eq(t->ops[1].pa, b);
	cr_assert_eq(t->ops[1].blk[0].data_event, 4);
	cr_assert_eq(t->ops[0].blk[0].rf[0].kind, MSR_RF_INIT); /* slammed */
	t_free(t);
}

Test(flow, two_engines_are_independent)
{
	struct tctx *a = t_new(true), *b = t_new(true);
	struct msr_engine_stats sa, sb;

	step_st(a, C0, 0x1000, 8, 0xa);
	full_store(a, C0, 0x1000, 8, 0xa, 0, 100);
	miss_load(a, C1, 0x1000, 0xa, 200);
	miss_load(b, C1, 0x1000, 0xb, 200); /* unknown memory: learned */
	miss_load(b, C1, 0x1000, 0xb, 300);
	t_finish(a);
	t_finish(b);
	expect_clean(a);
	expect_clean(b);
	msr_engine_get_stats(a->e, &sa);
	msr_engine_get_stats(b->e, &sb);
	cr_assert_eq(sa.commits, 1);
	cr_assert_eq(sb.commits, 0);
	cr_assert_eq(sa.learned_bytes, 0);
	cr_assert_eq(sb.learned_bytes, 8);
	cr_assert_eq(sb.loads, 2);
	cr_assert_eq(be_val(a->ops[1].blk[0].load, 8), 0xa);
	cr_assert_eq(be_val(b->ops[1].blk[0].load, 8), 0xb);
	t_free(a);
	t_free(b);
}

Test(flow, replay_without_steps_still_emits_commits)
{
	struct tctx *t = t_new(false);
	struct msr_engine_stats s;

	full_store(t, C0, 0x1000, 8, 0xa, 0x1, 100);
	ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 200);
	ld_data(t, C0, 0x1000, MSR_DSRC_L2, 201);
	ld_fill(t, C0, 0x1000, 202);
	sstep(t, C0);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->nc, 1);
	cr_assert_eq(t->nops, 0);
	msr_engine_get_stats(t->e, &s);
	cr_assert_eq(s.stores, 1);
	cr_assert_eq(s.loads, 1);
	cr_assert_eq(s.steps, 2);
	cr_assert_eq(s.events, 9);
	t_free(t);
}

Test(flow, membar_is_emitted)
{
	struct tctx *t = t_new(true);
	struct msr_step *s = add_step(t, C0, MSR_STEP_MEMBAR, 0x40);

	s->mask = 2;
	s->has = MSR_STEP_HAS_MASK;
	sstep(t, C0);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->nops, 1);
	cr_assert_eq(t->ops[0].kind, MSR_OP_MEMBAR);
	cr_assert_eq(t->ops[0].membar_mask, 2);
	cr_assert_eq(t->ops[0].iseq, 1);
	cr_assert_eq(t->ops[0].pc, 0x40);
	t_free(t);
}

Test(flow, store_bypass_is_rf_bypass)
{
	struct tctx *t = t_new(true);

	step_st(t, C0, 0x1000, 8, 0x42);
	step_ld(t, C0, 0x1004, 4, 0x42, true);
	st_issue(t, C0, 0x1000, 0x42, 0xff, MSR_IT_STORE, 100);
	sstep(t, C0);
	ld_issue(t, C0, 0x1004, 2, MSR_IT_LOAD, 101);
	ld_data(t, C0, 0x1004, MSR_DSRC_STB, 102);
	sstep(t, C0);
	st_commit(t, C0, 0x1000, 0xff, 0, 1, 110);
	st_ack(t, C0, 0, 111);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->ops[1].blk[0].mask, 0x0f);
	cr_assert_eq(t->ops[1].blk[0].nrf, 1);
	cr_assert_eq(t->ops[1].blk[0].rf[0].kind, MSR_RF_BYPASS);
	cr_assert_eq(t->ops[1].blk[0].rf[0].sseq, 1);
	cr_assert_eq(t->ops[1].blk[0].rf[0].strand, C0);
	t_free(t);
}

Test(flow, block_load_binds_sixteen_bytes_per_ld_data)
{
	struct tctx *t = t_new(true);
	struct msr_step *s = step_mem(t, C1, MSR_STEP_LDBLK, 0x8000, 64);

	t_image(t, "@8000 0000000000000000 0000000000000001 0000000000000002"
		   " 0000000000000003 0000000000000004 0000000000000005"
		   " 0000000000000006 0000000000000007\n");
	for (unsigned k = 0; k < 8; k++)
		be_bytes(k, 8, s->ld + 8 * k);
	s->ld_len = 64;
	s->has |= MSR_STEP_HAS_LD;
	ld_issue(t, C1, 0x8000, 0, MSR_IT_BLOCK_LOAD, 10);
	for (unsigned k = 0; k < 4; k++)
		ld_data(t, C1, 0x8000 + 16 * k, MSR_DSRC_L2, 11);
	sstep(t, C1);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->ops[0].nblocks, 8);
	cr_assert_eq(t->ops[0].size, 64);
	cr_assert_eq(be_val(t->ops[0].blk[7].load, 8), 7);
	cr_assert_eq(t->ops[0].blk[7].pa8, 0x8038);
	t_free(t);
}

Test(flow, st_update_refreshes_the_own_core_l1)
{
	struct tctx *t = t_new(true);

	t_image(t, "@a000 0000000000000001 0000000000000000\n");
	miss_load(t, 1, 0xa000, 1, 100); /* strand 1: core 0 holds the line */
	step_st(t, C0, 0xa000, 8, 2);
	full_store(t, C0, 0xa000, 8, 2, 0x1, 200); /* own core: ST_UPDATE */
	hit_load(t, 1, 0xa000, 2, 300);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->ops[2].blk[0].rf[0].kind, MSR_RF_COMMIT);
	cr_assert_eq(t->ops[2].blk[0].rf[0].co, 1);
	t_free(t);
}

Test(flow, fill_after_an_invalidation_installs_the_line)
{
	struct tctx *t = t_new(true);

	t_image(t, "@b000 0000000000000001 0000000000000000\n");
	miss_load(t, C1, 0xb000, 1, 100);
	step_st(t, C0, 0xb000, 8, 2);
	st_issue(t, C0, 0xb000, 2, 0xff, MSR_IT_STORE, 200);
	sstep(t, C0);
	st_commit(t, C0, 0xb000, 0xff, 0x2, 1, 210);
	st_ack(t, C0, 0, 211);
	/* core 1 misses again and gets the new data; the invalidation of
	 * its old copy comes before the fill, which then installs the line */
	step_ld(t, C1, 0xb008, 8, 0, true);
	ld_issue(t, C1, 0xb008, 3, MSR_IT_LOAD, 220);
	ld_data(t, C1, 0xb008, MSR_DSRC_L2, 222);
	st_inv(t, 1, C0, 0xb000, 223);
	ld_fill(t, C1, 0xb008, 224);
	sstep(t, C1);
	hit_load(t, C1, 0xb000, 2, 230);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->ops[3].blk[0].rf[0].co, 1);
	t_free(t);
}

/* The RTL reported the fill after an invalidation of a store newer than
 * the fill's data: the core wrote the fill first, then invalidated it. */
Test(flow, newer_invalidation_before_the_fill_drops_it)
{
	struct tctx *t = t_new(true);

	t_image(t, "@b000 0000000000000001 0000000000000000\n");
	step_ld(t, C1, 0xb000, 8, 1, true);
	ld_issue(t, C1, 0xb000, 3, MSR_IT_LOAD, 100);
	ld_data(t, C1, 0xb000, MSR_DSRC_L2, 105);
	step_st(t, C0, 0xb000, 8, 2);
	st_issue(t, C0, 0xb000, 2, 0xff, MSR_IT_STORE, 106);
	sstep(t, C0);
	st_commit(t, C0, 0xb000, 0xff, 0x2, 1, 110); /* core 1: fill on the way */
	st_ack(t, C0, 0, 111);
	st_inv(t, 1, C0, 0xb000, 112);
	ld_fill(t, C1, 0xb000, 113); /* pairs, installs nothing */
	sstep(t, C1);
	hit_load(t, C1, 0xb000, 2, 120);
	t_finish(t);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(count_kind(t, MSR_V_L1_HIT_NOT_PRESENT), 1);
	t_free(t);
}

/* Same for the own core: its update of a newer store patches the fill. */
Test(flow, own_update_before_the_fill_patches_it)
{
	struct tctx *t = t_new(true);

	t_image(t, "@a000 0000000000000001 0000000000000000\n");
	step_ld(t, 1, 0xa000, 8, 1, true);
	ld_issue(t, 1, 0xa000, 3, MSR_IT_LOAD, 100);
	ld_data(t, 1, 0xa000, MSR_DSRC_L2, 105);
	step_st(t, C0, 0xa000, 8, 2);
	full_store(t, C0, 0xa000, 8, 2, 0x1, 106); /* ST_UPDATE at 118 */
	ld_fill(t, 1, 0xa000, 120);
	sstep(t, 1);
	hit_load(t, 1, 0xa000, 2, 130);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->ops[2].blk[0].rf[0].kind, MSR_RF_COMMIT);
	cr_assert_eq(t->ops[2].blk[0].rf[0].co, 1);
	t_free(t);
}

Test(flow, mem_slam_is_visible_at_once)
{
	struct tctx *t = t_new(true);

	step_st(t, C0, 0xc000, 4, 0xaabbccdd);
	st_issue(t, C0, 0xc000, 0xaabbccdd00000000ULL, 0xf0, MSR_IT_STORE, 1);
	sstep(t, C0);
	st_commit(t, C0, 0xc000, 0xf0, 0x2, 1, 2); /* awaits core 1 */
	st_ack(t, C0, 0, 2);
	mem_slam(t, 0xc000, 0x1111111122222222ULL, 0xff, 3);
	miss_load(t, C1, 0xc000, 0x1111111122222222ULL, 10);
	t_finish(t); /* core 1 never answered: one leftover */
	cr_assert_eq(count_kind(t, MSR_V_LOAD_VALUE), 0);
	cr_assert_eq(t->ops[1].blk[0].nrf, 2);
	/* over stored bytes: outside co; over never-stored bytes: initial */
	cr_assert_eq(t->ops[1].blk[0].rf[0].kind, MSR_RF_DMA);
	cr_assert_eq(t->ops[1].blk[0].rf[0].mask, 0xf0);
	cr_assert_eq(t->ops[1].blk[0].rf[1].kind, MSR_RF_INIT);
	cr_assert_eq(count_kind(t, MSR_V_LEFTOVER), 1);
	t_free(t);
}

Test(flow, mem_slam_over_a_stored_byte_is_outside_co)
{
	struct tctx *t = t_new(true);

	step_st(t, C0, 0xc000, 8, 5);
	full_store(t, C0, 0xc000, 8, 5, 0, 1);
	mem_slam(t, 0xc000, 6, 0x01, 10);
	miss_load(t, C1, 0xc000, 6, 20);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->ops[1].blk[0].nrf, 2);
	cr_assert_eq(t->ops[1].blk[0].rf[0].kind, MSR_RF_COMMIT);
	cr_assert_eq(t->ops[1].blk[0].rf[0].mask, 0xfe);
	cr_assert_eq(t->ops[1].blk[0].rf[1].kind, MSR_RF_DMA);
	cr_assert_eq(t->ops[1].blk[0].rf[1].mask, 0x01);
	t_free(t);
}

Test(flow, other_messages_are_counted_and_ignored)
{
	struct tctx *t = t_new(false);
	struct msr_engine_stats s;

	simple(t, MSR_ITLBWRITE, 3);
	simple(t, MSR_ASI_READ, 3);
	simple(t, MSR_REGDELTA, 0);
	simple(t, MSR_REGDELTA_END, 0);
	simple(t, MSR_QUIT, 0);
	t_finish(t);
	expect_clean(t);
	msr_engine_get_stats(t->e, &s);
	cr_assert_eq(s.other_messages, 5);
	cr_assert_eq(s.events, 5);
	t_free(t);
}

Test(flow, quad_and_double_loads)
{
	struct tctx *t = t_new(true);
	struct msr_step *s;

	t_image(t, "@d000 0102030405060708 1112131415161718\n");
	s = step_mem(t, C0, MSR_STEP_LDQ, 0xd000, 16);
	be_bytes(0x0102030405060708ULL, 8, s->ld);
	be_bytes(0x1112131415161718ULL, 8, s->ld + 8);
	s->ld_len = 16;
	s->has |= MSR_STEP_HAS_LD;
	ld_issue(t, C0, 0xd000, 0, MSR_IT_QUAD_LOAD, 1);
	ld_data(t, C0, 0xd000, MSR_DSRC_L2, 2);
	sstep(t, C0);
	s = step_mem(t, C0, MSR_STEP_LDD, 0xd008, 8);
	step_set_ld(s, 0x1112131415161719ULL); /* wrong last byte */
	ld_issue(t, C0, 0xd008, 3, MSR_IT_DOUBLE_LOAD, 3);
	ld_data(t, C0, 0xd008, MSR_DSRC_L2, 4);
	sstep(t, C0);
	cr_assert_eq(t->nops, 2);
	cr_assert_eq(t->ops[0].nblocks, 2);
	cr_assert_eq(t->ops[0].size, 16);
	cr_assert_eq(t->ops[0].step_op, MSR_STEP_LDQ);
	cr_assert_eq(be_val(t->ops[0].blk[1].load, 8), 0x1112131415161718ULL);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_LOAD_VALUE);
	cr_assert_eq(t->v[0].iseq, 2);
	cr_assert_eq(t->v[0].pa, 0xd008);
	t_free(t);
}

Test(flow, swap_and_ldstub)
{
	struct tctx *t = t_new(true);
	struct msr_step *s;

	t_image(t, "@e000 00000000000000ff\n");
	s = step_mem(t, C0, MSR_STEP_SWAP, 0xe004, 4);
	step_set_ld(s, 0xff);
	step_set_st(s, 0x12345678);
	ld_issue(t, C0, 0xe004, 2, MSR_IT_ATOMIC, 1);
	st_issue(t, C0, 0xe004, 0x12345678, 0x0f, MSR_IT_ATOMIC, 1);
	ld_data(t, C0, 0xe004, MSR_DSRC_L2, 2);
	st_commit(t, C0, 0xe004, 0x0f, 0, 1, 3);
	sstep(t, C0);
	st_ack(t, C0, 0, 4);
	s = step_mem(t, C0, MSR_STEP_LDSTUB, 0xe000, 1);
	step_set_ld(s, 0);
	step_set_st(s, 0xff);
	ld_issue(t, C0, 0xe000, 0, MSR_IT_ATOMIC, 5);
	st_issue(t, C0, 0xe000, 0xffULL << 56, 0x80, MSR_IT_ATOMIC, 5);
	ld_data(t, C0, 0xe000, MSR_DSRC_L2, 6);
	st_commit(t, C0, 0xe000, 0x80, 0, 1, 7);
	sstep(t, C0);
	st_ack(t, C0, 0, 8);
	t_finish(t);
	expect_clean(t);
	cr_assert_eq(t->nops, 2);
	cr_assert_eq(t->ops[0].kind, MSR_OP_ATOMIC);
	cr_assert_eq(t->ops[0].blk[0].mask, 0x0f);
	cr_assert_eq(t->ops[0].blk[0].sseq, 1);
	cr_assert_eq(t->ops[1].blk[0].mask, 0x80);
	cr_assert_eq(t->ops[1].blk[0].sseq, 2);
	cr_assert_eq(t->ops[1].blk[0].rf[0].kind, MSR_RF_INIT);
	cr_assert_eq(t->c[1].iseq, 0);
	t_free(t);
}

Test(flow, unknown_memory_is_learned_once)
{
	struct tctx *t = t_new(true);
	struct msr_engine_stats s;

	miss_load(t, C0, 0xf000, 0x77, 1);
	step_ld(t, C1, 0xf004, 4, 0x77, true); /* learned above */
	ld_issue(t, C1, 0xf004, 2, MSR_IT_LOAD, 2);
	ld_data(t, C1, 0xf004, MSR_DSRC_L2, 3);
	sstep(t, C1);
	miss_load(t, C1, 0xf000, 0x78, 4);    /* now known: mismatch */
	msr_engine_get_stats(t->e, &s);
	cr_assert_eq(s.learned_bytes, 8);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_LOAD_VALUE);
	cr_assert_eq(be_val(t->v[0].expected, 8), 0x77);
	t_free(t);
}

Test(flow, block_store_groups_survive_ring_growth)
{
	struct tctx *t = t_new(false);

	/* 10 block stores = 80 entries: the ring grows while a group is open */
	for (unsigned b = 0; b < 10; b++)
		for (unsigned k = 0; k < 8; k++)
			st_issue(t, C0, 0x10000 + 64 * b + 8 * k, b, 0xff,
				 MSR_IT_BLOCK_STORE, 1);
	for (unsigned b = 0; b < 10; b++)
		simple(t, MSR_ST_POP, C0);
	expect_clean(t);
	simple(t, MSR_ST_POP, C0);
	cr_assert_eq(count_kind(t, MSR_V_POP_EMPTY), 1);
	t_finish(t);
	cr_assert_eq(t->nv, 1);
	t_free(t);
}
