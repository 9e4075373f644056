/*
 * check-pipe-internal.h - the check wiring's second thread: what the engine
 * emits (each trace event, executed operation, commit and engine violation)
 * is queued in emission order and handed, in that same order, to a sink
 * that a helper thread runs: the TSO pass, the event history and the
 * report. The sink therefore sees exactly the call sequence of the
 * single-threaded wiring, and the report is the same.
 *
 * Nothing flows back: a caller that needs an answer from the sink while it
 * replays (--fail-fast) must not use the pipe. The queue is a ring of
 * CPIPE_CHUNKS chunks of CPIPE_CHUNK bytes (the replay waits when the
 * helper is that far behind); records copy only the bytes in use.
 */
#ifndef MSR_CHECK_PIPE_INTERNAL_H
#define MSR_CHECK_PIPE_INTERNAL_H

#include "engine.h"

/*
 * The helper is usually the faster stage, so it sleeps after each chunk and
 * every chunk handed over wakes it: large chunks keep those wake-ups rare
 * (about 560 for 10M events at 1 MiB).
 */
#define CPIPE_CHUNKS 8
#define CPIPE_CHUNK ((size_t)1 << 20)

/* Called on the helper thread, in emission order. */
struct cpipe_sink {
	void *ctx;
	void (*event)(void *ctx, const struct msr_event *ev);
	void (*commit)(void *ctx, const struct msr_commit *c);
	void (*op)(void *ctx, const struct msr_op *op);
	void (*violation)(void *ctx, const struct msr_violation *v);
};

struct cpipe;

/* Start the helper thread (all signals blocked there); NULL when memory or
 * a thread is not available: the caller then calls the sink itself. */
struct cpipe *cpipe_start(const struct cpipe_sink *sink);

void cpipe_event(struct cpipe *p, const struct msr_event *ev);
void cpipe_commit(struct cpipe *p, const struct msr_commit *c);
void cpipe_op(struct cpipe *p, const struct msr_op *op);
void cpipe_violation(struct cpipe *p, const struct msr_violation *v);

/* Wait until the sink has seen everything queued, stop the helper and free
 * the pipe (NULL is a no-op). */
void cpipe_finish(struct cpipe *p);

#endif /* MSR_CHECK_PIPE_INTERNAL_H */
