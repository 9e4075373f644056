/*
 * stream.h - copies into a ring that another thread reads later, past this
 * core's caches.
 *
 * With the TSO pass on a second thread, the replay writes about 120 bytes
 * an event that it never reads again: the event's slot in the shared
 * history and its records in the queue to the TSO thread. Written through
 * the caches, those lines push the replay's own tables (strand rings, L1
 * images, the memory image) out of the L2; written with non-temporal
 * stores they do not (docs/performance.md, "Queue and shared history
 * written past the caches"). Such stores are weakly ordered: the writer
 * calls msr_stream_fence before it publishes what it wrote (a semaphore
 * post or an atomic store). Where the target has no such stores, both are
 * plain: a memcpy and nothing. Never prints or exits; no state.
 */
#ifndef MSR_STREAM_H
#define MSR_STREAM_H

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define MSR_STREAM_NT 1
#endif

/* Copy n bytes (a multiple of 8) from src to dst (8-byte aligned). */
static inline void msr_stream_copy(void *dst, const void *src, size_t n)
{
#ifdef MSR_STREAM_NT
	unsigned char *d = dst;
	const unsigned char *s = src;

	for (size_t i = 0; i < n; i += 8) {
		long long v;

		memcpy(&v, s + i, sizeof(v));
		_mm_stream_si64((long long *)(void *)(d + i), v);
	}
#else
	memcpy(dst, src, n);
#endif
}

/* Order the copies made so far before the stores that follow. */
static inline void msr_stream_fence(void)
{
#ifdef MSR_STREAM_NT
	_mm_sfence();
#endif
}

#endif /* MSR_STREAM_H */
