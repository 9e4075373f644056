/*
 * test_stream.c - msr_stream_copy: the bytes arrive whole at every length
 * and offset the queue and the history use, nothing past them is written;
 * and a second thread that waits for the fenced publication reads them all.
 */
#include "stream.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

Test(stream, copies_whole_words_and_nothing_past_them)
{
	_Alignas(64) unsigned char src[256 + 8], dst[256 + 72];

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	for (size_t off = 0; off < 64; off += 8) {
		for (size_t n = 8; n <= 256; n += 8) {
			memset(dst, 0xee, sizeof(dst));
			msr_stream_copy(dst + off, src + 3, n); /* any source alignment */
			msr_stream_fence();
			cr_assert_eq(memcmp(dst + off, src + 3, n), 0, "off %zu n %zu", off, n);
			for (size_t k = 0; k < off; k++)
				cr_assert_eq(dst[k], 0xee, "byte %zu before, off %zu n %zu", k, off, n);
			for (size_t k = off + n; k < sizeof(dst); k++)
				cr_assert_eq(dst[k], 0xee, "byte %zu after, off %zu n %zu", k, off, n);
		}
	}
}

#define RING_WORDS ((size_t)1 << 16)

struct shared {
	uint64_t *ring;
	_Atomic uint64_t published; /* words written and fenced */
	uint64_t bad;
};

static void *reader(void *arg)
{
	struct shared *s = arg;
	uint64_t seen = 0;

	while (seen < RING_WORDS) {
		uint64_t upto = atomic_load_explicit(&s->published, memory_order_acquire);

		for (; seen < upto; seen++)
			if (s->ring[seen] != seen * 0x9e3779b97f4a7c15ull)
				s->bad++;
	}
	return NULL;
}

Test(stream, fenced_words_are_seen_by_another_thread)
{
	struct shared s = {0};
	pthread_t th;
	uint64_t block[64];

	s.ring = aligned_alloc(64, RING_WORDS * sizeof(uint64_t));
	cr_assert_not_null(s.ring);
	atomic_init(&s.published, 0);
	cr_assert_eq(pthread_create(&th, NULL, reader, &s), 0);
	for (uint64_t w = 0; w < RING_WORDS; w += 64) {
		for (unsigned k = 0; k < 64; k++)
			block[k] = (w + k) * 0x9e3779b97f4a7c15ull;
		msr_stream_copy(s.ring + w, block, sizeof(block));
		msr_stream_fence();
		atomic_store_explicit(&s.published, w + 64, memory_order_release);
	}
	pthread_join(th, NULL);
	cr_assert_eq(s.bad, 0, "%llu words read before they arrived",
		     (unsigned long long)s.bad);
	free(s.ring);
}
