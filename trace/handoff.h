/*
 * handoff.h - the start, the waits and the end of a helper thread that
 * passes buffers to or from the thread that started it.
 *
 * Contract: two counting semaphores order the buffers between the two
 * threads, `filled` (buffers ready for the consumer, 0 at the start) and
 * `space` (buffers free for the producer, as many as the caller says). The
 * helper starts with every signal blocked, so signals stay with the
 * starting thread and can interrupt its waits. Shared by the decompression
 * helpers (ahead.c) and by check's second thread; keeps no global state.
 */
#ifndef MSR_HANDOFF_H
#define MSR_HANDOFF_H

#include <pthread.h>
#include <semaphore.h>

struct msr_handoff {
	pthread_t thread;
	sem_t filled, space;
};

/* Set up both semaphores and start `run(arg)` on a new thread named
 * `name` (at most 15 bytes: what top -H, perf and gdb show). 0, or -1
 * with nothing left to undo. */
int msr_handoff_start(struct msr_handoff *h, const char *name, unsigned space,
		      void *(*run)(void *), void *arg);

/* sem_wait that goes on waiting when a signal interrupts it. */
void msr_handoff_wait(sem_t *s);

/* Wait for the helper to return, then release the semaphores. */
void msr_handoff_join(struct msr_handoff *h);

#endif /* MSR_HANDOFF_H */
