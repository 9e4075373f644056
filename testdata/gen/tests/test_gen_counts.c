/*
 * test_gen_counts.c - message counts per instruction kind, the size limits,
 * and determinism (same seed = same bytes, another seed = other bytes).
 */
#include "gen_test_util.h"

struct counts {
	uint64_t code[MSR_CODE_LIMIT];
	uint64_t l2_data, rmo_acks, inv_bits, evict_bits, cas_fail;
	uint64_t bad_itype;
	unsigned want_itype, want_size;
	bool io_only;
	uint64_t not_io;
};

static unsigned popcount32(uint32_t v)
{
	unsigned n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

static void count_hook(void *ctx, const struct msr_event *ev)
{
	struct counts *c = ctx;

	c->code[ev->code < MSR_CODE_LIMIT ? ev->code : 0]++;
	switch (ev->code) {
	case MSR_LD_DATA:
		c->l2_data += ev->dsrc == MSR_DSRC_L2;
		if (c->io_only && !(ev->pa >> 39))
			c->not_io++;
		break;
	case MSR_ST_ACK: c->rmo_acks += ev->rmo; break;
	case MSR_ST_COMMIT:
		c->inv_bits += popcount32(ev->invvec);
		c->cas_fail += ev->bmask == 0;
		break;
	case MSR_EVICT: c->evict_bits += popcount32(ev->invvec); break;
	case MSR_LD_ISSUE: case MSR_ST_ISSUE:
		if (c->want_itype && (ev->itype != c->want_itype ||
				      (ev->code == MSR_LD_ISSUE &&
				       c->want_size != 0xff &&
				       ev->size != c->want_size)))
			c->bad_itype++;
		break;
	default: break;
	}
}

static void quiet_cfg(struct gen_config *cfg, unsigned mix_op, uint64_t n)
{
	gen_config_default(cfg);
	memset(cfg->mix, 0, sizeof(cfg->mix));
	cfg->mix[mix_op] = 1;
	cfg->pop_rate = 0;
	cfg->evict_rate = cfg->dma_rate = cfg->slam_rate = cfg->check_rate = 0;
	cfg->max_events = 0;
	cfg->max_instructions = n;
}

struct kind_param {
	unsigned mix;
	unsigned ld_issue, st_issue, ld_data, commits; /* per instruction */
	unsigned itype, size;                         /* 0xff: any size */
	bool fills, all_l2, rmo;
};

ParameterizedTestParameters(gen_counts, per_kind)
{
	static struct kind_param p[] = {
		{GEN_MIX_LD, 1, 0, 1, 0, MSR_IT_LOAD, 0xff, true, false, false},
		{GEN_MIX_LDD, 1, 0, 1, 0, MSR_IT_DOUBLE_LOAD, 3, true, false, false},
		{GEN_MIX_LDQ, 1, 0, 1, 0, MSR_IT_QUAD_LOAD, 4, true, true, false},
		{GEN_MIX_LDBLK, 1, 0, 4, 0, MSR_IT_BLOCK_LOAD, 6, false, true, false},
		{GEN_MIX_LDIO, 1, 0, 1, 0, MSR_IT_LOAD, 0xff, false, true, false},
		{GEN_MIX_ST, 0, 1, 0, 1, MSR_IT_STORE, 0xff, false, false, false},
		{GEN_MIX_STBLK, 0, 8, 0, 8, MSR_IT_BLOCK_STORE, 0xff, false, false, true},
		{GEN_MIX_STBI, 0, 1, 0, 1, MSR_IT_BLK_INIT_ST, 0xff, false, false, true},
		{GEN_MIX_CAS, 1, 1, 1, 1, MSR_IT_ATOMIC, 0xff, false, true, false},
		{GEN_MIX_SWAP, 1, 1, 1, 1, MSR_IT_ATOMIC, 2, false, true, false},
		{GEN_MIX_LDSTUB, 1, 1, 1, 1, MSR_IT_ATOMIC, 0, false, true, false},
		{GEN_MIX_MEMBAR, 0, 0, 0, 0, 0, 0, false, false, false},
		{GEN_MIX_NOP, 0, 0, 0, 0, 0, 0, false, false, false},
		{GEN_MIX_PREFETCH, 0, 0, 0, 0, 0, 0, false, false, false},
	};

	return cr_make_param_array(struct kind_param, p, sizeof(p) / sizeof(p[0]));
}

ParameterizedTest(struct kind_param *p, gen_counts, per_kind)
{
	const uint64_t n = 3000;
	struct gen_config cfg;
	struct gen_run r;
	struct counts *c = calloc(1, sizeof(*c));

	quiet_cfg(&cfg, p->mix, n);
	c->want_itype = p->itype;
	c->want_size = p->size;
	c->io_only = p->mix == GEN_MIX_LDIO;
	gen_run_full(&cfg, NULL, 0, NULL, NULL, count_hook, c, &r);
	gen_assert_clean(&r);
	cr_assert_eq(c->code[MSR_SSTEP], n, "%s", gen_mix_name(p->mix));
	cr_assert_eq(c->code[MSR_LD_ISSUE], n * p->ld_issue);
	cr_assert_eq(c->code[MSR_ST_ISSUE], n * p->st_issue);
	cr_assert_eq(c->code[MSR_LD_DATA], n * p->ld_data);
	cr_assert_eq(c->code[MSR_ST_COMMIT], n * p->commits);
	cr_assert_eq(c->code[MSR_ST_ACK], n * p->commits);
	cr_assert_eq(c->rmo_acks, p->rmo ? n * p->commits : 0);
	cr_assert_eq(c->code[MSR_ST_INV] + c->code[MSR_ST_UPDATE], c->inv_bits);
	cr_assert_eq(c->bad_itype, 0, "itype/size of issues");
	cr_assert_eq(c->not_io, 0);
	if (p->fills)
		cr_assert_eq(c->code[MSR_LD_FILL], c->l2_data);
	else
		cr_assert_eq(c->code[MSR_LD_FILL], 0);
	if (p->all_l2)
		cr_assert_eq(c->l2_data, c->code[MSR_LD_DATA]);
	if (p->mix == GEN_MIX_CAS)
		cr_assert(c->cas_fail > 0 && c->cas_fail < n, "cas: some fail, some succeed");
	else
		cr_assert_eq(c->cas_fail, 0);
	if (!p->ld_issue && !p->st_issue)
		cr_assert_eq(r.st.events, n, "only SSTEPs");
	oracle_free(r.o);
	free(c);
}

Test(gen_counts, evictions_pair_with_evict_invs)
{
	struct gen_config cfg;
	struct gen_run r;
	struct counts *c = calloc(1, sizeof(*c));

	gen_config_default(&cfg);
	cfg.max_events = 40000;
	cfg.evict_rate = 0.02;
	cfg.dma_rate = 0.01;
	gen_run_full(&cfg, NULL, 0, NULL, NULL, count_hook, c, &r);
	gen_assert_clean(&r);
	cr_assert_gt(c->code[MSR_EVICT_INV], 0);
	cr_assert_eq(c->code[MSR_EVICT_INV], c->evict_bits);
	cr_assert_eq(c->code[MSR_ST_INV] + c->code[MSR_ST_UPDATE], c->inv_bits);
	oracle_free(r.o);
	free(c);
}

Test(gen_counts, event_limit_is_honoured)
{
	struct gen_config cfg;
	struct gen_run r;

	gen_config_default(&cfg);
	cfg.max_events = 25000;
	gen_run_cfg(&cfg, NULL, 0, NULL, &r);
	gen_assert_clean(&r);
	cr_assert_geq(r.st.events, 25000);
	/* after the limit only the in-flight window drains */
	cr_assert_lt(r.st.events, 25000 + 4000, "events=%llu",
		     (unsigned long long)r.st.events);
	oracle_free(r.o);
}

Test(gen_counts, instruction_limit_is_exact)
{
	struct gen_config cfg;
	struct gen_run r;

	gen_config_default(&cfg);
	cfg.max_instructions = 7777;
	gen_run_cfg(&cfg, NULL, 0, NULL, &r);
	gen_assert_clean(&r);
	cr_assert_eq(r.st.instructions, 7777);
	cr_assert_eq(oracle_code_count(r.o, MSR_SSTEP), 7777);
	oracle_free(r.o);
}

static uint64_t run_hash(uint64_t seed, const char *litmus)
{
	struct gen_config cfg;
	struct gen_run r;
	uint64_t h;

	gen_config_default(&cfg);
	cfg.seed = seed;
	cfg.max_events = 20000;
	cfg.other_rate = 0.01;
	if (litmus)
		snprintf(cfg.litmus, sizeof(cfg.litmus), "%s", litmus);
	gen_run_cfg(&cfg, NULL, 0, NULL, &r);
	h = r.hash;
	oracle_free(r.o);
	return h;
}

Test(gen_determinism, same_seed_same_bytes)
{
	cr_assert_eq(run_hash(5, NULL), run_hash(5, NULL));
	cr_assert_eq(run_hash(9, "IRIW"), run_hash(9, "IRIW"));
}

Test(gen_determinism, other_seed_other_bytes)
{
	cr_assert_neq(run_hash(5, NULL), run_hash(6, NULL));
	cr_assert_neq(run_hash(5, "SB"), run_hash(6, "SB"));
}
