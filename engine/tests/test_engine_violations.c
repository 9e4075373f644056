/*
 * test_engine_violations.c - one test per violation kind the engine emits
 * (semantics.md section 6), asserting kind, strand, iseq, pa and values.
 */
#include "engine-test.h"

#define C0 0
#define C1 8

Test(violation, load_value)
{
	struct tctx *t = t_new(true);
	const struct msr_violation *v;

	t_image(t, "@1000 00000000000000aa\n");
	step_st(t, C0, 0x1000, 8, 0xbb);
	full_store(t, C0, 0x1000, 8, 0xbb, 0, 100);
	step_ld(t, C1, 0x1000, 8, 0xaa, true); /* sees the old value */
	ld_issue(t, C1, 0x1000, 3, MSR_IT_LOAD, 200);
	ld_data(t, C1, 0x1000, MSR_DSRC_L2, 210);
	sstep(t, C1);
	cr_assert_eq(t->nv, 1);
	v = &t->v[0];
	cr_assert_eq(v->kind, MSR_V_LOAD_VALUE);
	cr_assert_eq(v->strand, C1);
	cr_assert_eq(v->core, 1);
	cr_assert_eq(v->iseq, 1);
	cr_assert_eq(v->pa, 0x1000);
	cr_assert_eq(v->size, 8);
	cr_assert_eq(v->event, 6);
	cr_assert(v->has_values);
	cr_assert_eq(v->vlen, 8);
	cr_assert_eq(be_val(v->expected, 8), 0xbb);
	cr_assert_eq(be_val(v->observed, 8), 0xaa);
	cr_assert_str_eq(v->source, "L2");
	cr_assert(v->expected_from.valid);
	cr_assert_eq(v->expected_from.strand, C0);
	cr_assert_eq(v->expected_from.co, 1);
	cr_assert_eq(v->expected_from.iseq, 1);
	cr_assert(!v->observed_from.valid); /* initial value: no store */
	cr_assert_neq(v->pc, 0);
	cr_assert(strstr(v->message, "strand 8 (core 1, thread 0) loaded 0x00000000000000aa from 0x1000"));
	t_free(t);
}

Test(violation, load_value_names_older_store)
{
	struct tctx *t = t_new(true);
	const struct msr_violation *v;

	step_st(t, C0, 0x1000, 8, 0xaa);
	full_store(t, C0, 0x1000, 8, 0xaa, 0, 100);
	step_st(t, C0, 0x1000, 8, 0xbb);
	full_store(t, C0, 0x1000, 8, 0xbb, 0, 120);
	step_ld(t, C1, 0x1000, 8, 0xaa, true);
	ld_issue(t, C1, 0x1000, 3, MSR_IT_LOAD, 200);
	ld_data(t, C1, 0x1000, MSR_DSRC_L2, 210);
	sstep(t, C1);
	v = find_kind(t, MSR_V_LOAD_VALUE);
	cr_assert_not_null(v);
	cr_assert_eq(v->expected_from.co, 2);
	cr_assert_eq(v->expected_from.sseq, 2);
	cr_assert(v->observed_from.valid);
	cr_assert_eq(v->observed_from.co, 1);
	cr_assert_eq(v->observed_from.sseq, 1);
	cr_assert_eq(v->observed_from.iseq, 1);
	t_free(t);
}

Test(violation, store_data)
{
	struct tctx *t = t_new(true);
	const struct msr_violation *v;

	step_st(t, C0, 0x1004, 4, 0x12345678);
	st_issue(t, C0, 0x1004, 0x12345600, 0x0f, MSR_IT_STORE, 100);
	sstep(t, C0);
	cr_assert_eq(t->nv, 1);
	v = &t->v[0];
	cr_assert_eq(v->kind, MSR_V_STORE_DATA);
	cr_assert_eq(v->strand, C0);
	cr_assert_eq(v->iseq, 1);
	cr_assert_eq(v->pa, 0x1004);
	cr_assert_eq(v->vlen, 4);
	cr_assert_eq(be_val(v->expected, 4), 0x12345678);
	cr_assert_eq(be_val(v->observed, 4), 0x12345600);
	cr_assert_eq(v->observed_from.sseq, 1);
	t_free(t);
}

Test(violation, store_data_wrong_mask)
{
	struct tctx *t = t_new(true);

	step_st(t, C0, 0x1004, 4, 0x12345678);
	st_issue(t, C0, 0x1008, 0x12345678, 0x0f, MSR_IT_STORE, 100);
	sstep(t, C0);
	cr_assert_eq(count_kind(t, MSR_V_STORE_DATA), 1);
	cr_assert(strstr(t->v[0].message, "different address"));
	t_free(t);
}

Test(violation, mem_check)
{
	struct tctx *t = t_new(false);
	uint8_t want[64] = {0};
	const struct msr_violation *v;

	t_image(t, "@9000 0000000000000000 0000000000000000 0000000000000000\n");
	want[17] = 0x5a;
	mem_check(t, 0x9000, want); /* bytes 24..63 unknown: learned */
	cr_assert_eq(t->nv, 1);
	v = &t->v[0];
	cr_assert_eq(v->kind, MSR_V_MEM_CHECK);
	cr_assert_eq(v->pa, 0x9000);
	cr_assert_eq(v->vlen, 64);
	cr_assert_eq(v->expected[17], 0x5a);
	cr_assert_eq(v->observed[17], 0);
	mem_check(t, 0x9000, want); /* repaired: no second report */
	cr_assert_eq(t->nv, 1);
	t_free(t);
}

Test(violation, unmatched_ld_data)
{
	struct tctx *t = t_new(false);

	ld_issue(t, C0, 0x100, 3, MSR_IT_LOAD, 1);
	ld_data(t, C0, 0x108, MSR_DSRC_L2, 2);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_UNMATCHED_LD_DATA);
	cr_assert_eq(t->v[0].strand, C0);
	cr_assert_eq(t->v[0].iseq, 1);
	cr_assert_eq(t->v[0].pa, 0x108);
	cr_assert_eq(t->v[0].ts, 2);
	t_free(t);
}

Test(violation, unmatched_ld_fill)
{
	struct tctx *t = t_new(false);

	ld_fill(t, C1, 0x100, 1);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_UNMATCHED_LD_FILL);
	cr_assert_eq(t->v[0].strand, C1);
	cr_assert_eq(t->v[0].core, 1);
	t_free(t);
}

Test(violation, unmatched_st_commit_keeps_its_invalidations)
{
	struct tctx *t = t_new(false);

	st_commit(t, C0, 0x100, 0xff, 0x2, 1, 1);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_UNMATCHED_ST_COMMIT);
	cr_assert_eq(t->v[0].pa, 0x100);
	st_inv(t, 1, C0, 0x100, 2); /* pairs with the repaired entry */
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->nc, 0);
	t_finish(t);
	cr_assert_eq(t->nv, 1);
	t_free(t);
}

Test(violation, unmatched_st_ack)
{
	struct tctx *t = t_new(false);

	st_issue(t, C0, 0x100, 1, 0xff, MSR_IT_STORE, 1);
	st_ack(t, C0, 0, 2); /* not committed yet */
	st_ack(t, C0, 1, 3); /* no RMO store */
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_ACK), 2);
	cr_assert_eq(t->v[0].strand, C0);
	t_free(t);
}

Test(violation, unmatched_st_inv)
{
	struct tctx *t = t_new(false);

	st_issue(t, C0, 0x100, 1, 0xff, MSR_IT_STORE, 1);
	st_commit(t, C0, 0x100, 0xff, 0x2, 1, 2);
	st_inv(t, 2, C0, 0x100, 3); /* core 2 was not in the vector */
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_UNMATCHED_ST_INV);
	cr_assert_eq(t->v[0].pa, 0x100);
	st_inv(t, 1, C0, 0x100, 4);
	cr_assert_eq(t->nv, 1);
	t_free(t);
}

Test(violation, unmatched_st_update)
{
	struct tctx *t = t_new(false);

	st_issue(t, C0, 0x100, 1, 0xff, MSR_IT_STORE, 1);
	st_commit(t, C0, 0x100, 0xff, 0x2, 1, 2); /* own core 0 not in it */
	st_update(t, C0, 0x100, 3);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_UNMATCHED_ST_UPDATE);
	cr_assert_eq(t->v[0].strand, C0);
	t_free(t);
}

Test(violation, unmatched_evict_inv)
{
	struct tctx *t = t_new(false);

	evict_inv(t, 1, 3, 5);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_UNMATCHED_EVICT_INV);
	cr_assert_eq(t->v[0].strand, -1);
	cr_assert_eq(t->v[0].ts, 5);
	t_free(t);
}

Test(violation, address_mismatch)
{
	struct tctx *t = t_new(true);

	step_ld(t, C0, 0x1008, 8, 0, false);
	ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 1);
	ld_data(t, C0, 0x1000, MSR_DSRC_L2, 2);
	sstep(t, C0);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_ADDRESS_MISMATCH);
	cr_assert_eq(t->v[0].iseq, 1);
	cr_assert_eq(t->v[0].pa, 0x1008);
	cr_assert_eq(t->nops, 1);
	cr_assert_eq(t->ops[0].pa, 0x1000);
	t_free(t);
}

Test(violation, bypass_not_covered_partial_overlap)
{
	struct tctx *t = t_new(false);

	st_issue(t, C0, 0x1000, 0x42, 0x0f, MSR_IT_STORE, 1);
	ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 2);
	ld_data(t, C0, 0x1000, MSR_DSRC_STB, 3);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_BYPASS_NOT_COVERED);
	cr_assert_eq(t->v[0].pa, 0x1000);
	cr_assert_eq(t->v[0].size, 8);
	t_free(t);
}

Test(violation, order_assumption_rmo_bypass)
{
	struct tctx *t = t_new(false);

	st_issue(t, C0, 0x1000, 0x42, 0xff, MSR_IT_BLK_INIT_ST, 1);
	ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 2);
	ld_data(t, C0, 0x1000, MSR_DSRC_STB, 3);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_ORDER_ASSUMPTION);
	t_free(t);
}

Test(violation, l1_hit_never_filled)
{
	struct tctx *t = t_new(false);

	ld_issue(t, C1, 0x1000, 3, MSR_IT_LOAD, 1);
	ld_data(t, C1, 0x1000, MSR_DSRC_L1, 2);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_L1_HIT_NOT_PRESENT);
	cr_assert_eq(t->v[0].core, 1);
	t_free(t);
}

Test(violation, pop_empty)
{
	struct tctx *t = t_new(false);

	simple(t, MSR_LD_POP, 3);
	simple(t, MSR_ST_POP, 3);
	cr_assert_eq(count_kind(t, MSR_V_POP_EMPTY), 2);
	cr_assert_eq(t->v[0].strand, 3);
	cr_assert_eq(t->v[0].iseq, 1);
	t_free(t);
}

Test(violation, data_not_ready_then_late_data_binds)
{
	struct tctx *t = t_new(true);

	t_image(t, "@1000 0000000000000007\n");
	step_ld(t, C0, 0x1000, 8, 7, true);
	ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 1);
	sstep(t, C0);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_DATA_NOT_READY);
	cr_assert_eq(t->v[0].iseq, 1);
	cr_assert_eq(t->v[0].pa, 0x1000);
	ld_data(t, C0, 0x1000, MSR_DSRC_L2, 2);
	t_finish(t);
	cr_assert_eq(t->nv, 1);
	t_free(t);
}

Test(violation, step_kind_mismatch)
{
	struct tctx *t = t_new(true);

	step_st(t, C0, 0x1000, 8, 1);
	ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 1);
	ld_data(t, C0, 0x1000, MSR_DSRC_L2, 2);
	sstep(t, C0);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_STEP_KIND_MISMATCH);
	cr_assert_eq(t->v[0].iseq, 1);
	/* the load stays for a later load step: unexecuted at the end */
	t_finish(t);
	cr_assert_eq(t->nv, 2);
	cr_assert_eq(t->v[1].kind, MSR_V_LEFTOVER);
	t_free(t);
}

Test(violation, step_kind_mismatch_load_types)
{
	struct tctx *t = t_new(true);

	step_mem(t, C0, MSR_STEP_LDD, 0x1000, 8);
	ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 1);
	ld_data(t, C0, 0x1000, MSR_DSRC_L2, 2);
	sstep(t, C0);
	cr_assert_eq(count_kind(t, MSR_V_STEP_KIND_MISMATCH), 1);
	t_free(t);
}

Test(violation, step_log_short_once_per_strand)
{
	struct tctx *t = t_new(true);

	sstep(t, 5);
	sstep(t, 5);
	sstep(t, 6);
	cr_assert_eq(count_kind(t, MSR_V_STEP_LOG_SHORT), 2);
	cr_assert_eq(t->v[0].strand, 5);
	cr_assert_eq(t->v[0].iseq, 1);
	cr_assert_eq(t->v[1].strand, 6);
	t_free(t);
}

Test(violation, step_log_long)
{
	struct tctx *t = t_new(true);

	add_step(t, 4, MSR_STEP_NOP, 0x10);
	add_step(t, 4, MSR_STEP_NOP, 0x14);
	add_step(t, 4, MSR_STEP_NOP, 0x18);
	sstep(t, 4);
	t_finish(t);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_STEP_LOG_LONG);
	cr_assert_eq(t->v[0].strand, 4);
	cr_assert_eq(t->v[0].iseq, 2);
	cr_assert(strstr(t->v[0].message, "2 step-log lines left"));
	t_free(t);
}

Test(violation, leftover_unacknowledged_commit)
{
	struct tctx *t = t_new(false);

	st_issue(t, C0, 0x100, 1, 0xff, MSR_IT_STORE, 1);
	sstep(t, C0);
	st_commit(t, C0, 0x100, 0xff, 0x6, 1, 2);
	st_ack(t, C0, 0, 3);
	st_inv(t, 1, C0, 0x100, 4);
	t_finish(t);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_LEFTOVER);
	cr_assert_eq(t->v[0].strand, C0);
	cr_assert_eq(t->v[0].pa, 0x100);
	cr_assert(strstr(t->v[0].message, "core(s) 2"));
	/* found at the end, reported at the commit that waits */
	cr_assert_eq(t->v[0].event, 2);
	cr_assert_eq(t->v[0].offset, 32);
	cr_assert_eq(t->v[0].ts, 2);
	t_free(t);
}

Test(violation, leftover_never_committed_store)
{
	struct tctx *t = t_new(false);

	st_issue(t, C0, 0x100, 1, 0xff, MSR_IT_STORE, 1);
	t_finish(t);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_LEFTOVER);
	cr_assert(strstr(t->v[0].message, "never committed"));
	t_free(t);
}

Test(violation, incomplete_finish_reports_no_leftover)
{
	struct tctx *t = t_new(false);
	struct msr_error err = MSR_ERROR_INIT;

	st_issue(t, C0, 0x100, 1, 0xff, MSR_IT_STORE, 1);
	cr_assert_eq(msr_engine_finish(t->e, false, &err), MSR_OK);
	cr_assert_eq(t->nv, 0);
	t_free(t);
}

Test(violation, mab_window_force_retires_a_silent_commit)
{
	struct tctx *t = calloc(1, sizeof(*t));
	struct msr_engine_sink sink = {t, t_on_commit, t_on_op, t_on_violation};
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_engine_stats s;

	msr_config_default(&t->cfg);
	t->cfg.mab_window = 4;
	cr_assert_eq(msr_engine_create(&t->cfg, &sink, &t->e, &err), MSR_OK);
	st_issue(t, C0, 0x100, 1, 0xff, MSR_IT_STORE, 1);
	st_commit(t, C0, 0x100, 0xff, 0x8, 1, 2); /* core 3 never answers */
	for (unsigned i = 0; i < 10; i++)
		evict(t, 0x1000 + 16 * i, 0, 3 + i);
	cr_assert_eq(count_kind(t, MSR_V_LEFTOVER), 1);
	cr_assert(strstr(t->v[0].message, "core(s) 3"));
	cr_assert(strstr(t->v[0].message, "force-retired"));
	msr_engine_get_stats(t->e, &s);
	cr_assert_eq(s.per_kind[MSR_V_LEFTOVER], 1);
	t_free(t);
}

Test(violation, load_value_names_the_wrongly_bypassed_store)
{
	struct tctx *t = t_new(true);
	const struct msr_violation *v;

	step_st(t, C0, 0x1000, 8, 0xe1);
	step_st(t, C0, 0x1000, 8, 0xe2);
	step_ld(t, C0, 0x1000, 8, 0xe1, true); /* got the older store's data */
	st_issue(t, C0, 0x1000, 0xe1, 0xff, MSR_IT_STORE, 1);
	sstep(t, C0);
	st_issue(t, C0, 0x1000, 0xe2, 0xff, MSR_IT_STORE, 2);
	sstep(t, C0);
	ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 3);
	ld_data(t, C0, 0x1000, MSR_DSRC_STB, 4);
	sstep(t, C0);
	v = find_kind(t, MSR_V_LOAD_VALUE);
	cr_assert_not_null(v);
	cr_assert_str_eq(v->source, "STB");
	cr_assert_eq(v->expected_from.sseq, 2);
	cr_assert_eq(v->expected_from.iseq, 2);
	cr_assert(v->observed_from.valid);
	cr_assert_eq(v->observed_from.sseq, 1);
	cr_assert_eq(v->observed_from.iseq, 1);
	cr_assert_eq(v->observed_from.co, 0);
	t_free(t);
}
