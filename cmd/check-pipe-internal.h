/*
 * check-pipe-internal.h - the check wiring's second thread: what the engine
 * emits (executed operations, commits and engine violations) is queued in
 * emission order and handed, in that same order, to a sink that a helper
 * thread runs: the TSO pass and the report. The sink therefore sees
 * exactly the call sequence of the single-threaded wiring, and the report
 * is the same.
 *
 * Trace events are not copied: the replay adds them to a shared event
 * history (msr_history_share) and counts them here (cpipe_event). Each
 * record carries that count, and before a record the sink learns how many
 * events were added by then (`events`), so it can show them to its
 * queries at the same point as the single-threaded wiring does. The count
 * also bounds how far the replay runs ahead of the sink: at most `lag`
 * events past what the sink has been told and finished.
 *
 * Nothing else flows back: a caller that needs an answer from the sink
 * while it replays (--fail-fast) must not use the pipe. The queue is a
 * ring of CPIPE_CHUNKS chunks of CPIPE_CHUNK bytes (the replay waits when
 * the helper is that far behind); records copy only the bytes in use. A
 * chunk reaches the helper when full or once it covers a quarter of `lag`
 * events, so the helper can work on the events the replay waits for.
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
	/* the replay has added the first `upto` events (called when it grew) */
	void (*events)(void *ctx, uint64_t upto);
	void (*commit)(void *ctx, const struct msr_commit *c);
	void (*op)(void *ctx, const struct msr_op *op);
	void (*violation)(void *ctx, const struct msr_violation *v);
	/* optional: a commit or op of `strand` on block `pa8` is a few
	 * records away (a hint: see msr_tso_warm) */
	void (*warm)(void *ctx, unsigned strand, uint64_t pa8);
};

struct cpipe;

/* Start the helper thread (all signals blocked there), the replay at most
 * `lag` (> 0) events ahead of the sink; NULL when memory or a thread is not
 * available: the caller then calls the sink itself. */
struct cpipe *cpipe_start(const struct cpipe_sink *sink, uint64_t lag);

/* The start of every struct cpipe, so that counting an event is inline:
 * the replay counts one for each event it reads. */
struct cpipe_count {
	uint64_t events;   /* events counted */
	uint64_t check_at; /* cpipe_event_check is due at this count */
};

/* Hand a chunk over or wait for the sink, as the count requires. */
void cpipe_event_check(struct cpipe *p);

/* The replay is about to add its next event: returns once the sink is
 * close enough, having counted it. */
static inline void cpipe_event(struct cpipe *p)
{
	struct cpipe_count *c = (struct cpipe_count *)(void *)p;

	if (c->events >= c->check_at)
		cpipe_event_check(p);
	c->events++;
}
void cpipe_commit(struct cpipe *p, const struct msr_commit *c);
void cpipe_op(struct cpipe *p, const struct msr_op *op);
void cpipe_violation(struct cpipe *p, const struct msr_violation *v);

/* Wait until the sink has seen everything queued, stop the helper and free
 * the pipe (NULL is a no-op). */
void cpipe_finish(struct cpipe *p);

#endif /* MSR_CHECK_PIPE_INTERNAL_H */
