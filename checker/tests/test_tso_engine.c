/*
 * test_tso_engine.c - the TSO checker behind the real engine: RTL event
 * traces (canonical text) and step logs under checker/tests/traces/ are
 * replayed through msr_engine with its commits and ops fed to msr_tso.
 * Forbidden outcomes are realised the way a T2 bug would produce them (a
 * load hitting a stale L1 line after a later-committed store was already
 * visible to the strand, a load overtaking a membar, commits out of order,
 * a store slipping into an atomic); their correct-design twins must come
 * out clean.
 */
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "checker.h"

#define E_MAXV 32

struct e_run {
	struct msr_tso *tso;
	unsigned nv;
	struct msr_violation v[E_MAXV];
	unsigned per_kind[MSR_V_COUNT];
};

static void e_viol(void *ctx, const struct msr_violation *v)
{
	struct e_run *r = ctx;

	if (r->nv < E_MAXV)
		r->v[r->nv] = *v;
	r->nv++;
	if ((unsigned)v->kind < MSR_V_COUNT)
		r->per_kind[v->kind]++;
}

static void e_commit(void *ctx, const struct msr_commit *c)
{
	msr_tso_add_commit(((struct e_run *)ctx)->tso, c);
}

static void e_op(void *ctx, const struct msr_op *op)
{
	msr_tso_add_op(((struct e_run *)ctx)->tso, op);
}

static int e_step_next(void *ctx, unsigned tnum, struct msr_step *step,
		       struct msr_error *err)
{
	return msr_steplog_next(ctx, tnum, step, err);
}

static int e_step_remaining(void *ctx, unsigned tnum, uint64_t *count,
			    struct msr_error *err)
{
	return msr_steplog_remaining(ctx, tnum, count, err);
}

/* Replay dir/name.trace with dir/name.steps; all violations into *r. */
static void e_replay(const char *dir, const char *name, struct e_run *r)
{
	char tp[512], sp[512], buf[512];
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_trace_opts topts;
	struct msr_trace_reader *rd = NULL;
	struct msr_steplog *log = NULL;
	struct msr_engine *e = NULL;
	struct msr_engine_sink sink = {r, e_commit, e_op, e_viol};
	struct msr_engine_sink tsink = {r, NULL, NULL, e_viol};
	struct msr_step_source src;
	struct msr_config cfg;
	struct msr_event ev;
	int rc;

	memset(r, 0, sizeof(*r));
	snprintf(tp, sizeof(tp), "%.400s/%.80s.trace", dir, name);
	snprintf(sp, sizeof(sp), "%.400s/%.80s.steps", dir, name);
	msr_config_default(&cfg);
	msr_trace_opts_default(&topts);
	topts.strands = msr_config_strands(&cfg);
	cr_assert_eq(msr_tso_create(&cfg, &tsink, &r->tso, &err), MSR_OK);
	rc = msr_trace_reader_open(tp, &topts, &rd, &err);
	cr_assert_eq(rc, MSR_OK, "%s", msr_error_format(&err, buf, sizeof(buf)));
	rc = msr_steplog_open(sp, msr_config_strands(&cfg), 0, &log, &err);
	cr_assert_eq(rc, MSR_OK, "%s", msr_error_format(&err, buf, sizeof(buf)));
	cr_assert_eq(msr_engine_create(&cfg, &sink, &e, &err), MSR_OK);
	src.ctx = log;
	src.next = e_step_next;
	src.remaining = e_step_remaining;
	msr_engine_set_steps(e, &src);
	while ((rc = msr_trace_reader_next(rd, &ev, &err)) == MSR_OK) {
		rc = msr_engine_apply(e, &ev, &err);
		cr_assert_geq(rc, 0, "%s", msr_error_format(&err, buf, sizeof(buf)));
	}
	cr_assert_eq(rc, MSR_END, "%s", msr_error_format(&err, buf, sizeof(buf)));
	cr_assert_geq(msr_engine_finish(e, true, &err), 0);
	cr_assert_eq(msr_tso_finish(r->tso, &err), MSR_OK);
	msr_engine_destroy(e);
	msr_steplog_close(log);
	msr_trace_reader_close(rd);
	msr_tso_destroy(r->tso);
	r->tso = NULL;
}

static unsigned tso_count(const struct e_run *r)
{
	unsigned k, n = 0;

	for (k = MSR_V_TSO_STORE_ORDER; k <= MSR_V_TSO_VALUE; k++)
		n += r->per_kind[k];
	return n;
}

static const char *src_root(void)
{
	const char *s = getenv("MSR_SOURCE_ROOT");

	return s ? s : ".";
}

struct e_case {
	char dir[16];   /* "tso": checker/tests/traces, "engine": testdata */
	char name[40];
	int kind;       /* the tso-* kind expected, -1 = clean */
	unsigned other; /* engine (non-tso) violations expected */
};

static struct e_case cases[] = {
	{"tso", "stale_l1_mp", MSR_V_TSO_LOAD_ORDER, 0},
	{"tso", "stale_l1_mp_ok", -1, 0},
	{"tso", "stale_l1_legal", -1, 0},
	{"tso", "sb_membar_bad", MSR_V_TSO_MEMBAR, 0},
	{"tso", "sb_membar_ok", -1, 0},
	{"tso", "atomic_split", MSR_V_TSO_ATOMICITY, 0},
	{"tso", "atomic_ok", -1, 0},
	{"tso", "lb_early_commit", MSR_V_TSO_LOAD_STORE, 0},
	{"engine", "tso_store_order", MSR_V_TSO_STORE_ORDER, 0},
	{"engine", "atomic_cas", -1, 0},
	{"engine", "blkinit_zero", -1, 0},
	{"engine", "clean_load_store", -1, 0},
	{"engine", "commit_waits_for_inv", -1, 0},
	{"engine", "dma_before_evict", -1, 0},
	{"engine", "evict_bank_pairing", -1, 0},
	{"engine", "io_load_out_of_order", -1, 0},
	{"engine", "membar_storeload", -1, 0},
	{"engine", "pop_groups", -1, 0},
	{"engine", "rmo_block_store", -1, 0},
	{"engine", "stale_l1_legal", -1, 0},
	{"engine", "stb_bypass", -1, 0},
	{"engine", "wide_loads", -1, 0},
};

ParameterizedTestParameters(tso_engine, traces)
{
	return cr_make_param_array(struct e_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct e_case *c, tso_engine, traces)
{
	struct e_run *r = calloc(1, sizeof(*r));
	char dir[512];
	unsigned k, tso;

	cr_assert_not_null(r);
	snprintf(dir, sizeof(dir), "%.400s/%s", src_root(),
		 strcmp(c->dir, "tso") ? "testdata/engine"
				       : "checker/tests/traces");
	e_replay(dir, c->name, r);
	tso = tso_count(r);
	for (k = 0; k < r->nv && k < E_MAXV; k++)
		cr_log_info("%s: kind %d: %s", c->name, r->v[k].kind,
			    r->v[k].message);
	cr_expect_eq(r->nv - tso, c->other, "%s: %u engine violations",
		     c->name, r->nv - tso);
	if (c->kind < 0) {
		cr_expect_eq(tso, 0, "%s: %u tso violations, first: %s",
			     c->name, tso, r->nv ? r->v[0].message : "");
	} else {
		cr_expect_eq(tso, 1, "%s: %u tso violations", c->name, tso);
		cr_expect_eq(r->per_kind[c->kind], 1, "%s: not of kind %d",
			     c->name, c->kind);
	}
	free(r);
}
