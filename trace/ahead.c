/*
 * ahead.c - a helper thread producing blocks ahead of one reader.
 *
 * Two counting semaphores hand slots back and forth: `filled` counts blocks
 * ready for the reader, `space` slots free for the helper. Each side keeps
 * its own ring index; the semaphores order the slot contents between them.
 * Semaphores rather than a condition variable so that a signal interrupts
 * the reader's wait (sem_wait fails with EINTR), as it would a read(2).
 */
#include "ahead-internal.h"

#include "handoff.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define AHEAD_NICE 5

struct ahead_slot {
	uint8_t *buf;
	size_t len;
	int rc;            /* MSR_OK, or the final status */
	uint64_t bytes_in;
	struct msr_error err;
};

struct msr_ahead {
	msr_ahead_produce_fn produce;
	void *ctx;
	struct msr_handoff h;
	bool stop;         /* read and written with atomics */
	unsigned put;      /* helper: next slot to fill */
	unsigned get;      /* reader: next slot to take */
	bool held;         /* reader: slot get - 1 is out, return it first */
	bool final;        /* reader: slot get holds the final status */
	bool primed;       /* reader: the slots were handed to the helper */
	struct ahead_slot slot[AHEAD_SLOTS];
};

static void *ahead_main(void *arg)
{
	struct msr_ahead *a = arg;
	int rc;

	/* The reader's thread is the slower stage: when this helper is woken
	 * onto its core (each freed slot wakes it), the reader should keep
	 * most of the core. A failure only leaves the default priority. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), AHEAD_NICE);

	do {
		struct ahead_slot *sl;

		msr_handoff_wait(&a->h.space);
		if (__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE))
			break;
		sl = &a->slot[a->put++ % AHEAD_SLOTS];
		msr_error_clear(&sl->err);
		rc = a->produce(a->ctx, sl->buf, AHEAD_BLOCK, &sl->len, &sl->bytes_in,
				&sl->err);
		sl->rc = rc;
		sem_post(&a->h.filled);
	} while (rc == MSR_OK);
	return NULL;
}

int msr_ahead_take(struct msr_ahead *a, const uint8_t **buf, size_t *len,
		   uint64_t *bytes_in, struct msr_error *err)
{
	struct ahead_slot *sl;

	if (!a->final) {
		if (!a->primed) {
			a->primed = true;
			for (unsigned i = 0; i < AHEAD_SLOTS; i++)
				sem_post(&a->h.space);
		}
		if (a->held) {
			a->held = false;
			sem_post(&a->h.space);
		}
		if (sem_wait(&a->h.filled))
			return MSR_AHEAD_EINTR;
	}
	sl = &a->slot[a->get % AHEAD_SLOTS];
	*bytes_in = sl->bytes_in;
	if (sl->rc != MSR_OK) {
		a->final = true;
		if (sl->rc < 0)
			*err = sl->err;
		return sl->rc;
	}
	a->get++;
	a->held = true;
	*buf = sl->buf;
	*len = sl->len;
	return MSR_OK;
}

static void ahead_free(struct msr_ahead *a)
{
	for (unsigned i = 0; i < AHEAD_SLOTS; i++)
		free(a->slot[i].buf);
	free(a);
}

struct msr_ahead *msr_ahead_start(msr_ahead_produce_fn produce, void *ctx)
{
	struct msr_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->produce = produce;
	a->ctx = ctx;
	for (unsigned i = 0; i < AHEAD_SLOTS; i++) {
		a->slot[i].buf = malloc(AHEAD_BLOCK);
		if (!a->slot[i].buf) {
			ahead_free(a);
			return NULL;
		}
	}
	/* no slot for the helper before the first take: until then the
	 * reader may still hold a block it read inline (see the header) */
	if (msr_handoff_start(&a->h, "msr-unzstd", 0, ahead_main, a)) {
		ahead_free(a);
		return NULL;
	}
	return a;
}

void msr_ahead_stop(struct msr_ahead *a)
{
	if (!a)
		return;
	__atomic_store_n(&a->stop, true, __ATOMIC_RELEASE);
	sem_post(&a->h.space); /* wakes a helper waiting for space */
	msr_handoff_join(&a->h);
	ahead_free(a);
}
