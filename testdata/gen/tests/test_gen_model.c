/*
 * test_gen_model.c - the generated traces follow the memory-system rules:
 * an independent replay (oracle.c) finds every load value in the step log
 * equal to what the capture rules give, every store matching, and no
 * ordering rule broken, for random mixes, stressed mixes and litmus tests.
 */
#include "gen_test_util.h"

Test(gen_model, default_random_run_is_consistent)
{
	struct gen_config cfg;
	struct gen_run r;

	gen_config_default(&cfg);
	cfg.max_events = 60000;
	gen_run_cfg(&cfg, NULL, 0, NULL, &r);
	gen_assert_clean(&r);
	cr_assert_eq(oracle_events(r.o), r.st.events);
	cr_assert_eq(oracle_steps(r.o), oracle_code_count(r.o, MSR_SSTEP));
	cr_assert_gt(r.st.l1_hits, 0);
	cr_assert_gt(r.st.stb_bypasses, 0);
	cr_assert_gt(r.st.stale_hits, 0, "no L1 hit raced an invalidation");
	cr_assert_gt(oracle_code_count(r.o, MSR_EVICT_INV), 0);
	cr_assert_gt(oracle_code_count(r.o, MSR_ST_UPDATE), 0);
	oracle_free(r.o);
}

Test(gen_model, stressed_mix_is_consistent)
{
	struct gen_config cfg;
	struct gen_run r;

	gen_config_default(&cfg);
	cfg.seed = 77;
	cfg.max_events = 60000;
	cfg.cores = 4;
	cfg.threads = 4;
	cfg.stb_depth = 2;
	cfg.hot_lines = 4;
	cfg.hot_rate = 0.8;
	cfg.footprint = 4096;
	cfg.other_rate = 0.05;
	cfg.pop_rate = 0.1;
	cfg.evict_rate = 0.02;
	cfg.dma_rate = 0.01;
	cfg.slam_rate = 0.01;
	cfg.check_rate = 0.01;
	cfg.l2_absent = 0.5;
	for (unsigned i = 0; i < GEN_MIX_COUNT; i++)
		cfg.mix[i] = 5;
	gen_run_cfg(&cfg, NULL, 0, NULL, &r);
	gen_assert_clean(&r);
	cr_assert_gt(oracle_code_count(r.o, MSR_DMA_ST), 0);
	cr_assert_gt(oracle_code_count(r.o, MSR_MEM_SLAM), 0);
	cr_assert_gt(oracle_code_count(r.o, MSR_MEM_CHECK), 0);
	cr_assert_gt(oracle_code_count(r.o, MSR_LD_POP), 0);
	cr_assert_gt(oracle_code_count(r.o, MSR_ST_POP), 0);
	cr_assert_gt(r.st.others, 0);
	cr_assert_gt(oracle_code_count(r.o, MSR_REGDELTA), 0);
	cr_assert_eq(oracle_code_count(r.o, MSR_REGDELTA_END),
		     r.st.by_code[MSR_REGDELTA_END]);
	oracle_free(r.o);
}

Test(gen_model, many_seeds_are_consistent)
{
	for (uint64_t seed = 100; seed < 112; seed++) {
		struct gen_config cfg;
		struct gen_run r;

		gen_config_default(&cfg);
		cfg.seed = seed;
		cfg.max_events = 8000;
		cfg.cores = 2 + (unsigned)(seed % 3);
		cfg.threads = 1 + (unsigned)(seed % 4);
		cfg.hot_lines = 2;
		gen_run_cfg(&cfg, NULL, 0, NULL, &r);
		gen_assert_clean(&r);
		oracle_free(r.o);
	}
}

/* ---------------------------------------------------------------- */
/* litmus                                                            */
/* ---------------------------------------------------------------- */

struct lit_watch {
	uint64_t last[256][2];  /* per strand: newest iteration seen of x, y */
	uint64_t mp_bad, corr_bad, loads;
	int mp_reader;          /* strand reading y then x (MP role 1) */
	uint64_t pending_y;     /* MP: iteration read from y */
	bool have_y;
};

static uint64_t iter_of(const uint8_t *v)
{
	uint64_t x = 0;

	for (int i = 0; i < 8; i++)
		x = (x << 8) | v[i];
	/* litmus stores write (iteration + 1) << 8 | tag; initial memory is
	 * random, which counts as iteration 0 */
	return (x >> 56) == 0 ? x >> 8 : 0;
}

static void lit_hook(void *ctx, const struct gen_step *st)
{
	struct lit_watch *w = ctx;
	unsigned var;
	uint64_t it;

	if (st->op != MSR_STEP_LD)
		return;
	var = (unsigned)((st->pa - GEN_POOL_BASE) / 64);
	if (var > 1)
		return;
	it = iter_of(st->ld);
	w->loads++;
	if (it < w->last[st->tnum][var])
	{
		w->corr_bad++; /* a strand read an older value after a newer */
		if (getenv("MSR_ORACLE_DEBUG"))
			fprintf(stderr, "CORR strand=%u var=%u it=%llu last=%llu\n",
				st->tnum, var, (unsigned long long)it,
				(unsigned long long)w->last[st->tnum][var]);
	}
	w->last[st->tnum][var] = it;
	if ((int)st->tnum == w->mp_reader) {
		if (var == 1) {
			w->pending_y = it;
			w->have_y = true;
		} else if (w->have_y) {
			if (it < w->pending_y)
				w->mp_bad++; /* saw y of iteration i, x older */
			w->have_y = false;
		}
	}
}

struct lit_param {
	char name[8];
};

ParameterizedTestParameters(gen_litmus, consistent)
{
	static struct lit_param p[] = {
		{"SB"}, {"MP"}, {"LB"}, {"IRIW"}, {"WRC"}, {"2+2W"}, {"R"}, {"S"},
	};

	return cr_make_param_array(struct lit_param, p, sizeof(p) / sizeof(p[0]));
}

ParameterizedTest(struct lit_param *p, gen_litmus, consistent)
{
	struct gen_config cfg;
	struct gen_run r;
	struct lit_watch *w = calloc(1, sizeof(*w));
	struct gen_program *prog;
	struct msr_error err = MSR_ERROR_INIT;

	gen_config_default(&cfg);
	snprintf(cfg.litmus, sizeof(cfg.litmus), "%s", p->name);
	cfg.max_events = 20000;
	cfg.dma_rate = 0; /* DMA writes would reset the litmus variables */
	cfg.slam_rate = 0;
	w->mp_reader = -1;
	/* find the MP reader role: the active strand of role 1 */
	cr_assert_eq(gen_program_create(&cfg, &prog, &err), MSR_OK);
	for (unsigned s = 0, n = 0; s < 64; s++)
		if (gen_program_active(prog, s) && n++ == 1 &&
		    !strcmp(p->name, "MP"))
			w->mp_reader = (int)s;
	gen_program_destroy(prog);
	gen_run_full(&cfg, NULL, 0, NULL, lit_hook, NULL, w, &r);
	gen_assert_clean(&r);
	cr_assert_gt(r.st.instructions, 100);
	if (strcmp(p->name, "2+2W"))
		cr_assert_gt(w->loads, 0);
	/* iterations order the values only where each variable has a single
	 * writer; with two writers a later iteration may commit first */
	if (strcmp(p->name, "2+2W") && strcmp(p->name, "R") && strcmp(p->name, "S"))
		cr_assert_eq(w->corr_bad, 0, "%s: a strand read an older value "
			     "after a newer one", p->name);
	cr_assert_eq(w->mp_bad, 0, "MP: new y then old x");
	oracle_free(r.o);
	free(w);
}

Test(gen_model, contended_seeds_are_consistent)
{
	for (uint64_t seed = 200; seed < 206; seed++) {
		struct gen_config cfg;
		struct gen_run r;

		gen_config_default(&cfg);
		cfg.seed = seed;
		cfg.max_events = 40000;
		cfg.hot_lines = 8;
		cfg.hot_rate = 0.7;
		cfg.l2_absent = 0.3;
		cfg.evict_rate = 0.01;
		cfg.dma_rate = 0.002;
		cfg.pop_rate = 0.05;
		cfg.mix[GEN_MIX_STBI] = 8;
		cfg.mix[GEN_MIX_STBLK] = 6;
		cfg.mix[GEN_MIX_LDQ] = 4;
		gen_run_cfg(&cfg, NULL, 0, NULL, &r);
		gen_assert_clean(&r);
		oracle_free(r.o);
	}
}
