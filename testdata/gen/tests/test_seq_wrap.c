/*
 * test_seq_wrap.c - the engine's ring sequence numbers past 2^32.
 *
 * The engine's rings (each strand's loads and stores, the MAB, the bank
 * FIFOs) number their entries with 64-bit sequence numbers but keep 32-bit
 * references to them in maps and chains, made whole relative to the
 * ring's tail; a replay reaches 2^32 entries of one ring only beyond 10^10
 * events. Here msync-gen traces (a random program, hot lines with every
 * kind of injected fault, deep store buffers; default limits and tight
 * ones) are replayed through the engine with the rings numbered from 1 and
 * again from just below 2^32 (msr_eng_seq_start), so that every ring
 * crosses 2^32 early. The operations, commits and violations the engine
 * emits must be the same, store-entry numbers (sseq, which are the store
 * ring's numbers) shifted by the difference and nothing else. The TSO
 * pass is left out: it takes sseq to count a strand's stores from 1, as
 * the engine's contract says, and keeps them in 64 bits.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine-internal.h"
#include "trace.h"

#define WRAP_EVENTS "100000"

/* What one replay produced, folded into a digest. */
struct wrap_run {
	uint64_t shift;  /* first seq - 1: subtracted from every sseq */
	uint64_t digest; /* FNV-1a over every field of every output */
	uint64_t ops, commits, violations;
};

static void mix(struct wrap_run *r, uint64_t x)
{
	for (unsigned i = 0; i < 8; i++) {
		r->digest ^= (x >> (8 * i)) & 0xff;
		r->digest *= 0x100000001b3ull;
	}
}

static void mix_bytes(struct wrap_run *r, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mix(r, b[i]);
}

/* An sseq as the replay from 1 would have numbered it (0 = none). */
static uint64_t unshift(const struct wrap_run *r, uint64_t sseq)
{
	return sseq ? sseq - r->shift : 0;
}

static void mix_ref(struct wrap_run *r, const struct msr_store_ref *f)
{
	mix(r, f->valid);
	mix(r, f->strand);
	mix(r, f->iseq);
	mix(r, unshift(r, f->sseq));
	mix(r, f->co);
	mix(r, f->ts);
	mix(r, f->event);
}

/* The message with each store entry it names ("store #N", "sseq=N")
 * renumbered as from 1. */
static void mix_message(struct wrap_run *r, const char *m)
{
	static const char *const keys[] = {"store #", "sseq="};
	const size_t nkeys = sizeof(keys) / sizeof(keys[0]);

	while (*m) {
		size_t k = 0, n = 0;

		for (; k < nkeys; k++) {
			n = strlen(keys[k]);
			if (strncmp(m, keys[k], n) == 0)
				break;
		}
		if (k < nkeys) {
			char *end;
			unsigned long long q = strtoull(m + n, &end, 10);

			cr_assert_neq(end, m + n, "%s without a number", keys[k]);
			mix(r, 0x5e5e + k);
			mix(r, unshift(r, q));
			m = end;
			continue;
		}
		mix(r, (uint8_t)*m++);
	}
}

static void on_violation(void *ctx, const struct msr_violation *v)
{
	struct wrap_run *r = ctx;

	r->violations++;
	mix(r, (uint64_t)v->kind);
	mix(r, (uint64_t)(int64_t)v->strand);
	mix(r, (uint64_t)(int64_t)v->core);
	mix(r, v->iseq);
	mix(r, v->pc);
	mix(r, v->pa);
	mix(r, v->size);
	mix(r, v->ts);
	mix(r, v->event);
	mix(r, v->offset);
	mix(r, v->has_values);
	mix(r, v->vlen);
	if (v->has_values && v->vlen <= sizeof(v->expected)) {
		mix_bytes(r, v->expected, v->vlen);
		mix_bytes(r, v->observed, v->vlen);
	}
	if (v->source)
		mix_message(r, v->source);
	mix_ref(r, &v->expected_from);
	mix_ref(r, &v->observed_from);
	mix_message(r, v->message);
	mix(r, v->nproof);
	for (unsigned i = 0; i < v->nproof && i < MSR_PROOF_MAX; i++) {
		const struct msr_proof_op *p = &v->proof[i];

		mix(r, p->strand);
		mix(r, p->op);
		mix(r, p->rel);
		mix(r, p->iseq);
		mix(r, p->pc);
		mix(r, p->pa);
		mix(r, p->value);
		mix(r, p->size);
		mix(r, p->ts);
		mix(r, p->event);
	}
}

static void on_commit(void *ctx, const struct msr_commit *c)
{
	struct wrap_run *r = ctx;

	r->commits++;
	mix(r, c->co);
	mix(r, c->strand);
	mix(r, unshift(r, c->sseq));
	mix(r, c->iseq);
	mix(r, c->pa8);
	mix(r, c->mask);
	mix_bytes(r, c->data, sizeof(c->data));
	mix(r, c->rmo);
	mix(r, c->atomic);
	mix(r, c->ts);
	mix(r, c->event);
}

static void on_op(void *ctx, const struct msr_op *op)
{
	struct wrap_run *r = ctx;

	r->ops++;
	mix(r, op->kind);
	mix(r, op->step_op);
	mix(r, op->strand);
	mix(r, op->rmo);
	mix(r, op->store_failed);
	mix(r, op->membar_mask);
	mix(r, op->iseq);
	mix(r, op->pc);
	mix(r, op->pa);
	mix(r, op->size);
	mix(r, op->ts);
	mix(r, op->event);
	mix(r, op->offset);
	mix(r, op->nblocks);
	for (unsigned b = 0; b < op->nblocks && b < MSR_OP_MAX_BLOCKS; b++) {
		const struct msr_op_block *k = &op->blk[b];

		mix(r, k->pa8);
		mix(r, k->mask);
		mix_bytes(r, k->load, sizeof(k->load));
		mix_bytes(r, k->store, sizeof(k->store));
		mix(r, unshift(r, k->sseq));
		mix(r, k->nrf);
		for (unsigned i = 0; i < k->nrf && i < 8; i++) {
			mix(r, k->rf[i].kind);
			mix(r, k->rf[i].mask);
			mix(r, k->rf[i].strand);
			mix(r, k->rf[i].placed);
			mix(r, unshift(r, k->rf[i].sseq));
			mix(r, k->rf[i].co);
		}
		mix(r, k->data_event);
	}
}

static int step_next(void *ctx, unsigned tnum, struct msr_step *step,
		     struct msr_error *err)
{
	return msr_steplog_next(ctx, tnum, step, err);
}

static int step_remaining(void *ctx, unsigned tnum, uint64_t *count,
			  struct msr_error *err)
{
	return msr_steplog_remaining(ctx, tnum, count, err);
}

/* Replay trace + steps with the rings numbered from `first`. */
static void replay(const char *trace, const char *steps,
		   const struct msr_config *cfg, uint64_t first,
		   struct wrap_run *r)
{
	char buf[512];
	struct msr_error err = MSR_ERROR_INIT;
	struct msr_trace_opts topts;
	struct msr_trace_reader *rd = NULL;
	struct msr_steplog *log = NULL;
	struct msr_engine *e = NULL;
	struct msr_engine_sink sink = {r, on_commit, on_op, on_violation};
	struct msr_step_source src;
	struct msr_event ev;
	int rc;

	memset(r, 0, sizeof(*r));
	r->shift = first - 1;
	r->digest = 0xcbf29ce484222325ull;
	msr_trace_opts_default(&topts);
	topts.strands = msr_config_strands(cfg);
	rc = msr_trace_reader_open(trace, &topts, &rd, &err);
	cr_assert_eq(rc, MSR_OK, "%s", msr_error_format(&err, buf, sizeof(buf)));
	rc = msr_steplog_open(steps, msr_config_strands(cfg), 0, &log, &err);
	cr_assert_eq(rc, MSR_OK, "%s", msr_error_format(&err, buf, sizeof(buf)));
	cr_assert_eq(msr_engine_create(cfg, &sink, &e, &err), MSR_OK);
	msr_eng_seq_start(e, first);
	src.ctx = log;
	src.next = step_next;
	src.remaining = step_remaining;
	msr_engine_set_steps(e, &src);
	while ((rc = msr_trace_reader_next(rd, &ev, &err)) == MSR_OK) {
		rc = msr_engine_apply(e, &ev, &err);
		cr_assert_geq(rc, 0, "%s", msr_error_format(&err, buf, sizeof(buf)));
	}
	cr_assert_eq(rc, MSR_END, "%s", msr_error_format(&err, buf, sizeof(buf)));
	cr_assert_geq(msr_engine_finish(e, true, &err), 0);
	msr_engine_destroy(e);
	msr_steplog_close(log);
	msr_trace_reader_close(rd);
}

struct wrap_case {
	char name[16];
	char gen[400];      /* msync-gen options besides the files */
	bool tight;         /* small in-flight and MAB limits */
	bool violations;    /* the trace must give some */
};

static struct wrap_case cases[] = {
	{"random", "--seed 5 --other-rate 0.01", false, false},
	{"faults", "--seed 6 --hot-lines 4 --hot-rate 0.9 "
		   "--inject stale-l1:0.002 --inject store-order:0.002 "
		   "--inject bad-bypass:0.002 --inject store-data:0.002 "
		   "--inject load-value:0.002 --inject lost-inv:0.002 "
		   "--inject atomic-break:0.002 --inject membar:0.002",
	 false, true},
	{"faults-tight", "--seed 6 --hot-lines 4 --hot-rate 0.9 "
			 "--inject lost-inv:0.002 --inject stale-l1:0.002",
	 true, true},
	{"deep", "--seed 7 --stb-depth 32 --hot-rate 0.2 "
		 "--mix ld=20,st=70,stblk=4,stbi=2,nop=4", false, false},
};

ParameterizedTestParameters(seq_wrap, same_outputs)
{
	return cr_make_param_array(struct wrap_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct wrap_case *c, seq_wrap, same_outputs)
{
	static const uint64_t firsts[] = {
		(1ull << 32) - 1,    /* the second entry of every ring is 2^32 */
		(1ull << 32) - 13,
		(1ull << 32) - 100,  /* entries live across the wrap */
		(1ull << 33) - 7,    /* a second wrap of the low 32 bits */
	};
	const char *root = getenv("MSR_BUILD_ROOT");
	char dir[128], cmd[2048], trace[200], steps[200];
	struct msr_config cfg;
	struct wrap_run ref, run;
	int st;

	cr_assert_not_null(root, "MSR_BUILD_ROOT not set");
	snprintf(dir, sizeof(dir), "%s/msr-seq-wrap-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	cr_assert_not_null(mkdtemp(dir), "cannot create %s", dir);
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	snprintf(steps, sizeof(steps), "%s/t.steps", dir);
	snprintf(cmd, sizeof(cmd),
		 "'%s/testdata/gen/msync-gen' -q --events " WRAP_EVENTS
		 " %s -o '%s' --steps '%s'", root, c->gen, trace, steps);
	st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed", cmd);
	msr_config_default(&cfg);
	if (c->tight) {
		cfg.max_inflight = 8;
		cfg.mab_window = 64;
	}
	replay(trace, steps, &cfg, 1, &ref);
	cr_assert_gt(ref.ops, 10000, "%s: only %llu operations", c->name,
		     (unsigned long long)ref.ops);
	cr_assert_gt(ref.commits, 1000, "%s: only %llu commits", c->name,
		     (unsigned long long)ref.commits);
	if (c->violations)
		cr_assert_gt(ref.violations, 0, "%s: no violations", c->name);
	else
		cr_assert_eq(ref.violations, 0, "%s: %llu violations", c->name,
			     (unsigned long long)ref.violations);
	for (size_t i = 0; i < sizeof(firsts) / sizeof(firsts[0]); i++) {
		replay(trace, steps, &cfg, firsts[i], &run);
		cr_expect_eq(run.ops, ref.ops, "%s from %llu: %llu ops, not %llu",
			     c->name, (unsigned long long)firsts[i],
			     (unsigned long long)run.ops,
			     (unsigned long long)ref.ops);
		cr_expect_eq(run.commits, ref.commits, "%s from %llu: %llu commits",
			     c->name, (unsigned long long)firsts[i],
			     (unsigned long long)run.commits);
		cr_expect_eq(run.violations, ref.violations,
			     "%s from %llu: %llu violations, not %llu", c->name,
			     (unsigned long long)firsts[i],
			     (unsigned long long)run.violations,
			     (unsigned long long)ref.violations);
		cr_expect_eq(run.digest, ref.digest,
			     "%s from %llu: the outputs differ", c->name,
			     (unsigned long long)firsts[i]);
	}
	unlink(trace);
	unlink(steps);
	rmdir(dir);
}
