/*
 * handoff.c - start, wait for and join a buffer-passing helper thread.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "handoff.h"

#include <errno.h>
#include <signal.h>

int msr_handoff_start(struct msr_handoff *h, const char *name, unsigned space,
		      void *(*run)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	if (sem_init(&h->filled, 0, 0))
		return -1;
	if (sem_init(&h->space, 0, space)) {
		sem_destroy(&h->filled);
		return -1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&h->thread, NULL, run, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		sem_destroy(&h->space);
		sem_destroy(&h->filled);
		return -1;
	}
	/* only a label for the tools: a failure changes nothing else */
	(void)pthread_setname_np(h->thread, name);
	return 0;
}

void msr_handoff_wait(sem_t *s)
{
	while (sem_wait(s) && errno == EINTR)
		;
}

void msr_handoff_join(struct msr_handoff *h)
{
	pthread_join(h->thread, NULL);
	sem_destroy(&h->space);
	sem_destroy(&h->filled);
}
