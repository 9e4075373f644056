/*
 * checker.h - the TSO checker pass: executed operations in, violations out.
 *
 * Contract: consumes the engine's `struct msr_commit` stream (global commit
 * order = co) and `struct msr_op` stream (program order per strand), in the
 * order the engine emits them, and decides incrementally whether the
 * execution is allowed by SPARC TSO (semantics.md section 5). Each broken
 * axiom instance is reported once as a `struct msr_violation` of a tso-*
 * kind with a proof cycle. It never reads traces or step logs itself, keeps
 * no global state, and holds memory bounded by the in-flight window.
 */
#ifndef MSR_CHECKER_H
#define MSR_CHECKER_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

struct msr_tso;

/* Violations go to `sink->violation` (the other callbacks are unused). */
int msr_tso_create(const struct msr_config *cfg,
		   const struct msr_engine_sink *sink, struct msr_tso **out,
		   struct msr_error *err);

void msr_tso_add_commit(struct msr_tso *t, const struct msr_commit *c);
void msr_tso_add_op(struct msr_tso *t, const struct msr_op *op);

/* End of the execution: resolve everything still pending. */
int msr_tso_finish(struct msr_tso *t, struct msr_error *err);

void msr_tso_destroy(struct msr_tso *t);

#ifdef __cplusplus
}
#endif

#endif /* MSR_CHECKER_H */
