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

/*
 * Input contract (what msr_tso_add_commit / msr_tso_add_op expect):
 *   - commits arrive with strictly increasing `co` (gaps allowed; a commit
 *     whose co does not grow is ignored); `sseq` names the strand's store
 *     entry (0 = bound to none: placed in co, never ordered);
 *   - ops arrive in program order per strand (any interleaving across
 *     strands); each store/atomic block carries its entry's `sseq`;
 *   - an op may come before or after the commits it depends on (its own
 *     commit, the commits its bytes read): ops that need a commit not seen
 *     yet wait, and are decided with what is known at msr_tso_finish;
 *   - rf: COMMIT names co (and strand/sseq), BYPASS the strand's own entry
 *     by sseq, INIT the initial/learned value, DMA a DMA_ST/MEM_SLAM write
 *     (constrained only with `placed`, see engine.h).
 * Violations go to `sink->violation` (the other callbacks are unused); the
 * violation's `offset` is 0 (ops carry no byte offset).
 */
int msr_tso_create(const struct msr_config *cfg,
		   const struct msr_engine_sink *sink, struct msr_tso **out,
		   struct msr_error *err);

void msr_tso_add_commit(struct msr_tso *t, const struct msr_commit *c);
void msr_tso_add_op(struct msr_tso *t, const struct msr_op *op);

/*
 * A hint, with no effect on the result, for a caller that holds a queue of
 * input and can look ahead in it: a commit or an operation of `strand` on
 * block `pa8` comes a few calls from now. The pass asks the memory system
 * for the map slots it will probe for it, so that those misses (the
 * largest part of its time on large footprints) overlap the work before.
 */
void msr_tso_warm(struct msr_tso *t, unsigned strand, uint64_t pa8);

/* End of the execution: resolve everything still pending. */
int msr_tso_finish(struct msr_tso *t, struct msr_error *err);

void msr_tso_destroy(struct msr_tso *t);

#ifdef __cplusplus
}
#endif

#endif /* MSR_CHECKER_H */
