/*
 * test_tso.c - unit tests of the TSO checker's interval placement on
 * hand-built op/commit streams: each tso-* kind positive and negative,
 * repeated values at one address, bypassed loads, ops that wait for a
 * commit, and the shape of the proof cycles.
 */
#include <criterion/criterion.h>

#include "test_tso_harness.h"
#include "tso-internal.h" /* to see that memory stays bounded */

#define X 0x1000ull
#define Y 0x1040ull
#define Z 0x1080ull

static struct h_run h;

static void setup(void)
{
	cr_assert_eq(h_init(&h), MSR_OK);
}

static void teardown(void)
{
	if (h.tso)
		h_fini(&h);
}

TestSuite(tso, .init = setup, .fini = teardown);

static void assert_only(enum msr_vkind kind, unsigned n)
{
	h_fini(&h);
	cr_assert_eq(h.nv, n, "expected %u violations, got %u", n, h.nv);
	cr_assert_eq(h.per_kind[kind], n, "expected %u of kind %d", n, kind);
}

static void assert_clean(void)
{
	h_fini(&h);
	cr_assert_eq(h.nv, 0, "expected no violation, got %u (first kind %d: %s)",
		     h.nv, h.nv ? (int)h.v[0].kind : -1,
		     h.nv ? h.v[0].message : "");
}

/* MP: T0 st x; st y | T1 ld y; ld x */
static void mp(uint64_t ry_co, uint64_t rx_co)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 0, Y, 1);

	h_commit(&h, 0, sx, X, 1, false); /* co 1 */
	h_commit(&h, 0, sy, Y, 1, false); /* co 2 */
	h_load(&h, 1, Y, ry_co ? 1 : 0, 0, ry_co ? sy : 0, ry_co);
	h_load(&h, 1, X, rx_co ? 1 : 0, 0, rx_co ? sx : 0, rx_co);
}

Test(tso, mp_allowed)
{
	mp(0, 0);
	assert_clean();
}

Test(tso, mp_allowed_new_new)
{
	mp(2, 1);
	assert_clean();
}

Test(tso, mp_forbidden_is_load_order_with_proof)
{
	const struct msr_violation *v;

	mp(2, 0);
	assert_only(MSR_V_TSO_LOAD_ORDER, 1);
	v = &h.v[0];
	cr_assert_eq(v->strand, 1);
	cr_assert_eq(v->iseq, 2);
	cr_assert_eq(v->pa, X);
	/* ld y -po-> ld x -fr-> st x -co-> st y -rf-> ld y */
	cr_assert_eq(v->nproof, 4);
	cr_assert_eq(v->proof[0].pa, Y);
	cr_assert_eq(v->proof[0].rel, MSR_REL_PO);
	cr_assert_eq(v->proof[1].pa, X);
	cr_assert_eq(v->proof[1].rel, MSR_REL_FR);
	cr_assert_eq(v->proof[2].op, MSR_STEP_ST);
	cr_assert_eq(v->proof[2].pa, X);
	cr_assert_eq(v->proof[2].rel, MSR_REL_CO);
	cr_assert_eq(v->proof[3].pa, Y);
	cr_assert_eq(v->proof[3].rel, MSR_REL_RF);
	cr_assert_eq(v->proof[3].iseq, 2);
	cr_assert_eq(v->observed_from.valid, false); /* initial value */
	cr_assert_eq(v->expected_from.co, 1);
}

/* Repeated value at one address: co 1 and co 3 both write 1. */
static void repeated(uint64_t first, uint64_t second)
{
	uint64_t a = h_store(&h, 0, X, 1), b = h_store(&h, 1, X, 2);
	uint64_t c = h_store(&h, 2, X, 1);
	uint64_t sseq[4] = {0, a, b, c};
	unsigned strand[4] = {0, 0, 1, 2};

	h_commit(&h, 0, a, X, 1, false);
	h_commit(&h, 1, b, X, 2, false);
	h_commit(&h, 2, c, X, 1, false);
	h_load(&h, 3, X, first == 2 ? 2 : 1, strand[first], sseq[first],
	       first);
	h_load(&h, 3, X, second == 2 ? 2 : 1, strand[second], sseq[second],
	       second);
}

Test(tso, repeated_value_in_order)
{
	repeated(1, 3);
	assert_clean();
}

Test(tso, repeated_value_read_backwards_is_coherence)
{
	repeated(3, 1); /* same value 1 twice, but co 3 then co 1 */
	assert_only(MSR_V_TSO_COHERENCE, 1);
	cr_assert_eq(h.v[0].observed_from.co, 1);
	cr_assert_eq(h.v[0].expected_from.co, 2);
}

Test(tso, foreign_read_while_own_store_buffered_is_coherence)
{
	uint64_t s = h_store(&h, 0, X, 1);
	uint64_t r = h_store(&h, 1, X, 2);

	h_load_bypass(&h, 0, X, 1, s);
	h_commit(&h, 1, r, X, 2, false);
	h_load(&h, 0, X, 2, 1, r, 1); /* own store still buffered */
	h_fini(&h);
	/* reading co 1 while the own store (uncommitted) is youngest */
	cr_assert_eq(h.nv, 1);
	cr_assert_eq(h.per_kind[MSR_V_TSO_COHERENCE], 1);
}

Test(tso, bypass_then_other_store_allowed)
{
	uint64_t s = h_store(&h, 0, X, 1);
	uint64_t r = h_store(&h, 1, X, 2);

	h_load_bypass(&h, 0, X, 1, s);
	h_commit(&h, 1, r, X, 2, false); /* co 1 */
	h_commit(&h, 0, s, X, 1, false); /* co 2 */
	h_load(&h, 0, X, 1, 0, s, 2);
	h_load(&h, 1, X, 1, 0, s, 2);
	assert_clean();
}

Test(tso, own_store_then_initial_is_coherence)
{
	uint64_t s = h_store(&h, 0, X, 1);

	h_commit(&h, 0, s, X, 1, false);
	h_load(&h, 0, X, 0, 0, 0, 0);
	assert_only(MSR_V_TSO_COHERENCE, 1);
	cr_assert_eq(h.v[0].nproof, 2);
	cr_assert_eq(h.v[0].proof[0].rel, MSR_REL_PO);
	cr_assert_eq(h.v[0].proof[1].rel, MSR_REL_FR);
}

Test(tso, bypass_of_older_entry_is_value)
{
	uint64_t s1 = h_store(&h, 0, X, 1);

	h_store(&h, 0, X, 2);
	h_load_bypass(&h, 0, X, 1, s1);
	assert_only(MSR_V_TSO_VALUE, 1);
}

Test(tso, bypass_from_other_strand_is_value)
{
	uint64_t s1 = h_store(&h, 1, X, 1);
	struct msr_op op;

	memset(&op, 0, sizeof(op));
	h_op_init(&h, &op, 0, MSR_OP_LOAD, MSR_STEP_LD, X);
	h_word(op.blk[0].load, 1);
	h_set_rf(&op.blk[0], MSR_RF_BYPASS, 1, s1, 0);
	msr_tso_add_op(h.tso, &op);
	assert_only(MSR_V_TSO_VALUE, 1);
}

Test(tso, store_order_positive_and_negative)
{
	uint64_t a = h_store(&h, 0, X, 1), b = h_store(&h, 0, Y, 1);

	h_commit(&h, 0, b, Y, 1, false);
	h_commit(&h, 0, a, X, 1, false);
	assert_only(MSR_V_TSO_STORE_ORDER, 1);
	cr_assert_eq(h.v[0].nproof, 2);
	cr_assert_eq(h.v[0].proof[0].pa, X);
	cr_assert_eq(h.v[0].proof[0].rel, MSR_REL_PO);
	cr_assert_eq(h.v[0].proof[1].pa, Y);
	cr_assert_eq(h.v[0].proof[1].rel, MSR_REL_CO);
}

Test(tso, store_order_rmo_exempt)
{
	struct msr_commit c;
	uint64_t a = h_store(&h, 0, X, 1), b = h_store(&h, 0, Y, 1);

	memset(&c, 0, sizeof(c));
	c.co = ++h.co;
	c.strand = 0;
	c.sseq = b;
	c.pa8 = Y;
	c.mask = 0xff;
	c.rmo = true;
	msr_tso_add_commit(h.tso, &c);
	h_commit(&h, 0, a, X, 1, false);
	assert_clean();
}

/* SB+membar: T0 st x; membar; ld y | T1 st y; membar; ld x */
static void sb_membar(bool t0_new, bool t1_new)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 1, Y, 1);

	h_membar(&h, 0, 0x2);
	h_membar(&h, 1, 0x2);
	h_commit(&h, 0, sx, X, 1, false); /* co 1 */
	h_commit(&h, 1, sy, Y, 1, false); /* co 2 */
	h_load(&h, 0, Y, t0_new, 1, t0_new ? sy : 0, t0_new ? 2 : 0);
	h_load(&h, 1, X, t1_new, 0, t1_new ? sx : 0, t1_new ? 1 : 0);
}

Test(tso, sb_membar_allowed)
{
	sb_membar(false, true);
	assert_clean();
}

Test(tso, sb_membar_forbidden_is_membar)
{
	sb_membar(false, false);
	assert_only(MSR_V_TSO_MEMBAR, 1);
	cr_assert_eq(h.v[0].strand, 1);
	/* st y -po-> membar -po-> ld x -fr-> st x -co-> st y */
	cr_assert_eq(h.v[0].nproof, 4);
	cr_assert_eq(h.v[0].proof[1].op, MSR_STEP_MEMBAR);
}

Test(tso, sb_without_membar_allowed)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 1, Y, 1);

	h_load(&h, 0, Y, 0, 0, 0, 0);
	h_load(&h, 1, X, 0, 0, 0, 0);
	h_commit(&h, 0, sx, X, 1, false);
	h_commit(&h, 1, sy, Y, 1, false);
	assert_clean();
}

Test(tso, membar_load_waits_for_late_commit)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 1, Y, 1);

	h_membar(&h, 0, 0x2);
	h_load(&h, 0, Y, 0, 0, 0, 0); /* waits: st x not committed */
	h_commit(&h, 1, sy, Y, 1, false); /* co 1 overwrites y */
	h_commit(&h, 0, sx, X, 1, false); /* co 2: load is after it */
	assert_only(MSR_V_TSO_MEMBAR, 1);
}

Test(tso, membar_load_waits_allowed)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 1, Y, 1);

	h_membar(&h, 0, 0x2);
	h_load(&h, 0, Y, 0, 0, 0, 0);
	h_commit(&h, 0, sx, X, 1, false);
	h_commit(&h, 1, sy, Y, 1, false);
	assert_clean();
}

Test(tso, membar_without_storeload_bit_no_floor)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 1, Y, 1);

	h_membar(&h, 0, 0x1 | 0x4 | 0x8);
	h_commit(&h, 1, sy, Y, 1, false);
	h_commit(&h, 0, sx, X, 1, false);
	h_load(&h, 0, Y, 0, 0, 0, 0);
	assert_clean();
}

Test(tso, atomicity_positive)
{
	uint64_t a = h_next_sseq(&h, 0), s = h_store(&h, 1, X, 5);

	h_commit(&h, 1, s, X, 5, false);  /* co 1 */
	h_commit(&h, 0, a, X, 9, true);   /* co 2 */
	h_swap(&h, 0, X, a, 0, 9, 0, 0, 0); /* read the initial value */
	assert_only(MSR_V_TSO_ATOMICITY, 1);
	cr_assert_eq(h.v[0].nproof, 2);
	cr_assert_eq(h.v[0].proof[0].rel, MSR_REL_FR);
	cr_assert_eq(h.v[0].proof[1].rel, MSR_REL_CO);
}

Test(tso, atomicity_negative_and_op_before_commit)
{
	uint64_t a = h_next_sseq(&h, 0), s = h_store(&h, 1, X, 5);

	h_commit(&h, 1, s, X, 5, false);    /* co 1 */
	h_swap(&h, 0, X, a, 5, 9, 1, s, 1); /* waits for its commit */
	h_commit(&h, 0, a, X, 9, true);     /* co 2 */
	h_load(&h, 1, X, 9, 0, a, 2);
	assert_clean();
}

Test(tso, atomic_is_a_storeload_barrier)
{
	uint64_t a = h_next_sseq(&h, 0), sy = h_store(&h, 1, Y, 1);

	h_commit(&h, 0, a, X, 1, true);  /* co 1 */
	h_swap(&h, 0, X, a, 0, 1, 0, 0, 0);
	h_commit(&h, 1, sy, Y, 1, false); /* co 2 */
	h_load(&h, 1, X, 1, 0, a, 1);
	h_load(&h, 0, Y, 0, 0, 0, 0); /* may precede co 2: fine */
	assert_clean();
}

Test(tso, atomic_barrier_forbidden)
{
	uint64_t sx = h_store(&h, 0, X, 1);
	uint64_t a = h_next_sseq(&h, 1);

	h_commit(&h, 0, sx, X, 1, false); /* co 1 */
	h_commit(&h, 1, a, Y, 1, true);   /* co 2 */
	h_swap(&h, 1, Y, a, 0, 1, 0, 0, 0);
	h_load(&h, 1, X, 0, 0, 0, 0);     /* after co 2, x is 1 */
	assert_only(MSR_V_TSO_MEMBAR, 1);
}

Test(tso, load_store_positive)
{
	uint64_t sy = h_next_sseq(&h, 0), sx = h_store(&h, 1, X, 1);

	h_commit(&h, 0, sy, Y, 1, false); /* co 1: before its op */
	h_commit(&h, 1, sx, X, 1, false); /* co 2 */
	h_load(&h, 0, X, 1, 1, sx, 2);
	h.sseq[0] = 0;
	h_store(&h, 0, Y, 1); /* sseq 1 again: the committed entry */
	assert_only(MSR_V_TSO_LOAD_STORE, 1);
	cr_assert_eq(h.v[0].nproof, 3);
}

Test(tso, load_store_negative)
{
	uint64_t sx = h_store(&h, 1, X, 1);
	uint64_t sy;

	h_commit(&h, 1, sx, X, 1, false);
	h_load(&h, 0, X, 1, 1, sx, 1);
	sy = h_store(&h, 0, Y, 1);
	h_commit(&h, 0, sy, Y, 1, false);
	assert_clean();
}

Test(tso, read_own_later_store_is_coherence)
{
	uint64_t sx = h_next_sseq(&h, 0);

	h_commit(&h, 0, sx, X, 1, false);
	h_load(&h, 0, X, 1, 0, sx, 1);
	h.sseq[0] = 0;
	h_store(&h, 0, X, 1);
	h_fini(&h);
	cr_assert_geq(h.per_kind[MSR_V_TSO_COHERENCE], 1);
	cr_assert_eq(h.nv, h.per_kind[MSR_V_TSO_COHERENCE]);
}

Test(tso, torn_read_is_value)
{
	uint64_t a = h_store(&h, 0, X, 0x1111111111111111ull);
	uint64_t b = h_store(&h, 1, X, 0x2222222222222222ull);
	struct msr_op op;

	h_commit(&h, 0, a, X, 0x1111111111111111ull, false); /* co 1 */
	h_commit(&h, 1, b, X, 0x2222222222222222ull, false); /* co 2 */
	h_op_init(&h, &op, 2, MSR_OP_LOAD, MSR_STEP_LD, X);
	h_word(op.blk[0].load, 0x2222222211111111ull);
	op.blk[0].nrf = 2;
	op.blk[0].rf[0] = h_rf(MSR_RF_COMMIT, 0xf0, 1, b, 2);
	op.blk[0].rf[1] = h_rf(MSR_RF_COMMIT, 0x0f, 0, a, 1);
	msr_tso_add_op(h.tso, &op);
	assert_only(MSR_V_TSO_VALUE, 1);
}

Test(tso, untorn_split_sources_allowed)
{
	struct msr_op op;
	struct msr_commit c;
	uint64_t a = h_store(&h, 0, X, 0x1111111111111111ull);

	h_commit(&h, 0, a, X, 0x1111111111111111ull, false); /* co 1 */
	memset(&c, 0, sizeof(c));
	c.co = ++h.co; /* co 2 writes only the low half */
	c.strand = 1;
	c.sseq = 1;
	c.pa8 = X;
	c.mask = 0x0f;
	msr_tso_add_commit(h.tso, &c);
	h_op_init(&h, &op, 2, MSR_OP_LOAD, MSR_STEP_LD, X);
	op.blk[0].nrf = 2;
	op.blk[0].rf[0] = h_rf(MSR_RF_COMMIT, 0xf0, 0, a, 1);
	op.blk[0].rf[1] = h_rf(MSR_RF_COMMIT, 0x0f, 1, 1, 2);
	msr_tso_add_op(h.tso, &op);
	assert_clean();
}

Test(tso, unresolved_at_finish_no_false_alarm)
{
	uint64_t sx = h_store(&h, 0, X, 1);
	uint64_t a = h_next_sseq(&h, 1);

	(void)sx;
	h_membar(&h, 0, 0x2);
	h_load(&h, 0, Y, 0, 0, 0, 0);
	h_swap(&h, 1, Z, a, 0, 1, 0, 0, 0);
	assert_clean();
}

Test(tso, two_checkers_are_independent)
{
	struct h_run h2;
	uint64_t sx, sy;

	cr_assert_eq(h_init(&h2), MSR_OK);
	sx = h_store(&h2, 0, X, 1);
	sy = h_store(&h2, 0, Y, 1);
	h_commit(&h2, 0, sy, Y, 1, false);
	h_commit(&h2, 0, sx, X, 1, false);
	mp(0, 0);
	h_fini(&h2);
	cr_assert_eq(h2.nv, 1);
	assert_clean();
}

Test(tso, io_loads_are_not_checked)
{
	uint64_t io = 1ull << 39;
	uint64_t sx = h_store(&h, 0, io | X, 1), sy = h_store(&h, 0, Y, 1);

	h_commit(&h, 0, sx, io | X, 1, false);
	h_commit(&h, 0, sy, Y, 1, false);
	h_load(&h, 1, Y, 1, 0, sy, 2);
	h_load(&h, 1, io | X, 0, 0, 0, 0);
	assert_clean();
}

Test(tso, load_before_its_commit_waits)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 0, Y, 1);

	h_load(&h, 1, Y, 1, 0, sy, 2); /* op seen before commit co 2 */
	h_load(&h, 1, X, 0, 0, 0, 0);
	h_commit(&h, 0, sx, X, 1, false);
	h_commit(&h, 0, sy, Y, 1, false);
	assert_only(MSR_V_TSO_LOAD_ORDER, 1);
}

Test(tso, load_before_its_commit_allowed)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 0, Y, 1);

	h_load(&h, 1, Y, 1, 0, sy, 2);
	h_load(&h, 1, X, 1, 0, sx, 1);
	h_commit(&h, 0, sx, X, 1, false);
	h_commit(&h, 0, sy, Y, 1, false);
	assert_clean();
}

static uint64_t rmo_store(unsigned strand, uint64_t pa)
{
	struct msr_op op;

	h_op_init(&h, &op, strand, MSR_OP_STORE, MSR_STEP_STBI, pa);
	op.rmo = true;
	op.blk[0].sseq = ++h.sseq[strand];
	h_word(op.blk[0].store, 7);
	msr_tso_add_op(h.tso, &op);
	return op.blk[0].sseq;
}

static void rmo_commit(unsigned strand, uint64_t sseq, uint64_t pa)
{
	struct msr_commit c;

	memset(&c, 0, sizeof(c));
	c.co = ++h.co;
	c.strand = (uint8_t)strand;
	c.sseq = sseq;
	c.pa8 = pa;
	c.mask = 0xff;
	h_word(c.data, 7);
	c.rmo = true;
	c.event = ++h.event;
	msr_tso_add_commit(h.tso, &c);
}

Test(tso, membar_does_not_wait_for_rmo_stores)
{
	uint64_t sx = rmo_store(0, X), sy = h_store(&h, 1, Y, 1);

	h_membar(&h, 0, 0x2);
	h_commit(&h, 1, sy, Y, 1, false); /* co 1 */
	h_load(&h, 0, Y, 0, 0, 0, 0);
	rmo_commit(0, sx, X);             /* co 2 */
	assert_clean();
}

Test(tso, membar_sync_is_a_storeload_barrier)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 1, Y, 1);

	h_membar(&h, 0, 0x40);
	h_commit(&h, 1, sy, Y, 1, false);
	h_commit(&h, 0, sx, X, 1, false);
	h_load(&h, 0, Y, 0, 0, 0, 0);
	assert_only(MSR_V_TSO_MEMBAR, 1);
}

Test(tso, rmo_store_after_barrier_load_is_load_store)
{
	/* st x; membar; ld y; stbi z - and stbi z commits before st x */
	uint64_t sx = h_store(&h, 0, X, 1);
	uint64_t sz = h_next_sseq(&h, 0);
	struct msr_op op;

	h_membar(&h, 0, 0x2);
	rmo_commit(0, sz, Z);              /* co 1 */
	h_commit(&h, 0, sx, X, 1, false);  /* co 2 */
	h_load(&h, 0, Y, 0, 0, 0, 0);      /* placed at co 2 */
	h_op_init(&h, &op, 0, MSR_OP_STORE, MSR_STEP_STBI, Z);
	op.rmo = true;
	op.blk[0].sseq = sz;
	msr_tso_add_op(h.tso, &op);
	assert_only(MSR_V_TSO_LOAD_STORE, 1);
	cr_assert_eq(h.v[0].nproof, 4);
	cr_assert_eq(h.v[0].proof[1].op, MSR_STEP_MEMBAR);
	cr_assert_eq(h.v[0].proof[3].rel, MSR_REL_CO);
}

Test(tso, block_init_zeroing_other_block_no_false_alarm)
{
	uint64_t sy = h_store(&h, 1, Y, 1), sx = rmo_store(0, X);
	struct msr_op op;

	h_commit(&h, 1, sy, Y, 1, false); /* co 1 */
	rmo_commit(0, sx, X);             /* co 2, zeroes y's line too */
	h_op_init(&h, &op, 2, MSR_OP_LOAD, MSR_STEP_LD, Y);
	h_set_rf(&op.blk[0], MSR_RF_COMMIT, 0, sx, 2);
	msr_tso_add_op(h.tso, &op);
	h_load(&h, 2, Y, 0, 0, 0, 0);
	h_fini(&h);
	cr_assert_eq(h.per_kind[MSR_V_TSO_LOAD_ORDER], 0);
}

/* Block load: 8 blocks, 4 pieces of 16 bytes; piece 0 covers x (new) and
 * piece 1 covers x+16 (old): pieces are not ordered among themselves, but
 * later loads follow all of them. */
static void block_load(uint64_t co_first, uint64_t co_second)
{
	uint64_t a = h_store(&h, 0, X + 16, 1), b = h_store(&h, 0, X, 1);
	struct msr_op op;
	unsigned i;

	h_commit(&h, 0, a, X + 16, 1, false); /* co 1 */
	h_commit(&h, 0, b, X, 1, false);      /* co 2 */
	h_op_init(&h, &op, 1, MSR_OP_LOAD, MSR_STEP_LDBLK, X);
	op.size = 64;
	op.nblocks = 8;
	for (i = 0; i < 8; i++) {
		op.blk[i].pa8 = X + 8 * i;
		op.blk[i].mask = 0xff;
		h_set_rf(&op.blk[i], MSR_RF_INIT, 0, 0, 0);
	}
	if (co_first)
		h_set_rf(&op.blk[0], MSR_RF_COMMIT, 0, b, co_first);
	if (co_second)
		h_set_rf(&op.blk[2], MSR_RF_COMMIT, 0, a, co_second);
	msr_tso_add_op(h.tso, &op);
}

Test(tso, block_load_pieces_unordered)
{
	block_load(2, 0);
	assert_clean();
}

Test(tso, block_load_then_plain_load_in_order)
{
	block_load(2, 1);
	/* piece 1 saw x+16 = co 1: reading the initial value after it goes
	 * back in time at that address */
	h_load(&h, 1, X + 16, 0, 0, 0, 0);
	assert_only(MSR_V_TSO_COHERENCE, 1);
}

Test(tso, block_load_after_plain_load_in_order)
{
	uint64_t a = h_store(&h, 0, Y, 1), b = h_store(&h, 0, X, 1);
	struct msr_op op;
	unsigned i;

	h_commit(&h, 0, a, Y, 1, false); /* co 1 */
	h_commit(&h, 0, b, X, 1, false); /* co 2 */
	h_load(&h, 1, X, 1, 0, b, 2);
	h_op_init(&h, &op, 1, MSR_OP_LOAD, MSR_STEP_LDBLK, Y);
	op.size = 64;
	op.nblocks = 8;
	for (i = 0; i < 8; i++) {
		op.blk[i].pa8 = Y + 8 * i;
		op.blk[i].mask = 0xff;
		h_set_rf(&op.blk[i], MSR_RF_INIT, 0, 0, 0); /* y is stale */
	}
	msr_tso_add_op(h.tso, &op);
	assert_only(MSR_V_TSO_LOAD_ORDER, 1);
}

Test(tso, failed_cas_is_pinned_but_writes_nothing)
{
	uint64_t s = h_store(&h, 1, X, 5), a = h_next_sseq(&h, 0);
	struct msr_commit c;
	struct msr_op op;

	h_commit(&h, 1, s, X, 5, false); /* co 1 */
	memset(&c, 0, sizeof(c));
	c.co = ++h.co;                  /* co 2: failed cas, mask 0 */
	c.strand = 0;
	c.sseq = a;
	c.pa8 = X;
	c.atomic = true;
	msr_tso_add_commit(h.tso, &c);
	h_op_init(&h, &op, 0, MSR_OP_ATOMIC, MSR_STEP_CAS, X);
	op.store_failed = true;
	op.blk[0].sseq = a;
	h_word(op.blk[0].load, 5);
	h_set_rf(&op.blk[0], MSR_RF_COMMIT, 1, s, 1);
	msr_tso_add_op(h.tso, &op);
	h_load(&h, 0, X, 5, 1, s, 1); /* no own write to see */
	assert_clean();
}

Test(tso, failed_cas_reading_stale_is_atomicity)
{
	uint64_t s = h_store(&h, 1, X, 5), a = h_next_sseq(&h, 0);
	struct msr_commit c;
	struct msr_op op;

	h_commit(&h, 1, s, X, 5, false); /* co 1 */
	memset(&c, 0, sizeof(c));
	c.co = ++h.co;
	c.strand = 0;
	c.sseq = a;
	c.pa8 = X;
	c.atomic = true;
	msr_tso_add_commit(h.tso, &c);
	h_op_init(&h, &op, 0, MSR_OP_ATOMIC, MSR_STEP_CAS, X);
	op.store_failed = true;
	op.blk[0].sseq = a;
	h_set_rf(&op.blk[0], MSR_RF_INIT, 0, 0, 0);
	msr_tso_add_op(h.tso, &op);
	assert_only(MSR_V_TSO_ATOMICITY, 1);
}

Test(tso, waiting_queue_is_bounded)
{
	unsigned i;

	h_store(&h, 0, X, 1); /* never commits */
	h_membar(&h, 0, 0x2);
	for (i = 0; i < 2000; i++)
		h_load(&h, 0, Y, 0, 0, 0, 0);
	assert_clean();
}

Test(tso, stale_read_beyond_commit_ring)
{
	uint64_t sx = h_store(&h, 0, X, 1), sz = 0, i;

	h_commit(&h, 0, sx, X, 1, false); /* co 1 */
	for (i = 0; i < 20000; i++) {
		sz = h_store(&h, 1, Z, i);
		h_commit(&h, 1, sz, Z, i, false);
	}
	sx = h_store(&h, 0, X, 2);
	h_commit(&h, 0, sx, X, 2, false); /* co 20002 */
	h_load(&h, 2, Z, 0, 1, sz, 20001);
	h_load(&h, 2, X, 1, 0, 1, 1);       /* co 1 left the ring: fine */
	h_load(&h, 2, X, 2, 0, sx, 20002);
	h_load(&h, 2, X, 1, 0, 1, 1);       /* older again: coherence */
	assert_only(MSR_V_TSO_COHERENCE, 1);
}

/* MP where x's old value came from a DMA_ST / MEM_SLAM write placed after
 * `dma_at` commits. */
static void mp_dma(uint64_t dma_at, bool placed)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy = h_store(&h, 0, Y, 1);
	struct msr_op op;

	h_commit(&h, 0, sx, X, 1, false); /* co 1 */
	h_commit(&h, 0, sy, Y, 1, false); /* co 2 */
	h_load(&h, 1, Y, 1, 0, sy, 2);
	h_op_init(&h, &op, 1, MSR_OP_LOAD, MSR_STEP_LD, X);
	op.blk[0].nrf = 1;
	op.blk[0].rf[0] = h_rf(MSR_RF_DMA, 0xff, 0, 0, dma_at);
	op.blk[0].rf[0].placed = placed;
	msr_tso_add_op(h.tso, &op);
}

Test(tso, dma_before_store_is_stale)
{
	mp_dma(0, true);
	assert_only(MSR_V_TSO_LOAD_ORDER, 1);
	cr_assert_eq(h.v[0].nproof, 4);
}

Test(tso, dma_after_store_is_fresh)
{
	mp_dma(1, true);
	assert_clean();
}

Test(tso, dma_unplaced_is_unconstrained)
{
	mp_dma(0, false);
	assert_clean();
}

Test(tso, dma_read_as_witness)
{
	uint64_t sx = h_store(&h, 0, X, 1), sy;
	struct msr_op op;

	h_commit(&h, 0, sx, X, 1, false); /* co 1 */
	h_op_init(&h, &op, 1, MSR_OP_LOAD, MSR_STEP_LD, Y);
	op.blk[0].nrf = 1;
	op.blk[0].rf[0] = h_rf(MSR_RF_DMA, 0xff, 0, 0, 1); /* y after co 1 */
	op.blk[0].rf[0].placed = 1;
	msr_tso_add_op(h.tso, &op);
	h_load(&h, 1, X, 0, 0, 0, 0); /* x before co 1: stale */
	sy = h_store(&h, 0, Y, 1);
	h_commit(&h, 0, sy, Y, 1, false);
	assert_only(MSR_V_TSO_LOAD_ORDER, 1);
	/* ld y -po-> ld x -fr-> st x -co-> DMA write -rf-> ld y */
	cr_assert_eq(h.v[0].nproof, 4);
	cr_assert_eq(h.v[0].proof[2].rel, MSR_REL_CO);
	cr_assert_eq(h.v[0].proof[3].op, MSR_STEP_NOP);
}

Test(tso, dma_older_than_own_store_is_coherence)
{
	uint64_t sx = h_store(&h, 0, X, 1);
	struct msr_op op;

	h_commit(&h, 0, sx, X, 1, false);
	h_op_init(&h, &op, 0, MSR_OP_LOAD, MSR_STEP_LD, X);
	op.blk[0].nrf = 1;
	op.blk[0].rf[0] = h_rf(MSR_RF_DMA, 0xff, 0, 0, 0);
	op.blk[0].rf[0].placed = 1;
	msr_tso_add_op(h.tso, &op);
	assert_only(MSR_V_TSO_COHERENCE, 1);
}

Test(tso, own_store_entries_retire_and_stale_reads_still_caught)
{
	uint64_t sx = h_store(&h, 0, X, 1), co = 0, s = 0, i;

	h_commit(&h, 0, sx, X, 1, false); /* co 1 */
	for (i = 0; i < 200; i++) {
		uint64_t pa = 0x20000 + 8 * i;

		uint64_t z;

		s = h_store(&h, 0, pa, i);
		h_commit(&h, 0, s, pa, i, false);
		z = h_store(&h, 1, Z, i);
		co = h_commit(&h, 1, z, Z, i, false);
		h_load(&h, 0, Z, i, 1, z, co); /* moves the strand to co */
	}
	/* the entries retired as the strand's position passed them */
	cr_assert_lt(h.tso->s[0].own.n, 16, "own map holds %zu entries",
		     h.tso->s[0].own.n);
	h_load_bypass(&h, 0, 0x20000 + 8 * 199, 199, s); /* retired: fine */
	cr_assert_eq(h.nv, 0, "%s", h.nv ? h.v[0].message : "");
	h_load(&h, 0, X, 0, 0, 0, 0); /* older than its own store x=1 */
	assert_only(MSR_V_TSO_LOAD_ORDER, 1);
}

/* Many stores to one block, each committed, and no load to move the
 * strand's position: the entry stays (it never settles) and its retirement
 * queue holds it once, not once per store. */
Test(tso, own_store_queue_bounded_without_loads)
{
	uint64_t i;

	for (i = 0; i < 1000; i++) {
		uint64_t s = h_store(&h, 0, X, i);

		h_commit(&h, 0, s, X, i, false);
	}
	h_store(&h, 0, Y, 1); /* runs the retirement once more */
	cr_assert_eq(h.tso->s[0].own.n, 2);
	cr_assert_leq(h.tso->s[0].done_len, 2, "queue holds %zu",
		      h.tso->s[0].done_len);
	assert_clean();
}

/* The retirement queue grows while its oldest entry sits past the end of
 * its buffer, and still retires every entry afterwards. */
Test(tso, own_store_queue_grows_after_wrap)
{
	uint64_t i, z, co;

	for (i = 0; i < 100; i++) { /* retired one by one: the head wraps */
		uint64_t pa = 0x20000 + 8 * i, s = h_store(&h, 0, pa, i);

		h_commit(&h, 0, s, pa, i, false);
		z = h_store(&h, 1, Z, i);
		co = h_commit(&h, 1, z, Z, i, false);
		h_load(&h, 0, Z, i, 1, z, co);
	}
	for (i = 0; i < 300; i++) { /* no load: the queue grows to 512 */
		uint64_t pa = 0x40000 + 8 * i, s = h_store(&h, 0, pa, i);

		h_commit(&h, 0, s, pa, i, false);
	}
	cr_assert_geq(h.tso->s[0].done_len, 300);
	z = h_store(&h, 1, Z, 1000);
	co = h_commit(&h, 1, z, Z, 1000, false);
	h_load(&h, 0, Z, 1000, 1, z, co); /* the position passes them all */
	h_store(&h, 0, Y, 1); /* retires the queue */
	cr_assert_eq(h.tso->s[0].own.n, 1, "own map holds %zu entries",
		     h.tso->s[0].own.n);
	cr_assert_leq(h.tso->s[0].done_len, 1);
	assert_clean();
}

/*
 * A stale read of a block whose own store committed before the strand's
 * position is reported under the same rule whether or not the own-store
 * entry has left the map: `others` later stores of the strand retire it,
 * none leave it in place.
 */
static void settled_own_store(unsigned others, size_t own_left)
{
	uint64_t sx = h_store(&h, 0, X, 1), z, co, i;

	h_commit(&h, 0, sx, X, 1, false); /* co 1 */
	z = h_store(&h, 1, Z, 7);
	co = h_commit(&h, 1, z, Z, 7, false);
	h_load(&h, 0, Z, 7, 1, z, co); /* the position passes co 1 */
	for (i = 0; i < others; i++) {
		uint64_t pa = 0x20000 + 8 * i;
		uint64_t s = h_store(&h, 0, pa, i);

		h_commit(&h, 0, s, pa, i, false);
	}
	cr_assert_eq(tso_own_find(&h.tso->s[0], X) == NULL, true,
		     "a settled entry counts as absent");
	cr_assert_eq(tso_map_at(&h.tso->s[0].own, X, false,
				sizeof(struct tso_own)) != NULL,
		     own_left != 0, "entry of x in the map: %d", own_left != 0);
	h_load(&h, 0, X, 0, 0, 0, 0); /* older than its own store x=1 */
	assert_only(MSR_V_TSO_LOAD_ORDER, 1);
	cr_assert_eq(h.v[0].observed_from.co, 0);
	cr_assert_eq(h.v[0].expected_from.co, 1);
}

Test(tso, settled_own_store_in_map_same_rule)
{
	settled_own_store(0, 1);
}

Test(tso, settled_own_store_retired_same_rule)
{
	settled_own_store(64, 0);
}

/* Executed store of the bytes `mask` of block `pa8` (a partial write), not
 * committed yet; returns its sseq. */
static uint64_t part_exec(unsigned strand, uint64_t pa8, uint8_t mask)
{
	struct msr_op op;

	h_op_init(&h, &op, strand, MSR_OP_STORE, MSR_STEP_ST, pa8);
	op.blk[0].mask = mask;
	op.blk[0].sseq = ++h.sseq[strand];
	h_word(op.blk[0].store, 0x0101010101010101ull);
	msr_tso_add_op(h.tso, &op);
	return op.blk[0].sseq;
}

/* The commit at co `co` of that store. */
static void part_commit(unsigned strand, uint64_t sseq, uint64_t pa8,
			uint8_t mask, uint64_t co)
{
	struct msr_commit c;

	memset(&c, 0, sizeof(c));
	c.co = h.co = co;
	c.strand = (uint8_t)strand;
	c.sseq = sseq;
	c.pa8 = pa8;
	c.mask = mask;
	h_word(c.data, 0x0101010101010101ull);
	c.ts = 10;
	c.event = ++h.event;
	msr_tso_add_commit(h.tso, &c);
}

/* part_exec then part_commit at co `co`; returns its sseq. */
static uint64_t part_store(unsigned strand, uint64_t pa8, uint8_t mask,
			   uint64_t co)
{
	uint64_t sseq = part_exec(strand, pa8, mask);

	part_commit(strand, sseq, pa8, mask, co);
	return sseq;
}

/* Read of the bytes `mask` of block `pa8` from commit `co` (0: initial). */
static void part_load(unsigned strand, uint64_t pa8, uint8_t mask,
		      unsigned src, uint64_t sseq, uint64_t co)
{
	struct msr_op op;

	h_op_init(&h, &op, strand, MSR_OP_LOAD, MSR_STEP_LD, pa8);
	op.blk[0].mask = mask;
	if (co)
		h_word(op.blk[0].load, 0x0101010101010101ull);
	op.blk[0].nrf = 1;
	op.blk[0].rf[0] = h_rf(co ? MSR_RF_COMMIT : MSR_RF_INIT, mask, src,
			       sseq, co);
	msr_tso_add_op(h.tso, &op);
}

/* A block with bytes of differing history whose commits lie more than
 * 2^32 apart (too far for the compact per-byte record): the bytes' first
 * commits still bound an initial-value read, for a partial and for a
 * whole-block commit made past the gap. */
static void far_mixed(bool whole)
{
	uint64_t far = (1ull << 32) + 5, sb;

	part_store(0, X, 0xf0, 1);
	sb = part_store(0, X, whole ? 0xff : 0x0f, far);
	part_load(1, X, 0x0f, 0, sb, far);
	cr_assert_eq(h.nv, 0, "%s", h.nv ? h.v[0].message : "");
	part_load(1, X, 0x0f, 0, 0, 0); /* bytes 4-7 before their first */
	assert_only(MSR_V_TSO_COHERENCE, 1);
}

Test(tso, mixed_block_far_commits_partial)
{
	far_mixed(false);
}

Test(tso, mixed_block_far_commits_whole)
{
	far_mixed(true);
}

/* Strand 0's own-store entry of block pa8 (present and unsettled). */
static const struct tso_own *own_of(uint64_t pa8)
{
	const struct tso_own *e = tso_own_find(&h.tso->s[0], pa8);

	cr_assert_not_null(e, "strand 0 has an own-store entry for 0x%llx",
			   (unsigned long long)pa8);
	return e;
}

/*
 * An own-store entry stays one store while each store covers the bytes of
 * the ones before it; partly overlapping stores give it per-byte values
 * (a pool record), and a store covering every byte again gives the record
 * back for the next entry that needs one.
 */
Test(tso, own_entry_per_byte_only_when_stores_overlap_partly)
{
	const struct tso_own *e;
	uint64_t a, b, c, d;

	a = part_store(0, X, 0xf0, 1);
	b = part_store(0, X, 0xff, 2); /* covers a's bytes */
	e = own_of(X);
	cr_assert_eq(e->wide, 0);
	cr_assert_eq(e->sseq, b);
	cr_assert_eq(e->live, 0xff);
	cr_assert_eq(tso_own_co(h.tso, e, 7), 2);
	cr_assert_eq(h.tso->ownx.n, 0, "no per-byte record in use");
	(void)a;

	c = part_exec(0, Y, 0xf0);
	d = part_exec(0, Y, 0x0f); /* bytes of its own: c's stay c's */
	e = own_of(Y);
	cr_assert_neq(e->wide, 0, "partly overlapping stores: per byte");
	cr_assert_eq(tso_own_sseq(h.tso, e, 0), c);
	cr_assert_eq(tso_own_sseq(h.tso, e, 7), d);
	cr_assert_eq(e->pend, 0xff);
	part_commit(0, c, Y, 0xf0, 3);
	e = own_of(Y);
	cr_assert_eq(tso_own_co(h.tso, e, 0), 3);
	cr_assert_eq(tso_own_co(h.tso, e, 7), 0, "d not committed yet");
	cr_assert_eq(e->pend, 0x0f);
	part_commit(0, d, Y, 0x0f, 4);
	e = own_of(Y);
	cr_assert_eq(tso_own_co(h.tso, e, 7), 4);
	cr_assert_eq(e->pend, 0);
	cr_assert_eq(e->maxco, 4);

	part_store(0, Y, 0xff, 5); /* one store again: record given back */
	e = own_of(Y);
	cr_assert_eq(e->wide, 0);
	cr_assert_eq(tso_own_co(h.tso, e, 3), 5);
	cr_assert_neq(h.tso->ownx.free, 0, "the record is free for reuse");
	part_exec(0, Z, 0xc0);
	part_exec(0, Z, 0x30);
	cr_assert_neq(own_of(Z)->wide, 0);
	cr_assert_eq(h.tso->ownx.n, 1, "the freed record was reused");
	assert_clean();
}

/* Per-byte own stores still bound what their bytes may read: each half of
 * the block, read from its initial value, is stale against the strand's
 * own store to that half, whose commit is the expected source. */
static void own_stale_half(uint8_t mask, uint64_t expected_co)
{
	part_store(0, X, 0xf0, 1);
	part_store(0, X, 0x0f, 2);
	cr_assert_neq(own_of(X)->wide, 0);
	part_load(0, X, mask, 0, 0, 0);
	assert_only(MSR_V_TSO_COHERENCE, 1);
	cr_assert_eq(h.v[0].observed_from.co, 0);
	cr_assert_eq(h.v[0].expected_from.co, expected_co);
}

Test(tso, own_stale_read_per_byte_entry_low_half)
{
	own_stale_half(0xf0, 1);
}

Test(tso, own_stale_read_per_byte_entry_high_half)
{
	own_stale_half(0x0f, 2);
}
