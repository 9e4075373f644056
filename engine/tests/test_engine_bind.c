/*
 * test_engine_bind.c - binding LD_DATA, ST_COMMIT, ST_ACK, ST_INV,
 * EVICT_INV and a step's load to their entries stays a few steps per event
 * when something never retires or waits long: a commit whose invalidation
 * never comes holds every later commit in the MAB (it retires in order),
 * so their stores stay live; an EVICT whose answer never comes keeps every
 * later EVICT of its bank; a load that never gets its data holds every
 * later load of its strand; stores that never commit stand before the
 * ones an ack is for; a core that never answers keeps every commit to its
 * lines waiting; loads of one block issued long before their data wait
 * behind each other. The bypass decision at LD_ISSUE looks through the
 * same stores for the youngest one writing the load's bytes. The engine
 * counts the entries it looks at (stats.bind_steps); these tests bound
 * that count and check that the bindings stay the same as when nothing is
 * stuck.
 */
#include "engine-test.h"

#define C0 0 /* strand 0: core 0 */
#define N 20000u

static struct msr_engine_stats stats(const struct tctx *t)
{
	struct msr_engine_stats st;

	msr_engine_get_stats(t->e, &st);
	return st;
}

static struct msr_strand_inflight inflight(const struct tctx *t, unsigned tnum)
{
	struct msr_strand_inflight in;

	cr_assert_eq(msr_engine_strand_inflight(t->e, tnum, &in), MSR_OK);
	return in;
}

/* Store #1 of C0 commits to 0x2000 awaiting core 1, which never answers. */
static void stuck_commit(struct tctx *t)
{
	st_issue(t, C0, 0x2000, 1, 0xff, MSR_IT_STORE, 1);
	st_commit(t, C0, 0x2000, 0xff, 0x2, 1, 2);
	st_ack(t, C0, 0, 3);
}

Test(bind, stores_behind_a_commit_that_never_retires)
{
	struct tctx *t = t_new(false);
	struct msr_strand_inflight in;

	stuck_commit(t);
	/* a strand storing to one block over and over, as a lock would */
	for (unsigned i = 0; i < N; i++) {
		st_issue(t, C0, 0x1000, i, 0xff, MSR_IT_STORE, 10 + i);
		st_commit(t, C0, 0x1000, 0xff, 0, 1, 10 + i);
		st_ack(t, C0, 0, 10 + i);
	}
	cr_assert_eq(t->nv, 0);
	/* every commit bound the store just issued, in program order */
	for (unsigned k = 1; k < t->nc; k++)
		cr_assert_eq(t->c[k].sseq, k + 1);
	cr_assert_eq(stats(t).commits, N + 1);
	cr_assert_leq(stats(t).bind_steps, 2 * (N + 1));
	in = inflight(t, C0);
	cr_assert_eq(in.stores, N + 1); /* none retired: the MAB head waits */
	cr_assert_eq(in.uncommitted, 0);
	cr_assert_eq(in.answers, 1);
	t_finish(t);
	cr_assert_eq(count_kind(t, MSR_V_LEFTOVER), 1);
	t_free(t);
}

Test(bind, answers_pass_a_commit_that_never_gets_its_own)
{
	struct tctx *t = t_new(false);

	stuck_commit(t);
	/* commits to the stuck commit's line and to another one, each
	 * answered by core 2 at once */
	for (unsigned i = 0; i < N; i++) {
		uint64_t pa = i % 2 ? 0x2008 : 0x1000;

		st_issue(t, C0, pa, i, 0xff, MSR_IT_STORE, 10 + i);
		st_commit(t, C0, pa, 0xff, 0x4, 1, 10 + i);
		st_inv(t, 2, C0, pa, 10 + i);
		st_ack(t, C0, 0, 10 + i);
	}
	cr_assert_eq(t->nv, 0);
	/* a commit, an answer and an ack each: one step, two past the stuck
	 * one */
	cr_assert_leq(stats(t).bind_steps, 4 * N + 1);
	cr_assert_eq(inflight(t, C0).answers, 1);
	st_inv(t, 1, C0, 0x2000, 50000); /* the late answer still binds */
	cr_assert_eq(t->nv, 0);
	cr_assert_eq(inflight(t, C0).answers, 0);
	t_finish(t);
	cr_assert_eq(t->nv, 0);
	t_free(t);
}

Test(bind, answers_take_the_oldest_commit_awaiting_their_core)
{
	struct tctx *t = t_new(false);
	const struct msr_violation *v;

	/* three commits to one line: cores 1+2, 2, 1 */
	st_issue(t, C0, 0x3000, 1, 0xff, MSR_IT_STORE, 1);
	st_issue(t, C0, 0x3008, 2, 0xff, MSR_IT_STORE, 2);
	st_issue(t, C0, 0x3000, 3, 0xff, MSR_IT_STORE, 3);
	st_commit(t, C0, 0x3000, 0xff, 0x6, 1, 4);
	st_commit(t, C0, 0x3008, 0xff, 0x4, 1, 5);
	st_commit(t, C0, 0x3000, 0xff, 0x2, 1, 6);
	cr_assert_eq(inflight(t, C0).answers, 3);
	st_inv(t, 2, C0, 0x3000, 7); /* the first */
	st_inv(t, 2, C0, 0x3000, 8); /* the second (the first has core 2's) */
	cr_assert_eq(inflight(t, C0).answers, 2);
	st_inv(t, 1, C0, 0x3000, 9); /* the first: done */
	cr_assert_eq(inflight(t, C0).answers, 1);
	st_inv(t, 2, C0, 0x3000, 10); /* none left for core 2 */
	v = find_kind(t, MSR_V_UNMATCHED_ST_INV);
	cr_assert_not_null(v);
	cr_assert_eq(v->event, 9);
	st_inv(t, 1, C0, 0x3000, 11); /* the third: all answered */
	cr_assert_eq(inflight(t, C0).answers, 0);
	cr_assert_eq(t->nv, 1);
	for (unsigned i = 0; i < 3; i++)
		st_ack(t, C0, 0, 12);
	cr_assert_eq(inflight(t, C0).stores, 0);
	t_finish(t);
	cr_assert_eq(t->nv, 1);
	t_free(t);
}

Test(bind, force_retired_commit_leaves_the_answers)
{
	struct tctx *t = t_new_limits(false, 0, 4);

	stuck_commit(t);
	for (unsigned i = 0; i < 6; i++) {
		st_issue(t, C0, 0x2000, i, 0xff, MSR_IT_STORE, 10 + i);
		st_commit(t, C0, 0x2000, 0xff, 0x4, 1, 10 + i);
		st_inv(t, 2, C0, 0x2000, 10 + i);
		st_ack(t, C0, 0, 10 + i);
	}
	/* after 4 later entries the stuck commit was given up */
	cr_assert_eq(count_kind(t, MSR_V_LEFTOVER), 1);
	cr_assert_eq(inflight(t, C0).answers, 0);
	cr_assert_eq(inflight(t, C0).stores, 0);
	st_inv(t, 1, C0, 0x2000, 30); /* too late: nothing awaits core 1 */
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_INV), 1);
	cr_assert_eq(t->nv, 2);
	t_finish(t);
	cr_assert_eq(t->nv, 2);
	t_free(t);
}

Test(bind, evict_answers_pass_an_eviction_that_never_gets_its_own)
{
	struct tctx *t = t_new(false);

	evict(t, 0x2000, 0x2, 1); /* bank 0; core 1 never answers */
	for (unsigned i = 0; i < N; i++) {
		/* bank 0 of 8: (pa >> 6) % 8 == 0 */
		evict(t, 0x100000 + (i % 4096) * 0x200, 0x4, 10 + i);
		evict_inv(t, 2, 0, 10 + i);
	}
	cr_assert_eq(t->nv, 0);
	cr_assert_leq(stats(t).bind_steps, 2 * N);
	evict_inv(t, 1, 0, 50000); /* the late answer still binds */
	cr_assert_eq(t->nv, 0);
	evict_inv(t, 2, 0, 50001); /* nothing left for core 2 */
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_EVICT_INV), 1);
	t_finish(t);
	cr_assert_eq(t->nv, 1);
	t_free(t);
}

Test(bind, loads_behind_a_load_that_never_gets_its_data)
{
	struct tctx *t = t_new(false);

	ld_issue(t, C0, 0x2000, 3, MSR_IT_LOAD, 1); /* its data comes last */
	for (unsigned i = 0; i < N; i++) {
		ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 10 + i);
		ld_data(t, C0, 0x1000, MSR_DSRC_L2, 10 + i);
	}
	cr_assert_eq(inflight(t, C0).loads, N + 1); /* none retired */
	ld_data(t, C0, 0x2000, MSR_DSRC_L2, 50000);
	cr_assert_eq(t->nv, 0);
	cr_assert_eq(inflight(t, C0).loads, 0);
	cr_assert_leq(stats(t).bind_steps, 2 * (N + 1));
	t_finish(t);
	t_free(t);
}

Test(bind, load_data_skips_loads_that_got_theirs_with_a_quad_load)
{
	struct tctx *t = t_new(false);

	ld_issue(t, C0, 0x4008, 3, MSR_IT_LOAD, 1);       /* A: block 0x4008 */
	ld_issue(t, C0, 0x4000, 4, MSR_IT_QUAD_LOAD, 2);  /* Q: 0x4000, 0x4008 */
	ld_issue(t, C0, 0x4008, 3, MSR_IT_LOAD, 3);       /* B: block 0x4008 */
	ld_data(t, C0, 0x4000, MSR_DSRC_L2, 4); /* Q, both blocks */
	ld_data(t, C0, 0x4008, MSR_DSRC_L2, 5); /* A, the oldest waiting */
	ld_data(t, C0, 0x4008, MSR_DSRC_L2, 6); /* B: Q's second has its data */
	cr_assert_eq(t->nv, 0);
	ld_data(t, C0, 0x4008, MSR_DSRC_L2, 7);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_LD_DATA), 1);
	cr_assert_eq(inflight(t, C0).loads, 0);
	t_finish(t);
	t_free(t);
}

Test(bind, stores_bind_in_order_across_pops_and_drops)
{
	struct tctx *t = t_new_limits(false, 4, 0);

	st_issue(t, C0, 0x5000, 1, 0xff, MSR_IT_STORE, 1); /* sseq 1 */
	st_issue(t, C0, 0x5000, 2, 0xff, MSR_IT_STORE, 2); /* 2, popped */
	simple(t, MSR_ST_POP, C0);
	st_issue(t, C0, 0x5000, 3, 0xff, MSR_IT_STORE, 3); /* 3 */
	st_commit(t, C0, 0x5000, 0xff, 0, 1, 4);
	st_commit(t, C0, 0x5000, 0xff, 0, 1, 5);
	st_ack(t, C0, 0, 5);
	st_ack(t, C0, 0, 5);
	cr_assert_eq(t->nc, 2);
	cr_assert_eq(t->c[0].sseq, 1);
	cr_assert_eq(t->c[1].sseq, 3);
	cr_assert_eq(inflight(t, C0).stores, 0);
	/* the fifth of 4..8 finds the buffer full: 4 is dropped */
	for (unsigned i = 0; i < 5; i++)
		st_issue(t, C0, 0x5008, 4 + i, 0xff, MSR_IT_STORE, 6 + i);
	cr_assert_eq(count_kind(t, MSR_V_LEFTOVER), 1);
	st_commit(t, C0, 0x5008, 0xff, 0, 1, 20);
	st_ack(t, C0, 0, 20);
	cr_assert_eq(t->c[2].sseq, 5);
	simple(t, MSR_ST_POP, C0); /* 8 */
	st_issue(t, C0, 0x5008, 9, 0xff, MSR_IT_STORE, 21); /* 9 */
	for (unsigned k = 0; k < 3; k++)
		st_commit(t, C0, 0x5008, 0xff, 0, 1, 22 + k);
	cr_assert_eq(t->nc, 6);
	cr_assert_eq(t->c[3].sseq, 6);
	cr_assert_eq(t->c[4].sseq, 7);
	cr_assert_eq(t->c[5].sseq, 9);
	st_commit(t, C0, 0x5008, 0xff, 0, 1, 30);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_COMMIT), 1);
	cr_assert_eq(t->nv, 2);
	t_free(t);
}

Test(bind, bypass_passes_stores_to_other_bytes_of_the_block)
{
	struct tctx *t = t_new(false);

	stuck_commit(t);
	st_issue(t, C0, 0x1000, 0x42, 0xff, MSR_IT_STORE, 4); /* #2, whole */
	st_commit(t, C0, 0x1000, 0xff, 0, 1, 5);
	st_ack(t, C0, 0, 5);
	/* byte 0 stored and byte 1 loaded from the store buffer, over and
	 * over: #2 still covers byte 1, behind all the byte-0 stores */
	for (unsigned i = 0; i < N; i++) {
		st_issue(t, C0, 0x1000, i, 0x80, MSR_IT_STORE, 10 + i);
		st_commit(t, C0, 0x1000, 0x80, 0, 1, 10 + i);
		st_ack(t, C0, 0, 10 + i);
		ld_issue(t, C0, 0x1001, 0, MSR_IT_LOAD, 10 + i);
		ld_data(t, C0, 0x1001, MSR_DSRC_STB, 10 + i);
	}
	cr_assert_eq(t->nv, 0);
	cr_assert_eq(inflight(t, C0).stores, N + 2);
	/* a commit, an ack and a bypass decision each, and the two acks
	 * before */
	cr_assert_leq(stats(t).bind_steps, 5 * N + 4);
	/* bytes 0 and 1: the youngest byte-0 store decides and does not
	 * cover byte 1 */
	ld_issue(t, C0, 0x1000, 1, MSR_IT_LOAD, 50000);
	ld_data(t, C0, 0x1000, MSR_DSRC_STB, 50000);
	cr_assert_eq(count_kind(t, MSR_V_BYPASS_NOT_COVERED), 1);
	t_free(t);
}

Test(bind, bypass_hands_bytes_of_retired_stores_to_older_writers)
{
	struct tctx *t = t_new(false);

	/* #1, an RMO store committed but never acked, holds the ring's head;
	 * #2..#4 write byte 1, commit, are acked and retire from the MAB:
	 * no longer searchable, they stay in the ring behind #1 */
	st_issue(t, C0, 0x1000, 0x42, 0xff, MSR_IT_BLK_INIT_ST, 1);
	st_commit(t, C0, 0x1000, 0xff, 0, 1, 2);
	for (unsigned i = 0; i < 3; i++) {
		st_issue(t, C0, 0x1000, i, 0x40, MSR_IT_STORE, 3 + i);
		st_commit(t, C0, 0x1000, 0x40, 0, 1, 3 + i);
		st_ack(t, C0, 0, 3 + i);
	}
	st_issue(t, C0, 0x1000, 7, 0x80, MSR_IT_STORE, 9); /* #5, byte 0 */
	cr_assert_eq(inflight(t, C0).stores, 5);
	cr_assert_eq(t->nv, 0);
	/* byte 1's writers #4, #3, #2 are passed: #1, RMO, decides */
	ld_issue(t, C0, 0x1001, 0, MSR_IT_LOAD, 10);
	ld_data(t, C0, 0x1001, MSR_DSRC_STB, 11);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_ORDER_ASSUMPTION);
	/* byte 0: #5 decides and covers it */
	ld_issue(t, C0, 0x1000, 0, MSR_IT_LOAD, 12);
	ld_data(t, C0, 0x1000, MSR_DSRC_STB, 13);
	cr_assert_eq(t->nv, 1);
	/* byte 2: only #1 writes it */
	ld_issue(t, C0, 0x1002, 0, MSR_IT_LOAD, 14);
	ld_data(t, C0, 0x1002, MSR_DSRC_STB, 15);
	cr_assert_eq(t->nv, 2);
	cr_assert_eq(t->v[1].kind, MSR_V_ORDER_ASSUMPTION);
	t_free(t);
}

Test(bind, bypass_reaches_a_writer_further_back_than_the_links_count)
{
	unsigned n = 70000; /* more stores between than a link can count */
	struct tctx *t = t_new_limits(false, 2 * n, 0);
	uint64_t before;

	stuck_commit(t);
	st_issue(t, C0, 0x1000, 0x42, 0xff, MSR_IT_STORE, 4); /* #2 */
	for (unsigned i = 0; i < n; i++)
		st_issue(t, C0, 0x1000, i, 0x80, MSR_IT_STORE, 5);
	before = stats(t).bind_steps;
	ld_issue(t, C0, 0x1001, 0, MSR_IT_LOAD, 6);
	ld_data(t, C0, 0x1001, MSR_DSRC_STB, 7);
	cr_assert_eq(t->nv, 0); /* #2 covers byte 1 */
	cr_assert_gt(stats(t).bind_steps - before, n); /* it walked there */
	/* bytes 0 and 1: the walk stops at the youngest byte-0 store */
	ld_issue(t, C0, 0x1000, 1, MSR_IT_LOAD, 8);
	ld_data(t, C0, 0x1000, MSR_DSRC_STB, 9);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(t->v[0].kind, MSR_V_BYPASS_NOT_COVERED);
	t_free(t);
}

/* Store #1 of C0 writes 0xe1 to 0x1000, store #2 0xe2; `nld` loads of the
 * block take #1's value from the store buffer, wrongly; `nyoung` younger
 * stores, to `young` + 8 i (0: to 0x1000 itself), are issued before the
 * loads execute. */
static void wrong_bypasses(struct tctx *t, unsigned nld, unsigned nyoung,
			   uint64_t young)
{
	step_st(t, C0, 0x1000, 8, 0xe1);
	step_st(t, C0, 0x1000, 8, 0xe2);
	for (unsigned i = 0; i < nld; i++)
		step_ld(t, C0, 0x1000, 8, 0xe1, true);
	st_issue(t, C0, 0x1000, 0xe1, 0xff, MSR_IT_STORE, 1);
	sstep(t, C0);
	st_issue(t, C0, 0x1000, 0xe2, 0xff, MSR_IT_STORE, 2);
	sstep(t, C0);
	for (unsigned i = 0; i < nld; i++) {
		ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 3);
		ld_data(t, C0, 0x1000, MSR_DSRC_STB, 4);
	}
	for (unsigned i = 0; i < nyoung; i++)
		st_issue(t, C0, young ? young + 8 * i : 0x1000, 0x77, 0xff,
			 MSR_IT_STORE, 5);
	for (unsigned i = 0; i < nld; i++)
		sstep(t, C0);
}

Test(bind, a_wrong_value_is_named_past_stores_to_other_blocks)
{
	struct tctx *t = t_new(true);
	uint64_t before;

	before = stats(t).bind_steps;
	wrong_bypasses(t, 50, 5000, 0x100000);
	cr_assert_eq(t->nv, 50);
	cr_assert_eq(count_kind(t, MSR_V_LOAD_VALUE), 50);
	for (unsigned k = 0; k < t->nv; k++) {
		cr_assert_eq(t->v[k].observed_from.sseq, 1);
		cr_assert_eq(t->v[k].expected_from.sseq, 2);
	}
	/* each: the bypass decision, the step finding its load, then #2
	 * and #1 of the block's chain */
	cr_assert_leq(stats(t).bind_steps - before, 50 * 5);
	t_free(t);
}

Test(bind, naming_a_wrong_value_looks_back_a_bounded_number_of_stores)
{
	struct tctx *t = t_new(true);

	/* 300 younger stores to the block itself: #1 is past the search */
	wrong_bypasses(t, 2, 300, 0);
	cr_assert_eq(count_kind(t, MSR_V_LOAD_VALUE), 2);
	cr_assert_not(t->v[0].observed_from.valid);
	cr_assert_leq(stats(t).bind_steps, 2 * (256 + 3));
	t_free(t);
}

Test(bind, acks_pass_stores_that_never_commit)
{
	struct tctx *t = t_new(false);
	uint64_t before;

	for (unsigned i = 0; i < N; i++)
		st_issue(t, C0, 0x100000 + 8 * i, i, 0xff, MSR_IT_STORE, 1);
	before = stats(t).bind_steps;
	/* a flood of acks with nothing committed to acknowledge */
	for (unsigned i = 0; i < N; i++)
		st_ack(t, C0, 0, 2);
	cr_assert_eq(t->nv, T_MAXV);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_ACK), T_MAXV);
	cr_assert_leq(stats(t).bind_steps - before, N);
	/* the youngest commits, out of order, and its ack finds it behind
	 * all the uncommitted ones */
	before = stats(t).bind_steps;
	for (unsigned i = 0; i < N / 2; i++) {
		st_commit(t, C0, 0x100000 + 8 * (N - 1 - i), 0xff, 0, 1, 3);
		st_ack(t, C0, 0, 3);
	}
	cr_assert_eq(t->nv, T_MAXV);
	cr_assert_leq(stats(t).bind_steps - before, 2 * N);
	cr_assert_eq(inflight(t, C0).unacked, N - N / 2);
	cr_assert_eq(inflight(t, C0).uncommitted, N - N / 2);
	t_free(t);
}

Test(bind, an_ack_takes_the_oldest_committed_store)
{
	struct tctx *t = t_new(false);
	struct msr_strand_inflight in;

	st_issue(t, C0, 0x1000, 1, 0xff, MSR_IT_STORE, 1); /* #1 */
	st_issue(t, C0, 0x2000, 2, 0xff, MSR_IT_STORE, 2); /* #2 */
	st_issue(t, C0, 0x3000, 3, 0xff, MSR_IT_STORE, 3); /* #3 */
	st_commit(t, C0, 0x3000, 0xff, 0, 1, 4);
	st_commit(t, C0, 0x2000, 0xff, 0, 1, 5);
	st_ack(t, C0, 0, 6); /* #2, not #3 */
	st_commit(t, C0, 0x1000, 0xff, 0, 1, 7);
	st_ack(t, C0, 0, 8); /* #1: #1 and #2 retire */
	in = inflight(t, C0);
	cr_assert_eq(in.stores, 1);
	cr_assert_eq(in.unacked, 1);
	st_ack(t, C0, 0, 9); /* #3 */
	cr_assert_eq(inflight(t, C0).stores, 0);
	cr_assert_eq(t->nv, 0);
	st_ack(t, C0, 0, 10);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_ACK), 1);
	t_free(t);
}

Test(bind, acks_skip_stores_dropped_at_the_limit)
{
	struct tctx *t = t_new_limits(false, 4, 0);

	/* ten committed stores, never acked: the first six are given up */
	for (unsigned i = 0; i < 10; i++) {
		st_issue(t, C0, 0x1000 + 8 * i, i, 0xff, MSR_IT_STORE, 1 + i);
		st_commit(t, C0, 0x1000 + 8 * i, 0xff, 0, 1, 1 + i);
	}
	cr_assert_eq(count_kind(t, MSR_V_LEFTOVER), 6);
	for (unsigned i = 0; i < 4; i++)
		st_ack(t, C0, 0, 20 + i);
	cr_assert_eq(t->nv, 6);
	cr_assert_eq(inflight(t, C0).stores, 0);
	st_ack(t, C0, 0, 30);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_ACK), 1);
	t_free(t);
}

Test(bind, loads_waiting_on_one_block_bind_without_walking_back)
{
	struct tctx *t = t_new(false);

	/* N loads of one block issued before any data: each LD_DATA takes
	 * the oldest, and the walk starts where the last one stopped */
	for (unsigned i = 0; i < N; i++)
		ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 1);
	/* the youngest 100 are squashed: the chain ends before them */
	for (unsigned i = 0; i < 100; i++)
		simple(t, MSR_LD_POP, C0);
	cr_assert_eq(inflight(t, C0).loads, N - 100);
	for (unsigned i = 0; i < N - 100; i++)
		ld_data(t, C0, 0x1000, MSR_DSRC_L2, 2);
	cr_assert_eq(t->nv, 0);
	cr_assert_eq(inflight(t, C0).loads, 0);
	cr_assert_leq(stats(t).bind_steps, 2 * N);
	ld_data(t, C0, 0x1000, MSR_DSRC_L2, 3);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_LD_DATA), 1);
	/* the key is gone with its last load: a new chain starts */
	ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 4);
	ld_data(t, C0, 0x1000, MSR_DSRC_L2, 5);
	cr_assert_eq(t->nv, 1);
	cr_assert_eq(inflight(t, C0).loads, 0);
	t_free(t);
}

Test(bind, stores_waiting_on_one_block_commit_without_walking_back)
{
	struct tctx *t = t_new(false);

	/* N stores to one block in the store buffer before any commits,
	 * then two more blocks' stores interleaved with the commits */
	for (unsigned i = 0; i < N; i++)
		st_issue(t, C0, 0x1000, i, 0xff, MSR_IT_STORE, 1);
	for (unsigned i = 0; i < N; i++) {
		st_issue(t, C0, i % 2 ? 0x2000 : 0x3000, i, 0xff,
			 MSR_IT_STORE, 2);
		st_commit(t, C0, 0x1000, 0xff, 0, 1, 2);
		st_ack(t, C0, 0, 2);
	}
	cr_assert_eq(t->nv, 0);
	/* program order: the k-th commit bound store #k */
	for (unsigned k = 0; k < t->nc; k++)
		cr_assert_eq(t->c[k].sseq, k + 1);
	cr_assert_eq(stats(t).commits, N);
	cr_assert_leq(stats(t).bind_steps, 2 * N);
	cr_assert_eq(inflight(t, C0).stores, N);
	cr_assert_eq(inflight(t, C0).uncommitted, N);
	/* the other blocks' stores commit in order too */
	st_commit(t, C0, 0x3000, 0xff, 0, 1, 3);
	cr_assert_eq(t->nc, T_MAXC); /* the sink keeps the first 128 */
	st_commit(t, C0, 0x1000, 0xff, 0, 1, 4);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_COMMIT), 1);
	t_free(t);
}

Test(bind, a_load_dropped_at_the_limit_leaves_its_chain)
{
	struct tctx *t = t_new_limits(false, 4, 0);

	/* six loads of one block: the oldest two are given up waiting */
	for (unsigned i = 0; i < 6; i++)
		ld_issue(t, C0, 0x1000, 3, MSR_IT_LOAD, 1 + i);
	cr_assert_eq(count_kind(t, MSR_V_LEFTOVER), 2);
	for (unsigned i = 0; i < 4; i++)
		ld_data(t, C0, 0x1000, MSR_DSRC_L2, 10 + i);
	cr_assert_eq(t->nv, 2);
	cr_assert_eq(inflight(t, C0).loads, 0);
	ld_data(t, C0, 0x1000, MSR_DSRC_L2, 20);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_LD_DATA), 1);
	t_free(t);
}

Test(bind, answers_pass_commits_awaiting_a_core_that_never_answers)
{
	struct tctx *t = t_new(false);

	/* every commit to the line awaits cores 1 and 2; core 2 answers at
	 * once, core 1 (a dead invalidation path) not until the end */
	for (unsigned i = 0; i < N; i++) {
		st_issue(t, C0, 0x2000, i, 0xff, MSR_IT_STORE, 1 + i);
		st_commit(t, C0, 0x2000, 0xff, 0x6, 1, 1 + i);
		st_inv(t, 2, C0, 0x2000, 1 + i);
		st_ack(t, C0, 0, 1 + i);
	}
	/* and core 3, which holds no copy, answers over and over */
	for (unsigned i = 0; i < N; i++)
		st_inv(t, 3, C0, 0x2000, 30000);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_INV), T_MAXV);
	cr_assert_eq(inflight(t, C0).answers, N);
	/* a commit, an answer and an ack each */
	cr_assert_leq(stats(t).bind_steps, 3 * N);
	for (unsigned i = 0; i < N; i++)
		st_inv(t, 1, C0, 0x2000, 40000);
	cr_assert_eq(inflight(t, C0).answers, 0);
	cr_assert_eq(inflight(t, C0).stores, 0);
	cr_assert_eq(count_kind(t, MSR_V_UNMATCHED_ST_INV), T_MAXV);
	t_finish(t);
	t_free(t);
}

#define IO_A 0x8000000100ULL
#define IO_B 0x8000000200ULL

/* Strand C0's step log: `n_a` loads of I/O address A, then one of B. */
struct io_log {
	unsigned n_a, given;
};

static int io_log_next(void *ctx, unsigned tnum, struct msr_step *step,
		       struct msr_error *err)
{
	struct io_log *l = ctx;

	(void)err;
	if (tnum != C0 || l->given > l->n_a)
		return MSR_END;
	memset(step, 0, sizeof(*step));
	step->line = l->given + 2;
	step->tnum = C0;
	step->op = MSR_STEP_LD;
	step->pc = 0x1000 + 4 * l->given;
	step->pa = l->given < l->n_a ? IO_A : IO_B;
	step->size = 8;
	step->has = MSR_STEP_HAS_PA | MSR_STEP_HAS_SIZE;
	l->given++;
	return MSR_OK;
}

static int io_log_remaining(void *ctx, unsigned tnum, uint64_t *count,
			    struct msr_error *err)
{
	struct io_log *l = ctx;

	(void)err;
	*count = tnum == C0 ? l->n_a + 1 - l->given : 0;
	return MSR_OK;
}

Test(bind, io_loads_execute_by_address_without_walking_back)
{
	struct tctx *t = t_new(false);
	struct io_log log = {N, 0};
	struct msr_step_source src = {&log, io_log_next, io_log_remaining};

	msr_engine_set_steps(t->e, &src);
	/* a load of B the strand executes last, then N loads of A: each
	 * step executes the oldest unexecuted load of A, by its address,
	 * while B keeps all of them from retiring */
	ld_issue(t, C0, IO_B, 3, MSR_IT_LOAD, 1);
	ld_data(t, C0, IO_B, MSR_DSRC_L2, 1);
	for (unsigned i = 0; i < N; i++) {
		ld_issue(t, C0, IO_A, 3, MSR_IT_LOAD, 2);
		ld_data(t, C0, IO_A, MSR_DSRC_L2, 2);
	}
	for (unsigned i = 0; i < N; i++)
		sstep(t, C0);
	cr_assert_eq(t->nv, 0);
	cr_assert_eq(inflight(t, C0).loads, N + 1);
	/* the LD_DATAs one step each; each step its first load, then A's */
	cr_assert_leq(stats(t).bind_steps, 4 * N);
	sstep(t, C0); /* B: all retire */
	cr_assert_eq(t->nv, 0);
	cr_assert_eq(inflight(t, C0).loads, 0);
	t_finish(t);
	cr_assert_eq(t->nv, 0);
	t_free(t);
}
