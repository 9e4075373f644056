/*
 * gen_test_util.h - run the msync-gen model in process with the oracle as
 * its sink, for the unit tests.
 */
#ifndef MSR_GEN_TEST_UTIL_H
#define MSR_GEN_TEST_UTIL_H

#include "oracle.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

struct gen_run {
	struct oracle *o;
	struct gen_model_stats st;
	uint64_t injected;
	uint64_t hash; /* FNV-1a over encoded events and step lines */
};

static inline void hash_bytes(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 0x100000001b3ull;
}

struct tee {
	struct oracle *o;
	uint64_t *hash;
};

static inline int tee_event(void *ctx, const struct msr_event *ev,
			    struct msr_error *err)
{
	struct tee *t = ctx;
	uint8_t buf[MSR_EVENT_BIN_MAX];

	hash_bytes(t->hash, buf, msr_event_encode_bin(ev, buf));
	return oracle_event(t->o, ev, err);
}

static inline int tee_step(void *ctx, const struct gen_step *st,
			   struct msr_error *err)
{
	struct tee *t = ctx;
	char line[GEN_STEP_LINE_MAX];

	hash_bytes(t->hash, line, gen_step_format(st, line, sizeof(line)));
	return oracle_step(t->o, st, err);
}

/* Run with `cfg`, optional injections and sidecar; the oracle is kept in
 * r->o (caller frees with oracle_free). */
static inline void gen_run_full(const struct gen_config *cfg,
				const struct gen_inject *inj, unsigned ninj,
				const char *expect,
				void (*step_hook)(void *, const struct gen_step *),
				void (*ev_hook)(void *, const struct msr_event *),
				void *hook_ctx, struct gen_run *r)
{
	struct msr_error err = MSR_ERROR_INIT;
	struct gen_program *p = NULL;
	struct gen_faults *f = NULL;
	struct gen_model *m = NULL;
	struct tee t;
	struct gen_sink sink = {&t, tee_event, tee_step};
	char buf[512];
	int rc;

	memset(r, 0, sizeof(*r));
	r->hash = 0xcbf29ce484222325ull;
	r->o = oracle_new(cfg);
	t.o = r->o;
	if (step_hook)
		oracle_set_step_hook(r->o, step_hook, hook_ctx);
	if (ev_hook)
		oracle_set_event_hook(r->o, ev_hook, hook_ctx);
	t.hash = &r->hash;
	rc = gen_program_create(cfg, &p, &err);
	cr_assert_eq(rc, MSR_OK, "%s", msr_error_format(&err, buf, sizeof(buf)));
	if (ninj || expect) {
		rc = gen_faults_create(inj, ninj, expect, cfg, &f, &err);
		cr_assert_eq(rc, MSR_OK, "%s", msr_error_format(&err, buf, sizeof(buf)));
	}
	rc = gen_model_create(cfg, p, f, &sink, &m, &err);
	cr_assert_eq(rc, MSR_OK, "%s", msr_error_format(&err, buf, sizeof(buf)));
	oracle_init_memory(r->o, m);
	rc = gen_model_run(m, &err);
	cr_assert_eq(rc, MSR_OK, "%s", msr_error_format(&err, buf, sizeof(buf)));
	oracle_finish(r->o);
	gen_model_get_stats(m, &r->st);
	if (f) {
		r->injected = gen_faults_injected(f);
		rc = gen_faults_close(f, &err);
		cr_assert_eq(rc, MSR_OK, "%s", msr_error_format(&err, buf, sizeof(buf)));
	}
	gen_model_destroy(m);
	gen_program_destroy(p);
}

static inline void gen_run_cfg(const struct gen_config *cfg,
			       const struct gen_inject *inj, unsigned ninj,
			       const char *expect, struct gen_run *r)
{
	gen_run_full(cfg, inj, ninj, expect, NULL, NULL, NULL, r);
}

static inline void gen_assert_clean(const struct gen_run *r)
{
	const struct oracle_finding *f = oracle_finding_at(r->o, 0);

	cr_assert_eq(oracle_nfindings(r->o), 0,
		     "%u findings, first: %s strand=%u iseq=%llu pa=0x%llx event=%llu",
		     oracle_nfindings(r->o), f ? f->kind : "-", f ? f->strand : 0,
		     f ? (unsigned long long)f->iseq : 0ull,
		     f ? (unsigned long long)f->pa : 0ull,
		     f ? (unsigned long long)f->event : 0ull);
}

#endif /* MSR_GEN_TEST_UTIL_H */
