/*
 * fuzz-check.h - what every fuzz target shares: the property check that
 * aborts (which libFuzzer reports) and the filter for inputs that only
 * exercise libzstd's allocator. Only for fuzzing and the fuzz-regress
 * driver: never part of the library.
 */
#ifndef MSR_FUZZ_CHECK_H
#define MSR_FUZZ_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(c)                                                          \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "fuzz property failed: %s (%s:%d)\n", #c, \
				__FILE__, __LINE__);                           \
			abort();                                               \
		}                                                              \
	} while (0)

/*
 * A zstd frame may declare a window of up to 2 GiB (accepted on purpose:
 * zstd --long=31), which libzstd then allocates. Such inputs are legal but
 * only exercise the allocator: skip them so the fuzzer's memory limit
 * reports real leaks and blow-ups.
 */
static inline bool fuzz_huge_frame(const uint8_t *d, size_t n)
{
	unsigned fhd;

	if (n < 6 || d[0] != 0x28 || d[1] != 0xB5 || d[2] != 0x2F || d[3] != 0xFD)
		return false;
	fhd = d[4];
	if (fhd & 0x20) /* single segment: window = content size, 4 or 8 byte field */
		return (fhd >> 6) >= 2;
	return 10 + (d[5] >> 3) > 27;
}

/* Any frame of the input, not only the first: every place the magic
 * number appears is taken for a frame's start (a few inputs more are
 * skipped than need be). */
static inline bool fuzz_huge_window(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i + 6 <= n; i++)
		if (fuzz_huge_frame(d + i, n - i))
			return true;
	return false;
}

#endif
