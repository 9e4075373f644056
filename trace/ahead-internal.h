/*
 * ahead-internal.h - a helper thread that produces blocks ahead of one
 * reader (the zstd source decompresses this way, so that decompression
 * overlaps the replay on a second core).
 *
 * Contract: the helper calls `produce` until it returns anything but
 * MSR_OK, filling a small ring of blocks; msr_ahead_take hands them out in
 * order, each valid until the next take, and then repeats the final status
 * (MSR_END or the error, with its message) on every later take. The helper
 * first calls `produce` once the reader takes its first block, so that a
 * block the reader got from the producer's memory itself, before the
 * start, stays intact until then. Only the helper calls `produce` once
 * started, so its state needs no locks. The helper runs at a lower
 * priority (nice +5) with every signal blocked; a signal that interrupts
 * the reader's wait makes take return MSR_AHEAD_EINTR (errno = EINTR), and
 * a later take goes on where it stopped. Memory: AHEAD_SLOTS blocks of
 * AHEAD_BLOCK bytes, whatever the length of the input.
 */
#ifndef MSR_AHEAD_INTERNAL_H
#define MSR_AHEAD_INTERNAL_H

#include "trace.h"

/* Two slots of 1 MiB: the helper wakes once a MiB and decodes a MiB at a
 * time, so it and the thread it shares a core with (check's TSO pass)
 * take turns less often and each keeps more of its caches. Four slots of
 * 256 KiB cost 3 to 5 % more CPU time on one machine, and four of 1 MiB
 * were no faster than two (docs/performance.md, "Decompression helpers in
 * 1 MiB slots"). */
#define AHEAD_SLOTS 2
#define AHEAD_BLOCK ((size_t)1 << 20)
#define MSR_AHEAD_EINTR 2 /* take: interrupted by a signal, nothing taken */

/* One block of at most `cap` bytes into dst (*len > 0 with MSR_OK), and the
 * input bytes consumed so far. */
typedef int (*msr_ahead_produce_fn)(void *ctx, uint8_t *dst, size_t cap,
				    size_t *len, uint64_t *bytes_in,
				    struct msr_error *err);

struct msr_ahead;

/* Start the helper; NULL when memory or a thread is not available (the
 * caller then produces inline; nothing was called). */
struct msr_ahead *msr_ahead_start(msr_ahead_produce_fn produce, void *ctx);

/* The next block: MSR_OK with *buf, *len and *bytes_in (as of the end of
 * that block), the final status, or MSR_AHEAD_EINTR. */
int msr_ahead_take(struct msr_ahead *a, const uint8_t **buf, size_t *len,
		   uint64_t *bytes_in, struct msr_error *err);

/*
 * Stop the helper and free everything (NULL is a no-op). Waits for a
 * `produce` call in progress to return: a read blocked on a pipe holds the
 * stop until its writer writes or closes.
 */
void msr_ahead_stop(struct msr_ahead *a);

#endif /* MSR_AHEAD_INTERNAL_H */
